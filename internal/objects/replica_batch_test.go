package objects

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/twinlake/twinlake/internal/meta"
)

// newVersioned is a layer with replicator r (nil: none) and a versioned
// bucket named bucket1.
func newVersioned(t *testing.T, r Replicator) *Layer {
	t.Helper()
	return versioned(t, newLayer(t), r)
}

// versioned gives l replicator r (nil: none) and a versioned bucket named
// bucket1.
func versioned(t *testing.T, l *Layer, r Replicator) *Layer {
	t.Helper()
	if r != nil {
		l.SetReplicator(r)
	}
	ctx := context.Background()
	if err := l.CreateBucket(ctx, "bucket1"); err != nil {
		t.Fatal(err)
	}
	if err := l.SetVersioning(ctx, "bucket1", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestApplyReplicas: one batch gives each item the outcome ApplyReplica
// would (applied, duplicate, a metadata merge, stale after a purge, an
// invalid item refused alone), commits the lot synced, and leaves the
// stats cells equal to a recount; a batch naming one key twice applies
// its versions in order, for the caller to sync.
func TestApplyReplicas(t *testing.T) {
	t.Run("key by key", func(t *testing.T) { testApplyReplicas(t, newVersioned(t, replicating{})) })
	// As over etcd: the batch's state in one read.
	t.Run("in one call", func(t *testing.T) {
		testApplyReplicas(t, versioned(t, newLayerOver(t, oneCall{meta.NewMem()}, 8), replicating{}))
	})
}

// oneCall is a store that reads several keys in one call (a
// meta.MultiViewer), as the etcd store does.
type oneCall struct{ meta.Store }

func (s oneCall) ViewMany(keys [][]byte, fn func(i int, value []byte, found bool) error) error {
	return meta.ViewMany(s.Store, keys, fn)
}

func testApplyReplicas(t *testing.T, l *Layer) {
	ctx := context.Background()
	here := replicaSmall("here")
	if _, err := l.ApplyReplicaSync(ctx, "bucket1", "here", here, strings.NewReader("here"), true); err != nil {
		t.Fatal(err)
	}
	purged := replicaSmall("gone")
	purged.VersionID = "3b9d6c1e-7f3a-4c2e-9a1b-2c3d4e5f6a7b"
	if err := l.rememberPurge("bucket1", "gone", purged.VersionID, purged.ModTime, PurgeVersion); err != nil {
		t.Fatal(err)
	}
	tagged := *here
	tagged.MetaTime, tagged.Tags = here.ModTime+5, map[string]string{"team": "data"}
	again := replicaSmall("same")
	if _, err := l.ApplyReplicaSync(ctx, "bucket1", "same", again, strings.NewReader("same"), true); err != nil {
		t.Fatal(err)
	}

	items := []ReplicaItem{
		{Bucket: "bucket1", Key: "new", Version: replicaSmall("new!"), Data: []byte("new!")},
		{Bucket: "bucket1", Key: "here", Version: &tagged},
		{Bucket: "bucket1", Key: "gone", Version: purged, Data: []byte("gone")},
		{Bucket: "bucket1", Key: "same", Version: again, Data: []byte("same")},
		{Bucket: "bucket1", Key: "bad", Version: &Version{VersionID: "not a version id", ModTime: 1}},
		{Bucket: "nobucket", Key: "x", Version: replicaSmall("x"), Data: []byte("x")},
	}
	out, errs, synced := l.ApplyReplicas(ctx, items)
	if !synced {
		t.Error("a batch of distinct keys was not committed synced")
	}
	want := []ApplyOutcome{Applied, Applied, Stale, Duplicate}
	for i, w := range want {
		if errs[i] != nil || out[i] != w {
			t.Errorf("item %d (%s): %v, %v; want %v", i, items[i].Key, out[i], errs[i], w)
		}
	}
	if errs[4] != ErrInvalidVersionID || errs[5] != ErrBucketNotFound {
		t.Errorf("invalid items: %v, %v", errs[4], errs[5])
	}
	if v, err := l.HeadObject(ctx, "bucket1", "new", ""); err != nil || v.ReplicaStatus != StatusReplica || v.Size != 4 {
		t.Errorf("new: %+v, %v", v, err)
	}
	if v, err := l.HeadObject(ctx, "bucket1", "here", ""); err != nil || v.Tags["team"] != "data" {
		t.Errorf("here: tags %v, %v", v.Tags, err)
	}
	if _, err := l.HeadObject(ctx, "bucket1", "gone", ""); err != ErrObjectNotFound {
		t.Errorf("purged version came back: %v", err)
	}
	checkExact(t, "after a batch", l)

	older, newer := replicaSmall("v1"), replicaSmall("v2")
	older.VersionID, newer.ModTime = "4b9d6c1e-7f3a-4c2e-9a1b-2c3d4e5f6a7b", older.ModTime+10
	out, errs, synced = l.ApplyReplicas(ctx, []ReplicaItem{
		{Bucket: "bucket1", Key: "twice", Version: newer, Data: []byte("v2")},
		{Bucket: "bucket1", Key: "twice", Version: older, Data: []byte("v1")},
	})
	if synced || out[0] != Applied || out[1] != Applied || errs[0] != nil || errs[1] != nil {
		t.Errorf("one key twice: synced %v, %v, %v", synced, out, errs)
	}
	if v, err := l.HeadObject(ctx, "bucket1", "twice", ""); err != nil || v.VersionID != newer.VersionID {
		t.Errorf("latest of twice: %+v, %v", v, err)
	}
	checkExact(t, "after a batch naming one key twice", l)
}

// TestApplyReplicasChecksHeldData: a small received version whose data the
// batch holds is checked against its ETag and kept as it arrived (the
// caller's buffer changing afterwards changes nothing stored); a wrong
// digest or length is refused with nothing stored, and a version too large
// to keep inline still goes to a blob.
func TestApplyReplicasChecksHeldData(t *testing.T) {
	l := newVersioned(t, replicating{})
	ctx := context.Background()
	ids := []string{"5b9d6c1e-7f3a-4c2e-9a1b-2c3d4e5f6a7b", "6b9d6c1e-7f3a-4c2e-9a1b-2c3d4e5f6a7b",
		"7b9d6c1e-7f3a-4c2e-9a1b-2c3d4e5f6a7b", "8b9d6c1e-7f3a-4c2e-9a1b-2c3d4e5f6a7b"}
	vs := make([]*Version, 4)
	for i, body := range []string{"small", "other", "short", strings.Repeat("L", int(l.cfg.InlineLimit)+1)} {
		vs[i] = replicaSmall(body)
		vs[i].VersionID = ids[i]
	}
	vs[1].ETag = vs[0].ETag // the digest of other data
	small := []byte("small")
	large := []byte(strings.Repeat("L", int(l.cfg.InlineLimit)+1))
	items := []ReplicaItem{
		{Bucket: "bucket1", Key: "small", Version: vs[0], Data: small},
		{Bucket: "bucket1", Key: "wrong", Version: vs[1], Data: []byte("other")},
		{Bucket: "bucket1", Key: "cut", Version: vs[2], Data: []byte("sho")},
		{Bucket: "bucket1", Key: "large", Version: vs[3], Data: large},
	}
	out, errs, _ := l.ApplyReplicas(ctx, items)
	if errs[0] != nil || out[0] != Applied || errs[3] != nil || out[3] != Applied {
		t.Fatalf("sound items: %v, %v", out, errs)
	}
	if !errors.Is(errs[1], ErrBadDigest) || errs[2] == nil {
		t.Fatalf("a wrong digest: %v; a short body: %v", errs[1], errs[2])
	}
	copy(small, "XXXXX")
	copy(large, "XXXXX")
	for key, want := range map[string]string{"small": "small", "large": strings.Repeat("L", int(l.cfg.InlineLimit)+1)} {
		_, r, err := l.GetObject(ctx, "bucket1", key, "", 0, int64(len(want)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || string(got) != want {
			t.Errorf("%s: read %d bytes (%.10q...), %v", key, len(got), got, err)
		}
	}
	for _, key := range []string{"wrong", "cut"} {
		if _, err := l.HeadObject(ctx, "bucket1", key, ""); !errors.Is(err, ErrObjectNotFound) {
			t.Errorf("%s refused, yet: %v", key, err)
		}
	}
	checkExact(t, "after held and refused copies", l)
}

// TestReplicaCommitCut: a received batch goes in commits of at most
// maxReplicaCommitItems versions and maxReplicaCommitBytes of inline data
// (larger objects' data is not in the commit), at least one version each.
func TestReplicaCommitCut(t *testing.T) {
	items := func(n, size int) []ReplicaItem {
		out := make([]ReplicaItem, n)
		for i := range out {
			out[i].Data = make([]byte, size)
		}
		return out
	}
	tests := []struct {
		name   string
		items  []ReplicaItem
		inline int64
		want   int
	}{
		{"small batch", items(10, 4<<10), 1 << 10, 10},
		{"inline data over the bound", items(40, 60<<10), 64 << 10, 17},
		{"coded data does not count", items(40, 60<<10), 1 << 10, 40},
		{"too many versions", items(300, 10), 1 << 10, maxReplicaCommitItems},
		{"one version larger than the bound", items(3, 2<<20), 4 << 20, 1},
		{"empty", nil, 1 << 10, 0},
	}
	for _, tt := range tests {
		if got := replicaCommitCut(tt.items, tt.inline); got != tt.want {
			t.Errorf("%s: cut at %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestApplyReplicasInParts: a batch cut into several commits gives every
// item its outcome, in order, and every version reads back.
func TestApplyReplicasInParts(t *testing.T) {
	l := newLayerInline(t, 64<<10)
	l.SetReplicator(replicating{})
	ctx := context.Background()
	if err := l.CreateBucket(ctx, "bucket1"); err != nil {
		t.Fatal(err)
	}
	var items []ReplicaItem
	for i := range 40 {
		body := strings.Repeat(string(rune('a'+i%26)), 60<<10)
		v := replicaSmall(body)
		items = append(items, ReplicaItem{Bucket: "bucket1", Key: fmt.Sprint("k", i), Version: v, Data: []byte(body)})
	}
	items = append(items, ReplicaItem{Bucket: "nobucket", Key: "x", Version: replicaSmall("x"), Data: []byte("x")})
	out, errs, synced := l.ApplyReplicas(ctx, items)
	if !synced || len(out) != len(items) || len(errs) != len(items) {
		t.Fatalf("%d outcomes, %d errors for %d items, synced %v", len(out), len(errs), len(items), synced)
	}
	for i, it := range items[:40] {
		if errs[i] != nil || out[i] != Applied {
			t.Fatalf("item %d: %v, %v", i, out[i], errs[i])
		}
		_, r, err := l.GetObject(ctx, "bucket1", it.Key, "", 0, int64(len(it.Data)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, it.Data) {
			t.Fatalf("%s read back %d bytes, %v", it.Key, len(got), err)
		}
	}
	if errs[40] != ErrBucketNotFound {
		t.Errorf("last item: %v", errs[40])
	}
	checkExact(t, "after a batch in parts", l)
}
