package sse

import (
	"encoding/binary"
	"fmt"
)

const (
	// PackageSize is the number of plaintext bytes per package.
	PackageSize = 64 << 10
	// HeaderSize is the length of the stream header.
	HeaderSize = 8

	magic            = "tle"
	formatVersion    = 1
	noncePrefixSize  = 4
	nonceSize        = 12
	tagSize          = 16
	finalFlag        = 1
	notFinalFlag     = 0
	packageAADLength = HeaderSize + 1
)

// layout is the package arithmetic for one package size; the exported
// functions use PackageSize, tests use small sizes to get many packages.
type layout struct {
	pkg int64 // plaintext bytes per package
}

func defaultLayout() layout { return layout{pkg: PackageSize} }

// sealed returns the encrypted length of a full package.
func (l layout) sealed() int64 { return l.pkg + tagSize }

// packages returns how many packages a plaintext of size n encrypts to.
func (l layout) packages(n int64) int64 {
	if n == 0 {
		return 1
	}
	return (n + l.pkg - 1) / l.pkg
}

func (l layout) encryptedSize(n int64) int64 {
	if n < 0 {
		panic(fmt.Sprintf("sse: negative plaintext size %d", n))
	}
	return HeaderSize + n + l.packages(n)*tagSize
}

// plainSize inverts encryptedSize, rejecting sizes it never produces.
func (l layout) plainSize(enc int64) (int64, error) {
	body := enc - HeaderSize
	if body < tagSize {
		return 0, fmt.Errorf("%w: %d encrypted bytes", ErrTruncated, enc)
	}
	n := (body + l.sealed() - 1) / l.sealed()
	last := body - (n-1)*l.sealed()
	if last < tagSize || (last == tagSize && n > 1) {
		return 0, fmt.Errorf("%w: %d", ErrInvalidSize, enc)
	}
	return body - n*tagSize, nil
}

// EncryptedSize returns the length of the encrypted stream for a plaintext
// of plainSize bytes. It panics if plainSize is negative.
func EncryptedSize(plainSize int64) int64 { return defaultLayout().encryptedSize(plainSize) }

// PlainSize returns the plaintext length of an encrypted stream of
// encryptedSize bytes, or an error wrapping ErrTruncated or ErrInvalidSize
// if no plaintext encrypts to that size.
func PlainSize(encryptedSize int64) (int64, error) { return defaultLayout().plainSize(encryptedSize) }

// header is a parsed stream header.
type header [HeaderSize]byte

func newHeader(prefix [noncePrefixSize]byte) header {
	var h header
	copy(h[:], magic)
	h[len(magic)] = formatVersion
	copy(h[len(magic)+1:], prefix[:])
	return h
}

// parseHeader validates b as a version-1 header.
func parseHeader(b []byte) (header, error) {
	var h header
	if len(b) != HeaderSize || string(b[:len(magic)]) != magic || b[len(magic)] != formatVersion {
		return h, fmt.Errorf("%w: bad stream header %x", ErrFormat, b)
	}
	copy(h[:], b)
	return h, nil
}

// nonce returns the GCM nonce of package i.
func (h *header) nonce(dst *[nonceSize]byte, i int64) []byte {
	copy(dst[:noncePrefixSize], h[HeaderSize-noncePrefixSize:])
	binary.BigEndian.PutUint64(dst[noncePrefixSize:], uint64(i))
	return dst[:]
}

// aad returns the associated data of a package.
func (h *header) aad(dst *[packageAADLength]byte, final bool) []byte {
	copy(dst[:], h[:])
	dst[HeaderSize] = notFinalFlag
	if final {
		dst[HeaderSize] = finalFlag
	}
	return dst[:]
}
