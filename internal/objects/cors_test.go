package objects

import (
	"bytes"
	"context"
	"testing"
)

// TestBucketCORSMergesPerField: the CORS configuration is a setting of its
// own: set and removed with its field time, and merged from a peer by that
// time without disturbing a concurrent change of another setting.
func TestBucketCORSMergesPerField(t *testing.T) {
	ctx := context.Background()
	l := newLayer(t)
	if err := l.CreateBucket(ctx, "crs"); err != nil {
		t.Fatal(err)
	}
	doc := []byte("<CORSConfiguration/>")
	if err := l.SetBucketCORS(ctx, "crs", doc); err != nil {
		t.Fatal(err)
	}
	b, _ := l.Bucket(ctx, "crs")
	if !bytes.Equal(b.CORS, doc) || b.fieldTime(FieldCORS) == 0 {
		t.Fatalf("after set: %q at %d", b.CORS, b.fieldTime(FieldCORS))
	}

	// A peer's newer tags and older CORS: the tags win, the CORS stays.
	peer := b
	peer.FieldTimes = map[string]int64{FieldTags: b.fieldTime(FieldCORS) + 1, FieldCORS: b.fieldTime(FieldCORS) - 1}
	peer.Tags = map[string]string{"k": "v"}
	peer.CORS = []byte("<old/>")
	merged, out := mergeBucket(&b, &peer)
	if out != Applied || merged.Tags["k"] != "v" || !bytes.Equal(merged.CORS, doc) {
		t.Fatalf("merge: %v %+v", out, merged)
	}
	// A peer's newer removal removes it.
	peer = b
	peer.FieldTimes = map[string]int64{FieldCORS: b.fieldTime(FieldCORS) + 5}
	peer.CORS = nil
	if _, err := l.ApplyBucket(ctx, peer, false, peer.FieldTimes[FieldCORS]); err != nil {
		t.Fatal(err)
	}
	if got, _ := l.Bucket(ctx, "crs"); got.CORS != nil {
		t.Fatalf("after a peer's newer removal: %q", got.CORS)
	}
	// Removing locally stamps the field again.
	if err := l.SetBucketCORS(ctx, "crs", doc); err != nil {
		t.Fatal(err)
	}
	if err := l.SetBucketCORS(ctx, "crs", nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := l.Bucket(ctx, "crs"); got.CORS != nil || got.fieldTime(FieldCORS) <= peer.FieldTimes[FieldCORS] {
		t.Fatalf("after local removal: %q at %d", got.CORS, got.fieldTime(FieldCORS))
	}
}
