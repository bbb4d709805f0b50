package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// TestCopyTagsAndAge: cp and mv --tags tag every object they write (an
// upload, a server-side copy, whose source tags the flag replaces);
// --older-than and --newer-than pick the sources of a recursive copy by
// modification time, local files and objects alike; both are refused
// where they cannot apply.
func TestCopyTagsAndAge(t *testing.T) {
	e := newSiteEnv(t)
	dir := t.TempDir()
	e.must("mb", "s1/bkt")
	e.must("mb", "s1/other")
	old := writeFile(t, filepath.Join(dir, "tree", "old.txt"), "old")
	writeFile(t, filepath.Join(dir, "tree", "new.txt"), "new")
	tenDays := time.Now().Add(-10 * 24 * time.Hour)
	if err := os.Chtimes(old, tenDays, tenDays); err != nil {
		t.Fatal(err)
	}
	tagsOf := func(t *testing.T, key string) map[string]string {
		t.Helper()
		tg, err := e.c.GetObjectTagging(t.Context(), "bkt", key, minio.GetObjectTaggingOptions{})
		if err != nil {
			t.Fatalf("tags of %s: %v", key, err)
		}
		return tg.ToMap()
	}
	e.runSteps(t, []step{
		{name: "only old files", args: []string{"cp", "-r", "--older-than", "7d", filepath.Join(dir, "tree") + "/", "s1/bkt/aged/"},
			check: func(t *testing.T, _ string) {
				if keys := e.keys(t, "bkt", "aged/"); len(keys) != 1 || keys[0] != "aged/old.txt" {
					t.Fatalf("copied %v, want the old file only", keys)
				}
			}},
		{name: "only new files", args: []string{"cp", "-r", "--newer-than", "7d", filepath.Join(dir, "tree") + "/", "s1/bkt/fresh/"},
			check: func(t *testing.T, _ string) {
				if keys := e.keys(t, "bkt", "fresh/"); len(keys) != 1 || keys[0] != "fresh/new.txt" {
					t.Fatalf("copied %v, want the new file only", keys)
				}
			}},
		{name: "upload with tags", args: []string{"cp", "--tags", "team=data&env=prod", filepath.Join(dir, "tree", "new.txt"), "s1/bkt/t.txt"},
			check: func(t *testing.T, _ string) {
				if tg := tagsOf(t, "t.txt"); len(tg) != 2 || tg["team"] != "data" || tg["env"] != "prod" {
					t.Fatalf("tags %v", tg)
				}
			}},
		{name: "server-side copy replaces tags", args: []string{"cp", "--tags", "a=b", "s1/bkt/t.txt", "s1/bkt/t2.txt"},
			check: func(t *testing.T, _ string) {
				if tg := tagsOf(t, "t2.txt"); len(tg) != 1 || tg["a"] != "b" {
					t.Fatalf("tags %v", tg)
				}
			}},
		{name: "objects newer than a day are not older than one", args: []string{"mv", "-r", "--older-than", "1d", "s1/bkt/fresh/", "s1/other/"},
			check: func(t *testing.T, _ string) {
				if keys := e.keys(t, "other", ""); len(keys) != 0 {
					t.Fatalf("moved %v", keys)
				}
			}},
		{name: "tags need a remote target", args: []string{"cp", "--tags", "a=b", "s1/bkt/t.txt", filepath.Join(dir, "x")}, wantErr: "needs an ALIAS/BUCKET target"},
		{name: "age needs recursive", args: []string{"cp", "--older-than", "1d", old, "s1/bkt/"}, wantErr: "add --recursive"},
		{name: "bad tags", args: []string{"cp", "--tags", "=x", old, "s1/bkt/"}, wantErr: "--tags"},
	})
	if strings.Contains(e.must("ls", "s1/bkt/aged/"), "new.txt") {
		t.Fatal("a new file was copied with --older-than")
	}
}
