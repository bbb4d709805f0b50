// Package admintest provides in-memory stand-ins for the admin API's
// collaborators, and a helper that serves a real admin API on loopback, for
// tests of the API, its client and the CLI.
package admintest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/twinlake/twinlake/internal/admin"
	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/trace"
)

// Test credentials known to KeyAuth.
const (
	RootAccessKey = "rootkey"
	RootSecretKey = "rootsecret"
	UserAccessKey = "userkey" // signed in, but not an administrator
	UserSecretKey = "usersecret"
)

// ErrNoCredential is returned by KeyAuth for a request without a SigV4
// Authorization header naming a known access key.
var ErrNoCredential = errors.New("admintest: no known credential in Authorization")

// KeyAuth is a fake admin.Authenticator: it trusts the access key named in
// the Credential of a SigV4 Authorization header without checking the
// signature, which is the real verifier's job. The map says which known keys
// are administrators.
type KeyAuth map[string]bool

var _ admin.Authenticator = KeyAuth(nil)

// DefaultAuth knows RootAccessKey (admin) and UserAccessKey (not admin).
func DefaultAuth() KeyAuth { return KeyAuth{RootAccessKey: true, UserAccessKey: false} }

// Authenticate implements admin.Authenticator.
func (a KeyAuth) Authenticate(r *http.Request) (string, error) {
	_, rest, ok := strings.Cut(r.Header.Get("Authorization"), "Credential=")
	if !ok {
		return "", ErrNoCredential
	}
	key, _, _ := strings.Cut(rest, "/")
	if _, known := a[key]; !known {
		return "", ErrNoCredential
	}
	return key, nil
}

// IsAdmin implements admin.Authenticator.
func (a KeyAuth) IsAdmin(accessKey string) bool { return a[accessKey] }

// StaticInfo is an admin.InfoSource that answers a fixed ServerInfo.
type StaticInfo adminclient.ServerInfo

// Info implements admin.InfoSource.
func (s StaticInfo) Info(context.Context) (adminclient.ServerInfo, error) {
	return adminclient.ServerInfo(s), nil
}

// Site is an admin API served on loopback over in-memory collaborators.
type Site struct {
	URL      string
	Settings *config.Store
	Trace    *trace.Bus
	Server   *httptest.Server
}

// Info returns the ServerInfo a Site answers.
func Info() adminclient.ServerInfo {
	return adminclient.ServerInfo{
		DeploymentID: "6f1c1a52-8d9e-4c61-9d0f-5a2b3c4d5e6f", SiteName: "site-a", Version: "test",
		UptimeSeconds: 3725, Address: "127.0.0.1:9000", Buckets: 3, Objects: 42, TotalBytes: 5 << 20,
		DiskTotal: 100 << 30, DiskFree: 60 << 30,
	}
}

// Start serves an admin API on loopback until the test ends. cfg, if not
// nil, may adjust the admin.Config (replace its Settings, say) before the
// server is built.
func Start(t testing.TB, cfg func(*admin.Config)) *Site {
	t.Helper()
	settings, err := config.New(meta.NewMem(), config.Config{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	c := admin.Config{Auth: DefaultAuth(), Settings: settings, Trace: trace.New("site-a"), Info: StaticInfo(Info())}
	if cfg != nil {
		cfg(&c)
	}
	srv, err := admin.New(c)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &Site{URL: ts.URL, Settings: c.Settings, Trace: c.Trace, Server: ts}
}

// Client returns an admin client for the site signed with the given keys.
func (s *Site) Client(t testing.TB, accessKey, secretKey string) *adminclient.Client {
	t.Helper()
	c, err := adminclient.New(s.URL, adminclient.Credentials{AccessKey: accessKey, SecretKey: secretKey}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
