package rest_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	icerest "github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
	"github.com/twinlake/twinlake/internal/testsite/icetest"
	"github.com/twinlake/twinlake/internal/trace"
)

// Table maintenance end to end: tables written by apache/iceberg-go,
// maintenance run through the admin API of a real server.

// appendBatches creates ns.<name> (with props) and appends n batches of 5
// rows, one snapshot each.
func appendBatches(t *testing.T, cat *icerest.Catalog, id table.Identifier, n int, props iceberg.Properties) *table.Table {
	t.Helper()
	ctx := t.Context()
	tbl, err := cat.CreateTable(ctx, id, testSchema, icecatalog.WithProperties(props))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		data := icetest.Rows(int64(i*5), int64(i*5+5))
		tbl, err = tbl.AppendTable(ctx, data, 1024, nil)
		data.Release()
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	return tbl
}

func snapshotIDs(md table.Metadata) []int64 {
	var out []int64
	for _, s := range md.Snapshots() {
		out = append(out, s.SnapshotID)
	}
	slices.Sort(out)
	return out
}

func keyOf(loc string) string { return strings.TrimPrefix(loc, "s3://lake/") }

// TestMaintenanceExpiryKeepsRetainLastAndRefs: expiry with --retain-last 2
// keeps main's two newest snapshots and a tag's snapshot, removes the rest
// through a commit engines see, deletes the manifest lists only expired
// snapshots named, and leaves every row readable. A dry run before it
// changes nothing.
func TestMaintenanceExpiryKeepsRetainLastAndRefs(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	createNamespaces(t, cat, table.Identifier{"ns"})
	id := table.Identifier{"ns", "t"}
	tbl := appendBatches(t, cat, id, 5, nil)
	snaps := tbl.Metadata().Snapshots() // oldest first
	tagged := snaps[1].SnapshotID
	if _, _, err := cat.CommitTable(ctx, id, nil, []table.Update{table.NewSetSnapshotRefUpdate("v1", tagged, table.TagRef, 0, 0, 0)}); err != nil {
		t.Fatalf("tag: %v", err)
	}
	tbl, _ = cat.LoadTable(ctx, id)
	before := referencedKeys(t, tbl)
	time.Sleep(1100 * time.Millisecond) // every snapshot older than 1s
	req := adminclient.MaintenanceRequest{Namespace: []string{"ns"}, Name: "t", ExpireSnapshots: true, OlderThan: "1s", RetainLast: 2}

	dry := req
	dry.DryRun = true
	var steps []string
	sum, err := e.admin().MaintainTable(ctx, e.wh, dry, func(ev adminclient.MaintenanceEvent) { steps = append(steps, ev.Step+": "+ev.Msg) })
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if !sum.DryRun || sum.SnapshotsExpired != 2 || sum.FilesRemoved == 0 || len(steps) == 0 {
		t.Errorf("dry run summary %+v, steps %q", sum, steps)
	}
	after, _ := cat.LoadTable(ctx, id)
	if after.MetadataLocation() != tbl.MetadataLocation() {
		t.Errorf("the dry run committed: %s -> %s", tbl.MetadataLocation(), after.MetadataLocation())
	}
	for _, k := range before {
		if !e.exists(k) {
			t.Errorf("the dry run deleted %s", k)
		}
	}

	sum, err = e.admin().MaintainTable(ctx, e.wh, req, nil)
	if err != nil {
		t.Fatalf("maintenance: %v", err)
	}
	tbl, err = cat.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{tagged, snaps[3].SnapshotID, snaps[4].SnapshotID}
	slices.Sort(want)
	if got := snapshotIDs(tbl.Metadata()); !slices.Equal(got, want) {
		t.Errorf("snapshots after expiry %v, want the tag's and the last two %v", got, want)
	}
	if sum.SnapshotsExpired != 2 || sum.SnapshotsBefore != 5 || sum.MetadataLocation != tbl.MetadataLocation() || sum.CommitAttempts != 1 || sum.Duration <= 0 {
		t.Errorf("summary %+v (table at %s)", sum, tbl.MetadataLocation())
	}
	var tag *table.SnapshotRef
	for name, ref := range tbl.Metadata().Refs() {
		if name == "v1" {
			tag = &ref
		}
	}
	if tag == nil || tag.SnapshotID != tagged {
		t.Errorf("tag v1 after expiry: %+v", tag)
	}
	for _, s := range []table.Snapshot{snaps[0], snaps[2]} {
		if e.exists(keyOf(s.ManifestList)) {
			t.Errorf("manifest list %s of expired snapshot %d kept", s.ManifestList, s.SnapshotID)
		}
	}
	for _, k := range referencedKeys(t, tbl) {
		if !e.exists(k) {
			t.Errorf("expiry deleted %s, which the table still references", k)
		}
	}
	if sum.FilesRemoved != 2 || sum.BytesRemoved <= 0 {
		t.Errorf("removed %d files (%d bytes), want the 2 manifest lists of the expired snapshots", sum.FilesRemoved, sum.BytesRemoved)
	}
	checkScan(t, cat, id, 0, 25)
}

