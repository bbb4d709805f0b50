package blob

import (
	"sync"

	"github.com/twinlake/twinlake/internal/erasure"
)

// SmallShardMax is the largest shard a shard drive keeps in its small
// store, and the most of a shard a Held writer holds in memory.
const SmallShardMax = 128 << 10

// Held is a ShardWriter that holds a shard in memory while it is at most
// SmallShardMax bytes and hands it whole to one call at Commit (a small
// store's write, a request of known length); a shard that grows past it
// spills into a writer of its own (a file, a stream), the held bytes
// first, and goes on there. After a failed Write, Abort it as any shard.
type Held struct {
	buf   []byte
	mu    sync.Mutex  // guards w against GiveUp, called while a Write is under way
	w     ShardWriter // once spilled
	spill func() (ShardWriter, error)
	whole func([]byte) error
}

// NewHeld returns a Held writer that commits a held shard with whole and
// opens the writer of a larger one with spill.
func NewHeld(spill func() (ShardWriter, error), whole func([]byte) error) *Held {
	return &Held{spill: spill, whole: whole}
}

func (h *Held) Write(p []byte) (int, error) {
	if h.w == nil {
		if len(h.buf)+len(p) <= SmallShardMax {
			h.buf = append(h.buf, p...)
			return len(p), nil
		}
		w, err := h.spill()
		if err != nil {
			return 0, err
		}
		h.mu.Lock()
		h.w = w
		h.mu.Unlock()
		if _, err := w.Write(h.buf); err != nil {
			return 0, err
		}
		h.buf = nil
	}
	return h.w.Write(p)
}

// Commit commits the shard: whole if it was held, else its writer.
func (h *Held) Commit() error {
	if h.w != nil {
		return h.w.Commit()
	}
	return h.whole(h.buf)
}

// Abort drops the shard, aborting its writer if it spilled.
func (h *Held) Abort() {
	if h.w != nil {
		h.w.Abort()
	}
	h.buf = nil
}

// GiveUp gives up on the writer the shard spilled into, if it can be
// (erasure.GiverUp): a Write under way there ends with an error. A shard
// still held is written by no call that could hang.
func (h *Held) GiveUp() {
	h.mu.Lock()
	w := h.w
	h.mu.Unlock()
	if g, ok := w.(erasure.GiverUp); ok {
		g.GiveUp()
	}
}

// Spilled reports whether the shard went on into its own writer.
func (h *Held) Spilled() bool { return h.w != nil }
