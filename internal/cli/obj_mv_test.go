package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMove: mv copies as cp does and removes each source once its copy is
// acknowledged: a local file to an object, an object to another key on the
// same site (server-side), an object to a local file, a prefix and a local
// directory recursively. A move onto itself or into an overlapping prefix
// is refused and leaves everything in place; so is a failed copy.
func TestMove(t *testing.T) {
	e := newSiteEnv(t)
	dir := t.TempDir()
	e.must("mb", "s1/bkt")
	e.must("mb", "--with-versioning", "s1/ver")
	report := writeFile(t, filepath.Join(dir, "report.txt"), "quarterly")
	writeFile(t, filepath.Join(dir, "exports", "a.csv"), "a")
	writeFile(t, filepath.Join(dir, "exports", "sub", "b.csv"), "bb")

	has := func(t *testing.T, bucket, prefix string, want ...string) {
		t.Helper()
		if got := e.keys(t, bucket, prefix); !slices.Equal(got, want) {
			t.Fatalf("keys under %s/%s = %v, want %v", bucket, prefix, got, want)
		}
	}
	gone := func(t *testing.T, p string) {
		t.Helper()
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s still there (%v)", p, err)
		}
	}
	e.runSteps(t, []step{
		{name: "local file to a folder", args: []string{"mv", report, "s1/bkt/docs/"},
			want: []string{"-> `s1/bkt/docs/report.txt`"},
			check: func(t *testing.T, _ string) {
				gone(t, report)
				if got := e.content(t, "bkt", "docs/report.txt"); got != "quarterly" {
					t.Fatalf("moved content %q", got)
				}
			}},
		{name: "onto itself is refused", args: []string{"mv", "s1/bkt/docs/report.txt", "s1/bkt/docs/"},
			wantErr: "are the same object",
			check:   func(t *testing.T, _ string) { has(t, "bkt", "docs/", "docs/report.txt") }},
		{name: "object to another key, server-side", args: []string{"mv", "--json", "s1/bkt/docs/report.txt", "s1/bkt/archive/2024.txt"},
			want: []string{`"status":"success"`, `"target":"s1/bkt/archive/2024.txt"`},
			check: func(t *testing.T, _ string) {
				has(t, "bkt", "", "archive/2024.txt")
				if got := e.content(t, "bkt", "archive/2024.txt"); got != "quarterly" {
					t.Fatalf("moved content %q", got)
				}
			}},
		{name: "object to a local file", args: []string{"mv", "s1/bkt/archive/2024.txt", filepath.Join(dir, "back.txt")},
			check: func(t *testing.T, _ string) {
				has(t, "bkt", "")
				if got := readFile(t, filepath.Join(dir, "back.txt")); got != "quarterly" {
					t.Fatalf("downloaded %q", got)
				}
			}},
		{name: "local directory, recursive", args: []string{"mv", "-r", filepath.Join(dir, "exports"), "s1/ver/in/"},
			check: func(t *testing.T, _ string) {
				has(t, "ver", "", "in/exports/a.csv", "in/exports/sub/b.csv")
				gone(t, filepath.Join(dir, "exports", "a.csv"))
				gone(t, filepath.Join(dir, "exports", "sub", "b.csv"))
			}},
		{name: "overlapping prefix is refused", args: []string{"mv", "-r", "s1/ver/in/", "s1/ver/in/deeper/"},
			wantErr: "overlaps the source",
			check:   func(t *testing.T, _ string) { has(t, "ver", "", "in/exports/a.csv", "in/exports/sub/b.csv") }},
		{name: "prefix to another bucket, recursive", args: []string{"mv", "-r", "s1/ver/in/exports/", "s1/bkt/csv"},
			check: func(t *testing.T, _ string) {
				has(t, "bkt", "", "csv/a.csv", "csv/sub/b.csv")
				has(t, "ver", "")
				// A versioned source keeps its data under delete markers.
				markers := 0
				for _, v := range e.versions(t, "ver", "") {
					if v.IsDeleteMarker {
						markers++
					}
				}
				if markers != 2 {
					t.Fatalf("delete markers on the versioned source: %d, want 2", markers)
				}
			}},
		{name: "a failed copy keeps its source", args: []string{"mv", filepath.Join(dir, "back.txt"), "s1/nosuchbucket/x"},
			wantErr: "NoSuchBucket",
			check: func(t *testing.T, _ string) {
				if got := readFile(t, filepath.Join(dir, "back.txt")); got != "quarterly" {
					t.Fatalf("source after a failed move: %q", got)
				}
			}},
		{name: "standard input is refused", args: []string{"mv", "-", "s1/bkt/x"}, wantErr: "standard input cannot be moved"},
	})
	if out := e.must("mv", "--help"); !strings.Contains(out, "removing each source once") {
		t.Fatalf("mv --help:\n%s", out)
	}
}
