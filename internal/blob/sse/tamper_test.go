package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"
)

// tamperCase builds a 5-package stream (pkg 8, 37 plaintext bytes) whose
// packages tests rearrange.
type tamperCase struct {
	key   ObjectKey
	l     layout
	plain []byte
	enc   []byte
}

func newTamperCase(t *testing.T) tamperCase {
	tc := tamperCase{key: testKey(6), l: layout{pkg: 8}, plain: randomBytes(6, 37)}
	tc.enc = encrypt(t, tc.key, tc.l, tc.plain)
	return tc
}

// pkg returns the sealed bytes of package i.
func (tc tamperCase) pkg(i int) []byte {
	s := HeaderSize + int64(i)*tc.l.sealed()
	return tc.enc[s:min(s+tc.l.sealed(), int64(len(tc.enc)))]
}

// assemble builds a stream from the original header and packages in order.
func (tc tamperCase) assemble(order ...int) []byte {
	out := append([]byte(nil), tc.enc[:HeaderSize]...)
	for _, i := range order {
		out = append(out, tc.pkg(i)...)
	}
	return out
}

// bothDecrypters decrypts enc sequentially and as a whole-object range,
// returning both errors.
func (tc tamperCase) bothDecrypters(enc []byte) (seqErr, rangeErr error) {
	_, seqErr = decryptAll(tc.key, tc.l, enc)
	plainSize, err := tc.l.plainSize(int64(len(enc)))
	if err != nil {
		return seqErr, err
	}
	_, rangeErr = decryptRange(tc.key, tc.l, enc, 0, plainSize)
	return seqErr, rangeErr
}

func TestTamperedByteFails(t *testing.T) {
	tc := newTamperCase(t)
	for i := range tc.enc {
		for _, bit := range []byte{0x01, 0x80} {
			bad := append([]byte(nil), tc.enc...)
			bad[i] ^= bit
			seqErr, rangeErr := tc.bothDecrypters(bad)
			for _, err := range []error{seqErr, rangeErr} {
				if !errors.Is(err, ErrAuthentication) && !(i < 4 && errors.Is(err, ErrFormat)) {
					t.Fatalf("byte %d ^ %#x: err = %v", i, bit, err)
				}
			}
		}
	}
}

func TestRearrangedPackagesFail(t *testing.T) {
	tc := newTamperCase(t)
	if got, err := decryptAll(tc.key, tc.l, tc.assemble(0, 1, 2, 3, 4)); err != nil || !bytes.Equal(got, tc.plain) {
		t.Fatalf("reassembled stream: %v", err)
	}
	other := encrypt(t, tc.key, tc.l, tc.plain) // same key, same prefix
	otherPrefix, _ := io.ReadAll(newEncrypter(tc.key, bytes.NewReader(tc.plain), tc.l, [4]byte{9, 9, 9, 9}))
	tests := []struct {
		name    string
		enc     []byte
		wantSeq error
	}{
		{"swap first two", tc.assemble(1, 0, 2, 3, 4), ErrAuthentication},
		{"swap middle", tc.assemble(0, 2, 1, 3, 4), ErrAuthentication},
		{"drop middle", tc.assemble(0, 1, 3, 4), ErrAuthentication},
		{"duplicate", tc.assemble(0, 1, 1, 2, 3, 4), ErrAuthentication},
		{"final moved first", tc.assemble(4, 1, 2, 3, 0), ErrAuthentication},
		{"drop final", tc.assemble(0, 1, 2, 3), ErrTruncated},
		{"full package after final", append(tc.assemble(0, 1, 2, 3, 4), tc.pkg(0)...), ErrAuthentication},
		{"header of another stream", append(otherPrefix[:HeaderSize:HeaderSize], tc.enc[HeaderSize:]...), ErrAuthentication},
		{"equal streams stay equal", other, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decryptAll(tc.key, tc.l, tt.enc)
			if !errors.Is(err, tt.wantSeq) || (tt.wantSeq == nil && err != nil) {
				t.Errorf("DecryptReader err = %v, want %v", err, tt.wantSeq)
			}
			if _, rerr := tc.bothDecrypters(tt.enc); (rerr == nil) != (tt.wantSeq == nil) {
				t.Errorf("DecryptRange err = %v", rerr)
			}
		})
	}
}

