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

// fillingDrive is a drive that fills as a shard is written to it: a
// shard's writes fail once it holds room bytes.
type fillingDrive struct {
	blob.Drive
	room int
}

func (d fillingDrive) Create(id string) (blob.ShardWriter, error) {
	w, err := d.Drive.Create(id)
	return &fillingWriter{ShardWriter: w, room: d.room}, err
}

type fillingWriter struct {
	blob.ShardWriter
	room int
}

func (w *fillingWriter) Write(p []byte) (int, error) {
	if len(p) > w.room {
		return 0, fmt.Errorf("blob: shard: %w", syscall.ENOSPC)
	}
	w.room -= len(p)
	return w.ShardWriter.Write(p)
}

// TestFullDriveAcrossNodes: a node's drive that is full (or down to its
// reserve), or fills as a shard streams to it, is full to the node that
// writes to it too, whether the shard goes alone, held or streamed, or in
// a batch: the site can tell a lack of room from a lack of drives.
func TestFullDriveAcrossNodes(t *testing.T) {
	t.Run("full", func(t *testing.T) {
		fullAcrossNodes(t, fullDrive{mustLocal(t, t.TempDir())}, []int{100, blob.SmallShardMax + 1, 4 << 20})
	})
	t.Run("filling", func(t *testing.T) {
		fullAcrossNodes(t, fillingDrive{mustLocal(t, t.TempDir()), 1 << 20}, []int{2 << 20, 16 << 20})
	})
}

func fullAcrossNodes(t *testing.T, drive blob.Drive, sizes []int) {
	h, err := NewServer([]blob.Drive{drive}, secret, nil, nil)
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
	for _, size := range sizes {
		if err := write(size); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("a %d-byte shard to a full drive: %v", size, err)
		}
	}
	if _, ok := drive.(fillingDrive); ok {
		return
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
