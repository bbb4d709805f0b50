package checksum

import (
	"fmt"
	"net/http"
	"strings"
)

// Request header names read by FromHeaders.
const (
	HeaderSDKAlgorithm = "x-amz-sdk-checksum-algorithm"
	HeaderTrailer      = "x-amz-trailer"
	HeaderContentMD5   = "Content-MD5"
)

// Declared is what a request's headers say about the integrity of its body.
// S3 allows at most one additional checksum per request, so it holds one.
type Declared struct {
	// Algorithm is the additional checksum the client chose, or "" if none.
	// It may be set with no Value when the client only named the algorithm
	// (x-amz-sdk-checksum-algorithm) and leaves computing it to the server.
	Algorithm Algorithm
	// Value is the expected wire value, or "" while it is unknown.
	Value string
	// Trailer reports that Value arrives after the body in the trailer named
	// Algorithm.HeaderName(); set it with SetTrailerValue.
	Trailer bool
	// ContentMD5 is the validated Content-MD5 header (base64), or "".
	ContentMD5 string
}

// FromHeaders parses and validates the checksum-related request headers:
// x-amz-checksum-<alg>, x-amz-sdk-checksum-algorithm, x-amz-trailer and
// Content-MD5. Every returned error wraps one of the package sentinels; a
// malformed Content-MD5 is ErrInvalidDigest.
func FromHeaders(h http.Header) (Declared, error) {
	var d Declared
	if err := d.readValueHeaders(h); err != nil {
		return Declared{}, err
	}
	if err := d.readTrailer(h.Get(HeaderTrailer)); err != nil {
		return Declared{}, err
	}
	if err := d.readSDKAlgorithm(h.Get(HeaderSDKAlgorithm)); err != nil {
		return Declared{}, err
	}
	if vs := h.Values(HeaderContentMD5); len(vs) > 0 {
		// Present but empty is malformed too (S3: InvalidDigest), not absent.
		if len(vs) > 1 {
			return Declared{}, fmt.Errorf("%w: more than one Content-MD5", ErrInvalidDigest)
		}
		if _, err := ParseContentMD5(vs[0]); err != nil {
			return Declared{}, err
		}
		d.ContentMD5 = vs[0]
	}
	return d, nil
}

// readValueHeaders collects the x-amz-checksum-<alg> headers.
func (d *Declared) readValueHeaders(h http.Header) error {
	for name, values := range h {
		alg, ok, err := algorithmFromHeaderName(name)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		v, err := singleValue(alg, values)
		if err != nil {
			return err
		}
		if d.Algorithm != "" {
			return fmt.Errorf("%w: %s and %s", ErrMultipleChecksums, d.Algorithm, alg)
		}
		d.Algorithm, d.Value = alg, v
	}
	return nil
}

// algorithmFromHeaderName maps x-amz-checksum-<alg> (any case) to its
// Algorithm. ok is false for headers outside that family and for the
// family's non-value members.
func algorithmFromHeaderName(name string) (alg Algorithm, ok bool, err error) {
	lower := strings.ToLower(name)
	suffix, found := strings.CutPrefix(lower, headerPrefix)
	if !found {
		return "", false, nil
	}
	switch suffix {
	case "algorithm", "type", "mode":
		// CreateMultipartUpload's algorithm and type, GetObject's mode:
		// members of the family that carry no checksum value.
		return "", false, nil
	}
	alg, err = ParseAlgorithm(suffix)
	if err != nil {
		return "", false, fmt.Errorf("header %s: %w", name, err)
	}
	return alg, true, nil
}

// singleValue validates a header's values, which must agree if repeated.
func singleValue(alg Algorithm, values []string) (string, error) {
	for _, v := range values[1:] {
		if v != values[0] {
			return "", fmt.Errorf("%w: %s sent twice with different values", ErrInvalidChecksum, alg.HeaderName())
		}
	}
	if _, err := alg.Decode(values[0]); err != nil {
		return "", err
	}
	return values[0], nil
}

// readTrailer parses x-amz-trailer, a comma-separated list of header names.
func (d *Declared) readTrailer(v string) error {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	for _, name := range strings.Split(v, ",") {
		name = strings.TrimSpace(name)
		alg, ok, err := algorithmFromHeaderName(name)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidTrailer, err)
		}
		if !ok {
			return fmt.Errorf("%w: %q", ErrInvalidTrailer, name)
		}
		if d.Algorithm != "" {
			return fmt.Errorf("%w: %s and trailer %s", ErrMultipleChecksums, d.Algorithm, alg)
		}
		d.Algorithm, d.Trailer = alg, true
	}
	return nil
}

// readSDKAlgorithm checks x-amz-sdk-checksum-algorithm against what was
// sent, or adopts it when nothing was.
func (d *Declared) readSDKAlgorithm(v string) error {
	if v == "" {
		return nil
	}
	alg, err := ParseAlgorithm(v)
	if err != nil {
		return fmt.Errorf("header %s: %w", HeaderSDKAlgorithm, err)
	}
	if d.Algorithm != "" && d.Algorithm != alg {
		return fmt.Errorf("%w: declared %s, sent %s", ErrAlgorithmMismatch, alg, d.Algorithm)
	}
	d.Algorithm = alg
	return nil
}

// SetTrailerValue records the value of the checksum trailer once the body
// has been read. name is the trailer's header name as received (any case).
// It returns an error wrapping ErrInvalidTrailer if no trailer was declared
// or name differs from the declared one, and ErrInvalidChecksum if value is
// malformed.
func (d *Declared) SetTrailerValue(name, value string) error {
	if !d.Trailer || !strings.EqualFold(name, d.Algorithm.HeaderName()) {
		return fmt.Errorf("%w: undeclared trailer %q", ErrInvalidTrailer, name)
	}
	if _, err := d.Algorithm.Decode(value); err != nil {
		return err
	}
	d.Value = value
	return nil
}

// Expected returns the declared additional checksum as the map Verify
// takes: empty when no value is known (none declared, or a trailer not yet
// set).
func (d Declared) Expected() map[Algorithm]string {
	if d.Algorithm == "" || d.Value == "" {
		return map[Algorithm]string{}
	}
	return map[Algorithm]string{d.Algorithm: d.Value}
}

// Verify checks the received body's MD5 (hex, as Set.Sum returns it) and
// computed checksums against everything declared. A Declared with Trailer
// set but no value yet verifies only Content-MD5; call SetTrailerValue
// first.
func (d Declared) Verify(md5Hex string, computed map[Algorithm]string) error {
	if d.ContentMD5 != "" {
		if err := VerifyContentMD5(d.ContentMD5, md5Hex); err != nil {
			return err
		}
	}
	return Verify(d.Expected(), computed)
}
