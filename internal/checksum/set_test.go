package checksum

import (
	"crypto/md5" //nolint:gosec // ETag test vectors.
	"encoding/hex"
	"errors"
	"testing"
)

func TestSet(t *testing.T) {
	data := []byte("The quick brown fox jumps over the lazy dog")
	md5Sum := md5.Sum(data) //nolint:gosec // ETag.
	tests := []struct {
		name string
		algs []Algorithm
	}{
		{"md5 only", nil},
		{"one", []Algorithm{CRC32C}},
		{"duplicates collapse", []Algorithm{SHA256, SHA256}},
		{"all", Algorithms()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewSet(tt.algs...)
			if err != nil {
				t.Fatal(err)
			}
			s.Write(data[:10])
			s.Write(data[10:])
			etag, sums := s.Sum()
			if want := hex.EncodeToString(md5Sum[:]); etag != want {
				t.Errorf("md5 = %s, want %s", etag, want)
			}
			if s.Size() != int64(len(data)) {
				t.Errorf("Size() = %d, want %d", s.Size(), len(data))
			}
			if len(sums) != len(s.Algorithms()) {
				t.Errorf("got %d sums for %d algorithms", len(sums), len(s.Algorithms()))
			}
			for _, a := range tt.algs {
				if sums[a] != a.Sum(data) {
					t.Errorf("%s = %s, want %s", a, sums[a], a.Sum(data))
				}
			}
		})
	}
}

func TestNewSetRejectsUnknown(t *testing.T) {
	if _, err := NewSet(CRC32, "BLAKE3"); !errors.Is(err, ErrUnknownAlgorithm) {
		t.Errorf("NewSet(BLAKE3) err = %v, want ErrUnknownAlgorithm", err)
	}
}
