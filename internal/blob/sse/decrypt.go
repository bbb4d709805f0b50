package sse

import (
	"errors"
	"fmt"
	"io"
)

// DecryptReader returns a reader of the plaintext of an encrypted stream
// read sequentially from encrypted, for full-object reads where the size
// need not be known. Every byte it returns has been authenticated, but a
// failure can surface after earlier packages were returned: callers must
// treat an error from Read as the whole object being unreadable. Errors
// wrap ErrAuthentication, ErrTruncated, ErrTrailingData or ErrFormat, or
// are I/O errors from encrypted; all are sticky.
func DecryptReader(key ObjectKey, encrypted io.Reader) io.Reader {
	return newDecrypter(key, encrypted, defaultLayout())
}

// decrypter is the io.Reader DecryptReader returns.
type decrypter struct {
	src   io.Reader
	key   ObjectKey
	c     *packageCipher // nil until the header is read
	l     layout
	in    []byte // one sealed package plus one look-ahead byte
	carry bool   // in[0] holds the look-ahead byte of the next package
	plain []byte // plaintext scratch for one package
	out   []byte // unread plaintext
	index int64
	done  bool
	err   error
}

func newDecrypter(key ObjectKey, src io.Reader, l layout) *decrypter {
	return &decrypter{src: src, key: key, l: l,
		in: make([]byte, l.sealed()+1), plain: make([]byte, l.pkg)}
}

func (d *decrypter) Read(p []byte) (int, error) {
	for len(d.out) == 0 {
		if d.err != nil {
			return 0, d.err
		}
		if d.done {
			return 0, io.EOF
		}
		d.err = d.next()
	}
	n := copy(p, d.out)
	d.out = d.out[n:]
	return n, nil
}

// next reads, authenticates and decrypts one package, reading one byte past
// it to learn whether it is the last.
func (d *decrypter) next() error {
	if d.c == nil {
		if err := d.readHeader(); err != nil {
			return err
		}
	}
	n := 0
	if d.carry {
		n = 1
	}
	m, err := io.ReadFull(d.src, d.in[n:])
	n += m
	final := true
	switch {
	case err == nil:
		final = false
		n--
	case !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF):
		return err
	case n < tagSize:
		return fmt.Errorf("%w: %d bytes of package %d", ErrTruncated, n, d.index)
	}
	plain, err := d.c.open(d.plain, d.in[:n], d.index, final)
	if err != nil {
		return err
	}
	d.out, d.done = plain, final
	d.carry = !final
	if d.carry {
		d.in[0] = d.in[n]
	}
	d.index++
	return nil
}

func (d *decrypter) readHeader() error {
	var b [HeaderSize]byte
	if _, err := io.ReadFull(d.src, b[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: stream header", ErrTruncated)
		}
		return err
	}
	hdr, err := parseHeader(b[:])
	if err != nil {
		return err
	}
	d.c = newPackageCipher(d.key, hdr)
	return nil
}
