package objects

import (
	"context"
	"testing"

	"github.com/twinlake/twinlake/internal/meta"
)

// replicating is a Replicator that only says site replication is on.
type replicating struct{}

func (replicating) Version(meta.Batch, string, string, *Version)          {}
func (replicating) Purge(meta.Batch, string, string, *Version, PurgeKind) {}
func (replicating) Bucket(meta.Batch, *Bucket, bool, int64)               {}
func (replicating) RequiresVersioning() bool                              { return true }
func (replicating) Committed()                                            {}

// A peer's record of a bucket that was deleted after the record's last
// change never brings the bucket back, whether the deletion was made here
// or arrived from a peer, even before the bucket itself arrived; a record
// newer than the deletion (the bucket made again) does.
func TestLateBucketRecordDoesNotResurrect(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		delete func(t *testing.T, l *Layer, rec Bucket) int64 // returns the deletion time
	}{
		{"deleted here", func(t *testing.T, l *Layer, rec Bucket) int64 {
			if _, err := l.ApplyBucket(ctx, rec, false, rec.ModTime); err != nil {
				t.Fatal(err)
			}
			if err := l.DeleteBucket(ctx, rec.Name); err != nil {
				t.Fatal(err)
			}
			return l.cfg.Clock.Now()
		}},
		{"deletion from a peer", func(t *testing.T, l *Layer, rec Bucket) int64 {
			if _, err := l.ApplyBucket(ctx, rec, false, rec.ModTime); err != nil {
				t.Fatal(err)
			}
			at := rec.ModTime + 100
			if out, err := l.ApplyBucket(ctx, Bucket{Name: rec.Name}, true, at); err != nil || out != Applied {
				t.Fatalf("apply deletion = %v, %v", out, err)
			}
			return at
		}},
		{"deletion before the bucket arrived", func(t *testing.T, l *Layer, rec Bucket) int64 {
			at := rec.ModTime + 100
			if out, err := l.ApplyBucket(ctx, Bucket{Name: rec.Name}, true, at); err != nil || out != Duplicate {
				t.Fatalf("apply deletion of a missing bucket = %v, %v", out, err)
			}
			return at
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLayer(t)
			l.SetReplicator(replicating{})
			created := l.cfg.Clock.Now()
			rec := Bucket{Name: "photos", Versioning: VersioningEnabled, ModTime: created,
				FieldTimes: map[string]int64{FieldVersioning: created}}
			gone := tt.delete(t, l, rec)

			// The same record, and one with a setting changed before the
			// deletion, arrive late.
			late := rec
			late.FieldTimes = map[string]int64{FieldVersioning: created, FieldTags: created + 1}
			late.Tags = map[string]string{"team": "a"}
			for _, in := range []Bucket{rec, late} {
				out, err := l.ApplyBucket(ctx, in, false, in.ModTime)
				if err != nil || out != Stale {
					t.Fatalf("late record = %v, %v; want Stale", out, err)
				}
				if _, err := l.Bucket(ctx, "photos"); err == nil {
					t.Fatal("a late record brought the deleted bucket back")
				}
			}

			// Made again after the deletion: it arrives.
			again := Bucket{Name: "photos", Versioning: VersioningEnabled, ModTime: gone + 1}
			if out, err := l.ApplyBucket(ctx, again, false, again.ModTime); err != nil || out != Applied {
				t.Fatalf("re-created bucket = %v, %v; want Applied", out, err)
			}
			if _, err := l.Bucket(ctx, "photos"); err != nil {
				t.Fatalf("re-created bucket: %v", err)
			}
		})
	}
}
