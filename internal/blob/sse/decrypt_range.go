package sse

import (
	"errors"
	"fmt"
	"io"
)

// DecryptRange returns a reader of plaintext bytes [offset, offset+length)
// of the encrypted stream held in encrypted, which is encryptedSize bytes
// long. It reads only the header and the packages covering the range, one
// package per ReadAt, lazily as the reader is read; it is meant for S3 Range
// GETs. Argument errors are returned at once: ErrInvalidRange if the range
// is outside the plaintext, ErrTruncated or ErrInvalidSize if
// encryptedSize is impossible. Read errors wrap ErrAuthentication,
// ErrTruncated, ErrTrailingData or ErrFormat, or are I/O errors from
// encrypted; all are sticky. encrypted must not change while being read.
func DecryptRange(key ObjectKey, encrypted io.ReaderAt, encryptedSize, offset, length int64) (io.Reader, error) {
	return newRangeDecrypter(key, encrypted, defaultLayout(), encryptedSize, offset, length)
}

// rangeDecrypter is the io.Reader DecryptRange returns.
type rangeDecrypter struct {
	src       io.ReaderAt
	key       ObjectKey
	c         *packageCipher // nil until the header is read
	l         layout
	encSize   int64
	last      int64 // index of the stream's final package
	index     int64 // next package to read
	skip      int64 // plaintext bytes to drop from the next package
	remaining int64 // plaintext bytes still to return
	in, plain []byte
	out       []byte
	err       error
}

func newRangeDecrypter(key ObjectKey, src io.ReaderAt, l layout, encSize, offset, length int64) (*rangeDecrypter, error) {
	plainSize, err := l.plainSize(encSize)
	if err != nil {
		return nil, err
	}
	if offset < 0 || length < 0 || offset > plainSize || length > plainSize-offset {
		return nil, fmt.Errorf("%w: offset %d length %d of %d bytes", ErrInvalidRange, offset, length, plainSize)
	}
	return &rangeDecrypter{
		src: src, key: key, l: l, encSize: encSize,
		last:  l.packages(plainSize) - 1,
		index: offset / l.pkg, skip: offset % l.pkg, remaining: length,
	}, nil
}

func (r *rangeDecrypter) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.remaining == 0 {
			return 0, io.EOF
		}
		r.err = r.next()
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

// next decrypts package r.index and queues the part of it in the range.
func (r *rangeDecrypter) next() error {
	if r.c == nil {
		if err := r.readHeader(); err != nil {
			return err
		}
	}
	off := HeaderSize + r.index*r.l.sealed()
	sealed := r.in[:min(r.l.sealed(), r.encSize-off)]
	if err := r.readAt(sealed, off); err != nil {
		return err
	}
	plain, err := r.c.open(r.plain, sealed, r.index, r.index == r.last)
	if err != nil {
		return err
	}
	plain = plain[min(r.skip, int64(len(plain))):]
	plain = plain[:min(r.remaining, int64(len(plain)))]
	r.out, r.skip = plain, 0
	r.remaining -= int64(len(plain))
	r.index++
	if len(plain) == 0 && r.remaining > 0 {
		// Sizes were validated, so only a lying encryptedSize gets here.
		return fmt.Errorf("%w: package %d shorter than expected", ErrTruncated, r.index-1)
	}
	return nil
}

func (r *rangeDecrypter) readHeader() error {
	var b [HeaderSize]byte
	if err := r.readAt(b[:], 0); err != nil {
		return err
	}
	hdr, err := parseHeader(b[:])
	if err != nil {
		return err
	}
	r.c = newPackageCipher(r.key, hdr)
	r.in = make([]byte, r.l.sealed())
	r.plain = make([]byte, r.l.pkg)
	return nil
}

// readAt fills b from off, reporting a short source as ErrTruncated.
func (r *rangeDecrypter) readAt(b []byte, off int64) error {
	n, err := r.src.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: %d of %d bytes at offset %d", ErrTruncated, n, len(b), off)
	}
	return err
}