// TestTrailingFinalPackage builds a stream whose last package is full, so
// that appending a copy of it keeps package boundaries and the copy's
// predecessor authenticates only as final.
func TestTrailingFinalPackage(t *testing.T) {
	key, l := testKey(7), layout{pkg: 8}
	enc := encrypt(t, key, l, randomBytes(7, 16))
	last := enc[HeaderSize+l.sealed():]
	if _, err := decryptAll(key, l, append(enc, last...)); !errors.Is(err, ErrTrailingData) {
		t.Errorf("DecryptReader err = %v, want ErrTrailingData", err)
	}
	// A lying encryptedSize over a longer blob reaches the same check.
	if _, err := decryptRange(key, l, append(enc, last...), 0, 24); !errors.Is(err, ErrTrailingData) {
		t.Errorf("DecryptRange err = %v, want ErrTrailingData", err)
	}
}

func TestTruncationFails(t *testing.T) {
	tc := newTamperCase(t)
	for n := 0; n < len(tc.enc); n++ {
		cut := tc.enc[:n]
		_, err := decryptAll(tc.key, tc.l, cut)
		atBoundary := n >= HeaderSize && (int64(n)-HeaderSize)%tc.l.sealed() == 0
		if atBoundary && !errors.Is(err, ErrTruncated) {
			t.Errorf("cut to %d (package boundary): err = %v, want ErrTruncated", n, err)
		}
		if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrAuthentication) {
			t.Errorf("cut to %d: err = %v", n, err)
		}
		// Range read with the true size over a short blob.
		_, err = decryptRangeSized(tc, cut, int64(len(tc.enc)))
		if !errors.Is(err, ErrTruncated) {
			t.Errorf("range over %d of %d bytes: err = %v, want ErrTruncated", n, len(tc.enc), err)
		}
	}
}

func decryptRangeSized(tc tamperCase, enc []byte, encSize int64) ([]byte, error) {
	plainSize, err := tc.l.plainSize(encSize)
	if err != nil {
		return nil, err
	}
	r, err := newRangeDecrypter(tc.key, bytes.NewReader(enc), tc.l, encSize, 0, plainSize)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

func TestWrongKeyFails(t *testing.T) {
	tc := newTamperCase(t)
	tc.key[0] ^= 1
	seqErr, rangeErr := tc.bothDecrypters(tc.enc)
	if !errors.Is(seqErr, ErrAuthentication) || !errors.Is(rangeErr, ErrAuthentication) {
		t.Errorf("errs = %v, %v; want ErrAuthentication", seqErr, rangeErr)
	}
}

func TestBadHeader(t *testing.T) {
	tc := newTamperCase(t)
	bad := append([]byte("nope"), tc.enc[4:]...)
	seqErr, rangeErr := tc.bothDecrypters(bad)
	if !errors.Is(seqErr, ErrFormat) || !errors.Is(rangeErr, ErrFormat) {
		t.Errorf("errs = %v, %v; want ErrFormat", seqErr, rangeErr)
	}
}

// TestIOErrorsPassThrough checks reader errors reach the caller unchanged
// and stay returned.
func TestIOErrorsPassThrough(t *testing.T) {
	boom := errors.New("disk on fire")
	tc := newTamperCase(t)
	readers := map[string]io.Reader{
		"encrypt": newEncrypter(tc.key, io.MultiReader(bytes.NewReader(tc.plain[:20]), iotest.ErrReader(boom)), tc.l, [4]byte{}),
		"decrypt": newDecrypter(tc.key, io.MultiReader(bytes.NewReader(tc.enc[:30]), iotest.ErrReader(boom)), tc.l),
		"range":   mustRange(t, tc, errReaderAt{boom}),
	}
	for name, r := range readers {
		if _, err := io.ReadAll(r); !errors.Is(err, boom) {
			t.Errorf("%s: err = %v, want %v", name, err, boom)
		}
		if _, err := r.Read(make([]byte, 1)); !errors.Is(err, boom) {
			t.Errorf("%s: error not sticky: %v", name, err)
		}
	}
}

type errReaderAt struct{ err error }

func (e errReaderAt) ReadAt([]byte, int64) (int, error) { return 0, e.err }

func mustRange(t *testing.T, tc tamperCase, src io.ReaderAt) io.Reader {
	r, err := newRangeDecrypter(tc.key, src, tc.l, int64(len(tc.enc)), 3, 20)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ExampleDecryptRange() {
	keyring, _ := NewKeyring(bytes.Repeat([]byte{0x42}, MasterKeySize))
	aad := ObjectAAD("bucket", "key", "version")
	key, sealed := keyring.GenerateObjectKey(aad)
	enc, _ := io.ReadAll(EncryptReader(key, bytes.NewReader([]byte("hello, encrypted world"))))

	// Later, a Range GET for bytes 7-15 of the object:
	key, _ = keyring.Unseal(sealed, aad)
	r, _ := DecryptRange(key, bytes.NewReader(enc), int64(len(enc)), 7, 9)
	b, _ := io.ReadAll(r)
	fmt.Println(string(b))
	// Output: encrypted
}
