// Package hlc owns twinlake's hybrid logical clock: timestamps that follow
// wall time but never go backwards and always exceed every timestamp this
// site has seen from a peer, so causally related writes keep their order even
// when site clocks disagree.
package hlc

import (
	"sync"
	"time"
)

// Clock issues hybrid logical timestamps as Unix nanoseconds. It is safe for
// concurrent use. Each call to Now returns a value strictly greater than any
// earlier Now or Observe argument.
type Clock struct {
	mu   sync.Mutex
	last int64
	wall func() time.Time
}

// New returns a Clock reading wall (nil means time.Now).
func New(wall func() time.Time) *Clock {
	if wall == nil {
		wall = time.Now
	}
	return &Clock{wall: wall}
}

// Now returns the next timestamp.
func (c *Clock) Now() int64 {
	w := c.wall().UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	if w <= c.last {
		w = c.last + 1
	}
	c.last = w
	return w
}

// Observe folds in a timestamp received from a peer, so the next Now
// exceeds it.
func (c *Clock) Observe(ts int64) {
	c.mu.Lock()
	if ts > c.last {
		c.last = ts
	}
	c.mu.Unlock()
}
