package admin_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/admin"
	"github.com/twinlake/twinlake/internal/admin/admintest"
	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/trace"
)

// wantAPIError checks that err is the admin API error with code and status.
func wantAPIError(t *testing.T, err error, code string, status int) *adminclient.Error {
	t.Helper()
	var ae *adminclient.Error
	if !errors.As(err, &ae) || ae.Code != code || ae.StatusCode != status {
		t.Fatalf("err = %v, want %s (HTTP %d)", err, code, status)
	}
	return ae
}

func TestNewReportsEveryMissingCollaborator(t *testing.T) {
	_, err := admin.New(admin.Config{KeepAlive: -1})
	if !errors.Is(err, admin.ErrInvalidConfig) {
		t.Fatalf("err = %v", err)
	}
	for _, name := range []string{"Auth", "Settings", "Trace", "Info", "KeepAlive"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("err %v does not name %s", err, name)
		}
	}
}

func TestEveryRouteRequiresAnAdministrator(t *testing.T) {
	site := admintest.Start(t, nil)
	ctx := context.Background()
	calls := map[string]func(c *adminclient.Client) error{
		"info":       func(c *adminclient.Client) error { _, err := c.ServerInfo(ctx); return err },
		"config get": func(c *adminclient.Client) error { _, err := c.GetConfig(ctx, "tables"); return err },
		"config set": func(c *adminclient.Client) error {
			_, err := c.SetConfig(ctx, "api", map[string]string{"requests_max": "5"})
			return err
		},
		"trace": func(c *adminclient.Client) error {
			s, err := c.Trace(ctx, adminclient.TraceOptions{})
			if err == nil {
				s.Close()
			}
			return err
		},
	}
	for name, do := range calls {
		t.Run(name, func(t *testing.T) {
			wantAPIError(t, do(site.Client(t, admintest.UserAccessKey, admintest.UserSecretKey)),
				adminclient.CodeAccessDenied, http.StatusForbidden)
			wantAPIError(t, do(site.Client(t, "stranger", "secret")),
				adminclient.CodeUnauthenticated, http.StatusUnauthorized)
			if err := do(site.Client(t, admintest.RootAccessKey, admintest.RootSecretKey)); err != nil {
				t.Fatalf("root: %v", err)
			}
		})
	}
}

// rawRequest sends an unsigned request carrying the fake authenticator's
// credential, for what the typed client never sends.
func rawRequest(t *testing.T, site *admintest.Site, method, path, body, contentSHA string) (int, adminclient.ErrorBody) {
	t.Helper()
	req, err := http.NewRequest(method, site.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+admintest.RootAccessKey+"/20250101/us-east-1/s3/aws4_request")
	if contentSHA != "" {
		req.Header.Set("X-Amz-Content-Sha256", contentSHA)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode >= 400 && ct != adminclient.ContentTypeJSON {
		t.Errorf("error Content-Type = %q", ct)
	}
	var eb adminclient.ErrorBody
	_ = json.NewDecoder(resp.Body).Decode(&eb)
	return resp.StatusCode, eb
}

func sha(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) }

