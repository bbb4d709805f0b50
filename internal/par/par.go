// Package par runs a caller's work side by side so that the caller still
// sees it as its own: a panic in any part is raised again in the caller
// once every part has ended, as if the caller had run them one after
// another (net/http recovers a handler's panic, not the panic of a
// goroutine the handler started, which ends the process).
package par

import (
	"context"
	"sync"
	"sync/atomic"
)

// group runs functions in goroutines, at most limit at once when limit
// is at least 1, keeping the first panic.
type group struct {
	wg       sync.WaitGroup
	sem      chan struct{}
	panicked atomic.Pointer[any]
}

func newGroup(limit int) *group {
	g := &group{}
	if limit > 0 {
		g.sem = make(chan struct{}, limit)
	}
	return g
}

// acquire waits for a free slot.
func (g *group) acquire() {
	if g.sem != nil {
		g.sem <- struct{}{}
	}
}

// release frees a slot acquire took.
func (g *group) release() {
	if g.sem != nil {
		<-g.sem
	}
}

// run runs f in the slot acquire took, and frees it when f ends.
func (g *group) run(f func()) {
	g.wg.Go(func() {
		defer g.release()
		defer func() {
			if p := recover(); p != nil {
				g.panicked.CompareAndSwap(nil, &p)
			}
		}()
		f()
	})
}

// wait waits for every function and raises the first panic again.
func (g *group) wait() {
	g.wg.Wait()
	if p := g.panicked.Load(); p != nil {
		panic(*p)
	}
}

// Each calls fn(i) for every i from 0 to n-1, at most limit at once (all at
// once when limit is below 1), and returns once every call has returned.
// A panic in one is raised again by Each once all have ended.
func Each(n, limit int, fn func(i int)) {
	g := newGroup(limit)
	for i := range n {
		g.acquire()
		g.run(func() { fn(i) })
	}
	g.wait()
}

// EachErr is Each for calls that may fail: after the first error, or once
// ctx has ended, no new call starts; it returns the first error, else
// ctx's. Each call gets ctx itself, not a context ended by another call's
// error, so a call under way finishes its work.
func EachErr(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	g := newGroup(limit)
	var (
		mu    sync.Mutex
		first error
	)
	failed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return first != nil
	}
	for i := range n {
		g.acquire() // then look: a call that ended meanwhile may have failed
		if failed() || ctx.Err() != nil {
			g.release()
			break
		}
		g.run(func() {
			if err := fn(ctx, i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	g.wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}
