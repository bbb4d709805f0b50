package catalog

import (
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// TestIdempotencyAppliedMarkAndExpiry: a keyed commit marks its key applied
// in its own batch (the answer survives a crash before the edge records
// it); a recorded answer keeps the mark's expiry, is gone after it, and the
// sweep removes it.
func TestIdempotencyAppliedMarkAndExpiry(t *testing.T) {
	c, _ := newTestCatalog(t)
	now := time.Unix(1_800_000_000, 0)
	c.cfg.Now = func() time.Time { return now }
	ctx := t.Context()
	id := Ident{Namespace: []string{"ns"}, Name: "t"}
	if _, err := c.CreateTable(ctx, "lake", CreateTableRequest{Ident: id, Schema: unitSchema}); err != nil {
		t.Fatal(err)
	}
	kctx := WithIdempotencyKey(ctx, "lake", "k1", "POST x")
	tbl, err := c.CommitTable(kctx, "lake", TableCommit{Ident: id,
		Updates: []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"a": "b"})}})
	if err != nil {
		t.Fatal(err)
	}
	a, ok, err := c.Idempotent("lake", "k1")
	if err != nil || !ok || !a.Applied || a.Op != "POST x" || a.RefKind != KindTable || a.RefLocation != tbl.MetadataLocation {
		t.Fatalf("mark after a keyed commit = %+v %v %v, want applied with the metadata file", a, ok, err)
	}
	if _, ok, _ := c.Idempotent("other", "k1"); ok {
		t.Error("a key is visible in another warehouse")
	}
	want := now.Add(30 * time.Minute).UnixMilli()
	now = now.Add(time.Minute)
	if err := c.RecordIdempotent("lake", "k1", IdempotentAnswer{Op: "POST x", Status: 200, RefKind: KindTable, RefLocation: tbl.MetadataLocation}); err != nil {
		t.Fatal(err)
	}
	if a, ok, _ := c.Idempotent("lake", "k1"); !ok || a.Applied || a.ExpiresMS != want {
		t.Fatalf("recorded answer = %+v, want final with the mark's expiry %d", a, want)
	}
	now = now.Add(30 * time.Minute)
	if _, ok, _ := c.Idempotent("lake", "k1"); ok {
		t.Fatal("answer replayed after its lifetime")
	}
	// The next recording sweeps the expired answer and its index keys.
	if err := c.RecordIdempotent("lake", "k2", IdempotentAnswer{Op: "DELETE y", Status: 204}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.meta.Get(idemKey("lake", "k1")); err == nil {
		t.Error("the sweep left an expired answer")
	}
	if a, ok, _ := c.Idempotent("lake", "k2"); !ok || a.Status != 204 {
		t.Errorf("k2 = %+v %v", a, ok)
	}
}
