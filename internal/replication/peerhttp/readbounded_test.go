package peerhttp

import (
	"bytes"
	"errors"
	"testing"
	"testing/iotest"
)

// TestReadBounded: a body reads whole whatever size its sender announced
// (exact, unknown, too small, too large), and one over the limit is
// refused as a bad request.
func TestReadBounded(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 1000)
	for _, tc := range []struct {
		name        string
		limit, size int64
		wantErr     bool
	}{
		{"announced", 1 << 20, int64(len(body)), false},
		{"unknown", 1 << 20, -1, false},
		{"announced too small", 1 << 20, 10, false},
		{"announced too large", 1 << 20, 1 << 19, false},
		{"at the limit", int64(len(body)), int64(len(body)), false},
		{"over the limit", int64(len(body)) - 1, int64(len(body)), true},
		{"over the limit, unknown size", int64(len(body)) - 1, -1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readBounded(iotest.HalfReader(bytes.NewReader(body)), tc.limit, tc.size)
			if tc.wantErr {
				if !errors.Is(err, errBadRequest) {
					t.Fatalf("err %v, want a bad request", err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("read %d bytes, %v", len(got), err)
			}
		})
	}
	if _, err := readBounded(iotest.ErrReader(errors.New("cut")), 1<<20, 100); !errors.Is(err, errBadRequest) {
		t.Fatalf("a failed read: %v", err)
	}
}

// BenchmarkReadBounded reads a 4 MiB batch whose size the sender
// announced, and one whose size is unknown (as io.ReadAll reads every
// body): the allocated bytes per read show the copies saved.
func BenchmarkReadBounded(b *testing.B) {
	body := bytes.Repeat([]byte("x"), 4<<20)
	for _, size := range []int64{int64(len(body)), -1} {
		name := "announced"
		if size < 0 {
			name = "unknown"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := readBounded(bytes.NewReader(body), maxBatchBytes, size); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
