// Package erasure splits an object's bytes into data and parity shards, one
// per node of a site, and puts them back together from any Data of them
// (Reed-Solomon coding from klauspost/reedsolomon, which uses the CPU's
// SIMD instructions where they exist).
//
// The pieces are pure and small so that each can be tested alone: Layout
// says how many shards of each kind a site of n nodes uses and how many
// must answer for a write or a read to count; Place says which node holds
// which shard of an object; Writer and Reader stream an object through the
// code block by block, each shard block carrying a CRC-32C so that a bit
// flipped on a drive is found and read around; Rebuild writes the shards a
// returning or replaced node is missing.
package erasure

import (
	"errors"
	"fmt"
)

// MaxNodes is the largest site the layouts are defined for.
const MaxNodes = 16

// ErrWriteQuorum is returned when fewer shards were written than a write
// needs to count as acknowledged.
var ErrWriteQuorum = errors.New("erasure: write quorum not reached")

// ErrReadQuorum is returned when fewer sound shards could be read than
// the code needs to rebuild the data.
var ErrReadQuorum = errors.New("erasure: read quorum not reached")

// Layout is how an object is cut: Data shards hold its bytes, Parity
// shards let it be rebuilt when up to Parity shards are lost.
type Layout struct {
	Data   int
	Parity int
}

// ForNodes is the layout of a site of n nodes, one shard per node. The
// parity grows with the site so that larger sites tolerate more losses:
// 1 node keeps a single copy, 2 and 3 nodes tolerate 1 lost node, 4 and 5
// tolerate 2, 6 and 7 tolerate 3, and 8 to 16 tolerate 4.
func ForNodes(n int) (Layout, error) {
	var parity int
	switch {
	case n < 1 || n > MaxNodes:
		return Layout{}, fmt.Errorf("erasure: a site has 1 to %d nodes, not %d", MaxNodes, n)
	case n == 1:
		parity = 0
	case n <= 3:
		parity = 1
	case n <= 5:
		parity = 2
	case n <= 7:
		parity = 3
	default:
		parity = 4
	}
	return Layout{Data: n - parity, Parity: parity}, nil
}

// Shards is the number of shards an object is cut into.
func (l Layout) Shards() int { return l.Data + l.Parity }

// Validate reports whether the layout can be coded.
func (l Layout) Validate() error {
	if l.Data < 1 || l.Parity < 0 || l.Shards() > MaxNodes {
		return fmt.Errorf("erasure: layout %d+%d: need at least 1 data shard, no negative parity and at most %d shards", l.Data, l.Parity, MaxNodes)
	}
	return nil
}

// ReadQuorum is how many sound shards a read needs.
func (l Layout) ReadQuorum() int { return l.Data }

// WriteQuorum is how many shards must be durably written before a write
// is acknowledged. It is Data, and one more when Data equals Parity, so
// that two halves of a split site can never both acknowledge writes of
// the same object.
func (l Layout) WriteQuorum() int {
	if l.Data == l.Parity {
		return l.Data + 1
	}
	return l.Data
}

// Tolerates is how many shards (nodes) can be lost while reads and while
// writes still succeed.
func (l Layout) Tolerates() (reads, writes int) {
	return l.Shards() - l.ReadQuorum(), l.Shards() - l.WriteQuorum()
}

// String is "DATA+PARITY".
func (l Layout) String() string { return fmt.Sprintf("%d+%d", l.Data, l.Parity) }
