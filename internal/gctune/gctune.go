// Package gctune keeps Go's garbage collector from running on a heap far
// smaller than the process.
//
// The server's large memory (the metadata store's block cache and
// memtables) lives outside the Go heap, so the Go heap stays small (6 to 13
// MiB under a 4 KiB PUT load) while requests allocate quickly: with the
// default GOGC of 100 the collector ran 12 times a second. The tuner lets the
// heap grow by max(live, headroom) between collections instead of by live:
// a small heap is collected far less often, and a large one (above
// headroom) exactly as with GOGC=100, so the extra memory is at most
// headroom.
package gctune

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// DefaultHeadroom is the heap growth allowed between collections when the
// live heap is smaller than it.
const DefaultHeadroom = 32 << 20

// MaxHeadroom bounds the headroom a setting may ask for.
const MaxHeadroom = 1 << 30

// goHeapMinimum is the runtime's smallest heap goal at GOGC=100; it scales
// with the percent, so the percent is capped to keep that floor within
// headroom.
const goHeapMinimum = 4 << 20

// Percent is the GOGC value that lets a heap of live bytes grow by
// max(live, headroom) before the next collection: 100 when live is at
// least headroom, more below it, never so much that the runtime's floor
// (4 MiB scaled by the percent) passes headroom.
func Percent(live, headroom uint64) int {
	if live >= headroom || headroom <= goHeapMinimum {
		return 100
	}
	ceiling := 100 * headroom / goHeapMinimum
	if live == 0 {
		return int(ceiling)
	}
	return int(min(100*headroom/live, ceiling))
}

// Tuner sets the collector's percent after every collection. Stop returns
// the collector to the percent it had before Start.
type Tuner struct {
	headroom uint64
	before   int
	stopped  atomic.Bool
	sample   []metrics.Sample
	tuned    atomic.Int64 // collections seen, for tests
}

// Start tunes the collector for headroom (see Percent) until Stop. With
// GOGC set in the environment it leaves the operator's percent alone: the
// tuner it returns is inactive, its Stop does nothing.
func Start(headroom uint64) *Tuner {
	t := &Tuner{headroom: headroom, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	if os.Getenv("GOGC") != "" {
		t.stopped.Store(true)
		return t
	}
	t.before = debug.SetGCPercent(Percent(t.live(), headroom))
	t.arm()
	return t
}

// Active reports whether the tuner is tuning: started without GOGC set,
// not yet stopped.
func (t *Tuner) Active() bool { return !t.stopped.Load() }

// Stop ends the tuning: the percent goes back to what it was before Start.
func (t *Tuner) Stop() {
	if t.stopped.CompareAndSwap(false, true) {
		debug.SetGCPercent(t.before)
	}
}

// sentinel is garbage as soon as it is made, so its finalizer runs once
// after the next collection. It holds a pointer so it is never one of the
// runtime's tiny (batched) allocations, whose finalizers may never run.
type sentinel struct{ t *Tuner }

func (t *Tuner) arm() {
	runtime.SetFinalizer(&sentinel{t: t}, func(s *sentinel) { s.t.collected() })
}

// collected runs on the finalizer goroutine after each collection.
func (t *Tuner) collected() {
	if t.stopped.Load() {
		return
	}
	debug.SetGCPercent(Percent(t.live(), t.headroom))
	t.tuned.Add(1)
	if t.stopped.Load() { // Stop ran meanwhile: its percent stands
		debug.SetGCPercent(t.before)
		return
	}
	t.arm()
}

// live is the heap the last collection marked live.
func (t *Tuner) live() uint64 {
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return t.sample[0].Value.Uint64()
}
