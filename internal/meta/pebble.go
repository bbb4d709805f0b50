package meta

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// PebbleStore is the production Store, backed by a Pebble database in one
// directory. Pebble groups concurrent synced commits into one WAL fsync, so
// many writers acknowledging durable writes share the cost.
type PebbleStore struct {
	db *pebble.DB
}

var _ Store = (*PebbleStore)(nil)

// The site's metadata store: a 128 MiB block cache and 32 MiB memtables.
// Small objects are stored inline in it, so a larger cache fills with
// their data under a load: with 256 MiB and 64 MiB, 4 KiB PUTs and GETs
// at concurrency 16 held 456-560 MiB resident against 300-330 MiB now,
// at the same rates. A 64 MiB cache held 170 MiB but no longer kept the
// blocks a PUT's lookup of its key's latest version reads: they came from
// disk, and the lookup's share of a PUT's CPU went from 6 % to 20 %.
const (
	metaCacheBytes    = 128 << 20
	metaMemTableBytes = 32 << 20
)

// valueSeparation keeps values of separatedValueBytes or more (small
// objects' data, stored inline, and drives' small shards) in blob files
// that compactions pass by reference instead of rewriting: under a steady
// 4 KiB PUT load every value was otherwise copied, compressed and written
// again at each level it went down. Space held by values since deleted or
// overwritten is reclaimed by rewriting a blob file once a fifth of it is
// garbage and it is at least blobRewriteAge old.
func valueSeparation() pebble.ValueSeparationPolicy {
	return pebble.ValueSeparationPolicy{
		Enabled:               true,
		MinimumSize:           separatedValueBytes,
		MaxBlobReferenceDepth: 10,
		RewriteMinimumAge:     blobRewriteAge,
		TargetGarbageRatio:    0.2,
	}
}

const (
	separatedValueBytes = 1024
	blobRewriteAge      = 5 * time.Minute
)

// OpenPebble opens (creating if needed) the Pebble database in dir.
func OpenPebble(dir string, log *slog.Logger) (*PebbleStore, error) {
	return OpenPebbleSized(dir, log, metaCacheBytes, metaMemTableBytes)
}

// OpenPebbleSized is OpenPebble with a block cache of cacheBytes and
// memtables of memTableBytes, for a store smaller than the site's
// metadata (a drive's small shards).
func OpenPebbleSized(dir string, log *slog.Logger, cacheBytes, memTableBytes int64) (*PebbleStore, error) {
	cache := pebble.NewCache(cacheBytes)
	defer cache.Unref()
	opts := &pebble.Options{
		Logger:             pebbleLogger{log},
		FormatMajorVersion: pebble.FormatNewest,
		// Point lookups of keys that do not exist (a new version, a
		// journal check) are common: bloom filters on every level keep
		// them from reading data blocks, and a block cache keeps hot
		// metadata in memory.
		Cache:        cache,
		MemTableSize: uint64(memTableBytes),
	}
	opts.Experimental.ValueSeparationPolicy = valueSeparation
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("meta: open pebble at %s: %w", dir, err)
	}
	return &PebbleStore{db: db}, nil
}

// Get implements Store.
func (s *PebbleStore) Get(key []byte) ([]byte, error) {
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), v...)
	return out, closer.Close()
}

// View implements Store.
func (s *PebbleStore) View(key []byte, fn func([]byte) error) error {
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	err = fn(v)
	return errors.Join(err, closer.Close())
}

// NewBatch implements Store.
func (s *PebbleStore) NewBatch() Batch { return &pebbleBatch{b: s.db.NewBatch()} }

// Iter implements Store.
func (s *PebbleStore) Iter(lower, upper []byte) (Iterator, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	return pebbleIter{it}, nil
}

// Close flushes the memtable to a table file, then closes the store: the
// next open then has no write-ahead log to replay, so a restart after a
// clean stop opens as fast as an empty store (only a crash leaves a log to
// replay, at most one memtable).
func (s *PebbleStore) Close() error {
	err := s.db.Flush()
	return errors.Join(err, s.db.Close())
}

type pebbleBatch struct {
	b     *pebble.Batch
	after []func(error)
}

func (b *pebbleBatch) Set(key, value []byte) { _ = b.b.Set(key, value, nil) }
func (b *pebbleBatch) Delete(key []byte)     { _ = b.b.Delete(key, nil) }
func (b *pebbleBatch) DeleteRange(lower, upper []byte) {
	_ = b.b.DeleteRange(lower, upper, nil)
}
func (b *pebbleBatch) Len() int { return int(b.b.Count()) }

func (b *pebbleBatch) AfterCommit(fn func(error)) { b.after = append(b.after, fn) }

func (b *pebbleBatch) Commit(sync bool) error {
	opt := pebble.NoSync
	if sync {
		opt = pebble.Sync
	}
	err := b.b.Commit(opt)
	_ = b.b.Close()
	for _, fn := range b.after {
		fn(err)
	}
	return err
}

type pebbleIter struct{ it *pebble.Iterator }

func (i pebbleIter) First() bool          { return i.it.First() }
func (i pebbleIter) SeekGE(k []byte) bool { return i.it.SeekGE(k) }
func (i pebbleIter) Next() bool           { return i.it.Next() }
func (i pebbleIter) Key() []byte          { return i.it.Key() }
func (i pebbleIter) Value() []byte        { return i.it.Value() }
func (i pebbleIter) Close() error         { return i.it.Close() }

// pebbleLogger routes Pebble's own log lines into slog.
type pebbleLogger struct{ log *slog.Logger }

func (l pebbleLogger) Infof(format string, args ...any) {
	if l.log != nil {
		l.log.Debug(fmt.Sprintf(format, args...))
	}
}
func (l pebbleLogger) Errorf(format string, args ...any) {
	if l.log != nil {
		l.log.Error(fmt.Sprintf(format, args...))
	}
}

// Fatalf ends the process, as Pebble requires: it calls it where it
// cannot go on (a failed WAL write or sync), and a panic there could be
// recovered by net/http, leaving the store to be used half-failed.
func (l pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if l.log != nil {
		l.log.Error("storage failed, stopping: " + msg)
	}
	fmt.Fprintln(os.Stderr, "twinlake: storage failed, stopping:", msg)
	os.Exit(2)
}
