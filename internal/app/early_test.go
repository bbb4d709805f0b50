package app_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/twinlake/twinlake/internal/app"
)

// While a site opens its stores, its address already answers: live at
// once, ready 503 with the reason, anything else 503 with Retry-After as an
// S3 error. Start then serves on the same listener, ready.
func TestEarlyListenerAnswersProbesUntilTheSiteServes(t *testing.T) {
	early, err := app.Listen(app.Config{Address: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + early.Addr().String()
	get := func(path string) (int, http.Header, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(body)
	}
	if code, _, _ := get("/twinlake/health/live"); code != http.StatusOK {
		t.Errorf("live while starting = %d", code)
	}
	early.SetReason("starting: upgrading the object store")
	if code, _, body := get("/twinlake/health/ready"); code != http.StatusServiceUnavailable || !strings.Contains(body, "upgrading the object store") {
		t.Errorf("ready while starting = %d %q", code, body)
	}
	if code, h, body := get("/photos/cat.jpg"); code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" ||
		!strings.Contains(body, "<Code>ServiceUnavailable</Code>") {
		t.Errorf("S3 call while starting = %d %v %q", code, h, body)
	}

	srv, err := app.New(app.Config{Address: "127.0.0.1:0", Dir: t.TempDir(), RootUser: "earlyroot", RootPassword: "early-secret-1", Early: early})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	if srv.Addr() != early.Addr().String() {
		t.Errorf("served on %s, bound %s", srv.Addr(), early.Addr())
	}
	if code, _, _ := get("/twinlake/health/ready"); code != http.StatusOK {
		t.Errorf("ready once serving = %d", code)
	}
	// The site's own S3 surface now answers: an unsigned listing is denied.
	if code, _, body := get("/"); code != http.StatusForbidden || !strings.Contains(body, "AccessDenied") {
		t.Errorf("S3 once serving = %d %q", code, body)
	}
}

// A site that fails to open releases the early listener.
func TestEarlyListenerClosed(t *testing.T) {
	early, err := app.Listen(app.Config{Address: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	addr := early.Addr().String()
	if err := early.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := app.Listen(app.Config{Address: addr})
	if err != nil {
		t.Fatalf("the address is still held: %v", err)
	}
	again.Close()
}
