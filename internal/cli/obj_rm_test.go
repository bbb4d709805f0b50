package cli

import (
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

// TestRemoveRecursiveForceDoesNotPrompt: as in mc, --force is the
// confirmation; a non-terminal stdin (a script, a cron job) must not abort.
func TestRemoveRecursiveForceDoesNotPrompt(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "--with-versioning", "s1/bkt")
	for _, k := range []string{"logs/a", "logs/b", "logs/sub/c", "keep/d"} {
		if _, err := e.c.PutObject(t.Context(), "bkt", k, strings.NewReader(k), int64(len(k)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.runSteps(t, []step{
		{name: "recursive force, stdin not a terminal", args: []string{"rm", "--recursive", "--force", "s1/bkt/logs/"}, stdin: "",
			check: func(t *testing.T, out string) {
				if n := strings.Count(out, "Removed `s1/bkt/logs/"); n != 3 {
					t.Errorf("removed %d, want 3:\n%s", n, out)
				}
				if keys := e.keys(t, "bkt", ""); len(keys) != 1 || keys[0] != "keep/d" {
					t.Errorf("keys left: %v", keys)
				}
			}},
		{name: "recursive versions force purges", args: []string{"rm", "-r", "--versions", "--force", "--json", "s1/bkt/logs/"},
			check: func(t *testing.T, out string) {
				// three objects and their three delete markers
				if objs := jsonLines(t, out); len(objs) != 6 || objs[0]["status"] != "success" {
					t.Errorf("rm -r --versions --json = %v", objs)
				}
				if vs := e.versions(t, "bkt", "logs/"); len(vs) != 0 {
					t.Errorf("versions left: %+v", vs)
				}
			}},
		{name: "versions force single key", args: []string{"rm", "--versions", "--force", "s1/bkt/keep/d"},
			check: func(t *testing.T, _ string) {
				if vs := e.versions(t, "bkt", "keep/"); len(vs) != 0 {
					t.Errorf("versions left: %+v", vs)
				}
			}},
	})
}
