package rest_test

import (
	"errors"
	"slices"
	"testing"

	icecatalog "github.com/apache/iceberg-go/catalog"
	icerest "github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite/icetest"
)

func (e *env) admin() *adminclient.Client {
	e.t.Helper()
	adm, err := adminclient.New(e.site.URL, adminclient.Credentials{AccessKey: e.site.AccessKey, SecretKey: e.site.SecretKey}, adminclient.Config{})
	if err != nil {
		e.t.Fatal(err)
	}
	return adm
}

// deletedNames lists the names of the soft-deleted tables of ns.
func deletedNames(t *testing.T, adm *adminclient.Client, wh string, ns []string) []adminclient.DeletedEntry {
	t.Helper()
	es, err := adm.ListDeleted(t.Context(), wh, adminclient.KindTable, ns)
	if err != nil {
		t.Fatalf("list deleted: %v", err)
	}
	return es
}

// checkRestored loads id and checks its UUID, its snapshots and its rows.
func checkRestored(t *testing.T, cat *icerest.Catalog, id table.Identifier, uuid string, snapshots []int64, rows []int64) {
	t.Helper()
	tbl, err := cat.LoadTable(t.Context(), id)
	if err != nil {
		t.Fatalf("load %v after undrop: %v", id, err)
	}
	if got := tbl.Metadata().TableUUID().String(); got != uuid {
		t.Errorf("%v: uuid %s, want %s", id, got, uuid)
	}
	var got []int64
	for _, s := range tbl.Metadata().Snapshots() {
		got = append(got, s.SnapshotID)
	}
	if !slices.Equal(got, snapshots) {
		t.Errorf("%v: snapshots %v, want %v", id, got, snapshots)
	}
	if ids := scanIDs(t, tbl); !slices.Equal(ids, rows) {
		t.Errorf("%v: scanned %v, want %v", id, ids, rows)
	}
}

// TestUndropAfterPurgeThroughIcebergGo: with soft_delete on, a table
// dropped with purge requested through iceberg-go is gone for the REST
// catalog but listed as deleted by the admin API; an undrop brings it back
// with both snapshots and every row, and so does an undrop under another
// name after a second drop.
func TestUndropAfterPurgeThroughIcebergGo(t *testing.T) {
	e := newEnv(t)
	adm := e.admin()
	ctx := t.Context()
	wh, err := adm.SetWarehouseSettings(ctx, e.wh, map[string]string{"soft_delete": "7d"})
	if err != nil {
		t.Fatalf("set soft_delete: %v", err)
	}
	t.Logf("warehouse after settings: %+v", wh)
	cat := e.catalog()
	ns := []string{"sales"}
	if err := cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil); err != nil {
		t.Fatal(err)
	}
	id := table.Identifier{"sales", "orders"}
	created, err := cat.CreateTable(ctx, id, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	uuid := created.Metadata().TableUUID().String()
	for _, r := range [][2]int64{{0, 10}, {10, 25}} {
		if _, err := icetest.AppendRetry(ctx, cat, id, r[0], r[1]); err != nil {
			t.Fatal(err)
		}
	}
	before, err := cat.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var snaps []int64
	for _, s := range before.Metadata().Snapshots() {
		snaps = append(snaps, s.SnapshotID)
	}
	if len(snaps) != 2 {
		t.Fatalf("snapshots before the drop: %v, want 2", snaps)
	}
	all := icetest.Seq(0, 25)

	if err := cat.PurgeTable(ctx, id); err != nil {
		t.Fatalf("purge: %v", err)
	}
	if _, err := cat.LoadTable(ctx, id); !errors.Is(err, icecatalog.ErrNoSuchTable) {
		t.Fatalf("load after purge: err = %v, want NoSuchTable", err)
	}
	for ident, err := range cat.ListTables(ctx, table.Identifier{"sales"}) {
		if err != nil {
			t.Fatal(err)
		}
		t.Errorf("listed after purge: %v", ident)
	}
	es := deletedNames(t, adm, e.wh, ns)
	if len(es) != 1 || es[0].Name != "orders" || es[0].UUID != uuid || es[0].Kind != adminclient.KindTable ||
		!slices.Equal(es[0].Namespace, ns) || es[0].MetadataLocation != before.MetadataLocation() ||
		!es[0].Expires.After(es[0].Dropped) {
		t.Fatalf("deleted entries = %+v, want orders %s at %s", es, uuid, before.MetadataLocation())
	}

	res, err := adm.Undrop(ctx, e.wh, adminclient.UndropRequest{Kind: adminclient.KindTable, Namespace: ns, Name: "orders"})
	if err != nil {
		t.Fatalf("undrop: %v", err)
	}
	if res.Name != "orders" || res.UUID != uuid || res.MetadataLocation != before.MetadataLocation() {
		t.Errorf("undrop result = %+v", res)
	}
	checkRestored(t, cat, id, uuid, snaps, all)
	if es := deletedNames(t, adm, e.wh, ns); len(es) != 0 {
		t.Errorf("deleted entries after undrop = %+v", es)
	}
	// A second undrop finds nothing.
	if _, err := adm.Undrop(ctx, e.wh, adminclient.UndropRequest{Kind: adminclient.KindTable, Namespace: ns, Name: "orders"}); err == nil {
		t.Errorf("second undrop succeeded")
	}
	// The restored table takes writes.
	if _, err := icetest.AppendRetry(ctx, cat, id, 25, 30); err != nil {
		t.Fatalf("append after undrop: %v", err)
	}
	after, err := cat.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	snaps = nil
	for _, s := range after.Metadata().Snapshots() {
		snaps = append(snaps, s.SnapshotID)
	}
	all = icetest.Seq(0, 30)

	// undrop --as: drop again (purge requested), restore under a new name.
	if err := cat.PurgeTable(ctx, id); err != nil {
		t.Fatalf("second purge: %v", err)
	}
	res, err = adm.Undrop(ctx, e.wh, adminclient.UndropRequest{Kind: adminclient.KindTable, Namespace: ns, Name: "orders", As: "orders_restored"})
	if err != nil {
		t.Fatalf("undrop --as: %v", err)
	}
	if res.Name != "orders_restored" || res.UUID != uuid {
		t.Errorf("undrop --as result = %+v", res)
	}
	checkRestored(t, cat, table.Identifier{"sales", "orders_restored"}, uuid, snaps, all)
	if _, err := cat.LoadTable(ctx, id); !errors.Is(err, icecatalog.ErrNoSuchTable) {
		t.Errorf("load of the old name after undrop --as: err = %v, want NoSuchTable", err)
	}
	if es := deletedNames(t, adm, e.wh, ns); len(es) != 0 {
		t.Errorf("deleted entries after undrop --as = %+v", es)
	}
	// The old name is free for a new table, whose location does not
	// overlap the restored one's.
	if _, err := cat.CreateTable(ctx, id, testSchema); err != nil {
		t.Errorf("create under the old name: %v", err)
	}
}
