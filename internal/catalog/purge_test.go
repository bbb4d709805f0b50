package catalog

import (
	"strings"
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
