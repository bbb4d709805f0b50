package s3api

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twinlake/twinlake/internal/httprec"
)

// errSlowDown answers a request that waited its whole queue deadline for a
// free slot under api requests_max.
var errSlowDown = apiErr("SlowDown", http.StatusServiceUnavailable, "Please reduce your request rate.")

// DefaultLimitWait is how long a request waits for a slot when LimitConfig
// names no wait.
const DefaultLimitWait = 10 * time.Second

// Counter is the one method of a Prometheus counter the limiter uses.
type Counter interface{ Inc() }

// LimitConfig configures a Limiter.
type LimitConfig struct {
	// Max is the number of requests served at once; 0 means unlimited.
	Max int
	// Wait is how long a request queues for a slot before it is answered
	// 503 SlowDown; its own context ending stops the wait sooner. Default
	// DefaultLimitWait.
	Wait time.Duration
	// Rejected, when set, counts requests answered SlowDown.
	Rejected Counter
}

// Limiter is an http.Handler that serves at most Max requests of next at
// once. Others queue in arrival order until a slot frees, their wait ends
// or their client goes away; those that time out are answered 503 SlowDown
// with Retry-After, as S3 does when it sheds load. Max and Wait may change
// at any time (SetLimit); a lower Max lets requests in flight finish. It is
// safe for concurrent use.
type Limiter struct {
	next     http.Handler
	rejected Counter

	mu     sync.Mutex
	max    int
	wait   time.Duration
	active int
	queue  []chan struct{} // waiters, oldest first; closed when granted a slot
}

// NewLimiter wraps next.
func NewLimiter(next http.Handler, cfg LimitConfig) *Limiter {
	l := &Limiter{next: next, rejected: cfg.Rejected}
	l.SetLimit(cfg.Max, cfg.Wait)
	return l
}

// SetLimit changes the limit and the queue wait (0 means DefaultLimitWait);
// queued requests are let in at once if the new limit allows.
func (l *Limiter) SetLimit(max int, wait time.Duration) {
	if wait <= 0 {
		wait = DefaultLimitWait
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.max, l.wait = max, wait
	l.grantLocked()
}

// Waiting returns the number of requests queued for a slot.
func (l *Limiter) Waiting() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queue)
}

// ServeHTTP serves r once it holds a slot, or answers SlowDown.
func (l *Limiter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !l.acquire(r.Context()) {
		if l.rejected != nil {
			l.rejected.Inc()
		}
		writeSlowDown(w, r)
		return
	}
	defer l.release()
	l.next.ServeHTTP(w, r)
}

// acquire takes a slot, waiting for one up to the wait or ctx's end; it
// reports whether it got one.
func (l *Limiter) acquire(ctx context.Context) bool {
	l.mu.Lock()
	if l.max == 0 || l.active < l.max {
		l.active++
		l.mu.Unlock()
		return true
	}
	ch := make(chan struct{})
	l.queue = append(l.queue, ch)
	wait := l.wait
	l.mu.Unlock()

	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-ch:
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if i := slices.Index(l.queue, ch); i >= 0 {
		l.queue = slices.Delete(l.queue, i, i+1)
		return false
	}
	// Granted between the timeout and the lock: the slot is ours; give it
	// back rather than serve a request that has already given up.
	l.active--
	l.grantLocked()
	return false
}

func (l *Limiter) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.active--
	l.grantLocked()
}

// grantLocked hands free slots to the oldest waiters.
func (l *Limiter) grantLocked() {
	for len(l.queue) > 0 && (l.max == 0 || l.active < l.max) {
		close(l.queue[0])
		l.queue = l.queue[1:]
		l.active++
	}
}

// writeSlowDown answers a request shed by the limiter. Retry-After is one
// second: the queue has just been full for a whole wait, so sooner would
// only queue again, and S3 SDKs back off further on their own.
func writeSlowDown(w http.ResponseWriter, r *http.Request) {
	id := httprec.NewRequestID()
	w.Header().Set("x-amz-request-id", id)
	w.Header().Set("Server", "twinlake")
	w.Header().Set("Retry-After", strconv.Itoa(1))
	if info := requestInfo(r.Context()); info != nil {
		info.ID = id
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(errSlowDown.Status)
		return
	}
	writeXML(w, errSlowDown.Status, errorResponse{Code: errSlowDown.Code, Message: errSlowDown.Message,
		Resource: r.URL.Path, RequestID: id})
}
