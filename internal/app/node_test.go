package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckEtcdScheme: a voter's etcd member starts only with the scheme
// it was made with; a member from before the record was kept was made
// without TLS.
func TestCheckEtcdScheme(t *testing.T) {
	for _, tc := range []struct {
		name     string
		setup    func(dir string)
		scheme   string
		problem  string // "" when it may start
		recorded string // the record after the check, "" when none
	}{
		{"new member, TLS", func(string) {}, "https", "", "https"},
		{"new member, no TLS", func(string) {}, "http", "", "http"},
		{"same scheme", func(d string) { os.WriteFile(filepath.Join(d, etcdSchemeFile), []byte("https\n"), 0o600) }, "https", "", "https"},
		{"made with TLS, started without", func(d string) { os.WriteFile(filepath.Join(d, etcdSchemeFile), []byte("https\n"), 0o600) },
			"http", "made with https between the nodes and cannot start with http", "https"},
		{"made without TLS, started with", func(d string) { os.WriteFile(filepath.Join(d, etcdSchemeFile), []byte("http\n"), 0o600) },
			"https", "made with http between the nodes and cannot start with https", "http"},
		{"older member, started with TLS", func(d string) { os.MkdirAll(filepath.Join(d, "member"), 0o700) },
			"https", "made without TLS", ""},
		{"older member, started without", func(d string) { os.MkdirAll(filepath.Join(d, "member"), 0o700) }, "http", "", "http"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "etcd")
			os.MkdirAll(dir, 0o700)
			tc.setup(dir)
			err := checkEtcdScheme(dir, tc.scheme)
			if (err == nil) != (tc.problem == "") || err != nil && !strings.Contains(err.Error(), tc.problem) {
				t.Fatalf("err = %v, want %q", err, tc.problem)
			}
			raw, _ := os.ReadFile(filepath.Join(dir, etcdSchemeFile))
			if got := strings.TrimSpace(string(raw)); got != tc.recorded {
				t.Fatalf("record %q, want %q", got, tc.recorded)
			}
		})
	}
}
