package objects

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twinlake/twinlake/internal/meta"
)

// formatVersion is the object layer's on-disk format. Format 1 (no
// o/format key) kept no stats cells and no blob intents: every open rebuilt
// the digests and counters from every record and walked the blob tree.
// Format 2 stores them (stats.go, intents.go).
const formatVersion = 2

// upgrade brings a store written in an older format to formatVersion, once.
// For format 1 it recomputes every stats cell from the version and latest
// records and removes the blob files nothing references (the last full
// walk: from now on intents find them), then records the new format in the
// same batch as the cells. A crash before that batch leaves format 1, and
// the next open starts over. It runs before the layer serves.
func (l *Layer) upgrade() error {
	raw, err := l.meta.Get([]byte(keyFormat))
	switch {
	case err == nil:
		v, n := binary.Uvarint(raw)
		if n <= 0 || v > formatVersion {
			return fmt.Errorf("%w: object layer format %x is newer than this binary's (%d)", ErrFormat, raw, formatVersion)
		}
		if v == formatVersion {
			return nil
		}
	case !errors.Is(err, meta.ErrNotFound):
		return err
	}
	l.log.Info("upgrading the object store: computing stored digests and usage counters once")
	cells, used, err := recount(l.meta)
	if err != nil {
		return err
	}
	if err := l.sweepOrphans(used); err != nil {
		return err
	}
	batch := l.meta.NewBatch()
	batch.DeleteRange([]byte(pfxCell), meta.PrefixEnd([]byte(pfxCell)))
	for k, c := range cells {
		if c != (cell{}) {
			batch.Set([]byte(k), c.encode())
		}
	}
	batch.Set([]byte(keyFormat), binary.AppendUvarint(nil, formatVersion))
	err = batch.Commit(true)
	l.cellCache.clear() // every cell was written again
	if err != nil {
		return err
	}
	l.log.Info("object store upgraded", "format", formatVersion, "cells", len(cells))
	return nil
}

// recount computes every bucket's stats cells from scratch, from the
// version records (digests) and the latest records (counters), and
// collects the blob IDs that versions and uploaded parts reference. It
// reads every such record: the upgrade and tests use it, never an open of
// a current store.
func recount(m meta.Store) (cells map[string]cell, used map[string]bool, err error) {
	cells, used = map[string]cell{}, map[string]bool{}
	lo := []byte(pfxVersion)
	err = meta.Scan(m, lo, meta.PrefixEnd(lo), func(k, raw []byte) (bool, error) {
		bucket, key, ok := splitAnyVersionKey(k)
		if !ok {
			return true, nil
		}
		v := &Version{}
		if err := decode(raw, v); err != nil {
			return false, err
		}
		ck := string(cellKey(bucket, cellOf(key)))
		c := cells[ck]
		c.digest ^= versionHash(key, v)
		cells[ck] = c
		for _, s := range v.Segments {
			if s.BlobID != "" {
				used[s.BlobID] = true
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, nil, err
	}
	lo = []byte(pfxLatest)
	err = meta.Scan(m, lo, meta.PrefixEnd(lo), func(k, raw []byte) (bool, error) {
		rest := k[len(pfxLatest):]
		i := 0
		for i < len(rest) && rest[i] != 0 {
			i++
		}
		if i == len(rest) {
			return true, nil
		}
		var s latest
		if err := decode(raw, &s); err != nil {
			return false, err
		}
		ck := string(cellKey(string(rest[:i]), cellOf(string(rest[i+1:]))))
		c := cells[ck]
		t := tally{}
		t.latest(nil, &s)
		c.add(t)
		cells[ck] = c
		return true, nil
	})
	if err != nil {
		return nil, nil, err
	}
	lo = []byte(pfxPart)
	err = meta.Scan(m, lo, meta.PrefixEnd(lo), func(k, raw []byte) (bool, error) {
		var part Part
		if err := decode(raw, &part); err != nil {
			return false, err
		}
		if part.Segment.BlobID != "" {
			used[part.Segment.BlobID] = true
		}
		return true, nil
	})
	return cells, used, err
}

// splitAnyVersionKey recovers bucket, key of a version key.
func splitAnyVersionKey(k []byte) (bucket, key string, ok bool) {
	rest := k[len(pfxVersion):]
	i := 0
	for i < len(rest) && rest[i] != 0 {
		i++
	}
	bucket = string(rest[:i])
	key, _, ok = splitVersionKey(bucket, k)
	return bucket, key, ok
}

// sweepOrphans removes the blob files that used does not name: in format 1
// a crash between a blob's fsync and its metadata commit left one. It runs
// once, by the upgrade, before the layer serves, so no write is in flight.
func (l *Layer) sweepOrphans(used map[string]bool) error {
	var orphans []string
	if err := l.blobs.Walk(func(id string) bool {
		if !used[id] {
			orphans = append(orphans, id)
		}
		return true
	}); err != nil {
		return err
	}
	for _, id := range orphans {
		if err := l.blobs.Remove(id); err != nil {
			return err
		}
	}
	if len(orphans) > 0 {
		l.log.Info("removed unreferenced blob files left by an interrupted write", "files", len(orphans))
	}
	return nil
}
