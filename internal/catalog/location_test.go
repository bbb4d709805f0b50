package catalog

import (
	"errors"
	"testing"

	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
)

// A catalog written before the location index existed gets it when it
// opens: the overlap check then sees its tables.
func TestLocationIndexIsRebuiltOnOpen(t *testing.T) {
	c, obj := newTestCatalog(t)
	ctx := t.Context()
	if _, err := c.CreateTable(ctx, "lake", CreateTableRequest{Ident: Ident{Namespace: []string{"ns"}, Name: "a"},
		Schema: unitSchema, Location: "s3://lake/area/a"}); err != nil {
		t.Fatal(err)
	}
	b := c.meta.NewBatch()
	b.DeleteRange([]byte(pfxLocation), meta.PrefixEnd([]byte(pfxLocation)))
	b.Delete([]byte(keyLocationsBuilt))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	reopened, err := New(c.meta, obj, Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = reopened.CreateTable(ctx, "lake", CreateTableRequest{Ident: Ident{Namespace: []string{"ns"}, Name: "b"},
		Schema: unitSchema, Location: "s3://lake/area"})
	if !errors.Is(err, ErrLocationInUse) {
		t.Errorf("create around a table of the reopened catalog: %v", err)
	}
}

// Once the index exists, opening the catalog reads no table entry: an
// entry that cannot even be decoded does not stop it.
func TestOpenReadsNoTableEntry(t *testing.T) {
	c, obj := newTestCatalog(t)
	b := c.meta.NewBatch()
	b.Set(entryKey(pfxTable, "lake", Ident{Namespace: []string{"ns"}, Name: "garbled"}), []byte("not an entry"))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	if _, err := New(c.meta, obj, Config{}); err != nil {
		t.Fatalf("open read the table entries: %v", err)
	}
}

// Two tables at one location (as a replica may hold, or a catalog written
// before the rule): purging one leaves the other's metadata file.
func TestPurgeOfASharedLocationKeepsTheOtherTable(t *testing.T) {
	c, obj := newTestCatalog(t)
	ctx := t.Context()
	a, b := Ident{Namespace: []string{"ns"}, Name: "a"}, Ident{Namespace: []string{"ns"}, Name: "b"}
	ta, err := c.CreateTable(ctx, "lake", CreateTableRequest{Ident: a, Schema: unitSchema, Location: "s3://lake/shared"})
	if err != nil {
		t.Fatal(err)
	}
	rec := Record{Kind: KindTable, Namespace: b.Namespace, Name: b.Name, UUID: newUUID(), Location: "s3://lake/shared",
		MetadataLocation: metadataFileLocation("s3://lake/shared", 0), UpdatedMS: 1}
	md, err := c.CreateTable(ctx, "lake", CreateTableRequest{Ident: Ident{Namespace: []string{"ns"}, Name: "tmp"},
		Schema: unitSchema, Location: "s3://lake/elsewhere", Stage: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.putFile(ctx, "lake", rec.MetadataLocation, md.MetadataJSON); err != nil {
		t.Fatal(err)
	}
	if err := c.ApplyEntry(ctx, "lake", rec, md.MetadataJSON); err != nil {
		t.Fatal(err)
	}
	if err := c.DropTable(ctx, "lake", a, true); err != nil {
		t.Fatalf("purge: %v", err)
	}
	for _, c := range []struct {
		loc  string
		want bool
	}{{rec.MetadataLocation, true}, {ta.MetadataLocation, false}} {
		key, _ := keyInWarehouse("lake", c.loc)
		_, err := obj.HeadObject(ctx, "lake", key, "")
		if got := err == nil; got != c.want || (err != nil && !errors.Is(err, objects.ErrObjectNotFound)) {
			t.Errorf("%s exists = %v (%v), want %v", c.loc, got, err, c.want)
		}
	}
	if _, err := c.LoadTable(ctx, "lake", b); err != nil {
		t.Errorf("load the other table: %v", err)
	}
}
