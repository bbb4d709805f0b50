// Package objects owns the object layer: buckets, object versions, delete
// markers, multipart uploads and conditional writes. It is transactional over
// the metadata store (internal/meta) and keeps object data in the blob store
// (internal/blob). It knows nothing of HTTP; the S3 edge translates.
//
// Durability contract: every mutating call returns only after its data is
// fsynced and its metadata batch is committed with sync, so a caller may
// acknowledge the write as soon as the call returns.
package objects

import (
	"errors"
	"hash/maphash"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/hlc"
	"github.com/twinlake/twinlake/internal/lifecycle"
	"github.com/twinlake/twinlake/internal/meta"
)

// Config holds the layer's optional settings.
type Config struct {
	// InlineLimit is the largest object kept inside its metadata record
	// instead of a blob file. Default 128 KiB.
	InlineLimit int64
	// SiteID names this site in version records (origin site).
	SiteID string
	// Cipher encrypts data at rest for SSE-S3; nil disables SSE.
	Cipher Cipher
	Logger *slog.Logger
	Clock  *hlc.Clock
	// Room, when set, is asked before object data of size bytes (-1:
	// not known yet) is written; an error (ErrStorageFull) refuses the
	// write before any of it is stored. Deletes and changes of metadata
	// alone are never asked about.
	Room func(size int64) error
}

func (c *Config) ensureDefaults() {
	if c.InlineLimit == 0 {
		c.InlineLimit = 128 << 10
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = hlc.New(nil)
	}
}

// Validate reports every problem with the configuration at once.
func (c *Config) Validate() error {
	var errs []error
	if c.InlineLimit < 0 {
		errs = append(errs, errors.New("objects: InlineLimit must be >= 0"))
	}
	if c.SiteID == "" {
		errs = append(errs, errors.New("objects: SiteID is required"))
	}
	return errors.Join(errs...)
}

// Layer is the object layer. It is safe for concurrent use.
type Layer struct {
	meta  meta.Store
	blobs *blob.Store
	heal  atomic.Pointer[HealProgress] // the latest heal scan's (heal.go)
	cfg   Config
	log   *slog.Logger

	locks   [256]sync.Mutex // striped per bucket/key
	seed    maphash.Seed
	intents intentGroup // blob intents' group commit (intents.go)

	bucketsMu sync.RWMutex
	buckets   map[string]*Bucket
	// lifecycles holds each bucket's parsed lifecycle rules (lifecycle.go),
	// guarded by bucketsMu.
	lifecycles map[string]*lifecycle.Configuration
	// lcBuckets is len(lifecycles), read without the lock.
	lcBuckets atomic.Int64
	// lcDay is the length of a lifecycle day in nanoseconds (0: 24h);
	// lcActive holds the bucket\x00key a lifecycle run is acting on.
	lcDay    atomic.Int64
	lcActive sync.Map
	// lcWorkers, when set (tests), replaces lifecycleWorkers; 1 runs the
	// keys in the caller's goroutine.
	lcWorkers int

	cells     cellLocks
	cellCache cellCache  // the stats cells last committed (stats.go)
	quota     quotaUsage // buckets' usage for their quotas (quota.go)
	repl      Replicator
	arrived   func(bucket, key string)
	// hook, set by tests, is called at each crash point (after a commit,
	// a blob's fsync, a blob's removal); it may panic to stop there.
	hook func(point string)
}

// New builds the layer over a metadata store and a blob store. Opening
// reads the bucket records, the format version and the blob intents left
// by writes in flight at a crash, never a record per object: the bucket
// digests and usage counters are stored. The first open of a store written
// by an older twinlake upgrades it once (see upgrade).
func New(m meta.Store, b *blob.Store, cfg Config) (*Layer, error) {
	cfg.ensureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l := &Layer{meta: m, blobs: b, cfg: cfg, log: cfg.Logger.With("component", "objects"), seed: maphash.MakeSeed()}
	l.cells.seed = maphash.MakeSeed()
	if err := l.loadBuckets(); err != nil {
		return nil, err
	}
	if err := l.upgrade(); err != nil {
		return nil, err
	}
	if err := l.recoverIntents(); err != nil {
		return nil, err
	}
	return l, nil
}

// Clock returns the layer's hybrid logical clock.
func (l *Layer) Clock() *hlc.Clock { return l.cfg.Clock }

// lockKey serialises writers of one object key.
func (l *Layer) lockKey(bucket, key string) func() {
	mu := &l.locks[l.keyStripe(bucket, key)]
	mu.Lock()
	return mu.Unlock
}

func (l *Layer) keyStripe(bucket, key string) int {
	var h maphash.Hash
	h.SetSeed(l.seed)
	h.WriteString(bucket)
	h.WriteByte(0)
	h.WriteString(key)
	return int(h.Sum64() % uint64(len(l.locks)))
}

// lockKeys locks several object keys at once, as lockKey does one. It
// takes their stripes in ascending order, each once: every other writer
// holds one key's stripe at a time and takes no other while holding it,
// so this cannot deadlock.
func (l *Layer) lockKeys(keys []BucketKey) func() {
	stripes := make([]int, 0, len(keys))
	for _, k := range keys {
		stripes = append(stripes, l.keyStripe(k.Bucket, k.Key))
	}
	slices.Sort(stripes)
	stripes = slices.Compact(stripes)
	for _, s := range stripes {
		l.locks[s].Lock()
	}
	return func() {
		for _, s := range stripes {
			l.locks[s].Unlock()
		}
	}
}

// BucketKey names an object key of a bucket.
type BucketKey struct{ Bucket, Key string }
