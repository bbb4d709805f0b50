package erasure

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"
)

// Reader reads an object back from its shard streams. It reads the data
// shards while they are sound and turns to parity shards only for a block
// some data shard could not give; a shard found corrupt or unreadable is
// not asked again. It implements io.Reader and io.ReaderAt (a range read
// decodes only the blocks it covers).
type Reader struct {
	c    *Code
	src  []io.ReaderAt
	size int64

	mu      sync.Mutex
	checked []bool // header verified
	bad     []error
	blk     int64 // block held in buf, or -1
	buf     *blockBuf
	off     int64 // Read's position
}

// NewReader returns a Reader of the object of size bytes whose shard
// streams are src, in shard order; a nil source is a shard known lost.
func (c *Code) NewReader(src []io.ReaderAt, size int64) (*Reader, error) {
	if len(src) != c.layout.Shards() {
		return nil, fmt.Errorf("erasure: %d sources for %d shards", len(src), c.layout.Shards())
	}
	if size < 0 {
		return nil, fmt.Errorf("erasure: negative size %d", size)
	}
	r := &Reader{c: c, src: src, size: size, checked: make([]bool, len(src)), bad: make([]error, len(src)), blk: -1}
	for i, s := range src {
		if s == nil {
			r.bad[i] = fmt.Errorf("erasure: shard %d has no source", i)
		}
	}
	return r, nil
}

// Bad lists the shards found lost, unreadable or corrupt so far: the
// ones to heal.
func (r *Reader) Bad() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for i, e := range r.bad {
		if e != nil {
			out = append(out, i)
		}
	}
	return out
}

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.ReadAt(p, r.off)
	r.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// ReadAt implements io.ReaderAt.
func (r *Reader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("erasure: negative offset %d", off)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	bs := int64(r.c.blockSize)
	for n < len(p) && off < r.size {
		b := off / bs
		if err := r.load(b); err != nil {
			return n, err
		}
		k := copy(p[n:], r.buf.data[off-b*bs:r.c.blockLen(b, r.size)])
		n += k
		off += int64(k)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// load decodes block b into buf.
func (r *Reader) load(b int64) error {
	if r.blk == b {
		return nil
	}
	if r.buf == nil {
		r.buf = r.c.newBlockBuf(r.c.blockLen(0, r.size))
	}
	r.blk = -1
	n := r.c.blockLen(b, r.size)
	r.buf.cut(r.c, n)
	have, err := r.fetch(b, r.buf.shards, nil)
	if err != nil {
		return err
	}
	if r.c.enc != nil && !allData(have, r.c.layout.Data) {
		r.buf.markMissing(have)
		if err := r.c.enc.ReconstructData(r.buf.shards); err != nil {
			return fmt.Errorf("erasure: reconstruct block %d: %w", b, err)
		}
		// ReconstructData fills the data shards in place (they have the
		// capacity), so buf.data holds the block again.
	}
	r.blk = b
	return nil
}

// markMissing empties the shards not in have, keeping their memory: the
// coder fills empty shards and leaves the others as they are.
func (b *blockBuf) markMissing(have []bool) {
	for i, ok := range have {
		if !ok {
			b.shards[i] = b.shards[i][:0]
		}
	}
}

func allData(have []bool, data int) bool {
	for _, ok := range have[:data] {
		if !ok {
			return false
		}
	}
	return true
}

// fetch reads block b's pieces into shards until Data sound ones are
// held, data shards first, each round reading as many shards as still
// needed in parallel. skip marks shards not to read. It returns which
// shards hold their piece.
func (r *Reader) fetch(b int64, shards [][]byte, skip []bool) ([]bool, error) {
	c := r.c
	have := make([]bool, len(shards))
	tried := make([]bool, len(shards))
	got := 0
	for got < c.layout.Data {
		var round []int
		for i := range shards {
			if len(round) == c.layout.Data-got {
				break
			}
			if tried[i] || r.bad[i] != nil || (skip != nil && skip[i]) {
				continue
			}
			tried[i] = true
			round = append(round, i)
		}
		if len(round) == 0 {
			return nil, fmt.Errorf("%w: block %d: %d of %d shards sound, %d needed", ErrReadQuorum, b, got, len(shards), c.layout.Data)
		}
		errs := make([]error, len(round))
		var wg sync.WaitGroup
		for k, i := range round {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[k] = r.readPiece(i, b, shards[i])
			}()
		}
		wg.Wait()
		for k, i := range round {
			if errs[k] != nil {
				r.bad[i] = errs[k]
				continue
			}
			have[i] = true
			got++
		}
	}
	return have, nil
}

// readPiece reads shard i's piece of block b into dst (sized to the
// piece) and checks it.
func (r *Reader) readPiece(i int, b int64, dst []byte) error {
	src := r.src[i]
	if !r.checked[i] {
		h := make([]byte, headerSize)
		if _, err := src.ReadAt(h, 0); err != nil {
			return fmt.Errorf("shard %d header: %w", i, err)
		}
		sh, err := ParseHeader(h)
		if err != nil {
			return fmt.Errorf("shard %d: %w", i, err)
		}
		if sh.Layout != r.c.layout || sh.Index != i || sh.BlockSize != r.c.blockSize {
			return fmt.Errorf("%w: shard %d header says %s index %d block %d", ErrCorrupt, i, sh.Layout, sh.Index, sh.BlockSize)
		}
		r.checked[i] = true
	}
	var sum [crcSize]byte
	off := r.c.blockOffset(b)
	if err := readFull(src, sum[:], off); err != nil {
		return fmt.Errorf("shard %d block %d: %w", i, b, err)
	}
	if err := readFull(src, dst, off+crcSize); err != nil {
		return fmt.Errorf("shard %d block %d: %w", i, b, err)
	}
	if crc32.Checksum(dst, castagnoli) != binary.BigEndian.Uint32(sum[:]) {
		return fmt.Errorf("%w: shard %d block %d checksum", ErrCorrupt, i, b)
	}
	return nil
}

// readFull is ReadAt that treats a short read as an error and a full read
// that also reports io.EOF as success.
func readFull(src io.ReaderAt, p []byte, off int64) error {
	n, err := src.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// CheckShard reads shard stream index of an object of size bytes through
// its header, every block's checksum and its footer: what a deep heal
// does to find a shard that has rotted where no read has looked.
func (c *Code) CheckShard(src io.ReaderAt, index int, size int64) error {
	r := &Reader{c: c, src: make([]io.ReaderAt, c.layout.Shards()), size: size, checked: make([]bool, c.layout.Shards())}
	if index < 0 || index >= len(r.src) {
		return fmt.Errorf("erasure: shard %d outside layout %s", index, c.layout)
	}
	r.src[index] = src
	buf := c.newBlockBuf(c.blockLen(0, size))
	for b := range c.blocks(size) {
		buf.cut(c, c.blockLen(b, size))
		if err := r.readPiece(index, b, buf.shards[index]); err != nil {
			return err
		}
	}
	if size == 0 {
		h := make([]byte, headerSize)
		if err := readFull(src, h, 0); err != nil {
			return err
		}
		if _, err := ParseHeader(h); err != nil {
			return err
		}
	}
	f := make([]byte, footerSize)
	if err := readFull(src, f, c.footerOffset(size)); err != nil {
		return err
	}
	if got, err := ParseFooter(f); err != nil || got != size {
		return fmt.Errorf("%w: shard %d footer", ErrCorrupt, index)
	}
	return nil
}
