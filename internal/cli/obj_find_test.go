package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestFind(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "s1/bkt")
	putObjects(t, e, "bkt", map[string]string{
		"photos/2024/cat.jpg": strings.Repeat("c", 2000), "photos/2024/dog.png": "dog",
		"photos/2023/old.jpg": "old", "notes.txt": "n",
	})
	lines := func(out string) []string { return strings.Split(strings.TrimSpace(out), "\n") }
	e.runSteps(t, []step{
		{name: "all", args: []string{"find", "s1/bkt"}, check: func(t *testing.T, out string) {
			want := []string{"s1/bkt/notes.txt", "s1/bkt/photos/2023/old.jpg", "s1/bkt/photos/2024/cat.jpg", "s1/bkt/photos/2024/dog.png"}
			if got := lines(out); !slices.Equal(got, want) {
				t.Errorf("find = %v", got)
			}
		}},
		{name: "name", args: []string{"find", "s1/bkt", "--name", "*.jpg"}, check: func(t *testing.T, out string) {
			if got := lines(out); !slices.Equal(got, []string{"s1/bkt/photos/2023/old.jpg", "s1/bkt/photos/2024/cat.jpg"}) {
				t.Errorf("find --name = %v", got)
			}
		}},
		{name: "path", args: []string{"find", "s1/bkt/photos", "--path", "*2024/*"}, check: func(t *testing.T, out string) {
			if got := lines(out); len(got) != 2 || !strings.Contains(got[0], "2024/cat.jpg") {
				t.Errorf("find --path = %v", got)
			}
		}},
		{name: "regex", args: []string{"find", "s1/bkt", "--regex", `(dog|notes)\.`}, check: func(t *testing.T, out string) {
			if got := lines(out); len(got) != 2 {
				t.Errorf("find --regex = %v", got)
			}
		}},
		{name: "larger", args: []string{"find", "s1/bkt", "--larger", "1KiB"}, check: func(t *testing.T, out string) {
			if got := lines(out); !slices.Equal(got, []string{"s1/bkt/photos/2024/cat.jpg"}) {
				t.Errorf("find --larger = %v", got)
			}
		}},
		{name: "smaller and print", args: []string{"find", "s1/bkt", "--smaller", "3", "--print", "{base} {size}"}, want: []string{"notes.txt 1"}},
		{name: "newer than", args: []string{"find", "s1/bkt", "--newer-than", "1h", "--name", "notes*"}, want: []string{"s1/bkt/notes.txt"}},
		{name: "older than", args: []string{"find", "s1/bkt", "--older-than", "1d"}, check: func(t *testing.T, out string) {
			if out != "" {
				t.Errorf("find --older-than 1d = %q", out)
			}
		}},
		{name: "maxdepth", args: []string{"find", "s1/bkt", "--maxdepth", "1"}, check: func(t *testing.T, out string) {
			if got := lines(out); !slices.Equal(got, []string{"s1/bkt/notes.txt"}) {
				t.Errorf("find --maxdepth 1 = %v", got)
			}
		}},
		{name: "json", args: []string{"find", "--json", "s1/bkt", "--name", "dog.png"}, check: func(t *testing.T, out string) {
			o := checkJSONStyle(t, out)
			if len(o) != 1 || o[0]["key"] != "s1/bkt/photos/2024/dog.png" || o[0]["size"] != float64(3) || o[0]["etag"] == "" {
				t.Errorf("find --json = %v", o)
			}
		}},
		{name: "exec", args: []string{"find", "s1/bkt", "--name", "*.png", "--exec", "echo found {base} {size}"}, want: []string{"found dog.png 3"}},
		{name: "exec fails", args: []string{"find", "s1/bkt", "--name", "*.png", "--exec", "false"}, wantErr: "1 --exec runs failed"},
		{name: "bad age", args: []string{"find", "s1/bkt", "--older-than", "7x"}, wantErr: "--older-than"},
		{name: "bad size", args: []string{"find", "s1/bkt", "--larger", "big"}, wantErr: "--larger"},
	})
	// A local directory works too.
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a", "x.parquet"), "p")
	writeFile(t, filepath.Join(dir, "b.txt"), "t")
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(filepath.Join(dir, "b.txt"), old, old)
	if out := e.must("find", dir, "--regex", `\.parquet$`); strings.TrimSpace(out) != filepath.Join(dir, "a", "x.parquet") {
		t.Errorf("find local = %q", out)
	}
	if out := e.must("find", dir, "--older-than", "1d"); strings.TrimSpace(out) != filepath.Join(dir, "b.txt") {
		t.Errorf("find local --older-than = %q", out)
	}
}
