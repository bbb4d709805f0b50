package erasure

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"time"
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
	// grace, when set, is how long a block's writes wait for the shards
	// still writing once the write quorum of them is done: then those
	// whose destination can give up (GiverUp) are given up on and
	// dropped (gaveUp), their Write ending with an error.
	grace   time.Duration
	gaveUp  []bool
	onGiven func(shard int)
}

// GiverUp is a shard destination whose Write can be ended from another
// goroutine: GiveUp makes a Write under way, and every later one, fail
// (a stream to a node that stopped taking it, say).
type GiverUp interface {
	GiveUp()
}

// SetGrace makes each block's writes wait at most d for the shards still
// writing once the write quorum of them is done, and give up on those
// whose destination is a GiverUp, calling given (if not nil) with each
// such shard as it does; 0 (the default) waits for every shard.
func (w *Writer) SetGrace(d time.Duration, given func(shard int)) { w.grace, w.onGiven = d, given }

// NewWriter returns a Writer of one shard stream to each of dst, in shard
// order (len(dst) must be the layout's shard count). A nil destination is
// a shard already known lost.
func (c *Code) NewWriter(dst []io.Writer) (*Writer, error) {
	if len(dst) != c.layout.Shards() {
		return nil, fmt.Errorf("erasure: %d destinations for %d shards", len(dst), c.layout.Shards())
	}
	w := &Writer{c: c, dst: append([]io.Writer(nil), dst...), errs: make([]error, len(dst)), gaveUp: make([]bool, len(dst)),
		buf: c.newBlockBuf(min(c.blockSize, firstBuf))}
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
// shards it fails for and checks the quorum. With a grace set, once the
// write quorum of calls has succeeded it waits that long for the others
// and then gives up on those it can; it still waits for every call to
// end (a given-up one ends at once), so that no call outlives the block
// whose buffers it reads.
func (w *Writer) each(fn func(i int, d io.Writer) error) error {
	type result struct {
		i   int
		err error
	}
	results := make(chan result, len(w.dst))
	pending := 0
	for i, d := range w.dst {
		if w.errs[i] != nil {
			continue
		}
		pending++
		go func() { results <- result{i, fn(i, d)} }()
	}
	done := make([]bool, len(w.dst))
	ok := 0
	var grace <-chan time.Time
	for pending > 0 {
		select {
		case r := <-results:
			pending--
			done[r.i], w.errs[r.i] = true, r.err
			if r.err == nil {
				if ok++; ok == w.c.layout.WriteQuorum() && w.grace > 0 && pending > 0 {
					t := time.NewTimer(w.grace)
					defer t.Stop()
					grace = t.C
				}
			}
		case <-grace:
			grace = nil
			for i, d := range w.dst {
				if g, can := d.(GiverUp); can && w.errs[i] == nil && !done[i] {
					w.gaveUp[i] = true
					g.GiveUp()
					if w.onGiven != nil {
						w.onGiven(i)
					}
				}
			}
		}
	}
	for i, g := range w.gaveUp {
		if g && w.errs[i] == nil {
			w.errs[i] = fmt.Errorf("erasure: shard %d given up on after its block's write quorum", i)
		}
	}
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
