package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
)

// newTestCatalog builds a catalog over an in-memory meta store and a real
// object layer, with one warehouse "lake" and namespace "ns".
func newTestCatalog(t *testing.T) (*Catalog, *objects.Layer) {
	t.Helper()
	m := meta.NewMem()
	blobs, err := blob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	obj, err := objects.New(m, blobs, objects.Config{SiteID: "test"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(m, obj, Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, _, err := c.CreateWarehouse(ctx, "lake", CreateWarehouseOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateNamespace(ctx, "lake", []string{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	return c, obj
}

var unitSchema = iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "x", Type: iceberg.PrimitiveTypes.Int64})

func readRecord(t *testing.T, obj *objects.Layer, key string) Record {
	t.Helper()
	v, err := obj.HeadObject(context.Background(), "lake", key, "")
	if err != nil {
		t.Fatalf("identity record %s: %v", key, err)
	}
	_, rc, err := obj.GetObject(context.Background(), "lake", key, "", 0, v.Size)
	if err != nil {
		t.Fatalf("identity record %s: %v", key, err)
	}
	defer rc.Close()
	data, _ := io.ReadAll(rc)
	r, err := ParseRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWarehouseLifecycle(t *testing.T) {
	c, obj := newTestCatalog(t)
	ctx := t.Context()
	b, _ := obj.Bucket(ctx, "lake")
	if !b.Warehouse || b.Versioning != objects.VersioningEnabled {
		t.Fatalf("warehouse bucket = %+v", b)
	}
	if _, _, err := c.CreateWarehouse(ctx, "lake", CreateWarehouseOptions{}); !errors.Is(err, ErrWarehouseExists) {
		t.Errorf("create twice: %v", err)
	}
	if _, changed, err := c.CreateWarehouse(ctx, "lake", CreateWarehouseOptions{IgnoreExisting: true}); err != nil || changed {
		t.Errorf("ignore existing: %v %v", changed, err)
	}
	if err := obj.CreateBucket(ctx, "plain"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.CreateWarehouse(ctx, "plain", CreateWarehouseOptions{}); !errors.Is(err, ErrBucketNotWarehouse) {
		t.Errorf("over plain bucket: %v", err)
	}
	if _, changed, err := c.CreateWarehouse(ctx, "plain", CreateWarehouseOptions{UpgradeExisting: true}); err != nil || !changed {
		t.Errorf("upgrade: %v %v", changed, err)
	}
	if err := c.RemoveWarehouse(ctx, "lake"); !errors.Is(err, ErrWarehouseNotEmpty) {
		t.Errorf("remove non-empty: %v", err)
	}
	if err := c.RemoveWarehouse(ctx, "plain"); err != nil {
		t.Errorf("remove: %v", err)
	}
	if _, err := c.Warehouse(ctx, "plain"); !errors.Is(err, ErrNoSuchWarehouse) {
		t.Errorf("removed warehouse: %v", err)
	}
	if _, err := c.CreateNamespace(ctx, "plain", []string{"x"}, nil); !errors.Is(err, ErrNoSuchWarehouse) {
		t.Errorf("namespace in a plain bucket: %v", err)
	}
}

func TestNamespacesNestedAndPaged(t *testing.T) {
	c, obj := newTestCatalog(t)
	ctx := t.Context()
	for i := 0; i < 5; i++ {
		if _, err := c.CreateNamespace(ctx, "lake", []string{"ns", fmt.Sprintf("c%d", i)}, map[string]string{"i": fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CreateNamespace(ctx, "lake", []string{"ns", "c0", "deep"}, nil); err != nil {
		t.Fatal(err)
	}
	var got [][]string
	page := Page{Size: 2}
	for {
		nss, next, err := c.ListNamespaces(ctx, "lake", []string{"ns"}, page)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, nss...)
		if next == "" {
			break
		}
		page.Token = next
	}
	if len(got) != 5 || got[0][1] != "c0" || got[4][1] != "c4" {
		t.Errorf("children = %v", got)
	}
	top, _, _ := c.ListNamespaces(ctx, "lake", nil, Page{})
	if len(top) != 1 {
		t.Errorf("top level = %v", top)
	}
	if err := c.DropNamespace(ctx, "lake", []string{"ns", "c0"}); !errors.Is(err, ErrNamespaceNotEmpty) {
		t.Errorf("drop with child: %v", err)
	}
	if err := c.DropNamespace(ctx, "lake", []string{"ns", "c1"}); err != nil {
		t.Fatal(err)
	}
	if r := readRecord(t, obj, NamespaceRecordKey([]string{"ns", "c1"})); !r.Deleted || r.Properties["i"] != "1" {
		t.Errorf("namespace tombstone = %+v", r)
	}
	sum, err := c.UpdateNamespace(ctx, "lake", []string{"ns", "c2"}, []string{"i", "zz"}, map[string]string{"n": "1"})
	if err != nil || !slices.Equal(sum.Removed, []string{"i"}) || !slices.Equal(sum.Missing, []string{"zz"}) {
		t.Errorf("update = %+v, %v", sum, err)
	}
	if _, err := c.CreateNamespace(ctx, "lake", []string{"bad\x1flevel"}, nil); !errors.Is(err, ErrInvalidIdentifier) {
		t.Errorf("control character: %v", err)
	}
}

func TestConcurrentCommitsSerialise(t *testing.T) {
	c, _ := newTestCatalog(t)
	ctx := t.Context()
	id := Ident{Namespace: []string{"ns"}, Name: "t"}
	if _, err := c.CreateTable(ctx, "lake", CreateTableRequest{Ident: id, Schema: unitSchema}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	conflicts := 0
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; {
				cur, err := c.LoadTable(ctx, "lake", id)
				if err != nil {
					t.Error(err)
					return
				}
				md, _ := table.ParseMetadataBytes(cur.MetadataJSON)
				n := len(md.Properties())
				// Optimistic: require that the property count is what we read.
				_, err = c.CommitTable(ctx, "lake", TableCommit{Ident: id,
					Requirements: []table.Requirement{&propsCount{n: n}},
					Updates:      []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{fmt.Sprintf("w%d-%d", w, i): "x"})}})
				if errors.Is(err, ErrCommitFailed) {
					mu.Lock()
					conflicts++
					mu.Unlock()
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				i++
			}
		}()
	}
	wg.Wait()
	cur, err := c.LoadTable(ctx, "lake", id)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := table.ParseMetadataBytes(cur.MetadataJSON)
	if got := len(md.Properties()); got != writers*each || cur.Version != writers*each {
		t.Errorf("properties = %d, version = %d, want %d (conflicts %d)", got, cur.Version, writers*each, conflicts)
	}
}

// propsCount requires the table to have exactly n properties: a stand-in
// for a snapshot requirement that any concurrent commit invalidates.
type propsCount struct{ n int }

func (p *propsCount) Validate(md table.Metadata) error {
	if md == nil || len(md.Properties()) != p.n {
		return errors.New("property count changed")
	}
	return nil
}
func (p *propsCount) GetType() string { return "assert-props-count" }

func TestTransactionAllOrNothing(t *testing.T) {
	c, obj := newTestCatalog(t)
	ctx := t.Context()
	a, b := Ident{Namespace: []string{"ns"}, Name: "a"}, Ident{Namespace: []string{"ns"}, Name: "b"}
	for _, id := range []Ident{a, b} {
		if _, err := c.CreateTable(ctx, "lake", CreateTableRequest{Ident: id, Schema: unitSchema}); err != nil {
			t.Fatal(err)
		}
	}
	set := []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"k": "v"})}
	_, err := c.CommitTransaction(ctx, "lake", []TableCommit{
		{Ident: a, Updates: set},
		{Ident: b, Requirements: []table.Requirement{table.AssertCurrentSchemaID(42)}, Updates: set},
	})
	if !errors.Is(err, ErrCommitFailed) {
		t.Fatalf("err = %v", err)
	}
	if ta, _ := c.LoadTable(ctx, "lake", a); ta.Version != 0 {
		t.Errorf("a moved to version %d in a failed transaction", ta.Version)
	}
	out, err := c.CommitTransaction(ctx, "lake", []TableCommit{{Ident: a, Updates: set}, {Ident: b, Updates: set},
		{Ident: a, Updates: []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"k2": "v"})}}})
	if err != nil || len(out) != 2 || out[0].Version != 1 || out[1].Version != 1 {
		t.Fatalf("transaction = %+v, %v", out, err)
	}
	if len(out[0].Metadata.Properties()) != 2 {
		t.Errorf("two changes to a in one transaction: %v", out[0].Metadata.Properties())
	}
	r := readRecord(t, obj, TableRecordKey(a.Namespace, a.Name))
	if r.Txn == nil || len(r.Txn.Members) != 2 || r.Version != 1 {
		t.Errorf("txn record = %+v", r)
	}
}

