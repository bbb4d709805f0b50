package sse

import (
	"crypto/rand"
	"errors"
	"io"
)

// EncryptReader returns a reader of the encrypted stream (header, then
// packages; see the package documentation) for plaintext under key. It reads
// plaintext lazily, one package ahead, and yields exactly
// EncryptedSize(n) bytes for n plaintext bytes. Errors from plaintext are
// returned unchanged and are sticky. A fresh random nonce prefix is drawn
// per call, but key should still encrypt only one stream.
func EncryptReader(key ObjectKey, plaintext io.Reader) io.Reader {
	var prefix [noncePrefixSize]byte
	rand.Read(prefix[:])
	return newEncrypter(key, plaintext, defaultLayout(), prefix)
}

// encrypter is the io.Reader EncryptReader returns.
type encrypter struct {
	src   io.Reader
	c     *packageCipher
	l     layout
	buf   []byte // one sealed package, plus room for the look-ahead byte
	out   []byte // unread encrypted bytes (header or buf)
	index int64  // next package index
	carry []byte // look-ahead byte read past the current package, if any
	done  bool   // final package produced
	err   error
}

func newEncrypter(key ObjectKey, src io.Reader, l layout, prefix [noncePrefixSize]byte) *encrypter {
	hdr := newHeader(prefix)
	e := &encrypter{src: src, c: newPackageCipher(key, hdr), l: l,
		buf: make([]byte, l.sealed()), carry: make([]byte, 0, 1)}
	e.out = append([]byte(nil), hdr[:]...)
	return e
}

func (e *encrypter) Read(p []byte) (int, error) {
	for len(e.out) == 0 {
		if e.err != nil {
			return 0, e.err
		}
		if e.done {
			return 0, io.EOF
		}
		e.err = e.next()
	}
	n := copy(p, e.out)
	e.out = e.out[n:]
	return n, nil
}

// next reads and seals one package. A package is final when the reader
// cannot supply even one byte past it, hence reading pkg+1 bytes.
func (e *encrypter) next() error {
	n := copy(e.buf, e.carry)
	m, err := io.ReadFull(e.src, e.buf[n:e.l.pkg+1])
	n += m
	switch {
	case err == nil:
		e.carry = append(e.carry[:0], e.buf[e.l.pkg])
		n = int(e.l.pkg)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		e.carry = e.carry[:0]
		e.done = true
	default:
		return err
	}
	e.out = e.c.seal(e.buf[:0], e.buf[:n], e.index, e.done)
	e.index++
	return nil
}
