package servercmd

import (
	"crypto/tls"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"testing"

	"github.com/twinlake/twinlake/internal/testsite"
)

func TestLoadCertsServesAndTrustsPeers(t *testing.T) {
	dir := t.TempDir()
	testsite.WriteCerts(t, dir)
	srvTLS, peer, err := loadCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	srv.TLS = srvTLS
	srv.StartTLS()
	defer srv.Close()
	resp, err := peer.Get(srv.URL)
	if err != nil {
		t.Fatalf("peer client does not trust the site's CA: %v", err)
	}
	resp.Body.Close()
	// Without the CA, the same certificate is refused.
	plain := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{}}}
	if _, err := plain.Get(srv.URL); err == nil {
		t.Fatal("an untrusted self-signed certificate was accepted")
	}
	if _, _, err := loadCerts(t.TempDir()); err == nil {
		t.Fatal("an empty certs dir was accepted")
	}
}

func TestTuneGCSetting(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		gogc, headroom string
		tunes          bool
		wantErr        bool
	}{
		{tunes: true},
		{headroom: "64MiB", tunes: true},
		{headroom: "0"},
		{gogc: "200"},
		{gogc: "200", headroom: "64MiB"},
		{headroom: "2GiB", wantErr: true},
		{headroom: "-1MiB", wantErr: true},
		{headroom: "lots", wantErr: true},
	} {
		t.Setenv("GOGC", tc.gogc)
		t.Setenv("TWINLAKE_GC_HEADROOM", tc.headroom)
		before := debug.SetGCPercent(100)
		stop, err := tuneGC(log)
		if tc.wantErr {
			if err == nil {
				t.Errorf("GOGC=%q TWINLAKE_GC_HEADROOM=%q: no error", tc.gogc, tc.headroom)
			}
			debug.SetGCPercent(before)
			continue
		}
		if err != nil {
			t.Fatalf("GOGC=%q TWINLAKE_GC_HEADROOM=%q: %v", tc.gogc, tc.headroom, err)
		}
		// Start sets the first percent at once from the live heap, which
		// in a test binary is far below the headroom.
		tuned := debug.SetGCPercent(100) != 100
		stop()
		debug.SetGCPercent(before)
		if tuned != tc.tunes {
			t.Errorf("GOGC=%q TWINLAKE_GC_HEADROOM=%q: tuned %v, want %v", tc.gogc, tc.headroom, tuned, tc.tunes)
		}
	}
}
