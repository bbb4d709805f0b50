package rest_test

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/view"

	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/testsite/icetest"
)

var testSchema = icetest.Schema

// scanIDs reads every id of the table back through the S3 API.
func scanIDs(t *testing.T, tbl *table.Table) []int64 {
	t.Helper()
	ids, err := icetest.ScanIDs(t.Context(), tbl)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestEndToEndAppendAndScan(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	ns := table.Identifier{"sales", "eu"}
	if err := cat.CreateNamespace(ctx, ns[:1], iceberg.Properties{"owner": "ops"}); err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateNamespace(ctx, ns, nil); err != nil {
		t.Fatal(err)
	}
	id := table.Identifier{"sales", "eu", "orders"}
	tbl, err := cat.CreateTable(ctx, id, testSchema)
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
	// The default location ends in the table's UUID, so that it is the table's alone.
	uuidHex := strings.ReplaceAll(tbl.Metadata().TableUUID().String(), "-", "")
	if got, want := tbl.Location(), "s3://lake/sales/eu/orders-"+uuidHex; got != want {
		t.Errorf("location = %s, want %s", got, want)
	}
	for i := int64(0); i < 3; i++ {
		data := icetest.Rows(i*10, i*10+10)
		tbl, err = tbl.AppendTable(ctx, data, 1024, nil)
		data.Release()
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	if want := tbl.Location() + "/metadata/00003-"; !strings.HasPrefix(tbl.MetadataLocation(), want) {
		t.Errorf("metadata location = %s, want prefix %s", tbl.MetadataLocation(), want)
	}
	reloaded, err := cat.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := scanIDs(t, reloaded); !slices.Equal(got, icetest.Seq(0, 30)) {
		t.Errorf("scanned ids = %v, want 0..29", got)
	}
	// The metadata file the catalog names is a real object in the warehouse.
	key := reloaded.MetadataLocation()[len("s3://lake/"):]
	if _, err := e.getObject(key); err != nil {
		t.Errorf("metadata file %s: %v", key, err)
	}
	// The identity record names the same file and version.
	raw, err := e.getObject(catalog.TableRecordKey([]string{"sales", "eu"}, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := catalog.ParseRecord(raw)
	if err != nil {
		t.Fatal(err)
	}
	if rec.MetadataLocation != reloaded.MetadataLocation() || rec.Version != 3 || rec.Deleted || rec.UUID != reloaded.Metadata().TableUUID().String() {
		t.Errorf("identity record = %+v, want version 3 at %s", rec, reloaded.MetadataLocation())
	}
	var listed []string
	for ident, err := range cat.ListTables(ctx, ns) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, ident[len(ident)-1])
	}
	if !slices.Equal(listed, []string{"orders"}) {
		t.Errorf("tables = %v", listed)
	}
}

func TestConcurrentAppendsNeverLoseAnUpdate(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	if err := cat.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	id := table.Identifier{"ns", "events"}
	if _, err := cat.CreateTable(ctx, id, testSchema); err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 3
	var wg sync.WaitGroup
	var mu sync.Mutex
	retries := 0
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				base := int64(w*100 + i*10)
				n, err := icetest.AppendRetry(ctx, cat, id, base, base+10)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				retries += n
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("append: %v", err)
	}
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(scanIDs(t, tbl)); got != writers*each*10 {
		t.Errorf("rows = %d, want %d (retries %d)", got, writers*each*10, retries)
	}
	if got := len(tbl.Metadata().Snapshots()); got != writers*each {
		t.Errorf("snapshots = %d, want %d", got, writers*each)
	}
	t.Logf("%d conflicts retried", retries)
}

func TestMultiTableTransaction(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	if err := cat.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	a, b := table.Identifier{"ns", "a"}, table.Identifier{"ns", "b"}
	ta, err := cat.CreateTable(ctx, a, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := cat.CreateTable(ctx, b, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	// All or nothing: a stale requirement on b fails the whole transaction.
	err = cat.CommitTransaction(ctx, []table.TableCommit{
		{Identifier: a, Requirements: []table.Requirement{table.AssertTableUUID(ta.Metadata().TableUUID())},
			Updates: []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"k": "1"})}},
		{Identifier: b, Requirements: []table.Requirement{table.AssertCurrentSchemaID(99)},
			Updates: []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"k": "1"})}},
	})
	if !errors.Is(err, table.ErrCommitFailed) {
		t.Fatalf("transaction with a failed requirement: err = %v, want CommitFailed", err)
	}
	if got, _ := cat.LoadTable(ctx, a); got.Properties()["k"] != "" {
		t.Fatalf("table a changed by a failed transaction")
	}
	err = cat.CommitTransaction(ctx, []table.TableCommit{
		{Identifier: a, Requirements: []table.Requirement{table.AssertTableUUID(ta.Metadata().TableUUID())},
			Updates: []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"k": "1"})}},
		{Identifier: b, Requirements: []table.Requirement{table.AssertTableUUID(tb.Metadata().TableUUID())},
			Updates: []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"k": "2"})}},
	})
	if err != nil {
		t.Fatalf("transaction: %v", err)
	}
	for _, c := range []struct {
		id   table.Identifier
		want string
	}{{a, "1"}, {b, "2"}} {
		tbl, err := cat.LoadTable(ctx, c.id)
		if err != nil {
			t.Fatal(err)
		}
		if tbl.Properties()["k"] != c.want {
			t.Errorf("%v: k = %q, want %q", c.id, tbl.Properties()["k"], c.want)
		}
		raw, err := e.getObject(catalog.TableRecordKey([]string{"ns"}, c.id[1]))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := catalog.ParseRecord(raw)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Txn == nil || len(rec.Txn.Members) != 2 || rec.Version != 1 {
			t.Errorf("%v: identity record txn = %+v version %d, want both members at version 1", c.id, rec.Txn, rec.Version)
		}
	}
}

