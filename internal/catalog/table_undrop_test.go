package catalog

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/apache/iceberg-go/view"

	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
)

func TestParseRetention(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"off", 0, false}, {"1s", time.Second, false}, {"7d", 7 * 24 * time.Hour, false}, {"90m", 90 * time.Minute, false},
		{"3650d", MaxSoftDelete, false}, {"3651d", 0, true}, {"0s", 0, true}, {"7", 0, true}, {"-1d", 0, true},
		{"1w", 0, true}, {"d", 0, true},
	} {
		got, err := ParseRetention(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseRetention(%q) = %v, %v", tc.in, got, err)
		}
		if !tc.bad {
			if back, _ := ParseRetention(FormatRetention(got)); back != got {
				t.Errorf("FormatRetention(%v) = %q does not read back", got, FormatRetention(got))
			}
		}
	}
}

// TestSoftDropUndropExpire drives a table through soft drop, list, undrop
// under another name, a second drop and expiry, with a fake clock, and a
// replica catalog through the identity records the primary wrote.
func TestSoftDropUndropExpire(t *testing.T) {
	c, obj := newTestCatalog(t)
	ctx := t.Context()
	now := time.Unix(1_700_000_000, 0)
	c.cfg.Now = func() time.Time { return now }
	id := Ident{Namespace: []string{"ns"}, Name: "t"}
	tbl, err := c.CreateTable(ctx, "lake", CreateTableRequest{Ident: id, Schema: unitSchema})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetWarehouseSettings(ctx, "lake", map[string]string{SettingSoftDelete: "1h", "bogus": "x"}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("unknown setting: %v", err)
	}
	if _, err := c.SetWarehouseSettings(ctx, "lake", map[string]string{SettingSoftDelete: "1h"}); err != nil {
		t.Fatal(err)
	}
	if err := c.DropTable(ctx, "lake", id, true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.LoadTable(ctx, "lake", id); !errors.Is(err, ErrNoSuchTable) {
		t.Fatalf("load after soft drop: %v", err)
	}
	if _, err := obj.HeadObject(ctx, "lake", mustKey(t, tbl.MetadataLocation), ""); err != nil {
		t.Fatalf("metadata file gone after soft drop with purge: %v", err)
	}
	rec := readRecord(t, obj, TableRecordKey(id.Namespace, id.Name))
	if !rec.SoftDeleted() || rec.ExpiresMS != now.Add(time.Hour).UnixMilli() {
		t.Fatalf("tombstone = %+v", rec)
	}
	del, err := c.ListDeleted(ctx, "lake", KindTable, id.Namespace)
	if err != nil || len(del) != 1 || del[0].UUID != tbl.UUID || !del[0].Expires.Equal(now.Add(time.Hour)) {
		t.Fatalf("ListDeleted = %+v, %v", del, err)
	}

	// The replica follows the soft-delete tombstone without having held the table.
	rc := newReplicaCatalog(t, obj)
	rc.cfg.Now = c.cfg.Now
	if err := rc.ApplyTombstone(ctx, "lake", rec); err != nil {
		t.Fatal(err)
	}
	if del, _ := rc.ListDeleted(ctx, "lake", KindTable, id.Namespace); len(del) != 1 {
		t.Fatalf("replica ListDeleted = %+v", del)
	}

	back, err := c.Undrop(ctx, "lake", KindTable, id, UndropOptions{As: "t2"})
	if err != nil || back.Ident.Name != "t2" || back.MetadataLocation != tbl.MetadataLocation {
		t.Fatalf("undrop: %+v %v", back, err)
	}
	if _, err := c.LoadTable(ctx, "lake", Ident{Namespace: id.Namespace, Name: "t2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Undrop(ctx, "lake", KindTable, id, UndropOptions{}); !errors.Is(err, ErrNoSuchTable) {
		t.Fatalf("second undrop: %v", err)
	}
	if old := readRecord(t, obj, TableRecordKey(id.Namespace, id.Name)); !old.Deleted || old.SoftDeleted() {
		t.Fatalf("old name's record after undrop --as = %+v", old)
	}
	if err := rc.ApplyTombstone(ctx, "lake", readRecord(t, obj, TableRecordKey(id.Namespace, id.Name))); err != nil {
		t.Fatal(err)
	}
	if del, _ := rc.ListDeleted(ctx, "lake", KindTable, id.Namespace); len(del) != 0 {
		t.Fatalf("replica still lists %+v", del)
	}

	// Drop again and let it expire: the files go, the entry is forgotten.
	id2 := Ident{Namespace: id.Namespace, Name: "t2"}
	if err := c.DropTable(ctx, "lake", id2, false); err != nil {
		t.Fatal(err)
	}
	if n, err := c.ExpireDeleted(ctx, "lake"); err != nil || n != 0 {
		t.Fatalf("expire before the retention: %d %v", n, err)
	}
	now = now.Add(time.Hour)
	if del, _ := c.ListDeleted(ctx, "lake", KindTable, id.Namespace); len(del) != 0 {
		t.Fatalf("expired still listed: %+v", del)
	}
	if _, err := c.Undrop(ctx, "lake", KindTable, id2, UndropOptions{}); !errors.Is(err, ErrNoSuchTable) {
		t.Fatalf("undrop after expiry: %v", err)
	}
	if n, err := c.ExpireDeleted(ctx, "lake"); err != nil || n != 1 {
		t.Fatalf("expire: %d %v", n, err)
	}
	if _, err := obj.HeadObject(ctx, "lake", mustKey(t, tbl.MetadataLocation), ""); !errors.Is(err, objects.ErrObjectNotFound) {
		t.Fatalf("metadata file after expiry: %v", err)
	}
	if r := readRecord(t, obj, TableRecordKey(id2.Namespace, id2.Name)); !r.Deleted || r.SoftDeleted() {
		t.Fatalf("record after expiry = %+v", r)
	}
}

func TestSoftDeleteView(t *testing.T) {
	c, _ := newTestCatalog(t)
	ctx := t.Context()
	if _, err := c.SetWarehouseSettings(ctx, "lake", map[string]string{SettingSoftDelete: "7d"}); err != nil {
		t.Fatal(err)
	}
	id := Ident{Namespace: []string{"ns"}, Name: "v"}
	if _, err := c.CreateView(ctx, "lake", testViewRequest(id)); err != nil {
		t.Fatal(err)
	}
	if err := c.DropView(ctx, "lake", id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.LoadView(ctx, "lake", id); !errors.Is(err, ErrNoSuchView) {
		t.Fatalf("load dropped view: %v", err)
	}
	if _, err := c.Undrop(ctx, "lake", KindView, id, UndropOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.LoadView(ctx, "lake", id); err != nil {
		t.Fatal(err)
	}
}

func mustKey(t *testing.T, loc string) string {
	t.Helper()
	k, err := keyInWarehouse("lake", loc)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// newReplicaCatalog builds a second catalog over its own meta store that
// reads the same object layer, as a replica site reads its replicated copy.
func newReplicaCatalog(t *testing.T, obj *objects.Layer) *Catalog {
	t.Helper()
	c, err := New(meta.NewMem(), obj, Config{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testViewRequest(id Ident) CreateViewRequest {
	v, err := view.NewVersionFromSQL(1, 0, "select 1", []string{"ns"})
	if err != nil {
		panic(err)
	}
	return CreateViewRequest{Ident: id, Schema: unitSchema, ViewVersion: v}
}

// TestExpiryReadsOnlyWhenDue: once a warehouse's soft-deleted entries have
// been read, the next reads wait for the earliest to expire (or a soft
// delete with an earlier end, noted as it is made), so the frequent expiry
// ticks do not read every entry each time; an entry written without the
// note waits for the periodic full read.
func TestExpiryReadsOnlyWhenDue(t *testing.T) {
	c, _ := newTestCatalog(t)
	ctx := t.Context()
	now := time.Unix(1_700_000_000, 0)
	c.cfg.Now = func() time.Time { return now }
	create := func(name string) Ident {
		t.Helper()
		id := Ident{Namespace: []string{"ns"}, Name: name}
		if _, err := c.CreateTable(ctx, "lake", CreateTableRequest{Ident: id, Schema: unitSchema}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	retain := func(r string) {
		t.Helper()
		if _, err := c.SetWarehouseSettings(ctx, "lake", map[string]string{SettingSoftDelete: r}); err != nil {
			t.Fatal(err)
		}
	}
	expire := func(want int) {
		t.Helper()
		if n, err := c.ExpireDeleted(ctx, "lake"); err != nil || n != want {
			t.Fatalf("at %s: expired %d (%v), want %d", now.Format(time.TimeOnly), n, err, want)
		}
	}
	retain("2h")
	long := create("long")
	if err := c.DropTable(ctx, "lake", long, false); err != nil {
		t.Fatal(err)
	}
	expire(0) // read in full: the earliest end is in 2 h
	// A drop with a shorter retention is noted: it expires on time.
	retain("30m")
	short := create("short")
	if err := c.DropTable(ctx, "lake", short, false); err != nil {
		t.Fatal(err)
	}
	now = now.Add(31 * time.Minute)
	expire(1)
	// An entry that reached the store without the note (as a restore
	// might write one) is not read until the full read after 10 minutes.
	hidden := create("hidden")
	e, err := c.getEntry(tableKind, "lake", hidden)
	if err != nil {
		t.Fatal(err)
	}
	b := c.meta.NewBatch()
	data, _ := json.Marshal(deletedEntry{entry: e, DroppedMS: now.UnixMilli(), ExpiresMS: now.UnixMilli()})
	b.Delete(entryKey(tableKind.pfx, "lake", hidden))
	b.Set(deletedKey(tableKind, "lake", hidden, e.UUID), data)
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	expire(0)
	now = now.Add(10 * time.Minute)
	expire(1)
	now = now.Add(2 * time.Hour)
	expire(1) // long
}