func TestMalformedRequests(t *testing.T) {
	site := admintest.Start(t, nil)
	tables := adminclient.PathConfig + "/tables"
	for _, tc := range []struct {
		name, method, path, body, sha string
		status                        int
		code                          string
	}{
		{"unknown route", "GET", adminclient.PathPrefix + "nope", "", "", 404, adminclient.CodeNotFound},
		{"wrong method", "DELETE", adminclient.PathInfo, "", "", 404, adminclient.CodeNotFound},
		{"no Authorization", "GET", adminclient.PathInfo, "", "-", 401, adminclient.CodeUnauthenticated},
		{"body swapped", "PUT", tables, `{"replica_catalog":"on"}`, sha(`{"replica_catalog":"off"}`), 400, adminclient.CodeContentSHA256Mismatch},
		{"unsigned payload", "PUT", tables, `{"replica_catalog":"on"}`, "UNSIGNED-PAYLOAD", 400, adminclient.CodeContentSHA256Mismatch},
		{"not an object", "PUT", tables, `["x"]`, sha(`["x"]`), 400, adminclient.CodeBadRequest},
		{"number value", "PUT", tables, `{"replica_catalog_scan_interval":5}`, sha(`{"replica_catalog_scan_interval":5}`), 400, adminclient.CodeBadRequest},
		{"empty object", "PUT", tables, `{}`, sha(`{}`), 400, adminclient.CodeBadRequest},
		{"too big", "PUT", tables, `{"k":"` + strings.Repeat("x", 2<<20) + `"}`, "", 400, adminclient.CodeBadRequest},
		{"bad trace type", "GET", adminclient.PathTrace + "?call=s3,bogus&status=abc&funcname=%5B", "", "", 400, adminclient.CodeBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.sha == "-" {
				resp, err := http.Get(site.URL + tc.path)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d", resp.StatusCode)
				}
				return
			}
			status, eb := rawRequest(t, site, tc.method, tc.path, tc.body, tc.sha)
			if status != tc.status || eb.Code != tc.code || eb.Message == "" {
				t.Fatalf("got %d %+v, want %d %s", status, eb, tc.status, tc.code)
			}
			if tc.name == "bad trace type" {
				for _, frag := range []string{"bogus", "abc", "funcname"} {
					if !strings.Contains(eb.Message, frag) {
						t.Errorf("message %q does not report %s", eb.Message, frag)
					}
				}
			}
		})
	}
}

func TestServerInfo(t *testing.T) {
	site := admintest.Start(t, nil)
	got, err := site.Client(t, admintest.RootAccessKey, admintest.RootSecretKey).ServerInfo(context.Background())
	if err != nil || !reflect.DeepEqual(got, admintest.Info()) {
		t.Fatalf("ServerInfo = %+v, %v", got, err)
	}
}

func renderConfig(cfg adminclient.SubsysConfig) string {
	var b strings.Builder
	for _, kv := range cfg.Keys {
		b.WriteString(kv.Key + "=" + kv.Value + "(" + kv.Source + ") ")
	}
	return strings.TrimSpace(b.String())
}

func TestConfigGetSet(t *testing.T) {
	site := admintest.Start(t, nil)
	c := site.Client(t, admintest.RootAccessKey, admintest.RootSecretKey)
	ctx := context.Background()

	got, err := c.GetConfig(ctx, "replication")
	if err != nil || got.Subsys != "replication" ||
		renderConfig(got) != "max_retries=10(default) retry_base_delay=1s(default) retry_max_delay=5m(default) workers=16(default) mismatch_interval=5m(default) resync_backlog=20000(default)" {
		t.Fatalf("GetConfig = %+v, %v", got, err)
	}

	got, err = c.SetConfig(ctx, "replication", map[string]string{"workers": "4", "retry_base_delay": "100ms"})
	if err != nil || renderConfig(got) != "max_retries=10(default) retry_base_delay=100ms(stored) retry_max_delay=5m(default) workers=4(stored) mismatch_interval=5m(default) resync_backlog=20000(default)" {
		t.Fatalf("SetConfig = %+v, %v", got, err)
	}
	if site.Settings.Int(config.SubsysReplication, config.ReplicationWorkers) != 4 {
		t.Fatal("setting not applied to the store")
	}

	_, err = c.SetConfig(ctx, "replication", map[string]string{"workers": "0", "bogus": "1", "max_retries": "3"})
	ae := wantAPIError(t, err, adminclient.CodeInvalidConfig, http.StatusBadRequest)
	if !strings.Contains(ae.Message, `unknown key "bogus"`) || !strings.Contains(ae.Message, "workers") {
		t.Errorf("message %q does not report every problem", ae.Message)
	}
	if site.Settings.Int(config.SubsysReplication, config.ReplicationMaxRetries) != 10 {
		t.Fatal("a rejected change was partly applied")
	}

	_, err = c.GetConfig(ctx, "nope")
	wantAPIError(t, err, adminclient.CodeUnknownSubsystem, http.StatusNotFound)
	_, err = c.SetConfig(ctx, "nope", map[string]string{"a": "b"})
	wantAPIError(t, err, adminclient.CodeUnknownSubsystem, http.StatusNotFound)
}

