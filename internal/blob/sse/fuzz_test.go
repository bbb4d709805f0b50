package sse

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// fuzzLayout picks a package size: small ones give many packages per input.
func fuzzLayout(sel uint8) layout {
	if sel == 0 {
		return defaultLayout()
	}
	return layout{pkg: int64(sel%32) + 1}
}

// knownError reports whether err is one a decrypter may return for bad input.
func knownError(err error) bool {
	for _, e := range []error{ErrAuthentication, ErrTruncated, ErrTrailingData, ErrFormat, ErrInvalidSize, ErrInvalidRange} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// FuzzDecrypt feeds arbitrary bytes to both decrypters as ciphertext. They
// must not panic, must fail only with package errors, and must agree.
func FuzzDecrypt(f *testing.F) {
	key := testKey(8)
	for _, sel := range []uint8{0, 8, 3} {
		l := fuzzLayout(sel)
		for _, n := range []int{0, 1, 20} {
			enc, _ := io.ReadAll(newEncrypter(key, bytes.NewReader(randomBytes(uint64(n), n)), l, [4]byte{}))
			f.Add(enc, sel, uint32(0), uint32(n))
		}
	}
	f.Add([]byte("tle\x01\x00\x00\x00\x00"), uint8(1), uint32(0), uint32(0))
	f.Fuzz(func(t *testing.T, data []byte, sel uint8, off, n uint32) {
		l := fuzzLayout(sel)
		seq, seqErr := io.ReadAll(newDecrypter(key, bytes.NewReader(data), l))
		if seqErr != nil && !knownError(seqErr) {
			t.Fatalf("DecryptReader: unexpected error %v", seqErr)
		}
		r, err := newRangeDecrypter(key, bytes.NewReader(data), l, int64(len(data)), int64(off), int64(n))
		if err != nil {
			if !knownError(err) {
				t.Fatalf("DecryptRange: unexpected error %v", err)
			}
			return
		}
		got, rangeErr := io.ReadAll(r)
		if rangeErr != nil && !knownError(rangeErr) {
			t.Fatalf("DecryptRange read: unexpected error %v", rangeErr)
		}
		if seqErr == nil && (rangeErr != nil || !bytes.Equal(got, seq[off:int64(off)+int64(n)])) {
			t.Fatalf("sequential decrypt succeeded but range [%d,+%d) gave %x, %v", off, n, got, rangeErr)
		}
	})
}

// FuzzRange encrypts arbitrary plaintext and checks an arbitrary range of
// it decrypts to the same bytes, reading only the packages it covers.
func FuzzRange(f *testing.F) {
	f.Add([]byte("hello, world"), uint8(4), uint16(3), uint16(5))
	f.Add([]byte{}, uint8(0), uint16(0), uint16(0))
	f.Add(bytes.Repeat([]byte{1}, 100), uint8(31), uint16(33), uint16(40))
	key := testKey(9)
	f.Fuzz(func(t *testing.T, plain []byte, sel uint8, off, n uint16) {
		l := fuzzLayout(sel)
		o := int64(off) % int64(len(plain)+1)
		m := int64(n) % (int64(len(plain)) - o + 1)
		enc := encrypt(t, key, l, plain)
		rec := &recordingReaderAt{r: bytes.NewReader(enc)}
		r, err := newRangeDecrypter(key, rec, l, int64(len(enc)), o, m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, plain[o:o+m]) {
			t.Fatalf("[%d,+%d) of %d: got %x, %v", o, m, len(plain), got, err)
		}
		checkReads(t, l, rec.reads, o, m)
	})
}
