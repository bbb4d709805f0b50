package checksum

import (
	"crypto/md5" //nolint:gosec // ETag vectors.
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

func TestMultipartETag(t *testing.T) {
	p1, p2 := md5.Sum([]byte("part one")), md5.Sum([]byte("part two")) //nolint:gosec // ETag.
	whole := md5.Sum(append(p1[:], p2[:]...))                          //nolint:gosec // ETag.
	h1, h2 := hex.EncodeToString(p1[:]), hex.EncodeToString(p2[:])
	single := md5.Sum(p1[:]) //nolint:gosec // ETag.
	tests := []struct {
		name    string
		parts   []string
		want    string
		wantErr error
	}{
		{"two parts", []string{h1, h2}, hex.EncodeToString(whole[:]) + "-2", nil},
		{"quoted etags", []string{`"` + h1 + `"`, `"` + h2 + `"`}, hex.EncodeToString(whole[:]) + "-2", nil},
		{"one part", []string{h1}, hex.EncodeToString(single[:]) + "-1", nil},
		{"no parts", nil, "", ErrNoParts},
		{"short etag", []string{h1[:30]}, "", ErrInvalidETag},
		{"not hex", []string{"zz" + h1[2:]}, "", ErrInvalidETag},
		{"multipart etag as part", []string{h1 + "-2"}, "", ErrInvalidETag},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MultipartETag(tt.parts)
			if got != tt.want || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("got %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestComposite(t *testing.T) {
	parts := [][]byte{[]byte("first part"), []byte("second"), {}}
	for _, a := range []Algorithm{CRC32, CRC32C, SHA1, SHA256} {
		t.Run(string(a), func(t *testing.T) {
			var values []string
			var concat []byte
			for _, p := range parts {
				h := a.New()
				h.Write(p)
				concat = h.Sum(concat)
				values = append(values, Encode(h.Sum(nil)))
			}
			want := a.Sum(concat) + "-3"
			got, err := Composite(a, values)
			if err != nil || got != want {
				t.Errorf("Composite = %q, %v; want %q", got, err, want)
			}
		})
	}
}

func TestCompositeErrors(t *testing.T) {
	tests := []struct {
		name    string
		alg     Algorithm
		parts   []string
		wantErr error
	}{
		{"crc64nvme has no composite form", CRC64NVME, []string{"AAAAAAAAAAA="}, ErrUnsupportedType},
		{"unknown", "BLAKE3", []string{"AAAA"}, ErrUnknownAlgorithm},
		{"no parts", CRC32, nil, ErrNoParts},
		{"malformed part", CRC32, []string{"AAAAAA==", "AAAAAAAAAAA="}, ErrInvalidChecksum},
	}
	for _, tt := range tests {
		if _, err := Composite(tt.alg, tt.parts); !errors.Is(err, tt.wantErr) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.wantErr)
		}
	}
}

// TestFullObjectCRC checks the combine arithmetic against a CRC computed
// over the concatenated parts, for part layouts that include empty parts,
// single bytes and sizes crossing the 8-byte table stride.
func TestFullObjectCRC(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	layouts := [][]int{
		{0}, {1}, {5, 0}, {0, 5}, {1, 1, 1}, {9, 17, 1 << 16}, {5 << 10, 5 << 10, 3},
		{rng.IntN(1 << 20), rng.IntN(1 << 20), rng.IntN(100), 0, rng.IntN(1 << 12)},
	}
	for _, a := range []Algorithm{CRC32, CRC32C, CRC64NVME} {
		for _, sizes := range layouts {
			t.Run(fmt.Sprintf("%s/%v", a, sizes), func(t *testing.T) {
				var whole []byte
				var parts []Part
				for _, n := range sizes {
					p := randomBytes(rng, n)
					whole = append(whole, p...)
					parts = append(parts, Part{Checksum: a.Sum(p), Size: int64(n)})
				}
				got, err := FullObjectCRC(a, parts)
				if want := a.Sum(whole); err != nil || got != want {
					t.Errorf("FullObjectCRC = %q, %v; want %q", got, err, want)
				}
			})
		}
	}
}

func TestFullObjectCRCErrors(t *testing.T) {
	tests := []struct {
		name    string
		alg     Algorithm
		parts   []Part
		wantErr error
	}{
		{"sha256 has no full-object form", SHA256, []Part{{SHA256.Sum(nil), 0}}, ErrUnsupportedType},
		{"unknown", "BLAKE3", []Part{{"AAAA", 0}}, ErrUnknownAlgorithm},
		{"no parts", CRC32, nil, ErrNoParts},
		{"malformed", CRC64NVME, []Part{{"AAAAAA==", 3}}, ErrInvalidChecksum},
	}
	for _, tt := range tests {
		if _, err := FullObjectCRC(tt.alg, tt.parts); !errors.Is(err, tt.wantErr) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.wantErr)
		}
	}
	if _, err := FullObjectCRC(CRC32, []Part{{CRC32.Sum(nil), -1}}); err == nil {
		t.Error("negative size accepted")
	}
}

func TestTypes(t *testing.T) {
	tests := []struct {
		alg            Algorithm
		def            Type
		composite, all bool
	}{
		{CRC32, TypeComposite, true, true},
		{CRC32C, TypeComposite, true, true},
		{CRC64NVME, TypeFullObject, false, true},
		{SHA1, TypeComposite, true, false},
		{SHA256, TypeComposite, true, false},
		{MD5, TypeComposite, true, false},
		{SHA512, TypeComposite, true, false},
		{XXHASH64, TypeComposite, true, false},
		{XXHASH3, TypeComposite, true, false},
		{XXHASH128, TypeComposite, true, false},
		{"BLAKE3", TypeComposite, false, false},
	}
	for _, tt := range tests {
		if got := DefaultType(tt.alg); got != tt.def {
			t.Errorf("DefaultType(%s) = %s, want %s", tt.alg, got, tt.def)
		}
		if got := TypeComposite.Supports(tt.alg); got != tt.composite {
			t.Errorf("COMPOSITE.Supports(%s) = %v", tt.alg, got)
		}
		if got := TypeFullObject.Supports(tt.alg); got != tt.all {
			t.Errorf("FULL_OBJECT.Supports(%s) = %v", tt.alg, got)
		}
	}
	for in, want := range map[string]Type{"composite": TypeComposite, "FULL_OBJECT": TypeFullObject} {
		if got, err := ParseType(in); got != want || err != nil {
			t.Errorf("ParseType(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseType("FULL"); !errors.Is(err, ErrUnknownType) {
		t.Errorf("ParseType(FULL) err = %v", err)
	}
}
