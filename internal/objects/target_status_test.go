package objects

import (
	"context"
	"testing"

	"github.com/twinlake/twinlake/internal/meta"
)

// TestSetTargetStatuses: one call records the status on every version
// named (a version named twice keeps both updates' result), applies every
// update's extra writes, also for a version that is gone, and leaves the
// data and the other targets' statuses as they were.
func TestSetTargetStatuses(t *testing.T) {
	l := newLayer(t)
	ctx := context.Background()
	if err := l.CreateBucket(ctx, "bucket1"); err != nil {
		t.Fatal(err)
	}
	v1 := put(t, l, "bucket1", "a", "first body")
	v2 := put(t, l, "bucket1", "b", "second")
	if err := l.SetTargetStatus("bucket1", "a", v1.VersionID, "peer-2", StatusPending); err != nil {
		t.Fatal(err)
	}
	var extras []string
	extra := func(name string) func(meta.Batch) {
		return func(b meta.Batch) {
			extras = append(extras, name)
			b.Set([]byte("test/"+name), []byte("done"))
		}
	}
	err := l.SetTargetStatuses("peer-1", StatusCompleted, []TargetStatusUpdate{
		{Bucket: "bucket1", Key: "a", VersionID: v1.VersionID, Extra: extra("a")},
		{Bucket: "bucket1", Key: "b", VersionID: v2.VersionID, Extra: extra("b")},
		{Bucket: "bucket1", Key: "a", VersionID: v1.VersionID, Extra: extra("a-again")},
		{Bucket: "bucket1", Key: "gone", VersionID: v2.VersionID, Extra: extra("gone")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(extras) != 4 {
		t.Errorf("extras applied: %v, want all 4", extras)
	}
	for _, name := range []string{"a", "b", "a-again", "gone"} {
		if _, err := l.meta.Get([]byte("test/" + name)); err != nil {
			t.Errorf("extra write of %s: %v", name, err)
		}
	}
	for _, c := range []struct{ key, vid, body string }{{"a", v1.VersionID, "first body"}, {"b", v2.VersionID, "second"}} {
		v, err := l.Version(ctx, "bucket1", c.key, c.vid)
		if err != nil {
			t.Fatal(err)
		}
		if v.Targets["peer-1"] != StatusCompleted || v.ReplicaTimestamp == 0 {
			t.Errorf("%s: targets %v, replica time %d", c.key, v.Targets, v.ReplicaTimestamp)
		}
		if v.Size != int64(len(c.body)) || v.ETag != map[string]string{"a": v1.ETag, "b": v2.ETag}[c.key] {
			t.Errorf("%s: size %d etag %s changed", c.key, v.Size, v.ETag)
		}
	}
	v, _ := l.Version(ctx, "bucket1", "a", v1.VersionID)
	if v.Targets["peer-2"] != StatusPending {
		t.Errorf("other target's status lost: %v", v.Targets)
	}
}
