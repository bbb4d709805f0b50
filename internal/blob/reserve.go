package blob

import (
	"fmt"
	"sync"
	"syscall"
	"time"
)

// Reserve keeps free space on the file system of a directory: Take
// refuses, with syscall.ENOSPC, a write that would leave less than the
// reserve free. A store that cannot go on after a failed write (Pebble
// stops the process) shares the file system with what is written, so it
// must never find the disk full: writes are refused first.
type Reserve struct {
	dir  string
	keep int64
	free func(dir string) (int64, error) // bytes free to this process
	now  func() time.Time

	mu    sync.Mutex
	avail int64     // free at the last look, less what was taken since
	at    time.Time // the last look; zero: none yet
}

// reserveRecheck is how long a look at the free space serves: what is
// taken meanwhile is counted against it.
const reserveRecheck = time.Second

// NewReserve keeps keep bytes free on dir's file system.
func NewReserve(dir string, keep int64) *Reserve {
	return &Reserve{dir: dir, keep: keep, free: freeSpace, now: time.Now}
}

// Take takes size bytes (negative: not known yet, counted as none) when
// at least the reserve stays free after them.
func (r *Reserve) Take(size int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if r.at.IsZero() || now.Sub(r.at) >= reserveRecheck || now.Before(r.at) {
		free, err := r.free(r.dir)
		if err != nil {
			return fmt.Errorf("blob: free space of %s: %w", r.dir, err)
		}
		r.avail, r.at = free, now
	}
	size = max(size, 0)
	if r.avail-size < r.keep {
		return fmt.Errorf("blob: %s: %w (less than %d MiB would be left free)", r.dir, syscall.ENOSPC, r.keep>>20)
	}
	r.avail -= size
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

// reservedWriter is a shard written to a file on a drive that keeps a
// reserve: each write takes its room first.
type reservedWriter struct {
	ShardWriter
	r *Reserve
}

func (w reservedWriter) Write(p []byte) (int, error) {
	if err := w.r.Take(int64(len(p))); err != nil {
		return 0, err
	}
	return w.ShardWriter.Write(p)
}