// TestMaintenanceWithConcurrentWriter: appends keep landing while expiry
// runs again and again; every append lands (retrying on 409 as engines
// do), every run succeeds, and every row stays readable.
func TestMaintenanceWithConcurrentWriter(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	createNamespaces(t, cat, table.Identifier{"ns"})
	id := table.Identifier{"ns", "t"}
	appendBatches(t, cat, id, 3, nil)
	time.Sleep(1100 * time.Millisecond)
	const batches = 8
	var wg sync.WaitGroup
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 3; i < 3+batches; i++ {
			if _, err := icetest.AppendRetry(ctx, cat, id, int64(i*5), int64(i*5+5)); err != nil {
				werr = fmt.Errorf("append %d: %w", i, err)
				return
			}
		}
	}()
	runs, expired, attempts := 0, 0, 0
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
loop:
	for {
		sum, err := e.admin().MaintainTable(ctx, e.wh, adminclient.MaintenanceRequest{Namespace: []string{"ns"}, Name: "t",
			ExpireSnapshots: true, OlderThan: "1s", RetainLast: 1}, nil)
		if err != nil {
			t.Fatalf("maintenance run %d: %v", runs, err)
		}
		runs++
		expired += sum.SnapshotsExpired
		attempts = max(attempts, sum.CommitAttempts)
		select {
		case <-done:
			break loop
		case <-time.After(20 * time.Millisecond):
		}
	}
	if werr != nil {
		t.Fatal(werr)
	}
	t.Logf("%d maintenance runs expired %d snapshots; most commit attempts in one run: %d", runs, expired, attempts)
	if expired < 2 {
		t.Errorf("expired %d snapshots, want at least the 2 old ones", expired)
	}
	checkScan(t, cat, id, 0, int64((3+batches)*5))
}