func TestCreateChecksAndStagedCreate(t *testing.T) {
	c, obj := newTestCatalog(t)
	ctx := t.Context()
	id := Ident{Namespace: []string{"ns"}, Name: "t"}
	if _, err := c.CreateTable(ctx, "lake", CreateTableRequest{Ident: id, Schema: unitSchema, Location: "s3://elsewhere/t"}); !errors.Is(err, ErrInvalidLocation) {
		t.Errorf("foreign location: %v", err)
	}
	if _, err := c.CreateTable(ctx, "lake", CreateTableRequest{Ident: Ident{Namespace: []string{"nope"}, Name: "t"}, Schema: unitSchema}); !errors.Is(err, ErrNoSuchNamespace) {
		t.Errorf("missing namespace: %v", err)
	}
	st, err := c.CreateTable(ctx, "lake", CreateTableRequest{Ident: id, Schema: unitSchema, Stage: true})
	if err != nil || st.MetadataLocation != "" {
		t.Fatalf("stage: %+v %v", st, err)
	}
	if err := c.TableExists(ctx, "lake", id); !errors.Is(err, ErrNoSuchTable) {
		t.Errorf("staged table visible: %v", err)
	}
	if _, err := obj.HeadObject(ctx, "lake", TableRecordKey(id.Namespace, id.Name), ""); !errors.Is(err, objects.ErrObjectNotFound) {
		t.Errorf("staged table wrote a record: %v", err)
	}
	md := st.Metadata
	tbl, err := c.CommitTable(ctx, "lake", TableCommit{Ident: id, Requirements: []table.Requirement{table.AssertCreate()},
		Updates: []table.Update{
			table.NewAssignUUIDUpdate(md.TableUUID()), table.NewUpgradeFormatVersionUpdate(md.Version()),
			table.NewAddSchemaUpdate(md.CurrentSchema()), table.NewSetCurrentSchemaUpdate(-1),
			table.NewAddPartitionSpecUpdate(iceberg.UnpartitionedSpec, true), table.NewSetDefaultSpecUpdate(-1),
			table.NewAddSortOrderUpdate(&table.UnsortedSortOrder), table.NewSetDefaultSortOrderUpdate(-1),
			table.NewSetLocationUpdate(md.Location()),
		}})
	if err != nil {
		t.Fatalf("commit staged: %v", err)
	}
	if tbl.Version != 0 || tbl.UUID != md.TableUUID().String() {
		t.Errorf("committed staged table = %+v", tbl)
	}
	if r := readRecord(t, obj, TableRecordKey(id.Namespace, id.Name)); r.MetadataLocation != tbl.MetadataLocation {
		t.Errorf("record = %+v", r)
	}
	if _, err := c.CommitTable(ctx, "lake", TableCommit{Ident: id, Requirements: []table.Requirement{table.AssertCreate()}}); !errors.Is(err, ErrCommitFailed) {
		t.Errorf("assert-create on an existing table: %v", err)
	}
	if _, err := c.CreateView(ctx, "lake", CreateViewRequest{Ident: id, Schema: unitSchema}); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("view without version: %v", err)
	}
	// A second name for the live table's metadata file would share its
	// location; once the table is dropped (not purged) the file registers.
	copyID := Ident{Namespace: []string{"ns"}, Name: "copy"}
	if _, err := c.RegisterTable(ctx, "lake", copyID, tbl.MetadataLocation, RegisterOptions{}); !errors.Is(err, ErrLocationInUse) {
		t.Errorf("register a live table's metadata: %v", err)
	}
	if err := c.DropTable(ctx, "lake", id, false); err != nil {
		t.Fatal(err)
	}
	reg, err := c.RegisterTable(ctx, "lake", copyID, tbl.MetadataLocation, RegisterOptions{})
	if err != nil || reg.Version != 0 || reg.MetadataLocation != tbl.MetadataLocation {
		t.Errorf("register = %+v, %v", reg, err)
	}
}

