package checksum

import (
	"crypto/md5" //nolint:gosec // ETag test vectors.
	"encoding/hex"
	"errors"
	"sync"
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
	if _, err := NewSet(CRC32, "XXHASH64"); !errors.Is(err, ErrUnknownAlgorithm) {
		t.Errorf("NewSet(XXHASH64) err = %v, want ErrUnknownAlgorithm", err)
	}
}

// TestStreamSetAgreesWithSet: a streaming Set's MD5 (SIMD lanes shared by
// concurrent streams) and checksums are the ones NewSet computes, for
// empty, odd-sized and multi-block bodies written in uneven pieces, with
// several streams hashing at once.
func TestStreamSetAgreesWithSet(t *testing.T) {
	sizes := []int{0, 1, 63, 64, 65, 32<<10 + 7, 1<<20 + 13}
	var wg sync.WaitGroup
	for i, n := range sizes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := make([]byte, n)
			for j := range body {
				body[j] = byte(j*31 + i)
			}
			want, err := NewSet(SHA256)
			if err != nil {
				t.Error(err)
				return
			}
			got, err := NewStreamSet(SHA256)
			if err != nil {
				t.Error(err)
				return
			}
			defer got.Close()
			want.Write(body)
			for off := 0; off < n; {
				step := min(n-off, 1+(off*7)%5000)
				got.Write(body[off : off+step])
				off += step
			}
			wm, ws := want.Sum()
			gm, gs := got.Sum()
			if wm != gm || ws[SHA256] != gs[SHA256] || got.Size() != int64(n) {
				t.Errorf("size %d: stream set %s %v, set %s %v", n, gm, gs, wm, ws)
			}
		}()
	}
	wg.Wait()
}
