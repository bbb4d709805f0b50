// Package checksum owns the integrity values S3 clients attach to object
// data: the MD5 ETag (single-part and multipart), Content-MD5, and the S3
// "additional checksums" (CRC32, CRC32C, CRC64NVME, SHA1, SHA256, and the
// MD5, SHA512, XXHASH64, XXHASH3 and XXHASH128 S3 added later) sent as
// x-amz-checksum-* headers or trailers, including the multipart COMPOSITE
// and FULL_OBJECT forms.
//
// Checksum values travel in S3's wire form throughout: standard, padded
// base64 of the big-endian digest bytes. The package does no I/O and holds
// no state beyond the hashers a caller creates; everything in it is safe for
// concurrent use except a single Set, which is owned by one writer.
package checksum

import (
	"crypto/md5"  //nolint:gosec // MD5 is an S3 wire algorithm, not a security choice.
	"crypto/sha1" //nolint:gosec // SHA1 is an S3 wire algorithm, not a security choice.
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"hash"
	"hash/crc32"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/minio/crc64nvme"
	"github.com/zeebo/xxh3"
)

// Algorithm is an S3 additional-checksum algorithm, spelled as S3 spells it
// on the wire (x-amz-sdk-checksum-algorithm, ChecksumAlgorithm in XML).
type Algorithm string

// The algorithms S3 accepts.
const (
	CRC32     Algorithm = "CRC32"
	CRC32C    Algorithm = "CRC32C"
	CRC64NVME Algorithm = "CRC64NVME"
	SHA1      Algorithm = "SHA1"
	SHA256    Algorithm = "SHA256"
	MD5       Algorithm = "MD5"
	SHA512    Algorithm = "SHA512"
	XXHASH64  Algorithm = "XXHASH64"  // XXH64, seed 0
	XXHASH3   Algorithm = "XXHASH3"   // XXH3 64-bit, seed 0
	XXHASH128 Algorithm = "XXHASH128" // XXH3 128-bit, seed 0, high half first
)

// headerPrefix starts every per-algorithm checksum header and trailer name.
const headerPrefix = "x-amz-checksum-"

// algorithmInfo is the per-algorithm data the rest of the package iterates.
type algorithmInfo struct {
	alg       Algorithm
	size      int // digest length in bytes
	newHash   func() hash.Hash
	crcWidth  uint // bits, 0 for non-CRC algorithms
	crcPoly   uint64
	composite bool // S3 accepts the COMPOSITE multipart type
}

// algorithmTable is the table of supported algorithms in a fixed order,
// built once: every request that names or answers a checksum looks in it.
var algorithmTable = []algorithmInfo{
	{alg: CRC32, size: 4, newHash: func() hash.Hash { return crc32.NewIEEE() },
		crcWidth: 32, crcPoly: crc32.IEEE, composite: true},
	{alg: CRC32C, size: 4, newHash: func() hash.Hash { return crc32.New(crc32.MakeTable(crc32.Castagnoli)) },
		crcWidth: 32, crcPoly: crc32.Castagnoli, composite: true},
	{alg: CRC64NVME, size: 8, newHash: func() hash.Hash { return crc64nvme.New() },
		crcWidth: 64, crcPoly: crc64NVMEPoly},
	{alg: SHA1, size: sha1.Size, newHash: sha1.New, composite: true},
	{alg: SHA256, size: sha256.Size, newHash: sha256.New, composite: true},
	{alg: MD5, size: md5.Size, newHash: md5.New, composite: true},
	{alg: SHA512, size: sha512.Size, newHash: sha512.New, composite: true},
	{alg: XXHASH64, size: 8, newHash: func() hash.Hash { return xxhash.New() }, composite: true},
	{alg: XXHASH3, size: 8, newHash: func() hash.Hash { return xxh3.New() }, composite: true},
	{alg: XXHASH128, size: 16, newHash: func() hash.Hash { return xxh3.New128() }, composite: true},
}

// algorithms returns the table; callers only read it.
func algorithms() []algorithmInfo { return algorithmTable }

// Algorithms returns every supported algorithm, in a fixed order.
func Algorithms() []Algorithm {
	infos := algorithms()
	out := make([]Algorithm, len(infos))
	for i, info := range infos {
		out[i] = info.alg
	}
	return out
}

// info returns the table row for a, or false if a is not supported.
func (a Algorithm) info() (algorithmInfo, bool) {
	for _, info := range algorithms() {
		if info.alg == a {
			return info, true
		}
	}
	return algorithmInfo{}, false
}

// mustInfo is info for callers that have already validated a.
func (a Algorithm) mustInfo() algorithmInfo {
	info, ok := a.info()
	if !ok {
		panic(fmt.Sprintf("checksum: unsupported algorithm %q", string(a)))
	}
	return info
}

// ParseAlgorithm returns the Algorithm named by s, ignoring case and
// surrounding space. It returns an error wrapping ErrUnknownAlgorithm for
// any other name, including the empty string.
func ParseAlgorithm(s string) (Algorithm, error) {
	want := strings.ToUpper(strings.TrimSpace(s))
	if info, ok := Algorithm(want).info(); ok {
		return info.alg, nil
	}
	return "", fmt.Errorf("%w: %q", ErrUnknownAlgorithm, s)
}

// Valid reports whether a is a supported algorithm.
func (a Algorithm) Valid() bool {
	_, ok := a.info()
	return ok
}

// String returns the wire name.
func (a Algorithm) String() string { return string(a) }

// HeaderName returns the lower-case header (and trailer) name carrying a's
// value, for example "x-amz-checksum-crc32". It is only meaningful for a
// valid Algorithm.
func (a Algorithm) HeaderName() string {
	if h, ok := headerNames[a]; ok {
		return h
	}
	return headerPrefix + strings.ToLower(string(a))
}

// headerNames holds each supported algorithm's HeaderName, made once.
var headerNames = func() map[Algorithm]string {
	m := make(map[Algorithm]string, len(algorithmTable))
	for _, info := range algorithmTable {
		m[info.alg] = headerPrefix + strings.ToLower(string(info.alg))
	}
	return m
}()

// Size returns the digest length in bytes, or 0 for an invalid Algorithm.
func (a Algorithm) Size() int {
	info, _ := a.info()
	return info.size
}

// New returns a fresh hash whose Sum is the big-endian digest S3 expects.
// It panics if a is not valid; validate outside input with ParseAlgorithm.
func (a Algorithm) New() hash.Hash {
	return a.mustInfo().newHash()
}

// Encode returns the wire form (standard padded base64) of a raw digest.
func Encode(digest []byte) string {
	return base64.StdEncoding.EncodeToString(digest)
}

// Decode returns the raw digest of a wire value for a, or an error wrapping
// ErrInvalidChecksum if v is not strict standard base64 of exactly
// a.Size() bytes, and ErrUnknownAlgorithm if a is not valid.
func (a Algorithm) Decode(v string) ([]byte, error) {
	info, ok := a.info()
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownAlgorithm, string(a))
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(v)
	if err != nil || len(raw) != info.size {
		return nil, fmt.Errorf("%w: %s value %q", ErrInvalidChecksum, a, v)
	}
	return raw, nil
}

// Sum returns the wire value of a over data in one call.
func (a Algorithm) Sum(data []byte) string {
	h := a.New()
	h.Write(data)
	return Encode(h.Sum(nil))
}