func TestStagedCreateIsInvisibleUntilCommitted(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	if err := cat.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	id := table.Identifier{"ns", "staged"}
	status, body := e.do("POST", "/_iceberg/v1/lake/namespaces/ns/tables",
		`{"name":"staged","stage-create":true,"schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"x","type":"long","required":false}]}}`, true)
	if status != 200 {
		t.Fatalf("stage create: %d %s", status, body)
	}
	if ok, _ := cat.CheckTableExists(ctx, id); ok {
		t.Fatal("a staged table is visible")
	}
	if _, err := e.getObject(catalog.TableRecordKey([]string{"ns"}, "staged")); err == nil {
		t.Fatal("a staged table wrote an identity record")
	}
	// Creating through the client's staged path commits with assert-create.
	tbl, err := cat.CreateTable(ctx, id, testSchema, icecatalog.WithStagedUpdates(
		table.NewSetPropertiesUpdate(iceberg.Properties{"staged": "yes"}),
	))
	if err != nil {
		t.Fatalf("staged create: %v", err)
	}
	if tbl.Properties()["staged"] != "yes" {
		t.Errorf("properties = %v", tbl.Properties())
	}
	if _, err := e.getObject(catalog.TableRecordKey([]string{"ns"}, "staged")); err != nil {
		t.Errorf("committed staged table has no identity record: %v", err)
	}
}

func TestRenameDropAndPurge(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	for _, ns := range []string{"a", "b"} {
		if err := cat.CreateNamespace(ctx, table.Identifier{ns}, nil); err != nil {
			t.Fatal(err)
		}
	}
	tbl, err := cat.CreateTable(ctx, table.Identifier{"a", "t"}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	data := icetest.Rows(0, 5)
	defer data.Release()
	if tbl, err = tbl.AppendTable(ctx, data, 1024, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.RenameTable(ctx, table.Identifier{"a", "t"}, table.Identifier{"b", "t2"}); err != nil {
		t.Fatalf("rename: %v", err)
	}
	old, _ := catalog.ParseRecord(must(e.getObject(catalog.TableRecordKey([]string{"a"}, "t"))))
	moved, _ := catalog.ParseRecord(must(e.getObject(catalog.TableRecordKey([]string{"b"}, "t2"))))
	if !old.Deleted || moved.Deleted || old.UUID != moved.UUID || moved.MetadataLocation != tbl.MetadataLocation() {
		t.Errorf("rename records: old %+v new %+v", old, moved)
	}
	if err := cat.PurgeTable(ctx, table.Identifier{"b", "t2"}); err != nil {
		t.Fatalf("purge: %v", err)
	}
	if ok, _ := cat.CheckTableExists(ctx, table.Identifier{"b", "t2"}); ok {
		t.Error("purged table still exists")
	}
	if _, err := e.getObject(tbl.MetadataLocation()[len("s3://lake/"):]); err == nil {
		t.Error("purge left the metadata file")
	}
	gone, _ := catalog.ParseRecord(must(e.getObject(catalog.TableRecordKey([]string{"b"}, "t2"))))
	if !gone.Deleted || gone.MetadataLocation != tbl.MetadataLocation() {
		t.Errorf("drop tombstone = %+v", gone)
	}
	if err := cat.DropNamespace(ctx, table.Identifier{"a"}); err != nil {
		t.Errorf("drop emptied namespace: %v", err)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestViews(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	if err := cat.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	id := table.Identifier{"ns", "v"}
	version := &view.Version{VersionID: 1, TimestampMS: 1, SchemaID: 0, Summary: view.VersionSummary{"engine-name": "test"},
		Representations: []view.Representation{view.NewRepresentation("SELECT 1", "spark")}, DefaultNamespace: table.Identifier{"ns"}}
	v, err := cat.CreateView(ctx, id, version, testSchema)
	if err != nil {
		t.Fatalf("create view: %v", err)
	}
	if _, err := cat.CreateView(ctx, id, version, testSchema); !errors.Is(err, icecatalog.ErrViewAlreadyExists) {
		t.Errorf("second create: %v", err)
	}
	next := *version
	next.VersionID, next.Representations = 2, []view.Representation{view.NewRepresentation("SELECT 2", "spark")}
	v, err = cat.UpdateView(ctx, id, []view.Requirement{view.AssertViewUUID(v.Metadata().ViewUUID())},
		[]view.Update{view.NewAddViewVersionUpdate(&next), view.NewSetCurrentVersionUpdate(-1)})
	if err != nil {
		t.Fatalf("replace view: %v", err)
	}
	loaded, err := cat.LoadView(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if sql := loaded.Metadata().CurrentVersion().Representations[0].Sql; sql != "SELECT 2" {
		t.Errorf("view sql = %q", sql)
	}
	var names []string
	for ident, err := range cat.ListViews(ctx, table.Identifier{"ns"}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, ident[1])
	}
	if !slices.Equal(names, []string{"v"}) {
		t.Errorf("views = %v", names)
	}
	if _, err := cat.RenameView(ctx, id, table.Identifier{"ns", "v2"}); err != nil {
		t.Fatalf("rename view: %v", err)
	}
	if err := cat.DropView(ctx, table.Identifier{"ns", "v2"}); err != nil {
		t.Fatalf("drop view: %v", err)
	}
	rec, err := catalog.ParseRecord(must(e.getObject(catalog.ViewRecordKey([]string{"ns"}, "v2"))))
	if err != nil || !rec.Deleted || rec.Kind != catalog.KindView || rec.Version != 1 {
		t.Errorf("view tombstone = %+v, %v", rec, err)
	}
}
