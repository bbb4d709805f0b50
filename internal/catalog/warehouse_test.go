package catalog

import (
	"sync"
	"testing"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
)

// bucketRecorder is a replicator that keeps every bucket change it is told
// of, as the records a peer would receive.
type bucketRecorder struct {
	mu   sync.Mutex
	sent []objects.Bucket
}

func (r *bucketRecorder) Version(meta.Batch, string, string, *objects.Version)                  {}
func (r *bucketRecorder) Purge(meta.Batch, string, string, *objects.Version, objects.PurgeKind) {}
func (r *bucketRecorder) RequiresVersioning() bool                                              { return true }
func (r *bucketRecorder) Committed()                                                            {}

func (r *bucketRecorder) Bucket(_ meta.Batch, b *objects.Bucket, deleted bool, _ int64) {
	if deleted {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, *b)
}

// A new warehouse reaches peers as one bucket record that is already a
// versioned warehouse: a peer never holds it as a plain bucket, which its
// inbound guard would let replicated writes into whatever its role.
func TestNewWarehouseIsOneRecord(t *testing.T) {
	blobs, err := blob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	obj, err := objects.New(meta.NewMem(), blobs, objects.Config{SiteID: "test"})
	if err != nil {
		t.Fatal(err)
	}
	rec := &bucketRecorder{}
	obj.SetReplicator(rec)
	c, err := New(meta.NewMem(), obj, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, changed, err := c.CreateWarehouse(t.Context(), "lake", CreateWarehouseOptions{}); err != nil || !changed {
		t.Fatalf("CreateWarehouse: changed %v, %v", changed, err)
	}
	if len(rec.sent) != 1 {
		t.Fatalf("creating a warehouse sent %d bucket records, want 1: %+v", len(rec.sent), rec.sent)
	}
	got := rec.sent[0]
	if !got.Warehouse || got.Versioning != objects.VersioningEnabled {
		t.Fatalf("the record sent is warehouse=%v versioning=%q, want a versioned warehouse", got.Warehouse, got.Versioning)
	}
	for _, f := range []string{objects.FieldWarehouse, objects.FieldVersioning} {
		if got.FieldTimes[f] != got.ModTime {
			t.Errorf("field %s changed at %d, want the record's time %d (a peer merges fields by these times)", f, got.FieldTimes[f], got.ModTime)
		}
	}
}
