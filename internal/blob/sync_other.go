//go:build !linux

package blob

import "os"

// startWriteback is a no-op where the system has no sync_file_range.
func startWriteback(f *os.File, off, n int64) {}

// syncData makes a file's data durable.
func syncData(f *os.File) error { return f.Sync() }
