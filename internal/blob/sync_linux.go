package blob

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing a file's range to disk
// without waiting for it (sync_file_range with SYNC_FILE_RANGE_WRITE); it is
// a hint, so an error is ignored: the sync at commit is what makes the data
// durable.
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// syncData makes a file's data, and the metadata needed to read it back
// (its size), durable: fdatasync, which skips the timestamps fsync would
// also write.
func syncData(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}
