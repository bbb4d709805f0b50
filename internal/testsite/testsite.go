// Package testsite is the test harness: it starts real twinlake sites on
// 127.0.0.1 (in process, on their own data directories) and stops them when
// the test ends. Tests talk to them over real HTTP with real clients.
package testsite

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/app"
)

// Site is one running test site.
type Site struct {
	URL       string // http://127.0.0.1:port
	Addr      string
	AccessKey string
	SecretKey string
	Dir       string
	// HTTPClient reaches the site (it trusts the site's TLS certificate).
	HTTPClient *http.Client

	t   testing.TB
	cfg app.Config
	srv *app.Server
}

// settings is what options adjust before a site starts.
type settings struct {
	cfg  app.Config
	pool *x509.CertPool // trusted roots for HTTPS sites
}

// Option adjusts a site's configuration before it starts.
type Option func(*settings)

// WithDir runs the site on an existing data directory.
func WithDir(dir string) Option { return func(s *settings) { s.cfg.Dir = dir } }

// WithTLS serves HTTPS with a fresh self-signed certificate for 127.0.0.1;
// Site.HTTPClient trusts it.
func WithTLS() Option {
	return func(s *settings) {
		cert, pool := selfSigned()
		s.cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		s.pool = pool
	}
}

// WithName sets the site name.
func WithName(name string) Option { return func(s *settings) { s.cfg.SiteName = name } }

// WithClock replaces the wall clock the site's hybrid logical clock reads
// (to skew it).
func WithClock(now func() time.Time) Option { return func(s *settings) { s.cfg.Clock = now } }

// WithApp adjusts the site's app configuration directly, for the hooks
// no other option covers (app.Config.PeerDial, PeerServer, ...).
func WithApp(fn func(*app.Config)) Option { return func(s *settings) { fn(&s.cfg) } }

// Start starts one site on a free loopback port; it stops at test cleanup.
func Start(t testing.TB, opts ...Option) *Site {
	t.Helper()
	st := settings{cfg: app.Config{
		Address: "127.0.0.1:0", Dir: t.TempDir(), RootUser: "testroot", RootPassword: "testroot-secret-key",
		Logger: testLogger(),
	}}
	for _, o := range opts {
		o(&st)
	}
	s := &Site{t: t, cfg: st.cfg, Dir: st.cfg.Dir, HTTPClient: http.DefaultClient}
	if st.pool != nil {
		s.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: st.pool}}}
	}
	s.start()
	t.Cleanup(s.Stop)
	return s
}

func (s *Site) start() {
	s.t.Helper()
	srv, err := app.New(s.cfg)
	if err != nil {
		s.t.Fatalf("testsite: %v", err)
	}
	if err := srv.Start(); err != nil {
		srv.Close(context.Background())
		s.t.Fatalf("testsite: %v", err)
	}
	s.srv = srv
	s.Addr = srv.Addr()
	s.URL = "http://" + s.Addr
	if s.cfg.TLS != nil {
		s.URL = "https://" + s.Addr
	}
	cred := srv.Credentials()
	s.AccessKey, s.SecretKey = cred.AccessKey, cred.SecretKey
	// Restarts keep the same port, so clients built earlier keep working.
	s.cfg.Address = s.Addr
}

// Stop shuts the site down; calling it twice is safe.
func (s *Site) Stop() {
	if s.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.srv.Close(ctx); err != nil {
		s.t.Logf("testsite: stop: %v", err)
	}
	s.srv = nil
}

// Restart stops and starts the site on the same directory and port.
func (s *Site) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

// RestartWith stops the site and starts it again on the same directory
// and port with opts applied to its configuration (a new root password,
// say); later restarts keep them.
func (s *Site) RestartWith(opts ...Option) {
	s.t.Helper()
	s.Stop()
	st := settings{cfg: s.cfg}
	for _, o := range opts {
		o(&st)
	}
	s.cfg = st.cfg
	s.start()
}

// Server exposes the running server for white-box assertions.
func (s *Site) Server() *app.Server { return s.srv }

func testLogger() *slog.Logger {
	if os.Getenv("TWINLAKE_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}
