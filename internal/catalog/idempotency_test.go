package catalog

import (
	"bytes"
	"encoding/binary"
	"strings"
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
	a, ok, err := c.Idempotent(ctx, "lake", "k1")
	if err != nil || !ok || !a.Applied || a.Op != "POST x" || a.RefKind != KindTable || a.RefLocation != tbl.MetadataLocation {
		t.Fatalf("mark after a keyed commit = %+v %v %v, want applied with the metadata file", a, ok, err)
	}
	if _, ok, _ := c.Idempotent(ctx, "other", "k1"); ok {
		t.Error("a key is visible in another warehouse")
	}
	want := now.Add(30 * time.Minute).UnixMilli()
	now = now.Add(time.Minute)
	if err := c.RecordIdempotent(ctx, "lake", "k1", IdempotentAnswer{Op: "POST x", Status: 200, RefKind: KindTable, RefLocation: tbl.MetadataLocation}); err != nil {
		t.Fatal(err)
	}
	if a, ok, _ := c.Idempotent(ctx, "lake", "k1"); !ok || a.Applied || a.ExpiresMS != want {
		t.Fatalf("recorded answer = %+v, want final with the mark's expiry %d", a, want)
	}
	now = now.Add(30 * time.Minute)
	if _, ok, _ := c.Idempotent(ctx, "lake", "k1"); ok {
		t.Fatal("answer replayed after its lifetime")
	}
	// The next recording sweeps the expired answer and its index keys.
	if err := c.RecordIdempotent(ctx, "lake", "k2", IdempotentAnswer{Op: "DELETE y", Status: 204}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.meta.Get(idemKey("lake", "k1")); err == nil {
		t.Error("the sweep left an expired answer")
	}
	if a, ok, _ := c.Idempotent(ctx, "lake", "k2"); !ok || a.Status != 204 {
		t.Errorf("k2 = %+v %v", a, ok)
	}
}

// TestReplicatedIdempotencyAnswer: a key recorded on another site (only its
// replicated object is here) is honoured when this catalog holds the table
// version it names, and not when the change did not reach this site; an
// expired one never is.
func TestReplicatedIdempotencyAnswer(t *testing.T) {
	c, _ := newTestCatalog(t)
	ctx := t.Context()
	id := Ident{Namespace: []string{"ns"}, Name: "t"}
	tbl, err := c.CreateTable(ctx, "lake", CreateTableRequest{Ident: id, Schema: unitSchema})
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(time.Hour).UnixMilli()
	ahead := strings.Replace(tbl.MetadataLocation, "/00000-", "/00007-", 1)
	// A file of the same version number that this catalog never had (a
	// version discarded by a rebuild, say).
	other := tbl.MetadataLocation[:strings.LastIndex(tbl.MetadataLocation, "/")] + "/00000-0b4f1d0e-0000-4000-8000-000000000000.metadata.json"
	for name, tc := range map[string]struct {
		a    IdempotentAnswer
		want bool
	}{
		"version here":     {IdempotentAnswer{Op: "POST c", Applied: true, RefKind: KindTable, RefLocation: tbl.MetadataLocation, ExpiresMS: exp}, true},
		"version not here": {IdempotentAnswer{Op: "POST c", Applied: true, RefKind: KindTable, RefLocation: ahead, ExpiresMS: exp}, false},
		"not this version": {IdempotentAnswer{Op: "POST c", Applied: true, RefKind: KindTable, RefLocation: other, ExpiresMS: exp}, false},
		// A drop, a namespace change: nothing to check here, so the retry
		// runs (it cannot apply twice).
		"plain answer": {IdempotentAnswer{Op: "DELETE d", Status: 204, ExpiresMS: exp}, false},
		// A multi-table commit holds only with every table's version.
		"transaction here":   {IdempotentAnswer{Op: "POST x", Status: 204, Tables: []string{tbl.MetadataLocation}, ExpiresMS: exp}, true},
		"transaction partly": {IdempotentAnswer{Op: "POST x", Status: 204, Tables: []string{tbl.MetadataLocation, ahead}, ExpiresMS: exp}, false},
		"expired":            {IdempotentAnswer{Op: "DELETE d", Status: 204, ExpiresMS: time.Now().Add(-time.Second).UnixMilli()}, false},
	} {
		key := "k-" + strings.ReplaceAll(name, " ", "-")
		if err := c.putReplicated(ctx, "lake", key, tc.a); err != nil {
			t.Fatal(err)
		}
		a, ok, err := c.Idempotent(ctx, "lake", key)
		if err != nil || ok != tc.want || (ok && a.Op != tc.a.Op) {
			t.Errorf("%s: %+v %v %v, want found=%t", name, a, ok, err, tc.want)
		}
	}
}

// TestIdempotencySweepGoesOnFromItsCursor: a sweep starts where the last
// one ended, not at the expiry index's first key (whose removed keys'
// tombstones it would step over at every keyed mutation); an answer
// indexed below the cursor after it passed is still swept, once the sweep
// starts again from the first key.
func TestIdempotencySweepGoesOnFromItsCursor(t *testing.T) {
	c, _ := newTestCatalog(t)
	now := time.Unix(1_800_000_000, 0)
	c.cfg.Now = func() time.Time { return now }
	ctx := t.Context()
	record := func(key string) {
		t.Helper()
		if err := c.RecordIdempotent(ctx, "lake", key, IdempotentAnswer{Op: "DELETE y", Status: 204}); err != nil {
			t.Fatal(err)
		}
	}
	stored := func(key string) bool {
		t.Helper()
		_, err := c.meta.Get(idemKey("lake", key))
		return err == nil
	}
	record("a1")
	record("a2")
	now = now.Add(c.cfg.IdempotencyLifetime + time.Minute)
	record("b1")
	if stored("a1") || stored("a2") {
		t.Fatal("expired answers not swept")
	}
	from := c.idemSweep.start(now, []byte(pfxIdemExpiry))
	if want := binary.BigEndian.AppendUint64([]byte(pfxIdemExpiry), uint64(now.UnixMilli())); !bytes.Equal(from, want) {
		t.Fatalf("cursor %x after sweeping everything expired, want %x", from, want)
	}
	// An answer indexed below the cursor (a replicated one, its expiry
	// from a clock behind this one) waits for the sweep's restart.
	b := c.meta.NewBatch()
	if err := putIdempotent(b, "lake", "late", IdempotentAnswer{Op: "DELETE y", Status: 204, ExpiresMS: now.Add(-time.Hour).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	record("b2")
	if !stored("late") {
		t.Fatal("the sweep started again from the first key before its time")
	}
	now = now.Add(sweepRestart + time.Minute)
	record("b3")
	if stored("late") {
		t.Fatal("an answer below the cursor was never swept")
	}
	if !stored("b3") {
		t.Fatal("the answer just recorded was swept")
	}
}

// TestSweepCursorNeverMovesBack: advance keeps the highest key; rewind
// and a cursor older than sweepRestart start from the first key.
func TestSweepCursorNeverMovesBack(t *testing.T) {
	var s sweepCursor
	t0 := time.Unix(1_800_000_000, 0)
	first := []byte("c/x/")
	if got := string(s.start(t0, first)); got != "c/x/" {
		t.Fatalf("unset cursor starts at %q", got)
	}
	s.advance([]byte("c/x/5"))
	s.advance([]byte("c/x/3"))
	if got := string(s.start(t0, first)); got != "c/x/5" {
		t.Fatalf("cursor %q, want c/x/5", got)
	}
	if got := string(s.start(t0.Add(sweepRestart+time.Second), first)); got != "c/x/" {
		t.Fatalf("old cursor starts at %q, want the first key", got)
	}
	s.advance([]byte("c/x/7"))
	s.rewind()
	if got := string(s.start(t0, first)); got != "c/x/" {
		t.Fatalf("rewound cursor starts at %q", got)
	}
}
