package sse

import (
	"crypto/cipher"
	"fmt"
)

// packageCipher seals and opens the packages of one stream. It is owned by
// one reader and not safe for concurrent use (it reuses scratch space).
type packageCipher struct {
	aead  cipher.AEAD
	hdr   header
	nonce [nonceSize]byte
	aad   [packageAADLength]byte
}

func newPackageCipher(key ObjectKey, hdr header) *packageCipher {
	return &packageCipher{aead: newGCM(key[:]), hdr: hdr}
}

// seal appends package i, encrypted, to dst; dst and plain may be the
// same buffer (plain == dst[len(dst):len(dst)+len(plain)] in-place form).
func (c *packageCipher) seal(dst, plain []byte, i int64, final bool) []byte {
	return c.aead.Seal(dst, c.hdr.nonce(&c.nonce, i), plain, c.hdr.aad(&c.aad, final))
}

// open decrypts package i into dst[:0] and returns the plaintext. sealed
// must not overlap dst: on failure the package is opened again under the
// opposite final flag, purely to name the failure (ErrTruncated when the
// expected last package is not marked final, ErrTrailingData when a package
// expected to be followed by more is marked final).
func (c *packageCipher) open(dst, sealed []byte, i int64, final bool) ([]byte, error) {
	nonce := c.hdr.nonce(&c.nonce, i)
	out, err := c.aead.Open(dst[:0], nonce, sealed, c.hdr.aad(&c.aad, final))
	if err == nil {
		return out, nil
	}
	if _, err := c.aead.Open(dst[:0], nonce, sealed, c.hdr.aad(&c.aad, !final)); err == nil {
		if final {
			return nil, fmt.Errorf("%w: package %d is not the last", ErrTruncated, i)
		}
		return nil, fmt.Errorf("%w: package %d is marked last", ErrTrailingData, i)
	}
	return nil, fmt.Errorf("%w: package %d", ErrAuthentication, i)
}
