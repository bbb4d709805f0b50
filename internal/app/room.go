package app

import (
	"cmp"
	"errors"
	"fmt"
	"syscall"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/objects"
)

// The reserve of free space. A site whose data directory filled up would
// stop: the metadata store cannot go on after a write it could not make
// (Pebble stops the process), and the site would not start again until
// space was freed by hand. So a site keeps a reserve free on the file
// system of its data directory: new object data is refused
// (objects.ErrStorageFull, XMinioStorageFull) while taking it would leave
// less than the reserve, and what the site must write to go on (its
// metadata, deletes that free space, the memtable it flushes) has room.
// The reserve must hold at least the metadata store's write-ahead log and
// memtable (32 MiB each) with room to compact.
const (
	DefaultMinFreeSpace = 1 << 30
	MinMinFreeSpace     = 128 << 20
	MaxMinFreeSpace     = 64 << 30
)

// validMinFreeSpace checks a reserve of free space (0: the default).
func validMinFreeSpace(n int64) error {
	if n != 0 && (n < MinMinFreeSpace || n > MaxMinFreeSpace) {
		return fmt.Errorf("%d bytes outside [%d, %d] (128MiB to 64GiB)", n, MinMinFreeSpace, MaxMinFreeSpace)
	}
	return nil
}

// room is the object layer's check for room for new data: a reserve of
// free space kept in Dir where the metadata store is this node's own
// Pebble; none on a multi-node site, whose metadata is in etcd (which
// refuses writes past its quota) and whose drives keep their own reserve.
func (s *Server) room() func(int64) error {
	if s.cfg.Meta != nil {
		return nil
	}
	r := blob.NewReserve(s.cfg.Dir, s.diskReserve())
	return func(size int64) error {
		if err := r.Take(size); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return objects.ErrStorageFull
			}
			return err
		}
		return nil
	}
}

// diskReserve is the free space kept on the filesystem of Dir: the site's
// reserve, or on a node of a multi-node site its drive's.
func (s *Server) diskReserve() int64 {
	if s.cfg.Meta != nil {
		return blob.ShardDriveReserve
	}
	return cmp.Or(s.cfg.MinFreeSpace, DefaultMinFreeSpace)
}
