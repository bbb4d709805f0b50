package cli

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestAdminEndToEnd drives the admin commands against a real server: config
// persists across a restart, info reports usage, and trace streams S3 calls.
func TestAdminEndToEnd(t *testing.T) {
	site := testsite.Start(t)
	e := newCLIEnv(t)
	e.must("alias", "set", "site", site.URL, site.AccessKey, site.SecretKey)
	e.must("mb", "site/adminbkt")

	out := e.must("admin", "config", "get", "site", "tables")
	if !strings.Contains(out, "replica_catalog=off") || !strings.Contains(out, "replica_catalog_consistency=strict") {
		t.Fatalf("config get tables:\n%s", out)
	}
	e.must("admin", "config", "set", "site", "tables", "replica_catalog_scan_interval=250ms")
	if _, err := e.run("admin", "config", "set", "site", "tables", "replica_catalog_consistency=sometimes"); err == nil {
		t.Fatal("invalid value accepted")
	}
	site.Restart()
	out = e.must("admin", "config", "get", "site", "tables")
	if !strings.Contains(out, "replica_catalog_scan_interval=250ms") {
		t.Fatalf("setting lost across restart:\n%s", out)
	}

	// Trace: start streaming, then make an S3 call and see it arrive.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		root := NewRoot()
		root.SetArgs([]string{"--config-dir", e.dir, "admin", "trace", "-v", "--call", "s3", "site"})
		root.SetOut(pw)
		root.SetErr(io.Discard)
		done <- root.ExecuteContext(ctx)
		pw.Close()
	}()
	seen := make(chan string, 1)
	go func() {
		var buf strings.Builder
		b := make([]byte, 4096)
		for {
			n, err := pr.Read(b)
			buf.Write(b[:n])
			if strings.Contains(buf.String(), "s3.PutObject") {
				seen <- buf.String()
				return
			}
			if err != nil {
				return
			}
		}
	}()
	deadline := time.After(15 * time.Second)
	for found := false; !found; {
		e.must("cp", writeTemp(t, "traced"), "site/adminbkt/traced.txt")
		select {
		case line := <-seen:
			if !strings.Contains(line, "/adminbkt/traced.txt") {
				t.Fatalf("trace line lacks the path: %q", line)
			}
			found = true
		case <-time.After(300 * time.Millisecond):
		case <-deadline:
			t.Fatal("no s3.PutObject trace event within 15s")
		}
	}
	cancel()
	<-done

	out = e.must("admin", "info", "site", "--json")
	if !strings.Contains(out, `"buckets":1`) || !strings.Contains(out, `"objects":1`) {
		t.Fatalf("admin info: %s", out)
	}

	// Metrics require authentication; the S3 request counter is exported.
	resp, err := http.Get(site.URL + "/twinlake/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		t.Fatalf("anonymous metrics scrape: %d", resp.StatusCode)
	}
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	p := t.TempDir() + "/payload.txt"
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
