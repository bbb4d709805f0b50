package cli

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMirrorAndDiff(t *testing.T) {
	e := newSiteEnv(t)
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "a.txt"), "file a")
	writeFile(t, filepath.Join(src, "sub", "b.txt"), "file b")
	writeFile(t, filepath.Join(src, "skip.tmp"), "temporary")
	// Over one 16MiB part: its ETag is multipart, and resuming must still
	// recognise it as identical.
	big := make([]byte, 17<<20)
	rand.Read(big)
	writeFile(t, filepath.Join(src, "big.bin"), string(big))
	summary := func(out string) map[string]any {
		o := checkJSONStyle(t, out)
		return o[len(o)-1]
	}
	restore := filepath.Join(t.TempDir(), "restore")

	e.runSteps(t, []step{
		{name: "local to new bucket", args: []string{"mirror", "--exclude", "*.tmp", src, "s1/bkt/m"}, check: func(t *testing.T, out string) {
			if got := e.keys(t, "bkt", ""); !slices.Equal(got, []string{"m/a.txt", "m/big.bin", "m/sub/b.txt"}) {
				t.Errorf("keys = %v", got)
			}
			if !strings.Contains(out, "Mirrored 3 objects") {
				t.Errorf("mirror:\n%s", out)
			}
		}},
		{name: "re-run resumes: nothing copied", args: []string{"mirror", "--json", "--exclude", "*.tmp", src, "s1/bkt/m"}, check: func(t *testing.T, out string) {
			s := summary(out)
			if s["copied"] != float64(0) || s["skipped"] != float64(4) || s["failed"] != float64(0) || s["durationSeconds"] == nil {
				t.Errorf("re-run summary = %v\n%s", s, out)
			}
		}},
	})
	writeFile(t, filepath.Join(src, "a.txt"), "file a, changed")
	e.runSteps(t, []step{
		{name: "changed file needs overwrite", args: []string{"mirror", "--exclude", "*.tmp", src, "s1/bkt/m"}, stdin: "",
			wantErr: "1 objects failed"},
		{name: "overwrite", args: []string{"mirror", "--overwrite", "--json", "--exclude", "*.tmp", src, "s1/bkt/m"}, check: func(t *testing.T, out string) {
			if s := summary(out); s["copied"] != float64(1) || s["copiedSize"] != float64(len("file a, changed")) {
				t.Errorf("overwrite summary = %v", s)
			}
			if e.content(t, "bkt", "m/a.txt") != "file a, changed" {
				t.Error("a.txt not overwritten")
			}
		}},
	})
	putObjects(t, e, "bkt", map[string]string{"m/extra": "x"})
	e.runSteps(t, []step{
		{name: "dry-run remove", args: []string{"mirror", "--remove", "--dry-run", src, "s1/bkt/m"}, check: func(t *testing.T, out string) {
			if !strings.Contains(out, "Would remove `s1/bkt/m/extra`") || !strings.Contains(out, "skip.tmp") {
				t.Errorf("dry run:\n%s", out)
			}
			if e.content(t, "bkt", "m/extra") != "x" {
				t.Error("dry run removed extra")
			}
		}},
		{name: "remove", args: []string{"mirror", "--remove", "--exclude", "*.tmp", src, "s1/bkt/m"}, check: func(t *testing.T, out string) {
			if got := e.keys(t, "bkt", "m/"); !slices.Equal(got, []string{"m/a.txt", "m/big.bin", "m/sub/b.txt"}) {
				t.Errorf("keys after --remove = %v", got)
			}
		}},
		{name: "bucket to bucket", args: []string{"mirror", "s1/bkt/m", "s1/copy"}, check: func(t *testing.T, out string) {
			if got := e.keys(t, "copy", ""); !slices.Equal(got, []string{"a.txt", "big.bin", "sub/b.txt"}) {
				t.Errorf("copy keys = %v", got)
			}
		}},
		{name: "diff buckets identical", args: []string{"diff", "s1/bkt/m", "s1/copy"}, check: func(t *testing.T, out string) {
			if out != "" {
				t.Errorf("diff of a mirror:\n%s", out)
			}
		}},
		{name: "bucket to local", args: []string{"mirror", "s1/bkt/m", restore}, check: func(t *testing.T, _ string) {
			if readFile(t, filepath.Join(restore, "sub", "b.txt")) != "file b" || readFile(t, filepath.Join(restore, "big.bin")) != string(big) {
				t.Error("restored tree differs")
			}
		}},
		{name: "bucket to local resumes", args: []string{"mirror", "--json", "s1/bkt/m", restore}, check: func(t *testing.T, out string) {
			if s := summary(out); s["copied"] != float64(0) || s["skipped"] != float64(3) {
				t.Errorf("summary = %v", s)
			}
		}},
		{name: "diff local and bucket", args: []string{"diff", src, "s1/copy"}, check: func(t *testing.T, out string) {
			want := "< " + filepath.Join(src, "skip.tmp") + "\n"
			if out != want {
				t.Errorf("diff =\n%s\nwant\n%s", out, want)
			}
		}},
	})
	putObjects(t, e, "copy", map[string]string{"a.txt": "FILE A, CHANGED", "only-copy": "1", "sub/b.txt": "bigger b"})
	putObjects(t, e, "bkt", map[string]string{"m/only-m": "2"})
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(filepath.Join(src, "sub", "b.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	e.runSteps(t, []step{
		{name: "diff json", args: []string{"diff", "--json", "s1/copy", "s1/bkt/m"}, check: func(t *testing.T, out string) {
			o := checkJSONStyle(t, out)
			kinds := map[string]string{}
			for _, l := range o {
				k, _ := l["first"].(string)
				if k == "" {
					k, _ = l["second"].(string)
				}
				kinds[k] = l["diff"].(string)
			}
			want := map[string]string{"s1/copy/a.txt": "content", "s1/copy/only-copy": "only-in-first", "s1/bkt/m/only-m": "only-in-second", "s1/copy/sub/b.txt": "size"}
			if len(kinds) != len(want) {
				t.Errorf("diff --json = %v", o)
			}
			for k, v := range want {
				if kinds[k] != v {
					t.Errorf("diff of %s = %q, want %q (all: %v)", k, kinds[k], v, kinds)
				}
			}
		}},
		{name: "newer-than filters", args: []string{"mirror", "--json", "--newer-than", "1h", src, "s1/fresh"}, check: func(t *testing.T, out string) {
			if got := e.keys(t, "fresh", ""); !slices.Equal(got, []string{"a.txt", "big.bin", "skip.tmp"}) {
				t.Errorf("fresh keys = %v (sub/b.txt is two days old)", got)
			}
		}},
		{name: "older-than filters", args: []string{"mirror", "--older-than", "1d", src, "s1/old"}, check: func(t *testing.T, out string) {
			if got := e.keys(t, "old", ""); !slices.Equal(got, []string{"sub/b.txt"}) {
				t.Errorf("old keys = %v", got)
			}
		}},
		{name: "two local dirs", args: []string{"mirror", src, restore}, wantErr: "at least one side"},
		{name: "diff two local dirs", args: []string{"diff", src, restore}, wantErr: "at least one side"},
		{name: "missing source bucket", args: []string{"mirror", "s1/nosuch", restore}, wantErr: "NoSuchBucket"},
	})
}
