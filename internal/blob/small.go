package blob

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/twinlake/twinlake/internal/meta"
)

// Small shards. A shard file costs its drive a file creation and two
// fsyncs (the file, its directory); a small object's shards are a few KiB
// each, so on a site of several nodes those calls were most of a PUT's
// work on every node. A shard drive keeps each shard of at most
// SmallShardMax bytes in a Pebble store of its own on the drive
// (DIR/blobs/small), where the writes of concurrent PUTs share one WAL
// sync; a larger shard is a file as before. A shard is in one place or
// the other: Open looks in the store first, so the one a rewrite cut short
// by a crash left in both is read from the store, which a rewrite writes
// before it removes the file.

// ShardDriveReserve is the free space a shard drive keeps: below it a new
// shard is refused, and a shard written to a file fails as it would reach
// into it, as a file does on a full disk. The store cannot go on after a
// failed write (Pebble stops the process), nor can an etcd member on the
// same disk, so a drive filling up must fail the shard's write, which the
// site's write quorum then decides, instead of its node.
const ShardDriveReserve = 256 << 20

// The small store is a drive's, not the site's metadata: a modest block
// cache and memtable.
const (
	smallCacheBytes    = 32 << 20
	smallMemTableBytes = 16 << 20
)

// NewShardDrive prepares the blob tree under dir with its small store
// (see NewLocalDrive). Close closes the store.
func NewShardDrive(dir string, log *slog.Logger) (*LocalDrive, error) {
	d, err := NewLocalDrive(dir)
	if err != nil {
		return nil, err
	}
	db, err := meta.OpenPebbleSized(filepath.Join(d.root, "small"), log, smallCacheBytes, smallMemTableBytes)
	if err != nil {
		return nil, fmt.Errorf("blob: small shards on %s: %w", d, err)
	}
	d.small = &smallStore{db: db, reserve: NewReserve(dir, ShardDriveReserve)}
	return d, nil
}

// smallStore is a shard drive's store of small shards and what it knows of
// the drive's free space.
type smallStore struct {
	db      *meta.PebbleStore
	reserve *Reserve

	closeOnce sync.Once
	closeErr  error
}

// Close closes a shard drive's small store, once; a plain drive has
// nothing to close.
func (d *LocalDrive) Close() error {
	if d.small == nil {
		return nil
	}
	d.small.closeOnce.Do(func() { d.small.closeErr = d.small.db.Close() })
	return d.small.closeErr
}

// smallShard is a shard being written to a shard drive: held in memory
// until it grows past SmallShardMax, then written on as a file.
type smallShard struct {
	*Held
	d       *LocalDrive
	id      string
	rewrite bool
}

// createSmall starts shard id (or its replacement) on a shard drive. A new
// shard must not exist in either place.
func (d *LocalDrive) createSmall(id string, rewrite bool) (ShardWriter, error) {
	p, err := d.path(id)
	if err != nil {
		return nil, err
	}
	if err := d.small.reserve.Take(0); err != nil {
		return nil, fmt.Errorf("blob: create shard on %s: %w", d, err)
	}
	if rewrite {
		return d.newSmallShard(id, true), nil
	}
	found, err := d.hasSmall(id)
	if err == nil && !found {
		if _, err = os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			return d.newSmallShard(id, false), nil
		}
	}
	if err == nil {
		err = os.ErrExist // in the store, or a file
	}
	return nil, fmt.Errorf("blob: create shard on %s: %w", d, err)
}

func (d *LocalDrive) newSmallShard(id string, rewrite bool) *smallShard {
	w := &smallShard{d: d, id: id, rewrite: rewrite}
	w.Held = NewHeld(w.spill, w.store)
	return w
}

// spill starts the shard as a file, each write taking its room from the
// drive's reserve (the held bytes with the first).
func (w *smallShard) spill() (ShardWriter, error) {
	var f ShardWriter
	var err error
	if w.rewrite {
		f, err = w.d.rewriteFile(w.id)
	} else {
		f, err = w.d.createFile(w.id)
	}
	if err != nil {
		return nil, err
	}
	return reservedWriter{f, w.d.small.reserve}, nil
}

// store commits a held shard to the small store.
func (w *smallShard) store(b []byte) error {
	if err := w.d.small.reserve.Take(int64(len(b))); err != nil {
		return fmt.Errorf("blob: commit shard on %s: %w", w.d, err)
	}
	batch := w.d.small.db.NewBatch()
	batch.Set([]byte(w.id), b)
	if err := batch.Commit(true); err != nil {
		return fmt.Errorf("blob: commit shard on %s: %w", w.d, err)
	}
	return nil
}

// Commit makes the shard durable where its size puts it. A rewrite then
// removes the shard's other copy, so a heal that changes where a shard
// lives leaves only the new one.
func (w *smallShard) Commit() error {
	if err := w.Held.Commit(); err != nil || !w.rewrite {
		return err
	}
	if w.Spilled() {
		return w.d.removeSmall(w.id)
	}
	p, _ := w.d.path(w.id)
	return removeFile(p)
}

// hasSmall reports whether shard id is in the small store.
func (d *LocalDrive) hasSmall(id string) (bool, error) {
	err := d.small.db.View([]byte(id), func([]byte) error { return nil })
	if errors.Is(err, meta.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// openSmall returns shard id from the small store, or ErrNotFound.
func (d *LocalDrive) openSmall(id string) (ShardReader, error) {
	if !validID(id) {
		return nil, ErrInvalidID
	}
	data, err := d.small.db.Get([]byte(id))
	if errors.Is(err, meta.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s on %s", ErrNotFound, id, d)
	}
	if err != nil {
		return nil, fmt.Errorf("blob: open shard on %s: %w", d, err)
	}
	return memShard{bytes.NewReader(data)}, nil
}

// removeSmall deletes shard id from the small store durably, if it is
// there.
func (d *LocalDrive) removeSmall(id string) error {
	found, err := d.hasSmall(id)
	if err != nil || !found {
		return err
	}
	b := d.small.db.NewBatch()
	b.Delete([]byte(id))
	if err := b.Commit(true); err != nil {
		return fmt.Errorf("blob: remove shard on %s: %w", d, err)
	}
	return nil
}

// listSmall returns the IDs of the small store's shards in fan-out
// directory fan; none on a plain drive.
func (d *LocalDrive) listSmall(fan string) ([]string, error) {
	if d.small == nil {
		return nil, nil
	}
	var ids []string
	err := meta.Scan(d.small.db, []byte(fan), meta.PrefixEnd([]byte(fan)), func(k, _ []byte) (bool, error) {
		if validID(string(k)) {
			ids = append(ids, string(k))
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("blob: list %s: %w", d, err)
	}
	return ids, nil
}

// memShard is a shard read whole from the small store.
type memShard struct{ *bytes.Reader }

func (memShard) Close() error { return nil }
