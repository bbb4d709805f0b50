package s3api

import (
	"fmt"
	"net/http"
	"os"
	"syscall"
	"testing"

	"github.com/twinlake/twinlake/internal/objects"
)

// TestStorageFullError: the site's reserve of free space reached, or a
// drive found full however deep the error, is 507 XMinioStorageFull, not
// an internal error.
func TestStorageFullError(t *testing.T) {
	for _, err := range []error{
		objects.ErrStorageFull,
		fmt.Errorf("put: %w", objects.ErrStorageFull),
		fmt.Errorf("blob: %w", &os.PathError{Op: "write", Path: "/d/blobs/ab/cd", Err: syscall.ENOSPC}),
	} {
		if ae := toAPIError(err); ae.Code != "XMinioStorageFull" || ae.Status != http.StatusInsufficientStorage {
			t.Errorf("%v: %s %d", err, ae.Code, ae.Status)
		}
	}
	if ae := toAPIError(&os.PathError{Op: "write", Path: "/d", Err: syscall.EIO}); ae != errInternal {
		t.Errorf("an I/O error: %s", ae.Code)
	}
}
