package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/twinlake/twinlake/internal/blob"
)

// admin heal --scan through the admin API of a running site: a dry run
// reports a stray blob file and keeps it, a heal removes it and leaves every
// object readable; without --scan it reports the latest scan, and with a
// scan's flags but no --scan, or a rate out of bounds, nothing runs.
func TestAdminHealScan(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "s1/healme")
	body := strings.Repeat("data", 64<<10) // 256 KiB: a blob file, not inline
	e.must("cp", writeFile(t, filepath.Join(t.TempDir(), "obj"), body), "s1/healme/obj")
	blobs, err := blob.Open(e.site.Dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := blobs.Create()
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("left by a crash"))
	stray, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}

	// Before any scan, the status says so.
	if out := e.must("admin", "heal", "s1"); !strings.Contains(out, "Latest scan: none since the site started") {
		t.Errorf("heal status before a scan:\n%s", out)
	}
	out := e.must("admin", "heal", "s1", "--scan", "--dry-run")
	for _, want := range []string{"Heal scan of s1 (dry run: nothing changed)", "Orphans:     1 (15B), would be removed", "Missing:     0"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if f, err := blobs.Open(stray); err != nil {
		t.Fatalf("dry run removed the stray file: %v", err)
	} else {
		f.Close()
	}
	rep := checkJSONStyle(t, e.must("admin", "heal", "s1", "--scan", "--json"))[0]
	if rep["orphans"] != 1.0 || rep["removed"] != 1.0 || rep["versions"] != 1.0 || rep["blobFiles"] != 2.0 {
		t.Errorf("heal = %v", rep)
	}
	if _, err := blobs.Open(stray); err == nil {
		t.Error("the stray file is still there")
	}
	if got := e.content(t, "healme", "obj"); got != body {
		t.Errorf("object reads %d bytes after the heal", len(got))
	}
	// Without --scan: the latest scan's result (the heal just run), as
	// text and as JSON; a scan's flags alone are refused.
	if out := e.must("admin", "heal", "s1"); !strings.Contains(out, "Latest scan: done (started ") ||
		!strings.Contains(out, "1 versions and 0 parts read, 0 degraded, 0 shards rebuilt, 0 missing") {
		t.Errorf("heal status after a scan:\n%s", out)
	}
	st := checkJSONStyle(t, e.must("admin", "heal", "s1", "--json"))[0]
	if h, ok := st["heal"].(map[string]any); !ok || h["running"] != false || h["percent"] != 100.0 || h["versions"] != 1.0 {
		t.Errorf("heal status as JSON: %v", st)
	}
	if _, err := e.run("admin", "heal", "s1", "--dry-run"); err == nil || !strings.Contains(err.Error(), "pass --scan") {
		t.Errorf("heal --dry-run without --scan: %v", err)
	}
	if _, err := e.run("admin", "heal", "s1", "--scan", "--rate", "5"); err == nil || !strings.Contains(err.Error(), "--rate 5") {
		t.Errorf("heal with a rate out of bounds: %v", err)
	}
}
