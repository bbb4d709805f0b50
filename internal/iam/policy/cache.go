package policy

import (
	"sync"
	"unsafe"
)

// BucketCache holds each bucket's compiled policy, so that a request only
// compares the stored document's identity with the cached one's and never
// parses. A bucket's document is replaced, never modified in place, when its
// policy changes, so a new backing array means a new document. Safe for
// concurrent use.
type BucketCache struct {
	mu sync.RWMutex
	m  map[string]cached
}

type cached struct {
	data *byte
	n    int
	p    *Policy
	err  error
}

// Get returns the compiled policy of bucket's document raw (nil for none),
// compiling it on first sight. A stored document that does not parse (one
// accepted before policies were checked) is reported with the error and
// contributes no statements.
func (c *BucketCache) Get(bucket string, raw []byte) (*Policy, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	data := unsafe.SliceData(raw)
	c.mu.RLock()
	e, ok := c.m[bucket]
	c.mu.RUnlock()
	if ok && e.data == data && e.n == len(raw) {
		return e.p, e.err
	}
	p, err := ParseBucket(raw)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]cached{}
	}
	c.m[bucket] = cached{data: data, n: len(raw), p: p, err: err}
	c.mu.Unlock()
	return p, err
}
