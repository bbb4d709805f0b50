package erasure

import (
	"fmt"
	"io"
	"sort"
)

// Rebuild writes whole shard streams for the shards in dst (shard index
// to destination) of the object of size bytes, from the other shards in
// src, in shard order (nil for a shard not to read). It is how a node
// that returns without some shards, or a replaced empty node, is healed:
// each block is read from Data sound shards and the missing pieces coded
// again. It fails with ErrReadQuorum when some block has too few sound
// shards left.
func (c *Code) Rebuild(src []io.ReaderAt, size int64, dst map[int]io.Writer) error {
	if len(dst) == 0 {
		return nil
	}
	skip := make([]bool, c.layout.Shards())
	var targets []int
	for i := range dst {
		if i < 0 || i >= c.layout.Shards() {
			return fmt.Errorf("erasure: shard %d outside layout %s", i, c.layout)
		}
		skip[i] = true
		targets = append(targets, i)
	}
	sort.Ints(targets)
	in := make([]io.ReaderAt, len(src))
	for i, s := range src {
		if !skip[i] {
			in[i] = s
		}
	}
	r, err := c.NewReader(in, size)
	if err != nil {
		return err
	}
	r.buf = c.newBlockBuf(c.blockLen(0, size))
	for _, i := range targets {
		if _, err := dst[i].Write(c.header(i)); err != nil {
			return fmt.Errorf("erasure: rebuild shard %d: %w", i, err)
		}
	}
	w := &Writer{c: c, buf: r.buf, header: true}
	for b := range c.blocks(size) {
		n := c.blockLen(b, size)
		r.buf.cut(c, n)
		have, err := r.fetch(b, r.buf.shards, skip)
		if err != nil {
			return err
		}
		r.buf.markMissing(have)
		if c.enc != nil {
			if err := c.enc.Reconstruct(r.buf.shards); err != nil {
				return fmt.Errorf("erasure: reconstruct block %d: %w", b, err)
			}
		}
		for _, i := range targets {
			if err := w.writeShard(i, dst[i], n, c.chunk(n)); err != nil {
				return fmt.Errorf("erasure: rebuild shard %d: %w", i, err)
			}
		}
	}
	for _, i := range targets {
		if _, err := dst[i].Write(footer(size)); err != nil {
			return fmt.Errorf("erasure: rebuild shard %d: %w", i, err)
		}
	}
	return nil
}
