package objects

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadSized: whatever the reader holds (as said, less, more, nothing),
// ReadSized returns all of it, as io.ReadAll does, never nil; a read error
// is returned.
func TestReadSized(t *testing.T) {
	for _, c := range []struct {
		body string
		size int64
	}{{"", 0}, {"abc", 3}, {"abcdef", 3}, {"ab", 3}, {strings.Repeat("x", 5000), 4096}, {"a", -1}} {
		for _, r := range []io.Reader{strings.NewReader(c.body), iotest.OneByteReader(strings.NewReader(c.body))} {
			got, err := ReadSized(r, c.size)
			if err != nil || got == nil || string(got) != c.body {
				t.Errorf("body %d bytes, size %d: got %d bytes (nil %t), err %v", len(c.body), c.size, len(got), got == nil, err)
			}
		}
	}
	boom := errors.New("boom")
	if _, err := ReadSized(io.MultiReader(bytes.NewReader([]byte("ab")), iotest.ErrReader(boom)), 4); !errors.Is(err, boom) {
		t.Errorf("read error: %v", err)
	}
}
