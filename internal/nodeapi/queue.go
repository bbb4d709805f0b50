package nodeapi

import (
	"errors"
	"sync"
	"time"
)

// A Drive sends calls of one kind (small shard writes, shard removals) one
// request at a time per node; the calls made meanwhile wait and go
// together in the next request, like a group commit. A call waits for no
// timer: alone, it goes at once, in a request of its own.

// queued is one call waiting in a queue: what it carries, its size in
// bytes, and once sent, its outcome.
type queued[T any] struct {
	item T
	size int
	err  error
	// wake is signalled once: when the call is sent (sent true), or when
	// its caller is to send the next batch.
	wake chan struct{}
	sent bool
}

// queue holds a Drive's calls of one kind waiting to be sent.
type queue[T any] struct {
	mu      sync.Mutex
	busy    bool // a caller is sending
	waiting []*queued[T]
	soloTil time.Time // before then, no batch call: the node has none
}

// batchLimits bounds one batch: at most items calls and bytes of data (the
// first call goes whatever its size).
type batchLimits struct{ items, bytes int }

// run queues item, of size bytes, and returns its error once send has
// sent it: in a batch with the calls waiting when its turn came, or alone.
// send is given solo while the node is known to have no batch call
// (noBatch), and sets each call's err.
func (q *queue[T]) run(item T, size int, limits batchLimits, send func(batch []*queued[T], solo bool)) error {
	c := &queued[T]{item: item, size: size, wake: make(chan struct{}, 1)}
	q.mu.Lock()
	q.waiting = append(q.waiting, c)
	if q.busy {
		q.mu.Unlock()
		<-c.wake
		if c.sent {
			return c.err
		}
		q.mu.Lock() // this caller sends next: c is first in the queue
	}
	q.busy = true
	n, size := 0, 0
	for n < len(q.waiting) && n < limits.items && (n == 0 || size+q.waiting[n].size <= limits.bytes) {
		size += q.waiting[n].size
		n++
	}
	batch := q.waiting[:n:n]
	q.waiting = q.waiting[n:]
	solo := time.Now().Before(q.soloTil)
	q.mu.Unlock()

	send(batch, solo)

	q.mu.Lock()
	if len(q.waiting) > 0 {
		q.waiting[0].wake <- struct{}{} // the oldest waiting caller sends next
	} else {
		q.busy = false
		q.waiting = nil
	}
	q.mu.Unlock()
	for _, o := range batch[1:] {
		o.sent = true
		o.wake <- struct{}{}
	}
	return batch[0].err
}

// noBatch notes that the node answered it has no batch call of this kind:
// calls go one request each for batchRetry.
func (q *queue[T]) noBatch() {
	q.mu.Lock()
	q.soloTil = time.Now().Add(batchRetry)
	q.mu.Unlock()
}

// queuedLen is how many calls wait behind the one being sent.
func (q *queue[T]) queuedLen() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting)
}

// sendBatched sends batch with post, one request for them all, unless it
// holds one call or solo is set, or post answers errNoBatch (noted in q):
// then it sends each call alone with one, concurrently.
func sendBatched[T any](q *queue[T], batch []*queued[T], solo bool,
	post func([]*queued[T]) error, one func(T) error) {
	if len(batch) > 1 && !solo {
		err := post(batch)
		if !errors.Is(err, errNoBatch) {
			if err != nil {
				for _, c := range batch {
					c.err = err
				}
			}
			return
		}
		q.noBatch()
	}
	var wg sync.WaitGroup
	for _, c := range batch {
		wg.Go(func() { c.err = one(c.item) })
	}
	wg.Wait()
}
