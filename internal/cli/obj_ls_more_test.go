package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

// TestListSummarizeAndIncomplete: ls --summarize ends with the objects
// listed and their bytes (delete markers and folders aside), in text and
// JSON; ls --incomplete lists the multipart uploads in progress with their
// upload IDs, and nothing once they are aborted.
func TestListSummarizeAndIncomplete(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "--with-versioning", "s1/bkt")
	for k, size := range map[string]int{"a": 100, "docs/b": 2000, "docs/c": 30} {
		if _, err := e.c.PutObject(t.Context(), "bkt", k, strings.NewReader(strings.Repeat("x", size)), int64(size), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.c.RemoveObject(t.Context(), "bkt", "docs/c", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := e.must("ls", "-r", "--summarize", "s1/bkt"); !strings.HasSuffix(strings.TrimSpace(out), "Total Size: 2.1KiB\nTotal Objects: 2") {
		t.Fatalf("ls -r --summarize:\n%s", out)
	}
	if out := e.must("ls", "-r", "--versions", "--summarize", "s1/bkt"); !strings.Contains(out, "Total Objects: 3") {
		t.Fatalf("ls -r --versions --summarize (three versions, one delete marker):\n%s", out)
	}
	lines := jsonLines(t, e.must("ls", "-r", "--summarize", "--json", "s1/bkt"))
	if last := lines[len(lines)-1]; last["totalObjects"] != float64(2) || last["totalSize"] != float64(2100) {
		t.Fatalf("ls --summarize --json ends with %v", last)
	}

	core := minio.Core{Client: e.c}
	id, err := core.NewMultipartUpload(t.Context(), "bkt", "uploads/big.bin", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := e.must("ls", "--incomplete", "-r", "s1/bkt")
	if !strings.Contains(out, "uploads/big.bin (upload "+id+")") {
		t.Fatalf("ls --incomplete:\n%s", out)
	}
	if js := e.must("ls", "-I", "-r", "--json", "s1/bkt"); !strings.Contains(js, `"type":"upload"`) || !strings.Contains(js, `"uploadId":"`+id+`"`) {
		t.Fatalf("ls --incomplete --json: %s", js)
	}
	if err := core.AbortMultipartUpload(t.Context(), "bkt", "uploads/big.bin", id); err != nil {
		t.Fatal(err)
	}
	if out := e.must("ls", "--incomplete", "-r", "s1/bkt"); out != "" {
		t.Fatalf("ls --incomplete after the abort:\n%s", out)
	}
	if _, err := e.run("ls", "--incomplete", "--versions", "s1/bkt"); err == nil {
		t.Fatal("ls --incomplete --versions was accepted")
	}
}

// writeCounter counts the writes made to it.
type writeCounter struct {
	strings.Builder
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.Builder.Write(p)
}

// TestLsWritesInBlocks: ls writes its lines in blocks, not one write per
// key, and every line arrives; the same root runs it twice.
func TestLsWritesInBlocks(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "s1/many")
	const n = 300
	for i := range n {
		if _, err := e.c.PutObject(t.Context(), "many", fmt.Sprintf("k%03d", i), strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	root := NewRoot()
	for round := range 2 {
		var out writeCounter
		root.SetArgs([]string{"--config-dir", e.dir, "ls", "-r", "s1/many"})
		root.SetOut(&out)
		if err := Execute(t.Context(), root); err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(out.String(), "\n"); lines != n || !strings.Contains(out.String(), "k299") {
			t.Fatalf("round %d: %d lines, want %d:\n%s", round, lines, n, out.String())
		}
		if out.writes > 10 {
			t.Errorf("round %d: %d lines took %d writes", round, n, out.writes)
		}
	}
}