func TestListTablesLarge(t *testing.T) {
	c, _ := newTestCatalog(t)
	ctx := t.Context()
	const n = 300
	for i := 0; i < n; i++ {
		if _, err := c.CreateTable(ctx, "lake", CreateTableRequest{Ident: Ident{Namespace: []string{"ns"}, Name: fmt.Sprintf("t%04d", i)}, Schema: unitSchema}); err != nil {
			t.Fatal(err)
		}
	}
	all, next, err := c.ListTables(ctx, "lake", []string{"ns"}, Page{})
	if err != nil || next != "" || len(all) != n {
		t.Fatalf("list = %d, %q, %v", len(all), next, err)
	}
	var paged []Ident
	p := Page{Size: 64}
	for {
		ids, next, err := c.ListTables(ctx, "lake", []string{"ns"}, p)
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, ids...)
		if next == "" {
			break
		}
		p.Token = next
	}
	if len(paged) != n || paged[n-1].Name != "t0299" {
		t.Errorf("paged = %d", len(paged))
	}
	st, err := c.Stats(ctx)
	if err != nil || st.Tables != n || st.Namespaces != 1 || st.Warehouses != 1 {
		t.Errorf("stats = %+v, %v", st, err)
	}
}

func TestMetadataLogIsTrimmed(t *testing.T) {
	c, _ := newTestCatalog(t)
	ctx := t.Context()
	id := Ident{Namespace: []string{"ns"}, Name: "t"}
	if _, err := c.CreateTable(ctx, "lake", CreateTableRequest{Ident: id, Schema: unitSchema,
		Properties: map[string]string{table.MetadataPreviousVersionsMaxKey: "5"}}); err != nil {
		t.Fatal(err)
	}
	var last *Table
	for i := 0; i < 12; i++ {
		var err error
		last, err = c.CommitTable(ctx, "lake", TableCommit{Ident: id,
			Updates: []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"i": fmt.Sprint(i)})}})
		if err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for range last.Metadata.PreviousFiles() {
		n++
	}
	if n != 5 || last.Version != 12 {
		t.Errorf("metadata log holds %d entries at version %d, want 5", n, last.Version)
	}
}
