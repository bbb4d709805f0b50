package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/twinlake/twinlake/internal/testsite"
)

// startServer runs `twinlake server ARGS...` on a free loopback port until
// the test ends, and returns the base URL its banner names and the
// command's output (banner and logs).
func startServer(t *testing.T, args ...string) (url string, out *syncBuffer) {
	t.Helper()
	t.Setenv("TWINLAKE_ROOT_USER", "serveradmin")
	t.Setenv("TWINLAKE_ROOT_PASSWORD", "serveradmin-secret-123")
	out = &syncBuffer{}
	root := NewRoot()
	root.SetOut(out)
	root.SetErr(out)
	root.SetArgs(append([]string{"server", "--address", "127.0.0.1:0", "--dir", t.TempDir()}, args...))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	banner := regexp.MustCompile(`twinlake serving on (\S+) `)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if m := banner.FindStringSubmatch(out.String()); m != nil {
			return m[1], out
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("server ended: %v\n%s", err, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no banner after 30s:\n%s", out)
		}
	}
}

// TestServerBannerNamesScheme: a site serving TLS announces https:// URLs,
// in its banner and its log, so that the address printed can be pasted.
func TestServerBannerNamesScheme(t *testing.T) {
	url, _ := startServer(t)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Errorf("plain banner URL %q", url)
	}
	certs := t.TempDir()
	testsite.WriteCerts(t, certs)
	url, out := startServer(t, "--certs-dir", certs)
	if !strings.HasPrefix(url, "https://127.0.0.1:") {
		t.Errorf("TLS banner URL %q", url)
	}
	if !strings.Contains(out.String(), "url="+url) {
		t.Errorf("TLS serving log lacks url=%s:\n%s", url, out)
	}
	if strings.Contains(out.String(), "http://") {
		t.Errorf("TLS site prints an http:// URL:\n%s", out)
	}
}

// TestServerAccessLogAndJSONLogs: `twinlake server --log-format json
// --access-log FILE` writes its logs as JSON objects and one JSON line per
// request to FILE, with the fields an operator needs and no secret; an S3
// API twinlake does not serve is logged and counted under its own name
// with 501.
func TestServerAccessLogAndJSONLogs(t *testing.T) {
	t.Setenv("TWINLAKE_METRICS_AUTH", "public")
	logPath := filepath.Join(t.TempDir(), "access.log")
	base, out := startServer(t, "--log-format", "json", "--log-level", "info", "--access-log", logPath)
	host := strings.TrimPrefix(base, "http://")
	const user, secret = "serveradmin", "serveradmin-secret-123"
	c, err := minio.New(host, &minio.Options{Creds: credentials.NewStaticV4(user, secret, "")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := c.MakeBucket(ctx, "logs", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("access log ", 100)
	if _, err := c.PutObject(ctx, "logs", "dir/obj.txt", strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	obj, err := c.GetObject(ctx, "logs", "dir/obj.txt", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(obj); err != nil || string(got) != body {
		t.Fatalf("get: %v", err)
	}
	// An API twinlake does not serve (GetObjectTorrent), signed.
	torrent, err := c.Presign(ctx, http.MethodGet, "logs", "dir/obj.txt", time.Minute, url.Values{"torrent": {""}})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get(torrent.String()); err != nil || resp.StatusCode != http.StatusNotImplemented {
		t.Fatalf("GetObjectTorrent = %v, %v", resp, err)
	} else {
		resp.Body.Close()
	}
	bad, _ := minio.New(host, &minio.Options{Creds: credentials.NewStaticV4(user, "wrong-secret-456", "")})
	if _, err := bad.ListBuckets(ctx); err == nil {
		t.Fatal("a wrong secret was accepted")
	}
	resp, err := http.Get(base + "/twinlake/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metricsText, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metricsText), `twinlake_s3_requests_total{api="GetObjectTorrent",code="501"} 1`) {
		t.Errorf("metrics lack GetObjectTorrent 501:\n%s", testsite.GrepLines(string(metricsText), "twinlake_s3_"))
	}

	type entry struct {
		Time            time.Time `json:"time"`
		RequestID       string    `json:"requestId"`
		RemoteAddr      string    `json:"remoteAddr"`
		User            string    `json:"user"`
		API             string    `json:"api"`
		Bucket          string    `json:"bucket"`
		Key             string    `json:"key"`
		Status          int       `json:"status"`
		BytesIn         int64     `json:"bytesIn"`
		BytesOut        int64     `json:"bytesOut"`
		Duration        string    `json:"duration"`
		DurationSeconds *float64  `json:"durationSeconds"`
	}
	var entries []entry
	waitUntilCLI(t, "the metrics scrape in the access log", func() bool {
		data, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), secret) || strings.Contains(string(data), "wrong-secret") || strings.Contains(string(data), "Signature") {
			t.Fatalf("access log holds a secret:\n%s", data)
		}
		entries = nil
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var e entry
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("access log line %q: %v", line, err)
			}
			entries = append(entries, e)
		}
		return len(entries) > 0 && entries[len(entries)-1].API == "metrics"
	})
	find := func(api string) entry {
		for _, e := range entries {
			if e.API == api {
				return e
			}
		}
		t.Fatalf("no %s in the access log: %+v", api, entries)
		return entry{}
	}
	for _, e := range entries {
		if e.Time.IsZero() || !strings.HasPrefix(e.RemoteAddr, "127.0.0.1:") || e.Status == 0 || e.Duration == "" || e.DurationSeconds == nil {
			t.Errorf("incomplete entry %+v", e)
		}
	}
	put := find("PutObject")
	if put.User != user || put.Bucket != "logs" || put.Key != "dir/obj.txt" || put.Status != 200 || put.BytesIn < int64(len(body)) || put.RequestID == "" {
		t.Errorf("PutObject entry %+v", put)
	}
	if get := find("GetObject"); get.BytesOut != int64(len(body)) || get.Status != 200 {
		t.Errorf("GetObject entry %+v", get)
	}
	if tor := find("GetObjectTorrent"); tor.Status != 501 || tor.Key != "dir/obj.txt" {
		t.Errorf("GetObjectTorrent entry %+v", tor)
	}
	if mb := find("CreateBucket"); mb.Bucket != "logs" || mb.Status != 200 {
		t.Errorf("CreateBucket entry %+v", mb)
	}
	for _, e := range entries {
		if e.Status == 403 && e.User != "" {
			t.Errorf("a refused signature is logged as user %q", e.User)
		}
	}

	// The server's own log is JSON, one object a line.
	var sawServing bool
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("log line %q: %v", line, err)
		}
		sawServing = sawServing || rec["msg"] == "serving" && rec["url"] == base
	}
	if !sawServing {
		t.Errorf("no JSON serving line naming %s:\n%s", base, out)
	}
}

func waitUntilCLI(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
