package objects

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// FieldQuota names the bucket's quota in FieldTimes.
const FieldQuota = "quota"

// MaxQuota bounds a bucket quota: 1 EiB.
const MaxQuota = int64(1) << 60

// ErrQuotaExceeded refuses a client write that would take its bucket past
// the bucket's quota.
var ErrQuotaExceeded = errors.New("objects: bucket quota exceeded")

// quotaUsageTTL is how long a bucket's usage, read for its quota, is
// reused: a quota is checked against the usage as of at most this long
// ago, so concurrent writes can pass it by what they write meanwhile.
const quotaUsageTTL = time.Second

// SetBucketQuota sets the bucket's hard quota in bytes (0 removes it). It
// replicates as a bucket setting of its own.
func (l *Layer) SetBucketQuota(ctx context.Context, name string, bytes int64) error {
	if bytes < 0 || bytes > MaxQuota {
		return fmt.Errorf("%w: quota %d outside 0 to %d bytes", ErrInvalidArgument, bytes, MaxQuota)
	}
	return l.UpdateBucket(ctx, name, func(b *Bucket) error {
		b.Quota = bytes
		return nil
	})
}

// BucketUsage returns the bucket's live objects and their bytes (latest
// versions that are not delete markers), summed from its stats cells.
func (l *Layer) BucketUsage(bucket string) (Usage, error) {
	return l.sumCells(cellPrefix(bucket))
}

// quotaUsage caches the bytes of the buckets that have a quota, for
// checkQuota.
type quotaUsage struct {
	mu sync.Mutex
	m  map[string]usageAt
}

type usageAt struct {
	bytes int64
	at    time.Time
}

// checkQuota refuses a client write of size bytes (unknown: 0) to bucket b
// when its live bytes, read at most quotaUsageTTL ago, plus size pass b's
// quota. Writes arriving from a replication peer are never checked: the
// source accepted them.
func (l *Layer) checkQuota(b *Bucket, size int64) error {
	if b.Quota <= 0 {
		return nil
	}
	used, err := l.cachedUsage(b.Name)
	if err != nil {
		return err
	}
	if used+max(size, 0) > b.Quota {
		return fmt.Errorf("%w: %s holds %d bytes of its %d-byte quota; this write adds %d", ErrQuotaExceeded, b.Name, used, b.Quota, max(size, 0))
	}
	return nil
}

func (l *Layer) cachedUsage(bucket string) (int64, error) {
	q := &l.quota
	now := time.Now()
	q.mu.Lock()
	if u, ok := q.m[bucket]; ok && now.Sub(u.at) < quotaUsageTTL {
		q.mu.Unlock()
		return u.bytes, nil
	}
	q.mu.Unlock()
	u, err := l.BucketUsage(bucket)
	if err != nil {
		return 0, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.m == nil || len(q.m) > 10000 {
		q.m = map[string]usageAt{}
	}
	q.m[bucket] = usageAt{bytes: u.Bytes, at: now}
	return u.Bytes, nil
}
