package cli

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

// TestOD: od copies as dd does: a file to an object in parts of size=
// (a multipart upload of those parts), a window of an object (skip=,
// count=) to a file, standard input to an object, an object cut into
// parts=N; bad operands are refused.
func TestOD(t *testing.T) {
	e := newSiteEnv(t)
	dir := t.TempDir()
	e.must("mb", "s1/bkt")
	data := make([]byte, 12<<20)
	for i := range data {
		data[i] = byte(rand.IntN(256))
	}
	src := filepath.Join(dir, "disk.img")
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := e.must("od", "if="+src, "of=s1/bkt/disk.img", "size=5MiB")
	if !strings.Contains(out, "Transferred: 12.0MiB, Parts: 3") {
		t.Fatalf("od file to object: %s", out)
	}
	if got := e.content(t, "bkt", "disk.img"); got != string(data) {
		t.Fatal("the object differs from the file")
	}
	info, err := e.c.StatObject(t.Context(), "bkt", "disk.img", minio.StatObjectOptions{})
	if err != nil || !strings.HasSuffix(info.ETag, "-3") {
		t.Fatalf("the object's ETag %q (%v), want a 3-part upload's", info.ETag, err)
	}

	window := filepath.Join(dir, "window.bin")
	e.must("od", "if=s1/bkt/disk.img", "of="+window, "size=5MiB", "skip=1", "count=1")
	if got, _ := os.ReadFile(window); !bytes.Equal(got, data[5<<20:10<<20]) {
		t.Fatalf("skip=1 count=1 copied %d bytes, not the second part", len(got))
	}

	if _, errOut, err := e.runIn("from stdin", "od", "of=s1/bkt/stdin.txt"); err != nil {
		t.Fatalf("od from stdin: %v %s", err, errOut)
	}
	if got := e.content(t, "bkt", "stdin.txt"); got != "from stdin" {
		t.Fatalf("from stdin: %q", got)
	}

	whole := filepath.Join(dir, "whole.bin")
	if js := e.must("od", "--json", "if=s1/bkt/disk.img", "of="+whole, "parts=4"); !strings.Contains(js, `"parts":4`) || !strings.Contains(js, `"bytes":12582912`) {
		t.Fatalf("od parts=4 --json: %s", js)
	}
	if got, _ := os.ReadFile(whole); !bytes.Equal(got, data) {
		t.Fatal("parts=4 did not copy the whole object")
	}

	for _, c := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"od", "if=" + src}, "needs of=TARGET"},
		{[]string{"od", "if=" + src, "of=s1/bkt/x", "bs=1"}, "unknown operand bs="},
		{[]string{"od", "if=" + src, "of=s1/bkt/x", "size=5MiB", "parts=2"}, "not both"},
		{[]string{"od", "if=" + src, "of=s1/bkt/x", "count=1"}, "give size= too"},
		{[]string{"od", "if=" + src, "of=s1/bkt/x", "size=1MiB"}, "5MiB at least"},
		{[]string{"od", "if=" + src, "of=s1/bkt/x", "count=0", "size=5MiB"}, "want 1 to 10000"},
		{[]string{"od", "of=s1/bkt/x", "parts=2"}, "known size"},
	} {
		if _, err := e.run(c.args...); err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("twinlake %s: %v, want %q", strings.Join(c.args, " "), err, c.wantErr)
		}
	}
}
