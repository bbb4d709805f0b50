package catalog

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twinlake/twinlake/internal/objects"
)

// A purge deletes the table's files side by side and its current metadata
// file after all the others: its delete marker is the newest.
func TestPurgeDeletesTheCurrentMetadataLast(t *testing.T) {
	c, obj := newTestCatalog(t)
	ctx := t.Context()
	id := Ident{Namespace: []string{"ns"}, Name: "t"}
	tbl, err := c.CreateTable(ctx, "lake", CreateTableRequest{Ident: id, Schema: unitSchema})
	if err != nil {
		t.Fatal(err)
	}
	var parent *int64
	for i := int64(1); i <= 3*deleteWorkers; i++ {
		addSnapshot(t, c, obj, tbl, i, parent, 0)
		parent = &i
	}
	cur, err := c.LoadTable(ctx, "lake", id)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DropTable(ctx, "lake", id, true); err != nil {
		t.Fatal(err)
	}
	res, err := obj.ListObjectVersions(ctx, "lake", objects.VersionListOptions{MaxKeys: 1000})
	if err != nil {
		t.Fatal(err)
	}
	curKey := strings.TrimPrefix(cur.MetadataLocation, "s3://lake/")
	var markers int
	var curAt, latestOther int64
	for _, v := range res.Versions {
		if !v.IsLatest || strings.HasPrefix(v.Key, ".twinlake/") { // the catalog's identity records
			continue
		}
		if !v.DeleteMarker {
			t.Errorf("%s left by the purge", v.Key)
			continue
		}
		markers++
		if v.Key == curKey {
			curAt = v.ModTime
		} else {
			latestOther = max(latestOther, v.ModTime)
		}
	}
	// 3×deleteWorkers manifest lists and as many metadata files, and the first.
	if want := 2*3*deleteWorkers + 1; markers != want || curAt == 0 {
		t.Fatalf("%d files deleted (current metadata at %d), want %d and the current metadata among them", markers, curAt, want)
	}
	if curAt <= latestOther {
		t.Fatalf("the current metadata file was deleted at %d, before another file (%d)", curAt, latestOther)
	}
}

// deleteEach runs at most deleteWorkers calls at once, every call once when
// none fails, and after a failure starts no new one and returns its error.
func TestDeleteEach(t *testing.T) {
	var running, peak, calls atomic.Int64
	release := make(chan struct{})
	var full sync.Once
	fn := func(ctx context.Context, i int) error {
		calls.Add(1)
		n := running.Add(1)
		defer running.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		if n == deleteWorkers {
			full.Do(func() { close(release) }) // the first wave is all in
		}
		<-release
		return nil
	}
	if err := deleteEach(t.Context(), 5*deleteWorkers, fn); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 5*deleteWorkers || peak.Load() != deleteWorkers {
		t.Fatalf("%d calls, at most %d at once; want %d, %d", calls.Load(), peak.Load(), 5*deleteWorkers, deleteWorkers)
	}

	boom := errors.New("boom")
	calls.Store(0)
	err := deleteEach(t.Context(), 10_000, func(ctx context.Context, i int) error {
		calls.Add(1)
		if i == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || calls.Load() == 10_000 {
		t.Fatalf("after a failure: %v, %d calls of 10000", err, calls.Load())
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := deleteEach(ctx, 10, func(context.Context, int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("with its context ended: %v", err)
	}
}
