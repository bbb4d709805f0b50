package rest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	icerest "github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/testsite/icetest"
)

// referencedKeys walks, client side, every file a table's metadata names —
// the current metadata file and its log, each snapshot's manifest list,
// manifests, data and delete files, statistics files — and returns their
// warehouse keys, sorted.
func referencedKeys(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	ctx := t.Context()
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	md := tbl.Metadata()
	locs := []string{tbl.MetadataLocation()}
	for l := range md.PreviousFiles() {
		locs = append(locs, l.MetadataFile)
	}
	for s := range md.Statistics() {
		locs = append(locs, s.StatisticsPath)
	}
	for s := range md.PartitionStatistics() {
		locs = append(locs, s.StatisticsPath)
	}
	for _, snap := range md.Snapshots() {
		locs = append(locs, snap.ManifestList)
		manifests, err := snap.Manifests(fs)
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range manifests {
			locs = append(locs, mf.FilePath())
			for en, err := range mf.Entries(fs, false) {
				if err != nil {
					t.Fatal(err)
				}
				locs = append(locs, en.DataFile().FilePath())
			}
		}
	}
	keys := make([]string, 0, len(locs))
	for _, l := range locs {
		k, ok := strings.CutPrefix(l, "s3://lake/")
		if !ok {
			t.Fatalf("%s is outside the warehouse", l)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// exists reports whether the latest version of key is an object (not a
// delete marker).
func (e *env) exists(key string) bool {
	_, err := e.s3.StatObject(e.t.Context(), e.wh, key, minio.StatObjectOptions{})
	return err == nil
}

// putObject writes an object into the warehouse through the S3 API.
func (e *env) putObject(key string, body []byte) {
	e.t.Helper()
	_, err := e.s3.PutObject(e.t.Context(), e.wh, key, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
}

// checkPurge fails the test unless every key of kept exists and no key of
// gone does.
func checkPurge(t *testing.T, e *env, kept, gone []string) {
	t.Helper()
	for _, k := range kept {
		if !e.exists(k) {
			t.Errorf("purge deleted %s, which it must keep", k)
		}
	}
	for _, k := range gone {
		if e.exists(k) {
			t.Errorf("purge left %s", k)
		}
	}
}

// withRows creates a table and appends rows ids from..to-1 to it.
func withRows(t *testing.T, cat *icerest.Catalog, id table.Identifier, from, to int64, opts ...icecatalog.CreateTableOpt) *table.Table {
	t.Helper()
	tbl, err := cat.CreateTable(t.Context(), id, testSchema, opts...)
	if err != nil {
		t.Fatalf("create %v: %v", id, err)
	}
	data := icetest.Rows(from, to)
	defer data.Release()
	tbl, err = tbl.AppendTable(t.Context(), data, 1024, nil)
	if err != nil {
		t.Fatalf("append to %v: %v", id, err)
	}
	return tbl
}

// checkScan fails the test unless the table loads and scans ids from..to-1.
func checkScan(t *testing.T, cat *icerest.Catalog, id table.Identifier, from, to int64) {
	t.Helper()
	tbl, err := cat.LoadTable(t.Context(), id)
	if err != nil {
		t.Fatalf("load %v: %v", id, err)
	}
	ids, err := icetest.ScanIDs(t.Context(), tbl)
	if err != nil {
		t.Fatalf("scan %v: %v", id, err)
	}
	if !slices.Equal(ids, icetest.Seq(from, to)) {
		t.Errorf("%v scans %v, want %d..%d", id, ids, from, to-1)
	}
}

func createNamespaces(t *testing.T, cat *icerest.Catalog, nss ...table.Identifier) {
	t.Helper()
	for _, ns := range nss {
		if err := cat.CreateNamespace(t.Context(), ns, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// A table renamed away keeps its location; a new table of the old name must
// not share it, and purging the new one must leave the renamed one whole.
func TestPurgeKeepsTheTableRenamedAwayFromItsName(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	createNamespaces(t, cat, table.Identifier{"ns"})
	x, y := table.Identifier{"ns", "x"}, table.Identifier{"ns", "y"}
	withRows(t, cat, x, 0, 5)
	if _, err := cat.RenameTable(ctx, x, y); err != nil {
		t.Fatal(err)
	}
	renamed, err := cat.LoadTable(ctx, y)
	if err != nil {
		t.Fatal(err)
	}
	fresh := withRows(t, cat, x, 100, 103)
	if fresh.Location() == renamed.Location() {
		t.Errorf("the new %v shares the location %s of the renamed table", x, fresh.Location())
	}
	// A statistics file is one of the files a purge deletes.
	statsKey := strings.TrimPrefix(fresh.Location(), "s3://lake/") + "/metadata/stats.puffin"
	e.putObject(statsKey, []byte("PFA1"))
	_, _, err = cat.CommitTable(ctx, x, nil, []table.Update{table.NewSetStatisticsUpdate(table.StatisticsFile{
		SnapshotID: fresh.CurrentSnapshot().SnapshotID, StatisticsPath: "s3://lake/" + statsKey, FileSizeInBytes: 4,
	})})
	if err != nil {
		t.Fatal(err)
	}
	if fresh, err = cat.LoadTable(ctx, x); err != nil {
		t.Fatal(err)
	}
	kept, gone := referencedKeys(t, renamed), referencedKeys(t, fresh)
	if !slices.Contains(gone, statsKey) {
		t.Fatalf("the statistics file is not among the table's files: %v", gone)
	}
	if err := cat.PurgeTable(ctx, x); err != nil {
		t.Fatalf("purge: %v", err)
	}
	checkPurge(t, e, kept, gone)
	checkScan(t, cat, y, 0, 5)
}

// A table and a namespace may share a name; purging the table ns.a must
// leave the tables of namespace ns.a whole.
func TestPurgeKeepsTheTablesOfANamespaceOfTheSameName(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	createNamespaces(t, cat, table.Identifier{"ns"}, table.Identifier{"ns", "a"})
	outer := withRows(t, cat, table.Identifier{"ns", "a"}, 0, 5)
	inner := withRows(t, cat, table.Identifier{"ns", "a", "t"}, 10, 13)
	kept, gone := referencedKeys(t, inner), referencedKeys(t, outer)
	if err := cat.PurgeTable(ctx, table.Identifier{"ns", "a"}); err != nil {
		t.Fatalf("purge: %v", err)
	}
	checkPurge(t, e, kept, gone)
	checkScan(t, cat, table.Identifier{"ns", "a", "t"}, 10, 13)
}

// A table at an explicit location that holds another table's location is
// refused; and a purge deletes only the files the table's metadata names,
// never everything under its location (such as the files of a table placed
// inside it before the rule existed).
func TestPurgeOfAnExplicitOuterLocation(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	createNamespaces(t, cat, table.Identifier{"ns"})
	outer := withRows(t, cat, table.Identifier{"ns", "outer"}, 0, 5, icecatalog.WithLocation("s3://lake/zone"))
	_, err := cat.CreateTable(ctx, table.Identifier{"ns", "inner"}, testSchema, icecatalog.WithLocation("s3://lake/zone/inner"))
	if !errors.Is(err, icerest.ErrBadRequest) || !strings.Contains(err.Error(), "ns.outer") {
		t.Errorf("create inside ns.outer's location: err = %v, want BadRequest naming ns.outer", err)
	}
	foreign := []string{"zone/inner/metadata/00000-legacy.metadata.json", "zone/inner/data/legacy.parquet", "zone/notes.txt"}
	for _, k := range foreign {
		e.putObject(k, []byte("not ns.outer's"))
	}
	gone := referencedKeys(t, outer)
	if err := cat.PurgeTable(ctx, table.Identifier{"ns", "outer"}); err != nil {
		t.Fatalf("purge: %v", err)
	}
	checkPurge(t, e, foreign, gone)
}

// A table registered from a copy of another's metadata shares that table's
// manifests and data files: purging either leaves the other whole.
func TestPurgeKeepsFilesARegisteredCopyShares(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	createNamespaces(t, cat, table.Identifier{"ns"})
	src := table.Identifier{"ns", "src"}
	tbl := withRows(t, cat, src, 0, 5)
	data := icetest.Rows(5, 8)
	defer data.Release()
	tbl, err := tbl.AppendTable(ctx, data, 1024, nil)
	if err != nil {
		t.Fatal(err)
	}
	copyID := table.Identifier{"ns", "copy"}
	register := func(name string) {
		t.Helper()
		raw := must(e.getObject(strings.TrimPrefix(tbl.MetadataLocation(), "s3://lake/")))
		var md map[string]any
		if err := json.Unmarshal(raw, &md); err != nil {
			t.Fatal(err)
		}
		md["location"] = "s3://lake/copies/" + name
		out, _ := json.Marshal(md)
		key := "copies/" + name + "/metadata/00000-copy.metadata.json"
		e.putObject(key, out)
		if _, err := cat.RegisterTable(ctx, copyID, "s3://lake/"+key); err != nil {
			t.Fatalf("register copy: %v", err)
		}
	}

	register("c1")
	cp, err := cat.LoadTable(ctx, copyID)
	if err != nil {
		t.Fatal(err)
	}
	kept := referencedKeys(t, tbl)
	if err := cat.PurgeTable(ctx, copyID); err != nil {
		t.Fatalf("purge copy: %v", err)
	}
	checkPurge(t, e, kept, []string{strings.TrimPrefix(cp.MetadataLocation(), "s3://lake/")})
	checkScan(t, cat, src, 0, 8)

	register("c2")
	if cp, err = cat.LoadTable(ctx, copyID); err != nil {
		t.Fatal(err)
	}
	kept = referencedKeys(t, cp)
	if err := cat.PurgeTable(ctx, src); err != nil {
		t.Fatalf("purge source: %v", err)
	}
	checkPurge(t, e, kept, []string{strings.TrimPrefix(tbl.MetadataLocation(), "s3://lake/")})
	checkScan(t, cat, copyID, 0, 8)
}

// With gc.enabled=false a purge keeps the data files: the table does not
// own them (the Iceberg convention for tables that share data files).
func TestPurgeKeepsDataFilesWhenGCIsDisabled(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	createNamespaces(t, cat, table.Identifier{"ns"})
	id := table.Identifier{"ns", "t"}
	tbl := withRows(t, cat, id, 0, 5, icecatalog.WithProperties(iceberg.Properties{"gc.enabled": "false"}))
	var data, rest []string
	for _, k := range referencedKeys(t, tbl) {
		if strings.HasSuffix(k, ".parquet") {
			data = append(data, k)
		} else {
			rest = append(rest, k)
		}
	}
	if len(data) == 0 {
		t.Fatal("the table has no data files")
	}
	if err := cat.PurgeTable(ctx, id); err != nil {
		t.Fatalf("purge: %v", err)
	}
	checkPurge(t, e, data, rest)
}

// Live tables' locations never overlap: a create, stage-create, register or
// set-location onto, into or around another table's location is refused
// with 400 BadRequestException naming that table.
func TestOverlappingLocationsAreRefused(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	createNamespaces(t, cat, table.Identifier{"ns"}, table.Identifier{"other"})
	live, err := cat.CreateTable(ctx, table.Identifier{"ns", "live"}, testSchema, icecatalog.WithLocation("s3://lake/area/live"))
	if err != nil {
		t.Fatal(err)
	}
	loc := live.Location()
	create := func(loc string) error {
		_, err := cat.CreateTable(ctx, table.Identifier{"ns", "new"}, testSchema, icecatalog.WithLocation(loc))
		return err
	}
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, icerest.ErrBadRequest) || !strings.Contains(err.Error(), "ns.live") {
			t.Errorf("%s: err = %v, want BadRequest naming ns.live", what, err)
		}
	}
	refused("same location", create(loc))
	refused("same location with a trailing slash", create(loc+"/"))
	refused("same location, other scheme", create("s3a://lake/area/live"))
	refused("outer location", create("s3://lake/area"))
	refused("inner location", create(loc+"/data"))
	_, err = cat.CreateTable(ctx, table.Identifier{"ns", "new"}, testSchema, icecatalog.WithLocation(loc+"/x"),
		icecatalog.WithStagedUpdates(table.NewSetPropertiesUpdate(iceberg.Properties{"k": "v"})))
	refused("stage-create", err)
	_, err = cat.RegisterTable(ctx, table.Identifier{"ns", "new"}, live.MetadataLocation())
	refused("register of the live table's metadata", err)

	status, body := e.do("POST", "/_iceberg/v1/lake/namespaces/ns/tables",
		`{"name":"raw","location":"s3://lake/area","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"x","type":"long","required":false}]}}`, true)
	if status != 400 || !strings.Contains(body, `"BadRequestException"`) || !strings.Contains(body, "ns.live") {
		t.Errorf("wire answer = %d %s, want 400 BadRequestException naming ns.live", status, body)
	}

	// Only '/' boundaries count: area/live2 does not overlap area/live.
	if err := create(loc + "2"); err != nil {
		t.Fatalf("create beside: %v", err)
	}
	_, _, err = cat.CommitTable(ctx, table.Identifier{"ns", "new"}, nil, []table.Update{table.NewSetLocationUpdate(loc + "/moved")})
	refused("set-location into another table", err)

	// A rename keeps the location taken; a set-location frees the old one.
	if _, err := cat.RenameTable(ctx, table.Identifier{"ns", "live"}, table.Identifier{"other", "live"}); err != nil {
		t.Fatal(err)
	}
	_, err = cat.CreateTable(ctx, table.Identifier{"ns", "fifth"}, testSchema, icecatalog.WithLocation(loc+"/x"))
	if !errors.Is(err, icerest.ErrBadRequest) || !strings.Contains(err.Error(), "other.live") {
		t.Errorf("create inside a renamed table: err = %v, want BadRequest naming other.live", err)
	}
	if _, _, err := cat.CommitTable(ctx, table.Identifier{"other", "live"}, nil,
		[]table.Update{table.NewSetLocationUpdate("s3://lake/moved/live")}); err != nil {
		t.Fatalf("set-location to a free location: %v", err)
	}
	if _, err := cat.CreateTable(ctx, table.Identifier{"ns", "third"}, testSchema, icecatalog.WithLocation(loc)); err != nil {
		t.Errorf("create at a location a set-location freed: %v", err)
	}
	// A dropped table's location is free again.
	if err := cat.DropTable(ctx, table.Identifier{"other", "live"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateTable(ctx, table.Identifier{"ns", "fourth"}, testSchema, icecatalog.WithLocation("s3://lake/moved")); err != nil {
		t.Errorf("create around a dropped table's location: %v", err)
	}
}
