package app

import (
	"fmt"
	"sync"
	"syscall"
	"time"

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

// spaceRecheck is how long a look at the free space serves: writes taken
// meanwhile are counted against it.
const spaceRecheck = time.Second

// spaceGuard keeps a reserve free on the file system of dir.
type spaceGuard struct {
	dir     string
	reserve int64
	free    func(dir string) (int64, error) // bytes free to this process
	now     func() time.Time

	mu    sync.Mutex
	avail int64     // free at the last look, less the writes taken since
	at    time.Time // the last look; zero: none yet
}

func newSpaceGuard(dir string, reserve int64) *spaceGuard {
	if reserve == 0 {
		reserve = DefaultMinFreeSpace
	}
	return &spaceGuard{dir: dir, reserve: reserve, free: freeSpace, now: time.Now}
}

// room is objects.Config.Room: it takes a write of size bytes (negative:
// not known yet, counted as none) when the free space left after it
// stays at least the reserve.
func (g *spaceGuard) room(size int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if g.at.IsZero() || now.Sub(g.at) >= spaceRecheck || now.Before(g.at) {
		free, err := g.free(g.dir)
		if err != nil {
			return fmt.Errorf("free space of %s: %w", g.dir, err)
		}
		g.avail, g.at = free, now
	}
	size = max(size, 0)
	if g.avail-size < g.reserve {
		return objects.ErrStorageFull
	}
	g.avail -= size
	return nil
}

// freeSpace returns the bytes free to an unprivileged user on dir's file
// system.
func freeSpace(dir string) (int64, error) {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return 0, err
	}
	return int64(fs.Bavail) * fs.Bsize, nil
}
