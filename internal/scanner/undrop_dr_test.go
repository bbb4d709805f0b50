package scanner_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
	"github.com/twinlake/twinlake/internal/testsite/icetest"
)

// TestUndropAfterFailover: with soft_delete on the primary's warehouse, a
// table verified on the replica and then dropped (purge requested) on the
// primary becomes a soft-deleted entry on the replica too; after a
// failover, the promoted site undrops it and serves its rows.
func TestUndropAfterFailover(t *testing.T) {
	p := newDRPair(t, tablesSettings)
	ctx := context.Background()
	if _, err := p.admin(p.primary).SetWarehouseSettings(ctx, p.warehous, map[string]string{"soft_delete": "7d"}); err != nil {
		t.Fatalf("set soft_delete: %v", err)
	}
	cat := p.catalog(p.primary)
	id := table.Identifier{"ns", "t"}
	created := newTable(t, cat, id, nil)
	uuid := created.Metadata().TableUUID().String()
	for _, r := range [][2]int64{{0, 10}, {10, 17}} {
		if _, err := icetest.AppendRetry(ctx, cat, id, r[0], r[1]); err != nil {
			t.Fatal(err)
		}
	}
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	version := metadataVersion(tbl)
	waitVerified(t, p.replica, "ns", "t", version, 20*time.Second)

	if err := cat.PurgeTable(ctx, id); err != nil {
		t.Fatalf("purge on the primary: %v", err)
	}
	replicaAdmin := p.admin(p.replica)
	testsite.Eventually(t, 20*time.Second, func() error {
		es, err := replicaAdmin.ListDeleted(ctx, p.warehous, adminclient.KindTable, []string{"ns"})
		if err != nil {
			return err
		}
		if len(es) != 1 || es[0].Name != "t" || es[0].UUID != uuid || es[0].MetadataLocation != tbl.MetadataLocation() {
			return fmt.Errorf("deleted on the replica: %+v", es)
		}
		return nil
	})
	// Undrop is refused on a replica.
	if _, err := replicaAdmin.Undrop(ctx, p.warehous, adminclient.UndropRequest{Kind: adminclient.KindTable, Namespace: []string{"ns"}, Name: "t"}); err == nil {
		t.Fatal("undrop on the replica succeeded")
	} else {
		t.Logf("undrop on the replica: %v", err)
	}
	testsite.Eventually(t, 15*time.Second, func() error { return testsite.Drained(p.primary.Site) })

	p.failover()
	promoted := p.catalog(p.replica)
	if _, err := promoted.LoadTable(ctx, id); !errors.Is(err, icecatalog.ErrNoSuchTable) {
		t.Fatalf("load on the promoted site before undrop: err = %v, want NoSuchTable", err)
	}
	res, err := replicaAdmin.Undrop(ctx, p.warehous, adminclient.UndropRequest{Kind: adminclient.KindTable, Namespace: []string{"ns"}, Name: "t"})
	if err != nil {
		t.Fatalf("undrop on the promoted site: %v", err)
	}
	if res.UUID != uuid || res.MetadataLocation != tbl.MetadataLocation() {
		t.Errorf("undrop result = %+v, want %s at %s", res, uuid, tbl.MetadataLocation())
	}
	restored, err := promoted.LoadTable(ctx, id)
	if err != nil {
		t.Fatalf("load on the promoted site after undrop: %v", err)
	}
	if got := len(restored.Metadata().Snapshots()); got != 2 {
		t.Errorf("snapshots after undrop: %d, want 2", got)
	}
	if ids := scan(t, promoted, id); !slices.Equal(ids, icetest.Seq(0, 17)) {
		t.Errorf("rows on the promoted site: %v, want 0..16", ids)
	}
	if es, err := replicaAdmin.ListDeleted(ctx, p.warehous, adminclient.KindTable, []string{"ns"}); err != nil || len(es) != 0 {
		t.Errorf("deleted after undrop: %+v, %v", es, err)
	}
	// The promoted site takes writes on the restored table.
	if _, err := icetest.AppendRetry(ctx, promoted, id, 17, 20); err != nil {
		t.Fatalf("append after undrop: %v", err)
	}
	if ids := scan(t, promoted, id); !slices.Equal(ids, icetest.Seq(0, 20)) {
		t.Errorf("rows after the append: %v, want 0..19", ids)
	}
}

// TestUndropOnPrimaryReplicates: a table soft-deleted and then undropped
// under another name on the primary is live again on the replica under
// the new name, verified at its version and readable in full, and no
// longer listed as deleted there.
func TestUndropOnPrimaryReplicates(t *testing.T) {
	p := newDRPair(t, tablesSettings)
	ctx := context.Background()
	adm := p.admin(p.primary)
	if _, err := adm.SetWarehouseSettings(ctx, p.warehous, map[string]string{"soft_delete": "1d"}); err != nil {
		t.Fatalf("set soft_delete: %v", err)
	}
	cat := p.catalog(p.primary)
	id := table.Identifier{"ns", "t"}
	newTable(t, cat, id, nil)
	if _, err := icetest.AppendRetry(ctx, cat, id, 0, 12); err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	version := metadataVersion(tbl)
	waitVerified(t, p.replica, "ns", "t", version, 20*time.Second)
	if err := cat.DropTable(ctx, id); err != nil {
		t.Fatal(err)
	}
	replicaAdmin := p.admin(p.replica)
	deleted := func(want int) error {
		es, err := replicaAdmin.ListDeleted(ctx, p.warehous, adminclient.KindTable, []string{"ns"})
		if err != nil {
			return err
		}
		if len(es) != want {
			return fmt.Errorf("deleted on the replica: %+v, want %d", es, want)
		}
		return nil
	}
	testsite.Eventually(t, 20*time.Second, func() error { return deleted(1) })
	if _, err := adm.Undrop(ctx, p.warehous, adminclient.UndropRequest{Kind: adminclient.KindTable, Namespace: []string{"ns"}, Name: "t", As: "u"}); err != nil {
		t.Fatalf("undrop on the primary: %v", err)
	}
	waitVerified(t, p.replica, "ns", "u", version, 20*time.Second)
	testsite.Eventually(t, 20*time.Second, func() error { return deleted(0) })
	if ids := scan(t, p.catalog(p.replica), table.Identifier{"ns", "u"}); !slices.Equal(ids, icetest.Seq(0, 12)) {
		t.Errorf("rows of ns.u on the replica: %v, want 0..11", ids)
	}
	if _, err := p.catalog(p.replica).LoadTable(ctx, id); !errors.Is(err, icecatalog.ErrNoSuchTable) {
		t.Errorf("load of ns.t on the replica: err = %v, want NoSuchTable", err)
	}
	if e, ok := entry(p.replica, "ns", "t"); ok && e.Status != "Deleted" {
		t.Errorf("ns.t on the replica's scanner: %+v", e)
	}
}
