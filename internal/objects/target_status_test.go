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
		v, err := l.HeadObject(ctx, "bucket1", c.key, c.vid)
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
	v, _ := l.HeadObject(ctx, "bucket1", "a", v1.VersionID)
	if v.Targets["peer-2"] != StatusPending {
		t.Errorf("other target's status lost: %v", v.Targets)
	}
}

// TestTargetStatusBesideTheVersion: once a version's record names its
// targets, a status leaves the record untouched (its bytes, inline data
// included, are not rewritten) and is read through HeadObject; a metadata
// change carries the status into the rewritten record; a purge removes the
// status with the version.
func TestTargetStatusBesideTheVersion(t *testing.T) {
	l := newVersioned(t, nil)
	ctx := context.Background()
	v := put(t, l, "bucket1", "k", "inline body")
	if err := l.SetTargetStatus("bucket1", "k", v.VersionID, "peer-2", StatusPending); err != nil {
		t.Fatal(err)
	}
	before, err := l.meta.Get(versionKey("bucket1", "k", v.VersionID))
	if err != nil {
		t.Fatal(err)
	}
	before = append([]byte(nil), before...)
	if err := l.SetTargetStatus("bucket1", "k", v.VersionID, "peer-1", StatusCompleted); err != nil {
		t.Fatal(err)
	}
	if err := l.SetTargetStatus("bucket1", "k", v.VersionID, "peer-2", StatusFailed); err != nil {
		t.Fatal(err)
	}
	after, _ := l.meta.Get(versionKey("bucket1", "k", v.VersionID))
	if string(after) != string(before) {
		t.Error("a status rewrote the version record")
	}
	got, err := l.HeadObject(ctx, "bucket1", "k", "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Targets["peer-1"] != StatusCompleted || got.Targets["peer-2"] != StatusFailed || got.ReplicationStatus() != StatusFailed || got.ReplicaTimestamp == 0 {
		t.Fatalf("head: targets %v, status %s, replica time %d", got.Targets, got.ReplicationStatus(), got.ReplicaTimestamp)
	}

	sentBefore, err := l.Version(ctx, "bucket1", "k", v.VersionID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.PutObjectTags(ctx, "bucket1", "k", v.VersionID, map[string]string{"a": "b"}); err != nil {
		t.Fatal(err)
	}
	// A send of the state before the tag change completes late: it says
	// nothing about the tagged state.
	late := []TargetStatusUpdate{{Bucket: "bucket1", Key: "k", VersionID: v.VersionID, Sent: sentBefore}}
	if err := l.SetTargetStatuses("peer-2", StatusCompleted, late); err != nil {
		t.Fatal(err)
	}
	got, _ = l.HeadObject(ctx, "bucket1", "k", v.VersionID)
	if got.Tags["a"] != "b" || got.Targets["peer-1"] != StatusCompleted || got.Targets["peer-2"] != StatusFailed {
		t.Fatalf("after a tag change: tags %v, targets %v", got.Tags, got.Targets)
	}
	if err := l.SetTargetStatus("bucket1", "k", v.VersionID, "peer-2", StatusCompleted); err != nil {
		t.Fatal(err)
	}
	if got, _ = l.HeadObject(ctx, "bucket1", "k", v.VersionID); got.ReplicationStatus() != StatusCompleted {
		t.Fatalf("after the tag change's send: targets %v", got.Targets)
	}

	if _, err := l.DeleteObject(ctx, "bucket1", "k", v.VersionID); err != nil {
		t.Fatal(err)
	}
	for _, peer := range []string{"peer-1", "peer-2"} {
		if _, err := l.meta.Get(statusKey("bucket1", "k", v.VersionID, peer)); err == nil {
			t.Errorf("the status for %s outlived its version", peer)
		}
	}
}

// TestOlderSendLeavesTheNewerStatus: the completion of a send of an older
// state of a version (a copy the sender carried from the write, completed
// after the send of a metadata change to it) writes no status over the
// newer send's, and its extra writes still apply.
func TestOlderSendLeavesTheNewerStatus(t *testing.T) {
	l := newVersioned(t, nil)
	ctx := context.Background()
	v := put(t, l, "bucket1", "k", "inline body")
	// The record names its targets, as a replicating site's writes do.
	if err := l.SetTargetStatus("bucket1", "k", v.VersionID, "peer-1", StatusPending); err != nil {
		t.Fatal(err)
	}
	older, err := l.Version(ctx, "bucket1", "k", v.VersionID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.PutObjectTags(ctx, "bucket1", "k", v.VersionID, map[string]string{"a": "b"}); err != nil {
		t.Fatal(err)
	}
	newer, err := l.Version(ctx, "bucket1", "k", v.VersionID)
	if err != nil {
		t.Fatal(err)
	}
	if len(older.Targets) == 0 || newer.MetaTime == older.MetaTime {
		t.Fatalf("setup: targets %v, meta times %d and %d", older.Targets, older.MetaTime, newer.MetaTime)
	}
	up := func(sent *Version, extra func(meta.Batch)) []TargetStatusUpdate {
		return []TargetStatusUpdate{{Bucket: "bucket1", Key: "k", VersionID: v.VersionID, Sent: sent, Extra: extra}}
	}
	if err := l.SetTargetStatuses("peer-1", StatusCompleted, up(newer, nil)); err != nil {
		t.Fatal(err)
	}
	extra := func(b meta.Batch) { b.Set([]byte("test/late"), []byte("done")) }
	if err := l.SetTargetStatuses("peer-1", StatusFailed, up(older, extra)); err != nil {
		t.Fatal(err)
	}
	got, err := l.HeadObject(ctx, "bucket1", "k", v.VersionID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Targets["peer-1"] != StatusCompleted || got.Tags["a"] != "b" {
		t.Fatalf("after the older send's completion: targets %v, tags %v", got.Targets, got.Tags)
	}
	if _, err := l.meta.Get([]byte("test/late")); err != nil {
		t.Fatalf("the older send's extra write: %v", err)
	}
}