// TestMaintenanceOrphans: orphan removal keeps an unreferenced file younger
// than the window, deletes it once older, never touches referenced files
// or files outside the table's location, and a dry run deletes nothing.
func TestMaintenanceOrphans(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	createNamespaces(t, cat, table.Identifier{"ns"})
	id := table.Identifier{"ns", "t"}
	tbl := appendBatches(t, cat, id, 2, nil)
	base := keyOf(tbl.Location())
	orphan, outside := base+"/data/orphan.parquet", "elsewhere/file.parquet"
	e.putObject(orphan, []byte("stray bytes"))
	e.putObject(outside, []byte("not the table's"))
	req := adminclient.MaintenanceRequest{Namespace: []string{"ns"}, Name: "t", RemoveOrphans: true, OrphansOlderThan: "1h"}
	sum, err := e.admin().MaintainTable(ctx, e.wh, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.OrphansFound != 1 || sum.OrphansTooYoung != 1 || sum.FilesRemoved != 0 || !e.exists(orphan) {
		t.Errorf("a young orphan: summary %+v, exists %t", sum, e.exists(orphan))
	}
	time.Sleep(1100 * time.Millisecond)
	req.OrphansOlderThan = "1s"
	dry := req
	dry.DryRun = true
	if sum, err = e.admin().MaintainTable(ctx, e.wh, dry, nil); err != nil || sum.FilesRemoved != 1 || !e.exists(orphan) {
		t.Errorf("dry run: %+v, %v, exists %t", sum, err, e.exists(orphan))
	}
	if sum, err = e.admin().MaintainTable(ctx, e.wh, req, nil); err != nil {
		t.Fatal(err)
	}
	if sum.FilesRemoved != 1 || sum.BytesRemoved != int64(len("stray bytes")) || e.exists(orphan) {
		t.Errorf("an old orphan: summary %+v, exists %t", sum, e.exists(orphan))
	}
	if !e.exists(outside) {
		t.Error("orphan removal deleted a file outside the table's location")
	}
	for _, k := range referencedKeys(t, tbl) {
		if !e.exists(k) {
			t.Errorf("orphan removal deleted %s, which the table references", k)
		}
	}
	checkScan(t, cat, id, 0, 10)
}

// TestMaintenanceMetadataPruning: with write.metadata.delete-after-commit
// enabled and previous-versions-max 2, every commit deletes the metadata
// files that leave the log; without it, none are deleted.
func TestMaintenanceMetadataPruning(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	createNamespaces(t, cat, table.Identifier{"ns"})
	pruned := appendBatches(t, cat, table.Identifier{"ns", "p"}, 5, iceberg.Properties{
		table.MetadataDeleteAfterCommitEnabledKey: "true", table.MetadataPreviousVersionsMaxKey: "2"})
	kept := appendBatches(t, cat, table.Identifier{"ns", "k"}, 5, nil)
	for name, tc := range map[string]struct {
		tbl  *table.Table
		want int
	}{"pruned": {pruned, 3}, "kept": {kept, 6}} {
		var err error
		var n int
		for o := range e.s3.ListObjects(t.Context(), e.wh, minio.ListObjectsOptions{Prefix: keyOf(tc.tbl.Location()) + "/metadata/", Recursive: true}) {
			if o.Err != nil {
				err = o.Err
			}
			if strings.HasSuffix(o.Key, ".metadata.json") {
				n++
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if n != tc.want {
			t.Errorf("%s: %d metadata files, want %d", name, n, tc.want)
		}
		for l := range tc.tbl.Metadata().PreviousFiles() {
			if !e.exists(keyOf(l.MetadataFile)) {
				t.Errorf("%s: %s is in the log but deleted", name, l.MetadataFile)
			}
		}
	}
}

// TestMaintenanceScheduled: with maintenance=on on the warehouse and a 1s
// interval, the site expires a table's old snapshots on its own and traces
// the run; a table whose property turns maintenance off is left alone.
func TestMaintenanceScheduled(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	if err := e.site.Server().Settings().Set(ctx, "tables", map[string]string{"maintenance_interval": "1s"}); err != nil {
		t.Fatal(err)
	}
	stream, err := e.admin().Trace(ctx, adminclient.TraceOptions{Types: trace.TablesMaintenance, FuncName: "tableMaintenance.scheduled", Verbose: true})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	events := make(chan trace.Event, 64)
	go func() {
		for stream.Next() {
			events <- stream.Event()
		}
	}()
	createNamespaces(t, cat, table.Identifier{"ns"})
	on, off := table.Identifier{"ns", "on"}, table.Identifier{"ns", "off"}
	appendBatches(t, cat, on, 3, nil)
	appendBatches(t, cat, off, 3, iceberg.Properties{"twinlake.maintenance.enabled": "false"})
	time.Sleep(1100 * time.Millisecond)
	if _, err := e.admin().SetWarehouseSettings(ctx, e.wh, map[string]string{
		"maintenance": "on", "expire_older_than": "1s", "retain_last": "1", "orphans_older_than": "1d"}); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 20*time.Second, func() error {
		tbl, err := cat.LoadTable(ctx, on)
		if err != nil {
			return err
		}
		if n := len(tbl.Metadata().Snapshots()); n != 1 {
			return fmt.Errorf("%d snapshots, want 1", n)
		}
		return nil
	})
	select {
	case ev := <-events:
		if !strings.Contains(ev.Msg, "snapshots expired") || !strings.HasPrefix(ev.Path, "lake/ns.") {
			t.Errorf("trace event %+v", ev)
		}
	case <-time.After(5 * time.Second):
		t.Error("no tableMaintenance.scheduled trace event")
	}
	if tbl, err := cat.LoadTable(ctx, off); err != nil || len(tbl.Metadata().Snapshots()) != 3 {
		t.Errorf("the table with maintenance off: %v", err)
	}
	checkScan(t, cat, on, 0, 15)
	text, err := testsite.Scrape(e.site, e.site.AccessKey, e.site.SecretKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`twinlake_tables_maintenance_runs_total{result="ok",trigger="scheduled"}`,
		"twinlake_tables_maintenance_snapshots_expired_total 2", "twinlake_tables_maintenance_files_removed_total 2"} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestMaintenanceRefusals: unknown tables, bad ages and bad warehouse
// settings are refused with admin errors.
func TestMaintenanceRefusals(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	createNamespaces(t, e.catalog(), table.Identifier{"ns"})
	for name, tc := range map[string]struct {
		req  adminclient.MaintenanceRequest
		code string
	}{
		"no such table": {adminclient.MaintenanceRequest{Namespace: []string{"ns"}, Name: "nope"}, adminclient.CodeNoSuchEntry},
		"bad age":       {adminclient.MaintenanceRequest{Namespace: []string{"ns"}, Name: "nope", OlderThan: "0d"}, adminclient.CodeInvalidWarehouse},
	} {
		_, err := e.admin().MaintainTable(ctx, e.wh, tc.req, nil)
		var ae *adminclient.Error
		if !errors.As(err, &ae) || ae.Code != tc.code {
			t.Errorf("%s: err = %v, want %s", name, err, tc.code)
		}
	}
	if _, err := e.admin().SetWarehouseSettings(ctx, e.wh, map[string]string{"retain_last": "0"}); err == nil {
		t.Error("retain_last=0 accepted")
	}

	// A retained manifest list gone behind the catalog's back: the run has
	// started (a progress line came) and then fails, deleting nothing.
	id := table.Identifier{"ns", "broken"}
	tbl := appendBatches(t, e.catalog(), id, 2, nil)
	stray := keyOf(tbl.Location()) + "/data/stray.parquet"
	e.putObject(stray, []byte("x"))
	if err := e.s3.RemoveObject(ctx, e.wh, keyOf(tbl.CurrentSnapshot().ManifestList), minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	var steps int
	_, err := e.admin().MaintainTable(ctx, e.wh, adminclient.MaintenanceRequest{Namespace: []string{"ns"}, Name: "broken",
		RemoveOrphans: true, OrphansOlderThan: "1s"}, func(adminclient.MaintenanceEvent) { steps++ })
	var ae *adminclient.Error
	if !errors.As(err, &ae) || ae.Code != adminclient.CodeInvalidWarehouse || !strings.Contains(ae.Message, "missing") || steps == 0 {
		t.Errorf("maintenance with a manifest list missing: err = %v after %d progress lines", err, steps)
	}
	if !e.exists(stray) {
		t.Error("a failed run deleted a file")
	}
}

// TestIdempotentReplayAfterMetadataPruned: a keyed commit's answer names a
// metadata file that later commits prune (delete-after-commit); a retry
// with the key still applies nothing and answers the table's current state
// instead of an error.
func TestIdempotentReplayAfterMetadataPruned(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	createNamespaces(t, cat, table.Identifier{"ns"})
	appendBatches(t, cat, table.Identifier{"ns", "t"}, 0, iceberg.Properties{
		table.MetadataDeleteAfterCommitEnabledKey: "true", table.MetadataPreviousVersionsMaxKey: "1"})
	const path = "/_iceberg/v1/lake/namespaces/ns/tables/t"
	commit := func(v string, hdr map[string]string) (int, string) {
		r, body := e.doH("POST", path, `{"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"`+v+`"}}]}`, hdr)
		return r.StatusCode, body
	}
	key := map[string]string{"Idempotency-Key": "prune-1"}
	if status, body := commit("1", key); status != 200 {
		t.Fatalf("keyed commit: %d %s", status, body)
	}
	for _, v := range []string{"2", "3"} {
		if status, body := commit(v, nil); status != 200 {
			t.Fatalf("commit %s: %d %s", v, status, body)
		}
	}
	before, _ := cat.LoadTable(t.Context(), table.Identifier{"ns", "t"})
	status, body := commit("1", key)
	if status != 200 || !strings.Contains(body, before.MetadataLocation()) {
		t.Fatalf("replay after the answer's file was pruned: %d %.300s, want 200 with %s", status, body, before.MetadataLocation())
	}
	after, _ := cat.LoadTable(t.Context(), table.Identifier{"ns", "t"})
	if after.MetadataLocation() != before.MetadataLocation() || after.Properties()["k"] != "3" {
		t.Errorf("the replay applied again: %s k=%s", after.MetadataLocation(), after.Properties()["k"])
	}
}
