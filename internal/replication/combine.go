package replication

import (
	"context"
	"sync"
)

// Combining: every worker sends its own keys' small versions in order,
// one batch at a time, waiting for the answer before its next. At a
// steady rate each worker has only one version or two at hand, so alone
// they would send one request (and cost the peer one sync) per version.
// The workers' batches therefore go through one combiner per target,
// like a group commit: a batch handed in while fewer than
// maxCombinedInFlight requests are out goes at once, together with every
// other batch waiting; otherwise it waits for the next request. A worker
// still gets its own answer before it moves on, so each key's changes
// reach the peer in order, and nothing waits for a timer.

const (
	maxCombinedInFlight = 2
	maxCombinedBytes    = 16 << 20 // data of one combined request, at least one batch
)

type combineReq struct {
	items   []VersionItem
	bytes   int
	results []ItemResult
	err     error
	done    chan struct{}
}

type combiner struct {
	mu       sync.Mutex
	waiting  []*combineReq
	inFlight int
}

// send delivers items with send, possibly in one request with other
// workers' items, and returns the peer's results for them.
func (c *combiner) send(ctx context.Context, items []VersionItem,
	send func(context.Context, []VersionItem) ([]ItemResult, error)) ([]ItemResult, error) {
	r := &combineReq{items: items, done: make(chan struct{})}
	for _, it := range items {
		r.bytes += len(it.Data)
	}
	c.mu.Lock()
	c.waiting = append(c.waiting, r)
	if c.inFlight >= maxCombinedInFlight {
		c.mu.Unlock()
		<-r.done // a sender in flight takes it next
		return r.results, r.err
	}
	c.inFlight++
	// Send what waits, until nothing does: batches handed in while a
	// request is out go with the next one.
	for len(c.waiting) > 0 {
		reqs, size := []*combineReq{c.waiting[0]}, c.waiting[0].bytes
		for _, w := range c.waiting[1:] {
			if size+w.bytes > maxCombinedBytes {
				break
			}
			reqs, size = append(reqs, w), size+w.bytes
		}
		c.waiting = c.waiting[len(reqs):]
		c.mu.Unlock()
		c.deliver(ctx, reqs, send)
		c.mu.Lock()
	}
	c.inFlight--
	c.mu.Unlock()
	<-r.done
	return r.results, r.err
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
