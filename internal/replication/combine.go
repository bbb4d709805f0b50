package replication

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Combining: every worker sends its own keys' small versions in order,
// one batch at a time, waiting for the answer before its next. At a
// steady rate each worker has only one version or two at hand, so alone
// they would send one request (and cost the peer one sync) per version.
// The workers' batches therefore go through one combiner per target,
// like a group commit: a batch handed in while no request is out goes at
// once, together with every other batch waiting; otherwise it waits for
// the next request. A second request may go out beside the first only
// once the first has been out secondAfter (mayStart): a peer that answers
// within that (a LAN, loopback) gets one request at a time, each carrying
// what queued while the last was out, and pays its per-request cost (the
// sync above all) for more versions; on a long link the second request
// keeps the versions from waiting a whole round trip behind the first. A
// worker still gets its own answer before it moves on, so each key's
// changes reach the peer in order, and nothing waits for a timer.

const (
	maxCombinedInFlight = 2
	maxCombinedBytes    = 16 << 20 // data of one combined request, at least one batch
	// secondAfter is how long the request out must have been out before
	// a second one may join it.
	secondAfter = 5 * time.Millisecond
)

// mayStart reports whether a batch handed in may go in a new request now,
// with inFlight requests out, the oldest of them sent age ago.
func mayStart(inFlight int, age time.Duration) bool {
	switch {
	case inFlight == 0:
		return true
	case inFlight >= maxCombinedInFlight:
		return false
	default:
		return age >= secondAfter
	}
}

type combineReq struct {
	ctx     context.Context
	items   []VersionItem
	bytes   int
	results []ItemResult
	err     error
	done    chan struct{}
	// taken is set once the batch is in a request; lead carries a
	// request slot handed to the batch's caller (called set), which then
	// sends what waits (combiner.lead).
	taken, called bool
	lead          chan int
}

type combiner struct {
	mu      sync.Mutex
	waiting []*combineReq
	// sent holds when each slot's request went (zero: the slot is free).
	sent [maxCombinedInFlight]time.Time
	now  func() time.Time // the clock; nil is time.Now
}

func (c *combiner) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// inFlightLocked returns the requests out and the age of the oldest.
func (c *combiner) inFlightLocked(now time.Time) (n int, age time.Duration) {
	for _, at := range c.sent {
		if !at.IsZero() {
			n++
			age = max(age, now.Sub(at))
		}
	}
	return n, age
}

// send delivers items with send, possibly in one request with other
// workers' items, and returns the peer's results for them.
func (c *combiner) send(ctx context.Context, items []VersionItem,
	send func(context.Context, []VersionItem) ([]ItemResult, error)) ([]ItemResult, error) {
	r := &combineReq{ctx: ctx, items: items, done: make(chan struct{}), lead: make(chan int, 1)}
	for _, it := range items {
		r.bytes += len(it.Data)
	}
	c.mu.Lock()
	c.waiting = append(c.waiting, r)
	if mayStart(c.inFlightLocked(c.clock())) {
		c.lead(slices.IndexFunc(c.sent[:], time.Time.IsZero), r, send)
	} else {
		c.mu.Unlock()
		// A request in flight takes the batch next, or its sender hands
		// this caller the slot to send it.
		slot := -1
		select {
		case <-r.done:
		case slot = <-r.lead:
		}
		c.mu.Lock()
		if r.called {
			if slot < 0 {
				slot = <-r.lead // handed over as the batch went: already there
			}
			c.lead(slot, r, send)
		} else {
			c.mu.Unlock()
		}
	}
	<-r.done
	return r.results, r.err
}

// lead sends, in slot, the batches waiting up to and with r's; then it
// hands the slot to the next batch waiting whose caller has none, or frees
// it. A caller is thus held only until its own batch is answered, never
// sending other workers' batches after it while its own queue waits. It
// is called with c.mu held and returns with it released.
func (c *combiner) lead(slot int, r *combineReq,
	send func(context.Context, []VersionItem) ([]ItemResult, error)) {
	for !r.taken {
		c.sent[slot] = c.clock()
		reqs, size := []*combineReq{c.waiting[0]}, c.waiting[0].bytes
		for _, w := range c.waiting[1:] {
			if size+w.bytes > maxCombinedBytes {
				break
			}
			reqs, size = append(reqs, w), size+w.bytes
		}
		for _, w := range reqs {
			w.taken = true
		}
		c.waiting = c.waiting[len(reqs):]
		c.mu.Unlock()
		c.deliver(r.ctx, reqs, send) // r's caller waits here: its context holds
		c.mu.Lock()
	}
	c.sent[slot] = time.Time{}
	for _, w := range c.waiting {
		if !w.called {
			w.called = true
			c.sent[slot] = c.clock()
			w.lead <- slot
			break
		}
	}
	c.mu.Unlock()
}

func (c *combiner) deliver(ctx context.Context, reqs []*combineReq, send func(context.Context, []VersionItem) ([]ItemResult, error)) {
	var all []VersionItem
	if len(reqs) == 1 {
		all = reqs[0].items
	} else {
		for _, r := range reqs {
			all = append(all, r.items...)
		}
	}
	results, err := send(ctx, all)
	off := 0
	for _, r := range reqs {
		if err != nil {
			r.err = err
		} else {
			r.results = results[off : off+len(r.items)]
		}
		off += len(r.items)
		close(r.done)
	}
}
