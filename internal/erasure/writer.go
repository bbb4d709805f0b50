package erasure

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sync"
)

// Writer cuts an object into shard streams as it is written. A shard
// whose destination fails is dropped and the write goes on with the
// others for as long as the write quorum still holds; Close reports which
// shards were lost so that the caller can record them for healing.
type Writer struct {
	c      *Code
	dst    []io.Writer
	errs   []error
	buf    *blockBuf
	n      int // object bytes in buf
	size   int64
	header bool
	closed bool
	err    error // sticky: quorum lost
}

// NewWriter returns a Writer of one shard stream to each of dst, in shard
// order (len(dst) must be the layout's shard count). A nil destination is
// a shard already known lost.
func (c *Code) NewWriter(dst []io.Writer) (*Writer, error) {
	if len(dst) != c.layout.Shards() {
		return nil, fmt.Errorf("erasure: %d destinations for %d shards", len(dst), c.layout.Shards())
	}
	w := &Writer{c: c, dst: append([]io.Writer(nil), dst...), errs: make([]error, len(dst)), buf: c.newBlockBuf(min(c.blockSize, firstBuf))}
	for i, d := range dst {
		if d == nil {
			w.errs[i] = fmt.Errorf("erasure: shard %d has no destination", i)
		}
	}
	return w, w.checkQuorum()
}

// Write implements io.Writer.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.closed {
		return 0, fmt.Errorf("erasure: write after close")
	}
	written := 0
	for len(p) > 0 {
		if w.n == w.buf.room {
			w.grow(w.n + len(p))
		}
		k := copy(w.buf.data[w.n:w.buf.room], p)
		w.n += k
		p = p[k:]
		written += k
		if w.n == w.c.blockSize {
			if err := w.flush(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// firstBuf is the block a Writer's buffers hold at first: they grow,
// doubling up to the block size, as the object proves larger, so that a
// small object does not cost a block's buffers.
const firstBuf = 16 << 10

// grow makes the buffers hold a block of need bytes, or the block size.
func (w *Writer) grow(need int) {
	nb := w.c.newBlockBuf(min(w.c.blockSize, max(need, 2*w.buf.room)))
	copy(nb.data, w.buf.data[:w.n])
	w.buf = nb
}

// Close writes the last block and reports the object's size and the
// shards that were not written. It fails when fewer than the write
// quorum were.
func (w *Writer) Close() (size int64, lost []int, err error) {
	if !w.closed && w.err == nil {
		w.closed = true
		if w.n > 0 || !w.header {
			w.err = w.flush()
		}
		if w.err == nil {
			w.err = w.each(func(_ int, d io.Writer) error {
				_, err := d.Write(footer(w.size))
				return err
			})
		}
	}
	for i, e := range w.errs {
		if e != nil {
			lost = append(lost, i)
		}
	}
	return w.size, lost, w.err
}

// Errs is the error each shard's destination failed with (nil if none).
func (w *Writer) Errs() []error { return w.errs }

// flush codes the buffered block (or, on an empty object, only the
// headers) and writes each shard's piece to its destination in parallel.
func (w *Writer) flush() error {
	c, n := w.c, w.n
	var ch int
	if n > 0 {
		w.buf.cut(c, n)
		if c.enc != nil {
			if err := c.enc.Encode(w.buf.shards); err != nil {
				return fmt.Errorf("erasure: encode: %w", err)
			}
		}
		ch = c.chunk(n)
	}
	err := w.each(func(i int, d io.Writer) error { return w.writeShard(i, d, n, ch) })
	w.header = true
	w.size += int64(n)
	w.n = 0
	return err
}

// each calls fn for every shard still written, in parallel, drops the
// shards it fails for and checks the quorum.
func (w *Writer) each(fn func(i int, d io.Writer) error) error {
	var wg sync.WaitGroup
	for i, d := range w.dst {
		if w.errs[i] != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.errs[i] = fn(i, d)
		}()
	}
	wg.Wait()
	return w.checkQuorum()
}

func (w *Writer) writeShard(i int, d io.Writer, n, ch int) error {
	if !w.header {
		if _, err := d.Write(w.c.header(i)); err != nil {
			return err
		}
	}
	if n == 0 {
		return nil
	}
	piece := w.buf.shards[i][:ch]
	var sum [crcSize]byte
	binary.BigEndian.PutUint32(sum[:], crc32.Checksum(piece, castagnoli))
	if _, err := d.Write(sum[:]); err != nil {
		return err
	}
	_, err := d.Write(piece)
	return err
}

func (w *Writer) checkQuorum() error {
	ok := 0
	for _, e := range w.errs {
		if e == nil {
			ok++
		}
	}
	if ok < w.c.layout.WriteQuorum() {
		w.err = fmt.Errorf("%w: %d of %d shards writable, %d needed", ErrWriteQuorum, ok, len(w.errs), w.c.layout.WriteQuorum())
		return w.err
	}
	return nil
}
