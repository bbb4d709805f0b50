package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

func testKey(seed byte) ObjectKey {
	var k ObjectKey
	for i := range k {
		k[i] = seed + byte(i)
	}
	return k
}

func randomBytes(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// encrypt encrypts plain with layout l and a fixed nonce prefix.
func encrypt(t testing.TB, key ObjectKey, l layout, plain []byte) []byte {
	t.Helper()
	enc, err := io.ReadAll(newEncrypter(key, bytes.NewReader(plain), l, [4]byte{1, 2, 3, 4}))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(enc)) != l.encryptedSize(int64(len(plain))) {
		t.Fatalf("encrypted %d bytes to %d, want %d", len(plain), len(enc), l.encryptedSize(int64(len(plain))))
	}
	return enc
}

func decryptAll(key ObjectKey, l layout, enc []byte) ([]byte, error) {
	return io.ReadAll(newDecrypter(key, bytes.NewReader(enc), l))
}

func decryptRange(key ObjectKey, l layout, enc []byte, off, n int64) ([]byte, error) {
	r, err := newRangeDecrypter(key, bytes.NewReader(enc), l, int64(len(enc)), off, n)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

func TestRoundTrip(t *testing.T) {
	key := testKey(1)
	for _, n := range []int{0, 1, 64<<10 - 1, 64 << 10, 64<<10 + 1, 1<<20 + 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			plain := randomBytes(uint64(n), n)
			// HalfReader makes the encrypter assemble packages from short reads.
			enc, err := io.ReadAll(EncryptReader(key, iotest.HalfReader(bytes.NewReader(plain))))
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(enc)) != EncryptedSize(int64(n)) {
				t.Fatalf("len = %d, EncryptedSize = %d", len(enc), EncryptedSize(int64(n)))
			}
			if got, err := PlainSize(int64(len(enc))); err != nil || got != int64(n) {
				t.Fatalf("PlainSize = %d, %v; want %d", got, err, n)
			}
			if n >= 16 && bytes.Contains(enc, plain[:16]) {
				t.Fatal("plaintext visible in ciphertext")
			}
			if err := iotest.TestReader(DecryptReader(key, iotest.HalfReader(bytes.NewReader(enc))), plain); err != nil {
				t.Errorf("DecryptReader: %v", err)
			}
			r, err := DecryptRange(key, bytes.NewReader(enc), int64(len(enc)), 0, int64(n))
			if err != nil {
				t.Fatal(err)
			}
			if err := iotest.TestReader(r, plain); err != nil {
				t.Errorf("DecryptRange: %v", err)
			}
		})
	}
}

func TestEncryptReaderTestReader(t *testing.T) {
	key := testKey(2)
	l := layout{pkg: 8}
	plain := randomBytes(9, 50)
	want := encrypt(t, key, l, plain)
	if err := iotest.TestReader(newEncrypter(key, bytes.NewReader(plain), l, [4]byte{1, 2, 3, 4}), want); err != nil {
		t.Error(err)
	}
}

func TestNoncePrefixIsRandom(t *testing.T) {
	key := testKey(3)
	a, _ := io.ReadAll(EncryptReader(key, bytes.NewReader([]byte("same"))))
	b, _ := io.ReadAll(EncryptReader(key, bytes.NewReader([]byte("same"))))
	if bytes.Equal(a, b) {
		t.Error("two encryptions under one key are identical")
	}
}

// TestSizes checks that plainSize inverts encryptedSize and rejects every
// size encryptedSize never produces.
func TestSizes(t *testing.T) {
	l := layout{pkg: 16}
	valid := map[int64]int64{}
	for p := int64(0); p < 200; p++ {
		e := l.encryptedSize(p)
		if got, err := l.plainSize(e); err != nil || got != p {
			t.Errorf("plainSize(encryptedSize(%d)=%d) = %d, %v", p, e, got, err)
		}
		valid[e] = p
	}
	for e := int64(-1); e < l.encryptedSize(190); e++ {
		_, err := l.plainSize(e)
		if _, ok := valid[e]; ok != (err == nil) {
			t.Errorf("plainSize(%d) err = %v, valid %v", e, err, ok)
		}
		if err != nil && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrInvalidSize) {
			t.Errorf("plainSize(%d) err = %v", e, err)
		}
	}
	tests := []struct{ plain, enc int64 }{
		{0, HeaderSize + tagSize},
		{1, HeaderSize + 1 + tagSize},
		{PackageSize, HeaderSize + PackageSize + tagSize},
		{PackageSize + 1, HeaderSize + PackageSize + 1 + 2*tagSize},
		{5 << 30, HeaderSize + 5<<30 + (5<<30/PackageSize)*tagSize},
	}
	for _, tt := range tests {
		if got := EncryptedSize(tt.plain); got != tt.enc {
			t.Errorf("EncryptedSize(%d) = %d, want %d", tt.plain, got, tt.enc)
		}
	}
}

