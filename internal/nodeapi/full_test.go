package nodeapi

import (
	"errors"
	"fmt"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"

	"github.com/twinlake/twinlake/internal/blob"
)

// fullDrive is a drive that is out of room: it creates no shard.
type fullDrive struct{ blob.Drive }

func (fullDrive) Create(id string) (blob.ShardWriter, error) {
	return nil, fmt.Errorf("blob: create shard %s: %w", id, syscall.ENOSPC)
}

// TestFullDriveAcrossNodes: a node's drive that is full (or down to its
// reserve) is full to the node that writes to it too, whether the shard
// goes alone, held or streamed, or in a batch: the site can tell a lack
// of room from a lack of drives.
func TestFullDriveAcrossNodes(t *testing.T) {
	h, err := NewServer([]blob.Drive{fullDrive{mustLocal(t, t.TempDir())}}, secret, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	d, err := NewDrive(srv.URL, 0, secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	write := func(size int) error {
		w, err := d.Create(blob.NewID())
		if err != nil {
			return err
		}
		if _, err := w.Write(make([]byte, size)); err != nil {
			w.Abort()
			return err
		}
		return w.Commit()
	}
	for _, size := range []int{100, blob.SmallShardMax + 1, 4 << 20} {
		if err := write(size); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("a %d-byte shard to a full drive: %v", size, err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Go(func() { errs[i] = write(1000) })
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("shard %d of concurrent small ones: %v", i, err)
		}
	}
}
