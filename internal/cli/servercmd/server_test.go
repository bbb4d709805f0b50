package servercmd

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
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
