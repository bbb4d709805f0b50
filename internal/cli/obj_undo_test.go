package cli

import (
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

// TestUndo: undo reverts an object's newest changes on a versioned bucket
// by removing its newest versions: a delete marker (a removal undone) and
// a version (an upload undone, the one before it current again); --action
// stops at an object's first change of the other kind; --dry-run changes
// nothing; --recursive needs --force; an unversioned bucket is refused; a
// version under retention is reported and the command exits 1.
func TestUndo(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "--with-versioning", "s1/ver")
	e.must("mb", "s1/plain")
	put := func(bucket, key, body string) {
		t.Helper()
		if _, err := e.c.PutObject(t.Context(), bucket, key, strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	del := func(bucket, key string) {
		t.Helper()
		if err := e.c.RemoveObject(t.Context(), bucket, key, minio.RemoveObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put("ver", "a", "one")
	put("ver", "a", "two")
	del("ver", "a")
	put("ver", "p/x", "x1")
	put("ver", "p/x", "x2")
	put("ver", "p/y", "y1")
	del("ver", "p/y")
	put("plain", "k", "v")
	count := func(t *testing.T, prefix string) int {
		t.Helper()
		return len(e.versions(t, "ver", prefix))
	}
	e.runSteps(t, []step{
		{name: "a removal", args: []string{"undo", "s1/ver/a"}, want: []string{"Last removal of `s1/ver/a`"},
			check: func(t *testing.T, _ string) {
				if got := e.content(t, "ver", "a"); got != "two" {
					t.Fatalf("after undoing the removal: %q", got)
				}
			}},
		{name: "only removals: the newest change is an upload", args: []string{"undo", "--action", "delete", "s1/ver/a"},
			check: func(t *testing.T, out string) {
				if out != "" || count(t, "a") != 2 {
					t.Fatalf("undo --action DELETE changed something: %q, %d versions", out, count(t, "a"))
				}
			}},
		{name: "dry run", args: []string{"undo", "--dry-run", "--json", "s1/ver/a"}, want: []string{`"action":"PUT"`, `"dryRun":true`},
			check: func(t *testing.T, _ string) {
				if got := e.content(t, "ver", "a"); got != "two" {
					t.Fatalf("a dry run changed the object: %q", got)
				}
			}},
		{name: "an upload", args: []string{"undo", "s1/ver/a"}, want: []string{"Last upload of `s1/ver/a`"},
			check: func(t *testing.T, _ string) {
				if got := e.content(t, "ver", "a"); got != "one" {
					t.Fatalf("after undoing the upload: %q", got)
				}
			}},
		{name: "recursive needs force", args: []string{"undo", "-r", "s1/ver/p/"}, wantErr: "add --force"},
		{name: "a prefix, uploads only", args: []string{"undo", "-r", "--force", "--action", "PUT", "s1/ver/p/"},
			check: func(t *testing.T, _ string) {
				if got := e.content(t, "ver", "p/x"); got != "x1" {
					t.Fatalf("p/x after undoing its upload: %q", got)
				}
				if keys := e.keys(t, "ver", "p/"); len(keys) != 1 || keys[0] != "p/x" {
					t.Fatalf("p/y, last removed, came back: %v", keys)
				}
			}},
		{name: "a prefix, two changes each", args: []string{"undo", "-r", "--force", "--last", "2", "s1/ver/p/"},
			check: func(t *testing.T, out string) {
				if n := strings.Count(out, "reverted."); n != 3 || count(t, "p/") != 0 {
					t.Fatalf("reverted %d changes, %d versions left:\n%s", n, count(t, "p/"), out)
				}
			}},
		{name: "bad --last", args: []string{"undo", "--last", "0", "s1/ver/a"}, wantErr: "want 1 to 10000"},
		{name: "bad --action", args: []string{"undo", "--action", "copy", "s1/ver/a"}, wantErr: "want PUT or DELETE"},
		{name: "an unversioned bucket", args: []string{"undo", "s1/plain/k"}, wantErr: "never versioned"},
		{name: "a prefix without --recursive", args: []string{"undo", "s1/ver/p/"}, wantErr: "want ALIAS/BUCKET/KEY"},
	})

	e.must("mb", "--with-lock", "s1/vault")
	e.must("retention", "set", "--default", "s1/vault", "GOVERNANCE", "1d")
	put("vault", "kept", "under retention")
	if _, err := e.run("undo", "s1/vault/kept"); err == nil || !strings.Contains(err.Error(), "1 version removals failed") {
		t.Fatalf("undo of a version under retention: %v", err)
	}
	if got := e.content(t, "vault", "kept"); got != "under retention" {
		t.Fatalf("the retained version after undo: %q", got)
	}
}
