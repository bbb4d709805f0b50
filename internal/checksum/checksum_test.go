package checksum

import (
	"crypto/sha1" //nolint:gosec // test vectors for the SHA1 wire algorithm.
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"hash/crc64"
	"math/rand/v2"
	"testing"
)

func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func be64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func TestParseAlgorithm(t *testing.T) {
	tests := []struct {
		in      string
		want    Algorithm
		wantErr error
	}{
		{"CRC32", CRC32, nil},
		{"crc32", CRC32, nil},
		{"Crc32c", CRC32C, nil},
		{" sha1 ", SHA1, nil},
		{"sha256", SHA256, nil},
		{"crc64nvme", CRC64NVME, nil},
		{"CRC64NVME", CRC64NVME, nil},
		{"", "", ErrUnknownAlgorithm},
		{"md5", MD5, nil},
		{"XxHash128", XXHASH128, nil},
		{"blake3", "", ErrUnknownAlgorithm},
		{"crc64", "", ErrUnknownAlgorithm},
		{"SHA-256", "", ErrUnknownAlgorithm},
	}
	for _, tt := range tests {
		got, err := ParseAlgorithm(tt.in)
		if got != tt.want || !errors.Is(err, tt.wantErr) {
			t.Errorf("ParseAlgorithm(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestHeaderNameAndSize(t *testing.T) {
	tests := []struct {
		alg    Algorithm
		header string
		size   int
	}{
		{CRC32, "x-amz-checksum-crc32", 4},
		{CRC32C, "x-amz-checksum-crc32c", 4},
		{CRC64NVME, "x-amz-checksum-crc64nvme", 8},
		{SHA1, "x-amz-checksum-sha1", 20},
		{SHA256, "x-amz-checksum-sha256", 32},
		{MD5, "x-amz-checksum-md5", 16},
		{SHA512, "x-amz-checksum-sha512", 64},
		{XXHASH64, "x-amz-checksum-xxhash64", 8},
		{XXHASH3, "x-amz-checksum-xxhash3", 8},
		{XXHASH128, "x-amz-checksum-xxhash128", 16},
	}
	if len(tests) != len(Algorithms()) {
		t.Fatalf("table covers %d algorithms, package has %d", len(tests), len(Algorithms()))
	}
	for _, tt := range tests {
		if got := tt.alg.HeaderName(); got != tt.header {
			t.Errorf("%s.HeaderName() = %q, want %q", tt.alg, got, tt.header)
		}
		if got := tt.alg.Size(); got != tt.size {
			t.Errorf("%s.Size() = %d, want %d", tt.alg, got, tt.size)
		}
		if got := tt.alg.New().Size(); got != tt.size {
			t.Errorf("%s.New().Size() = %d, want %d", tt.alg, got, tt.size)
		}
	}
}

// TestKnownVectors checks each algorithm against the catalogue check value
// for "123456789" (CRCs) or the standard library (SHAs), in S3 wire form.
func TestKnownVectors(t *testing.T) {
	check := []byte("123456789")
	sha1Sum := sha1.Sum(check) //nolint:gosec // test vector.
	sha256Sum := sha256.Sum256(check)
	tests := []struct {
		alg  Algorithm
		want []byte
	}{
		{CRC32, be32(0xcbf43926)},
		{CRC32C, be32(0xe3069283)},
		{CRC64NVME, be64(0xae8b14860a799888)},
		{SHA1, sha1Sum[:]},
		{SHA256, sha256Sum[:]},
	}
	for _, tt := range tests {
		if got, want := tt.alg.Sum(check), Encode(tt.want); got != want {
			t.Errorf("%s(123456789) = %s, want %s", tt.alg, got, want)
		}
	}
	data := []byte("S3 additional checksums are base64 of big-endian digests.")
	if got, want := CRC32.Sum(data), Encode(be32(crc32.ChecksumIEEE(data))); got != want {
		t.Errorf("CRC32 = %s, want %s", got, want)
	}
	if got, want := CRC32C.Sum(data), Encode(be32(crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)))); got != want {
		t.Errorf("CRC32C = %s, want %s", got, want)
	}
	// Empty input: every CRC here has init == xorout, so the value is 0.
	if got := CRC64NVME.Sum(nil); got != "AAAAAAAAAAA=" {
		t.Errorf("CRC64NVME(empty) = %s, want AAAAAAAAAAA=", got)
	}
}

// TestCRC64NVMEMatchesReference compares the slicing-by-8 code against the
// standard library's table CRC for the same polynomial, over lengths that
// exercise the 8-byte loop and its tail, written in uneven pieces.
func TestCRC64NVMEMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ref := crc64.MakeTable(crc64NVMEPoly)
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 63, 64, 65, 1000, 4096, 100003} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		want := crc64.Checksum(data, ref)
		h := CRC64NVME.New()
		for rest := data; len(rest) > 0; {
			k := min(len(rest), 1+rng.IntN(37))
			h.Write(rest[:k])
			rest = rest[k:]
		}
		if got := binary.BigEndian.Uint64(h.Sum(nil)); got != want {
			t.Errorf("len %d: got %#x, want %#x", n, got, want)
		}
	}
}

func TestHashReset(t *testing.T) {
	for _, a := range Algorithms() {
		h := a.New()
		h.Write([]byte("garbage"))
		h.Reset()
		h.Write([]byte("123456789"))
		if got, want := Encode(h.Sum(nil)), a.Sum([]byte("123456789")); got != want {
			t.Errorf("%s after Reset = %s, want %s", a, got, want)
		}
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		alg     Algorithm
		in      string
		wantErr error
	}{
		{CRC32, "AAAAAA==", nil},
		{CRC32, "yfQ5Jg==", nil},
		{CRC32, "yfQ5Jg", ErrInvalidChecksum},       // unpadded
		{CRC32, "yfQ5Jh==", ErrInvalidChecksum},     // non-zero trailing bits
		{CRC32, "AAAAAAA=", ErrInvalidChecksum},     // 5 bytes
		{CRC32, "", ErrInvalidChecksum},             // empty
		{CRC32, "yfQ5_g==", ErrInvalidChecksum},     // URL alphabet
		{CRC64NVME, "AAAAAAAAAAA=", nil},            // 8 bytes
		{CRC64NVME, "AAAAAA==", ErrInvalidChecksum}, // 4 bytes
		{SHA256, Encode(make([]byte, 32)), nil},
		{SHA256, Encode(make([]byte, 31)), ErrInvalidChecksum},
		{"BLAKE3", "AAAAAA==", ErrUnknownAlgorithm},
	}
	for _, tt := range tests {
		_, err := tt.alg.Decode(tt.in)
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("%s.Decode(%q) err = %v, want %v", tt.alg, tt.in, err, tt.wantErr)
		}
	}
}

func TestNewPanicsOnInvalid(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Algorithm(\"BLAKE3\").New() did not panic")
		}
	}()
	Algorithm("BLAKE3").New()
}

func BenchmarkHash(b *testing.B) {
	buf := make([]byte, 1<<20)
	for _, a := range Algorithms() {
		b.Run(string(a), func(b *testing.B) {
			h := a.New()
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				h.Write(buf)
			}
		})
	}
}