// recordingReaderAt records the byte intervals read through it.
type recordingReaderAt struct {
	r     io.ReaderAt
	reads [][2]int64
}

func (r *recordingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	r.reads = append(r.reads, [2]int64{off, off + int64(len(p))})
	return r.r.ReadAt(p, off)
}

// TestRangeEveryOffsetAndLength decrypts every range of small objects with
// an 8-byte package and checks both the bytes and that only the header
// and the packages covering the range were read.
func TestRangeEveryOffsetAndLength(t *testing.T) {
	key := testKey(4)
	l := layout{pkg: 8}
	for _, size := range []int64{0, 1, 7, 8, 9, 16, 41} {
		plain := randomBytes(uint64(size), int(size))
		enc := encrypt(t, key, l, plain)
		for off := int64(0); off <= size; off++ {
			for n := int64(0); off+n <= size; n++ {
				rec := &recordingReaderAt{r: bytes.NewReader(enc)}
				r, err := newRangeDecrypter(key, rec, l, int64(len(enc)), off, n)
				if err != nil {
					t.Fatalf("size %d [%d,+%d): %v", size, off, n, err)
				}
				got, err := io.ReadAll(r)
				if err != nil || !bytes.Equal(got, plain[off:off+n]) {
					t.Fatalf("size %d [%d,+%d): got %x, %v; want %x", size, off, n, got, err, plain[off:off+n])
				}
				checkReads(t, l, rec.reads, off, n)
			}
		}
	}
}

func checkReads(t *testing.T, l layout, reads [][2]int64, off, n int64) {
	t.Helper()
	if n == 0 {
		if len(reads) != 0 {
			t.Fatalf("empty range [%d,+0) read %v", off, reads)
		}
		return
	}
	first, last := off/l.pkg, (off+n-1)/l.pkg
	lo, hi := HeaderSize+first*l.sealed(), HeaderSize+(last+1)*l.sealed()
	if len(reads) != int(last-first)+2 || reads[0] != [2]int64{0, HeaderSize} {
		t.Fatalf("range [%d,+%d): reads %v, want header and packages %d..%d", off, n, reads, first, last)
	}
	for _, rd := range reads[1:] {
		if rd[0] < lo || rd[1] > hi {
			t.Fatalf("range [%d,+%d): read %v outside packages %d..%d", off, n, rd, first, last)
		}
	}
}

func TestRangeInvalid(t *testing.T) {
	key := testKey(5)
	enc := encrypt(t, key, defaultLayout(), make([]byte, 100))
	size := int64(len(enc))
	tests := []struct {
		name            string
		encSize, off, n int64
		wantErr         error
	}{
		{"negative offset", size, -1, 1, ErrInvalidRange},
		{"negative length", size, 0, -1, ErrInvalidRange},
		{"past end", size, 50, 51, ErrInvalidRange},
		{"offset past end", size, 101, 0, ErrInvalidRange},
		{"overflow", size, 1, 1<<63 - 1, ErrInvalidRange},
		{"size too small", HeaderSize + tagSize - 1, 0, 0, ErrTruncated},
		{"impossible size", HeaderSize + PackageSize + tagSize + 3, 0, 0, ErrInvalidSize},
	}
	for _, tt := range tests {
		if _, err := DecryptRange(key, bytes.NewReader(enc), tt.encSize, tt.off, tt.n); !errors.Is(err, tt.wantErr) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.wantErr)
		}
	}
	for _, ok := range [][2]int64{{0, 100}, {100, 0}, {99, 1}} {
		if _, err := DecryptRange(key, bytes.NewReader(enc), size, ok[0], ok[1]); err != nil {
			t.Errorf("range %v: %v", ok, err)
		}
	}
}
