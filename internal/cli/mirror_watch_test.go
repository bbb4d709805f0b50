package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/testsite"
)

// mirror --watch copies what is there, then follows the source: a new
// object, an overwrite and a delete (with --remove) reach the target while
// the command runs; an interrupt ends it without an error.
func TestMirrorWatch(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "s1/watched")
	put := func(key, body string) {
		t.Helper()
		if _, err := e.c.PutObject(t.Context(), "watched", key, strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put("docs/first.txt", "first")
	dst := t.TempDir()

	ctx, cancel := context.WithCancel(t.Context())
	out, errOut := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		root := NewRoot()
		root.SetArgs([]string{"--config-dir", e.dir, "mirror", "--watch", "--overwrite", "--remove", "s1/watched/docs", dst})
		root.SetOut(out)
		root.SetErr(errOut)
		done <- Execute(ctx, root)
	}()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil {
			return ""
		}
		return string(b)
	}
	wait := func(what string, cond func() bool) {
		t.Helper()
		testsite.Eventually(t, 15*time.Second, func() error {
			if !cond() {
				return fmt.Errorf("waiting for %s", what)
			}
			return nil
		})
	}
	wait("the first pass", func() bool { return read("first.txt") == "first" })
	wait("the watch to start", func() bool { return strings.Contains(errOut.String(), "watching") })
	put("docs/new/second.txt", "second")
	wait("a new object", func() bool { return read("new/second.txt") == "second" })
	put("docs/first.txt", "first, changed")
	wait("an overwrite", func() bool { return read("first.txt") == "first, changed" })
	put("elsewhere.txt", "not under the prefix")
	if err := e.c.RemoveObject(t.Context(), "watched", "docs/new/second.txt", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	wait("a delete", func() bool {
		_, err := os.Stat(filepath.Join(dst, "new", "second.txt"))
		return os.IsNotExist(err)
	})
	if _, err := os.Stat(filepath.Join(dst, "elsewhere.txt")); err == nil {
		t.Error("an object outside the source prefix was mirrored")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("interrupted watch: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("mirror --watch did not stop when interrupted")
	}

	if _, err := e.run("mirror", "--watch", dst, "s1/watched"); err == nil || !strings.Contains(err.Error(), "source must be ALIAS/BUCKET") {
		t.Errorf("--watch from a local directory: %v", err)
	}
}
