package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twinlake/twinlake/internal/meta"
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

// TestLoadOrCreateIDWritesFirstRecords: a new ID is committed with the
// records a first start must leave (the drive count), so a start cut
// short after it never leaves the ID alone; an existing ID writes
// nothing.
func TestLoadOrCreateIDWritesFirstRecords(t *testing.T) {
	m, err := meta.OpenPebble(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	id, created, err := loadOrCreateID(m, "sys/deployment-id", map[string]string{driveCountKey: "4"})
	if err != nil || !created || id == "" {
		t.Fatalf("first: %q %v %v", id, created, err)
	}
	if v, err := m.Get([]byte(driveCountKey)); err != nil || string(v) != "4" {
		t.Fatalf("drive count %q %v", v, err)
	}
	again, created, err := loadOrCreateID(m, "sys/deployment-id", map[string]string{driveCountKey: "1"})
	if err != nil || created || again != id {
		t.Fatalf("again: %q %v %v", again, created, err)
	}
	if v, _ := m.Get([]byte(driveCountKey)); string(v) != "4" {
		t.Fatalf("an existing ID rewrote the drive count to %q", v)
	}
}
