package blob

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

func TestWriteCommitOpenRemove(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Create()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, strings.NewReader("hello blob")); err != nil {
		t.Fatal(err)
	}
	id, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	w.Abort() // no-op after commit
	f, err := s.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(f)
	f.Close()
	if !bytes.Equal(got, []byte("hello blob")) {
		t.Fatalf("read %q", got)
	}
	if err := s.Remove(id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after remove: %v", err)
	}
}

func TestAbortRemovesAndIDsAreValidated(t *testing.T) {
	s, _ := Open(t.TempDir())
	w, _ := s.Create()
	w.Write([]byte("x"))
	id := w.id
	w.Abort()
	if _, err := s.Open(id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("aborted blob readable: %v", err)
	}
	for _, bad := range []string{"../../etc/passwd", "", "zz", strings.Repeat("a", 31) + "/"} {
		if _, err := s.Open(bad); !errors.Is(err, ErrInvalidID) {
			t.Errorf("Open(%q) = %v, want ErrInvalidID", bad, err)
		}
	}
}

// A body copied into a blob (io.Copy from a reader without WriteTo, as a
// request body is) goes through a buffer shared between writes, not one
// of its own per blob.
func TestReadFromSharesItsBuffer(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("x"), 100<<10)
	write := func() {
		w, err := s.Create()
		if err != nil {
			t.Fatal(err)
		}
		if n, err := io.Copy(w, struct{ io.Reader }{bytes.NewReader(body)}); err != nil || n != int64(len(body)) {
			t.Fatalf("copied %d: %v", n, err)
		}
		if _, err := w.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	write()
	const runs = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		write()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per >= 16<<10 {
		t.Errorf("a blob write allocated %d bytes: a copy buffer of its own", per)
	}
}
