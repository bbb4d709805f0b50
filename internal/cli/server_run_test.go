package cli

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
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
	writeCerts(t, certs)
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
