package replication

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestBacklogTallies: random adds and removals, in any interleaving the
// target can produce (each entry added once, then removed once, possibly
// moving from the journal to the retry queue first), keep every tally equal
// to what is outstanding and never negative, and the oldest retried change
// the oldest in the retry queue (to its second); a removal past zero is held
// at zero.
func TestBacklogTallies(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	bl := newBacklog(nil)
	type live struct {
		en    Entry
		which int
	}
	var out []live
	for range 10000 {
		switch r := rng.IntN(3); {
		case r == 0 || len(out) == 0:
			en := Entry{Bucket: []string{"a", "b", "c"}[rng.IntN(3)], Size: int64(rng.IntN(1000)),
				Queued: int64(1_700_000_000+rng.IntN(50))*int64(time.Second) + rng.Int64N(int64(time.Second))}
			bl.tally(en, 0, 1)
			out = append(out, live{en: en})
		case r == 1: // journal entry fails: to the retry queue
			i := rng.IntN(len(out))
			if out[i].which == 0 {
				bl.tally(out[i].en, 0, -1)
				bl.tally(out[i].en, 1, 1)
				out[i].which = 1
			}
		default: // sent or dropped: gone
			i := rng.IntN(len(out))
			bl.tally(out[i].en, out[i].which, -1)
			out = append(out[:i], out[i+1:]...)
		}
		var want [2]counts
		oldest := int64(0)
		for _, l := range out {
			want[l.which].n++
			want[l.which].bytes += l.en.Size
			if sec := l.en.Queued / int64(time.Second) * int64(time.Second); l.which == 1 && (oldest == 0 || sec < oldest) {
				oldest = sec
			}
		}
		p, r := bl.snapshot()
		if p != want[0] || r != want[1] {
			t.Fatalf("tallies %+v %+v, want %+v %+v", p, r, want[0], want[1])
		}
		if got := bl.oldestRetried(); got != oldest {
			t.Fatalf("oldest retried %d, want %d", got, oldest)
		}
	}
	for _, l := range out {
		bl.tally(l.en, l.which, -1)
	}
	if p, r := bl.snapshot(); p != (counts{}) || r != (counts{}) || len(bl.perBucket) != 0 || len(bl.retryQueued) != 0 {
		t.Fatalf("after draining: %+v %+v %v %v", p, r, bl.perBucket, bl.retryQueued)
	}
	bl.tally(Entry{Bucket: "a", Size: 5}, 1, -1)
	if p, r := bl.snapshot(); p.n < 0 || r.n < 0 || r.bytes < 0 {
		t.Fatalf("went negative: %+v %+v", p, r)
	}
}
