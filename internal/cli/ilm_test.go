package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/testsite"
)

// ilm rule add|ls|edit|rm and ilm export|import manage a bucket's
// lifecycle rules as mc's do, and the site carries them out: with a short
// lifecycle day, an object under an expiring prefix disappears while the
// others stay.
func TestILMCommands(t *testing.T) {
	e := newSiteEnv(t)
	ctx := context.Background()
	if err := e.site.Server().Settings().Set(ctx, "ilm", map[string]string{"interval": "100ms", "day_length": "1s"}); err != nil {
		t.Fatal(err)
	}
	e.must("mb", "s1/data")
	if out := e.must("ilm", "rule", "ls", "s1/data"); !strings.Contains(out, "No lifecycle rules") {
		t.Errorf("ls before add: %q", out)
	}
	for _, bad := range []struct{ args []string }{
		{[]string{"ilm", "rule", "add", "s1/data"}},                                                 // no action
		{[]string{"ilm", "rule", "add", "--transition-days", "3", "s1/data"}},                       // refused
		{[]string{"ilm", "rule", "add", "--expire-days", "1", "--expire-delete-marker", "s1/data"}}, // contradiction
		{[]string{"ilm", "rule", "add", "--expire-days", "0", "s1/data"}},                           // server refuses
		{[]string{"ilm", "rule", "rm", "--all", "s1/data"}},                                         // needs --force
	} {
		if _, err := e.run(bad.args...); err == nil {
			t.Errorf("%v succeeded", bad.args)
		}
	}
	if out := e.must("ilm", "rule", "add", "--id", "tmp", "--expire-days", "1", "--prefix", "tmp/", "s1/data"); !strings.Contains(out, "`tmp`") {
		t.Errorf("add printed %q", out)
	}
	e.must("ilm", "rule", "add", "--id", "old", "--noncurrent-expire-days", "30", "--noncurrent-expire-newer", "3",
		"--tags", "team=a&class=b", "s1/data")
	if _, err := e.run("ilm", "rule", "add", "--id", "tmp", "--expire-days", "2", "s1/data"); err == nil {
		t.Error("a second rule with the same ID was added")
	}
	out := e.must("ilm", "rule", "ls", "s1/data")
	for _, want := range []string{"tmp", "tmp/", "1 days", "30 days, keep 3 newest", "class=b&team=a"} {
		if !strings.Contains(out, want) {
			t.Errorf("ls lacks %q:\n%s", want, out)
		}
	}
	lines := jsonLines(t, e.must("ilm", "rule", "ls", "--json", "s1/data"))
	if len(lines) != 2 || lines[0]["summary"].(map[string]any)["id"] != "tmp" {
		t.Fatalf("ls --json: %v", lines)
	}
	e.must("ilm", "rule", "edit", "--id", "old", "--disable", "s1/data")
	if out := e.must("ilm", "rule", "ls", "s1/data"); !strings.Contains(out, "Disabled") {
		t.Errorf("edit --disable not shown:\n%s", out)
	}

	exported := e.must("ilm", "export", "s1/data")
	var doc map[string]any
	if err := json.Unmarshal([]byte(exported), &doc); err != nil {
		t.Fatalf("export is not JSON: %v\n%s", err, exported)
	}
	e.must("ilm", "rule", "rm", "--id", "old", "s1/data")
	if out := e.must("ilm", "rule", "ls", "s1/data"); strings.Contains(out, "old") {
		t.Errorf("rm left the rule:\n%s", out)
	}
	e.must("ilm", "rule", "rm", "--all", "--force", "s1/data")
	if _, err := e.run("ilm", "export", "s1/data"); err == nil || !strings.Contains(err.Error(), "no lifecycle configuration") {
		t.Errorf("export after rm --all: %v", err)
	}
	if _, _, err := e.runIn(exported, "ilm", "import", "s1/data"); err != nil {
		t.Fatalf("import: %v", err)
	}
	if out := e.must("ilm", "rule", "ls", "s1/data"); !strings.Contains(out, "tmp/") || !strings.Contains(out, "old") {
		t.Errorf("import did not restore both rules:\n%s", out)
	}

	for _, k := range []string{"tmp/a", "keep/b"} {
		if _, err := e.c.PutObject(ctx, "data", k, strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	testsite.Eventually(t, 20*time.Second, func() error {
		var keys []string
		for o := range e.c.ListObjects(ctx, "data", minio.ListObjectsOptions{Recursive: true}) {
			keys = append(keys, o.Key)
		}
		if len(keys) != 1 || keys[0] != "keep/b" {
			return fmt.Errorf("objects %v", keys)
		}
		return nil
	})
}