func TestConfigGuardRefusal(t *testing.T) {
	site := admintest.Start(t, nil)
	site.Settings.AddGuard(func(ctx context.Context, subsys string, proposed map[string]string) error {
		if proposed[config.TablesReplicaCatalog] == "on" {
			return errors.New("site site-b is already the replica")
		}
		return nil
	})
	_, err := site.Client(t, admintest.RootAccessKey, admintest.RootSecretKey).
		SetConfig(context.Background(), "tables", map[string]string{"replica_catalog": "on"})
	ae := wantAPIError(t, err, adminclient.CodeConfigRefused, http.StatusConflict)
	if !strings.Contains(ae.Message, "site-b is already the replica") {
		t.Errorf("message %q hides the guard's reason", ae.Message)
	}
}

// next reads one event from s within a deadline.
func next(t *testing.T, s *adminclient.TraceStream) trace.Event {
	t.Helper()
	got := make(chan bool, 1)
	go func() { got <- s.Next() }()
	select {
	case ok := <-got:
		if !ok {
			t.Fatalf("stream ended: %v", s.Err())
		}
		return s.Event()
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
	}
	return trace.Event{}
}

func TestTraceStream(t *testing.T) {
	site := admintest.Start(t, func(c *admin.Config) { c.KeepAlive = 10 * time.Millisecond })
	root := site.Client(t, admintest.RootAccessKey, admintest.RootSecretKey)
	ctx := context.Background()

	stream, err := root.Trace(ctx, adminclient.TraceOptions{Types: trace.S3 | trace.Admin, FuncName: "s3.Put*", StatusCode: 403})
	if err != nil {
		t.Fatal(err)
	}
	verbose, err := root.Trace(ctx, adminclient.TraceOptions{Types: trace.Admin, Verbose: true})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // let keep-alive lines interleave with events
	for _, e := range []trace.Event{
		{Type: trace.S3, FuncName: "s3.GetObject", Path: "/b/k", StatusCode: 403},
		{Type: trace.Tables, FuncName: "s3.PutObject", StatusCode: 403},
		{Type: trace.S3, FuncName: "s3.PutObject", Path: "/b/k", StatusCode: 200},
		{Type: trace.S3, FuncName: "s3.PutObject", Path: "/b/k", StatusCode: 403, Msg: "guard", Attrs: map[string]string{"a": "b"}},
	} {
		site.Trace.Publish(e)
	}
	ev := next(t, stream)
	if ev.Type != trace.S3 || ev.TypeName != "s3" || ev.FuncName != "s3.PutObject" || ev.StatusCode != 403 ||
		ev.Node != "site-a" || ev.Time.IsZero() {
		t.Fatalf("event = %+v", ev)
	}
	if ev.Msg != "" || ev.Attrs != nil {
		t.Errorf("non-verbose stream kept msg/attrs: %+v", ev)
	}

	// Admin calls are traced, with what they changed.
	if _, err := root.SetConfig(ctx, "tables", map[string]string{"replica_catalog": "on"}); err != nil {
		t.Fatal(err)
	}
	ev = next(t, verbose)
	if ev.Type != trace.Admin || ev.FuncName != "admin.SetConfig" || ev.Path != adminclient.PathConfig+"/tables" ||
		ev.StatusCode != 200 || ev.Msg != "tables replica_catalog=on" || ev.Duration <= 0 {
		t.Fatalf("admin event = %+v", ev)
	}

	// Closing the client ends the server side and its subscription.
	stream.Close()
	verbose.Close()
	if verbose.Next() {
		t.Fatal("Next after Close")
	}
	deadline := time.Now().Add(5 * time.Second)
	for site.Trace.Enabled(trace.S3) {
		if time.Now().After(deadline) {
			t.Fatal("server kept the subscription of a closed stream")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTraceStreamEndsWithContext(t *testing.T) {
	site := admintest.Start(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := site.Client(t, admintest.RootAccessKey, admintest.RootSecretKey).Trace(ctx, adminclient.TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	cancel()
	if stream.Next() {
		t.Fatal("event after cancel")
	}
	if !errors.Is(stream.Err(), context.Canceled) {
		t.Fatalf("Err = %v", stream.Err())
	}
}
