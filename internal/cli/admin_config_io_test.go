package cli

import (
	"strings"
	"testing"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestAdminConfigExportImportReset: export prints the settings an admin
// stored, one line per subsystem; import applies such lines to another
// site (merging: keys it does not name keep their values); reset puts the
// keys named, or a whole subsystem, back to their defaults. Bad input is
// refused before anything is applied.
func TestAdminConfigExportImportReset(t *testing.T) {
	e := newCLIEnv(t)
	s1, s2 := testsite.Start(t), testsite.Start(t)
	e.must("alias", "set", "s1", s1.URL, s1.AccessKey, s1.SecretKey)
	e.must("alias", "set", "s2", s2.URL, s2.AccessKey, s2.SecretKey)
	e.must("admin", "config", "set", "s1", "replication", "workers=8", "max_retries=5")
	e.must("admin", "config", "set", "s1", "api", "requests_max=100")
	e.must("admin", "config", "set", "s2", "ilm", "interval=5m")

	exported := e.must("admin", "config", "export", "s1")
	for _, want := range []string{"replication max_retries=5 workers=8", "api requests_max=100"} {
		if !strings.Contains(exported, want) {
			t.Fatalf("export lacks %q:\n%s", want, exported)
		}
	}
	if strings.Contains(exported, "retry_base_delay") {
		t.Fatalf("export lists a default:\n%s", exported)
	}
	if js := e.must("admin", "config", "export", "--json", "s1"); !strings.Contains(js, `"replication":{"max_retries":"5","workers":"8"}`) {
		t.Fatalf("export --json: %s", js)
	}

	if _, _, err := e.runIn(exported, "admin", "config", "import", "s2"); err != nil {
		t.Fatalf("import: %v", err)
	}
	get := func(alias, subsys string) string { return e.must("admin", "config", "get", alias, subsys) }
	if out := get("s2", "replication"); !strings.Contains(out, "workers=8") || !strings.Contains(out, "max_retries=5") {
		t.Fatalf("s2 replication after import:\n%s", out)
	}
	if out := get("s2", "ilm"); !strings.Contains(out, "interval=5m") {
		t.Fatalf("import reset a key it did not name:\n%s", out)
	}

	e.must("admin", "config", "reset", "s2", "replication", "workers")
	if out := get("s2", "replication"); !strings.Contains(out, "workers=16") || !strings.Contains(out, "max_retries=5") {
		t.Fatalf("after reset of workers:\n%s", out)
	}
	e.must("admin", "config", "reset", "s2", "replication")
	if out := get("s2", "replication"); !strings.Contains(out, "max_retries=10") {
		t.Fatalf("after reset of the subsystem:\n%s", out)
	}

	for _, c := range []struct{ input, wantErr string }{
		{"nosuch workers=1\n", `unknown subsystem "nosuch"`},
		{"replication speed=9\n", `replication has no key "speed"`},
		{"# only a comment\n\n", "holds no settings"},
		{"replication workers=1\nreplication workers=2\n", "given twice"},
		{"api requests_max=100\nreplication workers=0\n", "want an integer from 1 to 256"},
	} {
		if _, _, err := e.runIn(c.input, "admin", "config", "import", "s2"); err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("import %q: %v, want %q", c.input, err, c.wantErr)
		}
	}
	if _, err := e.run("admin", "config", "reset", "s2", "nosuch"); err == nil || !strings.Contains(err.Error(), "unknown subsystem") {
		t.Errorf("reset of an unknown subsystem: %v", err)
	}
}
