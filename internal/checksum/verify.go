package checksum

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
)

// Verify checks that every value in expected equals the value computed for
// its algorithm. Values are compared as decoded digests. It returns nil
// when expected is empty, an error wrapping ErrBadDigest naming the first
// mismatching algorithm (in Algorithms order), ErrUnknownAlgorithm for a
// key that is not a valid Algorithm, ErrInvalidChecksum if a value
// is malformed, and ErrNotComputed if computed lacks an expected algorithm.
func Verify(expected, computed map[Algorithm]string) error {
	for a := range expected {
		if !a.Valid() {
			return fmt.Errorf("%w: %q", ErrUnknownAlgorithm, string(a))
		}
	}
	for _, a := range Algorithms() {
		want, ok := expected[a]
		if !ok {
			continue
		}
		got, ok := computed[a]
		if !ok {
			return fmt.Errorf("%w: %s", ErrNotComputed, a)
		}
		if err := compareValues(a, want, got); err != nil {
			return err
		}
	}
	return nil
}

func compareValues(a Algorithm, want, got string) error {
	w, err := a.Decode(want)
	if err != nil {
		return err
	}
	g, err := a.Decode(got)
	if err != nil {
		return err
	}
	if !bytes.Equal(w, g) {
		return fmt.Errorf("%w: the %s you specified did not match the calculated checksum", ErrBadDigest, a)
	}
	return nil
}

// ParseContentMD5 returns the 16 raw bytes of a Content-MD5 header value,
// or an error wrapping ErrInvalidDigest if v is not strict standard base64
// of exactly 16 bytes.
func ParseContentMD5(v string) ([]byte, error) {
	raw, err := base64.StdEncoding.Strict().DecodeString(v)
	if err != nil || len(raw) != 16 {
		return nil, fmt.Errorf("%w: %q", ErrInvalidDigest, v)
	}
	return raw, nil
}

// VerifyContentMD5 checks a Content-MD5 header value against the MD5 of the
// received body given as hex (as Set.Sum returns it). It returns an error
// wrapping ErrInvalidDigest if header is malformed and ErrBadDigest if the
// digests differ.
func VerifyContentMD5(header, md5Hex string) error {
	want, err := ParseContentMD5(header)
	if err != nil {
		return err
	}
	got, err := hex.DecodeString(md5Hex)
	if err != nil || len(got) != 16 {
		return fmt.Errorf("checksum: computed MD5 %q is not 32 hex digits", md5Hex)
	}
	if !slices.Equal(want, got) {
		return fmt.Errorf("%w: the Content-MD5 you specified did not match what was received", ErrBadDigest)
	}
	return nil
}
