package adminclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twinlake/twinlake/internal/trace"
)

func TestNewRejectsBadArguments(t *testing.T) {
	creds := Credentials{AccessKey: "a", SecretKey: "s"}
	for _, tc := range []struct {
		endpoint string
		creds    Credentials
		want     error
	}{
		{"ftp://host", creds, ErrInvalidEndpoint},
		{"localhost:9000", creds, ErrInvalidEndpoint},
		{"http://", creds, ErrInvalidEndpoint},
		{"http://127.0.0.1:9000", Credentials{AccessKey: "a"}, ErrMissingCredentials},
		{"https://example.com/prefix", creds, nil},
	} {
		if _, err := New(tc.endpoint, tc.creds, Config{}); !errors.Is(err, tc.want) {
			t.Errorf("New(%q) = %v, want %v", tc.endpoint, err, tc.want)
		}
	}
}

// TestRequestsAreSigned checks the request shape the server's SigV4 verifier
// relies on: Authorization with the access key, service s3 and region, and
// the body's SHA-256 in the signed X-Amz-Content-Sha256.
func TestRequestsAreSigned(t *testing.T) {
	var got *http.Request
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		body, _ = io.ReadAll(r.Body)
		w.Write([]byte(`{"subsys":"api","keys":[{"key":"requests_max","value":"5","source":"stored"}]}`))
	}))
	defer srv.Close()
	c, err := New(srv.URL, Credentials{AccessKey: "AKID", SecretKey: "secret"}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := c.SetConfig(context.Background(), "api", map[string]string{"requests_max": "5"})
	if err != nil || len(cfg.Keys) != 1 || cfg.Keys[0].Value != "5" {
		t.Fatalf("SetConfig = %+v, %v", cfg, err)
	}
	sum := sha256.Sum256(body)
	auth := got.Header.Get("Authorization")
	for _, check := range []struct {
		name string
		ok   bool
	}{
		{"method and path", got.Method == http.MethodPut && got.URL.Path == "/twinlake/admin/v1/config/api"},
		{"body", string(body) == `{"requests_max":"5"}`},
		{"content hash", got.Header.Get("X-Amz-Content-Sha256") == hex.EncodeToString(sum[:])},
		{"credential scope", strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKID/") && strings.Contains(auth, "/us-east-1/s3/aws4_request")},
		{"signed headers", strings.Contains(auth, "x-amz-content-sha256") && strings.Contains(auth, "x-amz-date") && strings.Contains(auth, "host")},
		{"date", got.Header.Get("X-Amz-Date") != ""},
	} {
		if !check.ok {
			t.Errorf("%s wrong: %s %s %q %v", check.name, got.Method, got.URL, auth, got.Header)
		}
	}
}

func TestErrorsAreTyped(t *testing.T) {
	for _, tc := range []struct {
		status    int
		body      string
		code, msg string
	}{
		{403, `{"code":"AccessDenied","message":"admin access required"}`, "AccessDenied", "admin access required"},
		{502, "<html>bad gateway</html>\nmore", "BadGateway", "<html>bad gateway</html>"},
		{404, "", "NotFound", "no error body"},
		{599, "odd", "HTTPError", "odd"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.status)
			io.WriteString(w, tc.body)
		}))
		c, _ := New(srv.URL, Credentials{AccessKey: "a", SecretKey: "s"}, Config{})
		_, err := c.ServerInfo(context.Background())
		srv.Close()
		var ae *Error
		if !errors.As(err, &ae) || ae.Code != tc.code || ae.Message != tc.msg || ae.StatusCode != tc.status {
			t.Errorf("HTTP %d %q: err = %#v", tc.status, tc.body, err)
		}
	}
}

func TestTraceQuery(t *testing.T) {
	for _, tc := range []struct {
		opts TraceOptions
		want string
	}{
		{TraceOptions{}, ""},
		{TraceOptions{Types: trace.S3 | trace.TablesScan, FuncName: "catalogScanner.*", Path: "/wh/*", StatusCode: 403, Verbose: true},
			"call=s3%2Ctables-scan&funcname=catalogScanner.%2A&path=%2Fwh%2F%2A&status=403&verbose=true"},
	} {
		if got := tc.opts.query().Encode(); got != tc.want {
			t.Errorf("query = %q, want %q", got, tc.want)
		}
	}
}

// TestRetriesUnavailable: an answer of 503 with Retry-After (a multi-node
// site between leaders) is retried by the admin and the catalog client;
// one without Retry-After is an error at once.
func TestRetriesUnavailable(t *testing.T) {
	var calls atomic.Int32
	var retryAfter atomic.Bool
	retryAfter.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1)%2 == 1 {
			if retryAfter.Load() {
				w.Header().Set("Retry-After", "1")
			}
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":{"message":"no leader yet","type":"ServiceUnavailableException","code":503}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.URL.Path, "namespaces") {
			io.WriteString(w, `{"namespaces":[["sales"]]}`)
			return
		}
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	creds := Credentials{AccessKey: "a", SecretKey: "s"}
	cat, err := NewCatalog(srv.URL, "lake", creds, Config{})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := cat.ListNamespaces(t.Context(), nil)
	if err != nil || len(ns) != 1 || calls.Load() != 2 {
		t.Fatalf("catalog after a 503: %v %v (%d calls)", ns, err, calls.Load())
	}
	ac, _ := New(srv.URL, creds, Config{})
	if _, err := ac.ServerInfo(t.Context()); err != nil || calls.Load() != 4 {
		t.Fatalf("admin after a 503: %v (%d calls)", err, calls.Load())
	}
	retryAfter.Store(false)
	var ce *CatalogError
	if _, err := cat.ListNamespaces(t.Context(), nil); !errors.As(err, &ce) || ce.StatusCode != http.StatusServiceUnavailable || calls.Load() != 5 {
		t.Fatalf("a 503 without Retry-After: %v (%d calls)", err, calls.Load())
	}
}
