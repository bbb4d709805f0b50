package objects

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/twinlake/twinlake/internal/meta"
)

// reservedBuckets are names the server's own HTTP paths use.
var reservedBuckets = map[string]bool{"twinlake": true}

// ValidBucketName reports whether name follows S3's bucket naming rules.
func ValidBucketName(name string) bool {
	if len(name) < 3 || len(name) > 63 || reservedBuckets[name] {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	if !isAlnum(name[0]) || !isAlnum(name[len(name)-1]) {
		return false
	}
	if strings.Contains(name, "..") || strings.Contains(name, ".-") || strings.Contains(name, "-.") {
		return false
	}
	if net.ParseIP(name) != nil || strings.HasPrefix(name, "xn--") || strings.HasSuffix(name, "-s3alias") {
		return false
	}
	return true
}

func isAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

func (l *Layer) loadBuckets() error {
	l.buckets = map[string]*Bucket{}
	return meta.Scan(l.meta, []byte(pfxBucket), meta.PrefixEnd([]byte(pfxBucket)), func(k, v []byte) (bool, error) {
		b := &Bucket{}
		if err := decode(v, b); err != nil {
			return false, fmt.Errorf("objects: decode bucket %q: %w", k, err)
		}
		l.buckets[b.Name] = b
		l.cacheLifecycleLocked(b)
		return true, nil
	})
}

// Bucket returns a copy of the bucket record.
func (l *Layer) Bucket(ctx context.Context, name string) (Bucket, error) {
	l.bucketsMu.RLock()
	defer l.bucketsMu.RUnlock()
	b, ok := l.buckets[name]
	if !ok {
		return Bucket{}, ErrBucketNotFound
	}
	return *b, nil
}

// ListBuckets returns every bucket, sorted by name.
func (l *Layer) ListBuckets(ctx context.Context) []Bucket {
	l.bucketsMu.RLock()
	out := make([]Bucket, 0, len(l.buckets))
	for _, b := range l.buckets {
		out = append(out, *b)
	}
	l.bucketsMu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// CreateBucket creates an empty bucket.
func (l *Layer) CreateBucket(ctx context.Context, name string) error {
	return l.createBucket(name, nil)
}

// CreateWarehouseBucket creates an empty bucket with versioning enabled and
// flagged as a warehouse, in one commit: no peer ever receives the bucket
// without its flag, so none takes replicated writes into it as a plain
// bucket that its own guard would refuse for a warehouse.
func (l *Layer) CreateWarehouseBucket(ctx context.Context, name string) error {
	return l.createBucket(name, func(b *Bucket) {
		b.Versioning = VersioningEnabled
		b.Warehouse = true
		b.FieldTimes = map[string]int64{FieldVersioning: b.ModTime, FieldWarehouse: b.ModTime}
	})
}

// createBucket stores a new bucket record, which init, when not nil, sets
// up before the record's only commit.
func (l *Layer) createBucket(name string, init func(b *Bucket)) error {
	if !ValidBucketName(name) {
		return ErrInvalidBucketName
	}
	l.bucketsMu.Lock()
	defer l.bucketsMu.Unlock()
	if _, ok := l.buckets[name]; ok {
		return ErrBucketExists
	}
	b := &Bucket{Name: name, Created: time.Now().UTC(), ModTime: l.cfg.Clock.Now()}
	if init != nil {
		init(b)
	}
	return l.putBucketLocked(b, l.replBucket)
}

// putBucketLocked stores a bucket record durably; report, when not nil,
// adds the change's replication work to the same batch.
func (l *Layer) putBucketLocked(b *Bucket, report func(meta.Batch, *Bucket, bool, int64)) error {
	batch := l.meta.NewBatch()
	if report != nil {
		report(batch, b, false, b.ModTime)
	}
	batch.Set(bucketKey(b.Name), encode(b))
	lifecycleChanged(batch, l.buckets[b.Name], b)
	if err := batch.Commit(true); err != nil {
		return err
	}
	l.buckets[b.Name] = b
	l.cacheLifecycleLocked(b)
	if report != nil {
		l.replCommitted()
	}
	return nil
}

// DeleteBucket removes an empty bucket. A bucket holding any version or
// delete marker is not empty.
//
// Multipart uploads still in progress do not keep a bucket alive, as in S3:
// once the bucket holds no version they are aborted, then the bucket goes.
// An upload started meanwhile makes the delete BucketNotEmpty.
func (l *Layer) DeleteBucket(ctx context.Context, name string) error {
	if err := l.abortUploadsOfEmptyBucket(ctx, name); err != nil {
		return err
	}
	l.bucketsMu.Lock()
	defer l.bucketsMu.Unlock()
	if _, ok := l.buckets[name]; !ok {
		return ErrBucketNotFound
	}
	return l.deleteBucketLocked(name, l.cfg.Clock.Now(), l.replBucket)
}

// DiscardBucket removes an empty bucket from this site alone: the removal
// is neither replicated nor remembered, so a peer's record of the bucket
// brings it back. It is DiscardVersion's counterpart for buckets: it lets
// tests lose a bucket on purpose.
func (l *Layer) DiscardBucket(ctx context.Context, name string) error {
	l.bucketsMu.Lock()
	defer l.bucketsMu.Unlock()
	if _, ok := l.buckets[name]; !ok {
		return ErrBucketNotFound
	}
	return l.deleteBucketLocked(name, 0, nil)
}

// deleteBucketLocked removes an empty bucket deleted at HLC time at. With
// site replication on and at > 0, it leaves a tombstone with that time, so a peer's
// record of the bucket older than the deletion, arriving late, cannot
// bring it back (see ApplyBucket).
func (l *Layer) deleteBucketLocked(name string, at int64, report func(meta.Batch, *Bucket, bool, int64)) error {
	for _, p := range [][]byte{versionBucketPrefix(name), uploadPrefix(name)} {
		empty, err := l.rangeEmpty(p)
		if err != nil {
			return err
		}
		if !empty {
			return ErrBucketNotEmpty
		}
	}
	batch := l.meta.NewBatch()
	batch.Delete(bucketKey(name))
	batch.DeleteRange(latestPrefix(name), meta.PrefixEnd(latestPrefix(name)))
	batch.DeleteRange(purgedBucketPrefix(name), meta.PrefixEnd(purgedBucketPrefix(name)))
	batch.DeleteRange(cellPrefix(name), meta.PrefixEnd(cellPrefix(name)))
	batch.DeleteRange(statusBucketPrefix(name), meta.PrefixEnd(statusBucketPrefix(name)))
	dropLifecycle(batch, name)
	if at > 0 && l.repl != nil && l.repl.RequiresVersioning() {
		l.setBucketGone(batch, name, at)
	}
	if report != nil {
		report(batch, l.buckets[name], true, at)
	}
	err := batch.Commit(true)
	l.cellCache.clear() // the cells went with the bucket, or may have
	if err != nil {
		return err
	}
	delete(l.buckets, name)
	l.forgetLifecycleLocked(name)
	if report != nil {
		l.replCommitted()
	}
	return nil
}

// abortUploadsOfEmptyBucket aborts every upload in progress in a bucket that
// holds no version (and leaves a bucket with versions alone).
func (l *Layer) abortUploadsOfEmptyBucket(ctx context.Context, name string) error {
	if _, err := l.Bucket(ctx, name); err != nil {
		return err
	}
	empty, err := l.rangeEmpty(versionBucketPrefix(name))
	if err != nil || !empty {
		return err
	}
	for {
		page, err := l.ListMultipartUploads(ctx, name, UploadListOptions{MaxUploads: 1000})
		if err != nil {
			return err
		}
		for _, u := range page.Uploads {
			if err := l.AbortMultipartUpload(ctx, name, u.Key, u.UploadID); err != nil && !errors.Is(err, ErrUploadNotFound) {
				return err
			}
		}
		if !page.IsTruncated {
			return nil
		}
	}
}

func (l *Layer) rangeEmpty(prefix []byte) (bool, error) {
	empty := true
	err := meta.Scan(l.meta, prefix, meta.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		empty = false
		return false, nil
	})
	return empty, err
}

// UpdateBucket applies fn to a copy of the bucket record and stores it
// durably. fn may return an error to abort.
func (l *Layer) UpdateBucket(ctx context.Context, name string, fn func(b *Bucket) error) error {
	l.bucketsMu.Lock()
	defer l.bucketsMu.Unlock()
	cur, ok := l.buckets[name]
	if !ok {
		return ErrBucketNotFound
	}
	b := *cur
	b.FieldTimes = maps.Clone(cur.FieldTimes)
	if err := fn(&b); err != nil {
		return err
	}
	b.ModTime = l.cfg.Clock.Now()
	for _, f := range bucketFields {
		if !f.equal(&b, cur) {
			if b.FieldTimes == nil {
				b.FieldTimes = map[string]int64{}
			}
			b.FieldTimes[f.name] = b.ModTime
		}
	}
	return l.putBucketLocked(&b, l.replBucket)
}

// SetVersioning sets the bucket's versioning state (Enabled or Suspended).
// A bucket whose versioning was enabled can only be suspended, never turned off.
func (l *Layer) SetVersioning(ctx context.Context, name, state string) error {
	if state != VersioningEnabled && state != VersioningSuspended {
		return fmt.Errorf("%w: versioning status %q", ErrInvalidArgument, state)
	}
	if state == VersioningSuspended && l.repl != nil && l.repl.RequiresVersioning() {
		return fmt.Errorf("%w: site replication requires versioning; it cannot be suspended", ErrInvalidArgument)
	}
	return l.UpdateBucket(ctx, name, func(b *Bucket) error {
		if state != VersioningEnabled && b.LockEnabled() {
			return fmt.Errorf("%w: an object lock configuration is present on this bucket, so the versioning state cannot be changed", ErrLockBucketState)
		}
		b.Versioning = state
		return nil
	})
}

// SetBucketTags replaces the bucket's tag set (nil removes it).
func (l *Layer) SetBucketTags(ctx context.Context, name string, tags map[string]string) error {
	if err := validateTags(tags, 50); err != nil {
		return err
	}
	return l.UpdateBucket(ctx, name, func(b *Bucket) error {
		b.Tags = tags
		return nil
	})
}

// SetBucketPolicy stores the bucket policy document (nil removes it).
func (l *Layer) SetBucketPolicy(ctx context.Context, name string, policy []byte) error {
	return l.UpdateBucket(ctx, name, func(b *Bucket) error {
		b.Policy = policy
		return nil
	})
}

// SetBucketEncryption sets the default encryption ("AES256", or "" to clear).
func (l *Layer) SetBucketEncryption(ctx context.Context, name, alg string) error {
	if alg != "" && alg != SSEAlgorithm {
		return fmt.Errorf("%w: unsupported algorithm %q", ErrInvalidArgument, alg)
	}
	if alg != "" && l.cfg.Cipher == nil {
		return ErrSSEUnavailable
	}
	return l.UpdateBucket(ctx, name, func(b *Bucket) error {
		b.Encryption = alg
		return nil
	})
}

// validateTags checks an S3 tag set: at most max tags, keys 1..128 and
// values 0..256 characters.
func validateTags(tags map[string]string, max int) error {
	if len(tags) > max {
		return fmt.Errorf("%w: more than %d tags", ErrInvalidTag, max)
	}
	for k, v := range tags {
		if len(k) == 0 || len([]rune(k)) > 128 || len([]rune(v)) > 256 {
			return fmt.Errorf("%w: tag %q", ErrInvalidTag, k)
		}
	}
	return nil
}
