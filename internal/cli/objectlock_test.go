package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// mb --with-lock, retention set|get|clear (objects, --recursive, --default,
// --bypass, mc's MODE VALIDITY TARGET order) and legalhold set|get|clear,
// checked against the server with minio-go.
func TestObjectLockCommands(t *testing.T) {
	e := newSiteEnv(t)
	ctx := t.Context()
	if out := e.must("mb", "--with-lock", "--json", "s1/worm"); !strings.Contains(out, `"objectLock":true`) {
		t.Fatalf("mb --with-lock printed %s", out)
	}
	if enabled, _, _, _, err := e.c.GetObjectLockConfig(ctx, "worm"); err != nil || enabled != "Enabled" || e.versioning(t, "worm") != "Enabled" {
		t.Fatalf("bucket made with --with-lock: %q %v", enabled, err)
	}
	e.must("mb", "s1/plain")

	// Default retention.
	e.must("retention", "set", "--default", "s1/worm", "GOVERNANCE", "30d")
	if _, mode, n, unit, err := e.c.GetObjectLockConfig(ctx, "worm"); err != nil || mode == nil || *mode != minio.Governance || *n != 30 || *unit != minio.Days {
		t.Fatalf("default retention on the server: %v %v %v %v", mode, n, unit, err)
	}
	if l := jsonLines(t, e.must("retention", "get", "--json", "s1/worm")); len(l) != 1 || l[0]["mode"] != "GOVERNANCE" || l[0]["validity"] != "30d" || l[0]["enabled"] != true {
		t.Fatalf("retention get of the bucket: %v", l)
	}

	src := t.TempDir()
	e.must("cp", writeFile(t, filepath.Join(src, "a"), "a"), "s1/worm/docs/a")
	e.must("cp", writeFile(t, filepath.Join(src, "b"), "b"), "s1/worm/docs/b")
	l := jsonLines(t, e.must("retention", "get", "--json", "s1/worm/docs/a"))
	if len(l) != 1 || l[0]["mode"] != "GOVERNANCE" {
		t.Fatalf("default retention on a new object: %v", l)
	}
	until, err := time.Parse(time.RFC3339, l[0]["retainUntil"].(string))
	if err != nil || until.Before(time.Now().Add(29*24*time.Hour)) {
		t.Fatalf("retain until %v %v", until, err)
	}

	for _, s := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"governance to compliance needs --bypass", []string{"retention", "set", "s1/worm/docs/a", "COMPLIANCE", "2d"}, "AccessDenied"},
		{"with --bypass, in mc's order", []string{"retention", "set", "--bypass", "compliance", "2d", "s1/worm/docs/a"}, ""},
		{"compliance cannot be cleared", []string{"retention", "clear", "--bypass", "s1/worm/docs/a"}, "AccessDenied"},
		{"compliance cannot be shortened", []string{"retention", "set", "--bypass", "s1/worm/docs/a", "COMPLIANCE", "1d"}, "AccessDenied"},
		{"a bucket needs --default or --recursive", []string{"retention", "set", "s1/worm", "GOVERNANCE", "1d"}, "names a bucket"},
		{"bad validity", []string{"retention", "set", "s1/worm/docs/a", "GOVERNANCE", "30x"}, "validity"},
		{"bad mode", []string{"retention", "set", "s1/worm/docs/a", "FOREVER", "1d"}, "mode"},
		{"--default with a key", []string{"retention", "clear", "--default", "s1/worm/docs/a"}, "--default"},
		{"no object lock", []string{"legalhold", "set", "s1/plain/x"}, ""},
	} {
		if s.name == "no object lock" {
			e.must("cp", writeFile(t, filepath.Join(src, "x"), "x"), "s1/plain/x")
			s.wantErr = "InvalidRequest"
		}
		_, err := e.run(s.args...)
		if s.wantErr == "" && err != nil || s.wantErr != "" && (err == nil || !strings.Contains(err.Error(), s.wantErr)) {
			t.Errorf("%s: %v, want %q", s.name, err, s.wantErr)
		}
	}
	mode, u, err := e.c.GetObjectRetention(ctx, "worm", "docs/a", "")
	if err != nil || *mode != minio.Compliance || u.Before(time.Now().Add(47*time.Hour)) {
		t.Fatalf("docs/a on the server: %v %v %v", mode, u, err)
	}

	// --recursive goes on past a refused object and exits 1.
	out, err := e.run("retention", "clear", "--recursive", "--bypass", "--json", "s1/worm/docs/")
	if err == nil {
		t.Fatalf("clear --recursive over a compliance object succeeded: %s", out)
	}
	var cleared, refused int
	for _, l := range jsonLines(t, out) {
		switch {
		case l["status"] == "success" && l["name"] == "s1/worm/docs/b":
			cleared++
		case l["status"] == "error":
			refused++
		}
	}
	if cleared != 1 || refused != 1 {
		t.Fatalf("clear --recursive: %s", out)
	}
	if m, _, err := e.c.GetObjectRetention(ctx, "worm", "docs/b", ""); minio.ToErrorResponse(err).Code != "NoSuchObjectLockConfiguration" {
		t.Fatalf("docs/b retention after clearing: %v %v", m, err)
	}

	// Legal hold blocks a delete until cleared.
	st, err := e.c.StatObject(ctx, "worm", "docs/b", minio.StatObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.must("legalhold", "set", "--version-id", st.VersionID, "s1/worm/docs/b")
	if l := jsonLines(t, e.must("legalhold", "get", "--json", "s1/worm/docs/b")); len(l) != 1 || l[0]["legalHold"] != "ON" {
		t.Fatalf("legalhold get: %v", l)
	}
	if err := e.c.RemoveObject(ctx, "worm", "docs/b", minio.RemoveObjectOptions{VersionID: st.VersionID}); minio.ToErrorResponse(err).Code != "AccessDenied" {
		t.Fatalf("delete under legal hold: %v", err)
	}
	e.must("legalhold", "clear", "--recursive", "s1/worm/docs/")
	if out := e.must("legalhold", "get", "s1/worm/docs/b"); !strings.Contains(out, "legal hold OFF") {
		t.Fatalf("legalhold get after clear: %s", out)
	}
	if err := e.c.RemoveObject(ctx, "worm", "docs/b", minio.RemoveObjectOptions{VersionID: st.VersionID}); err != nil {
		t.Fatalf("delete after the legal hold is cleared: %v", err)
	}

	e.must("retention", "clear", "--default", "s1/worm")
	if out := e.must("retention", "get", "--default", "s1/worm"); !strings.Contains(out, "no default retention") {
		t.Fatalf("after clearing the default: %s", out)
	}
}
