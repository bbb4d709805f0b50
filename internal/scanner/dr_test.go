package scanner_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	icerest "github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/scanner"
	"github.com/twinlake/twinlake/internal/testsite"
	"github.com/twinlake/twinlake/internal/testsite/icetest"
)

// fast settings so that tests finish quickly.
var (
	replSettings   = map[string]string{"retry_base_delay": "50ms", "retry_max_delay": "300ms", "max_retries": "3"}
	tablesSettings = map[string]string{"replica_catalog_scan_interval": "200ms", "replica_catalog_retry_interval": "1s",
		"replica_catalog_txn_stale_timeout": "3s"}
)

// drPair is a primary and a replica, each behind a proxy.
type drPair struct {
	t        *testing.T
	m        *testsite.Mesh
	primary  *testsite.Member
	replica  *testsite.Member
	warehous string
}

func set(t *testing.T, s *testsite.Member, subsys string, kv map[string]string) error {
	t.Helper()
	return s.Server().Settings().Set(context.Background(), subsys, kv)
}

// newDRPair sets the replica role first, then joins the sites (the spec's
// order), and creates a warehouse on the primary.
func newDRPair(t *testing.T, tables map[string]string) *drPair {
	t.Helper()
	m := testsite.StartSites(t, 2, replSettings, nil)
	p := &drPair{t: t, m: m, primary: m.Sites[0], replica: m.Sites[1], warehous: "lake"}
	for _, s := range m.Sites {
		if err := set(t, s, "tables", tables); err != nil {
			t.Fatal(err)
		}
	}
	if err := set(t, p.replica, "tables", map[string]string{"replica_catalog": "on"}); err != nil {
		t.Fatal(err)
	}
	m.Join(t)
	if _, err := p.admin(p.primary).CreateWarehouse(context.Background(), p.warehous, adminclient.WarehouseCreateRequest{}); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error {
		_, err := p.s3(p.replica).GetBucketVersioning(context.Background(), p.warehous)
		return err
	})
	return p
}

func (p *drPair) admin(s *testsite.Member) *adminclient.Client {
	c, err := adminclient.New(s.URL, adminclient.Credentials{AccessKey: s.AccessKey, SecretKey: s.SecretKey}, adminclient.Config{})
	if err != nil {
		p.t.Fatal(err)
	}
	return c
}

func (p *drPair) s3(s *testsite.Member) *minio.Client {
	c, err := minio.New(s.Addr, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Region: "us-east-1"})
	if err != nil {
		p.t.Fatal(err)
	}
	return c
}

func (p *drPair) catalog(s *testsite.Member) *icerest.Catalog {
	return icetest.Catalog(p.t, s.URL, s.AccessKey, s.SecretKey, p.warehous)
}

// entry returns the scanner's status of one table.
func entry(s *testsite.Member, ns, name string) (scanner.EntryStatus, bool) {
	for _, e := range s.Server().Scanner().Status(0, 0).Entries {
		if strings.Join(e.Namespace, ".") == ns && e.Name == name {
			return e, true
		}
	}
	return scanner.EntryStatus{}, false
}

// waitVerified waits until the replica serves version want of a table.
func waitVerified(t *testing.T, s *testsite.Member, ns, name string, want int64, timeout time.Duration) {
	t.Helper()
	testsite.Eventually(t, timeout, func() error {
		e, ok := entry(s, ns, name)
		if !ok {
			return fmt.Errorf("%s.%s not seen yet", ns, name)
		}
		if e.Verified != want || e.Status != "OK" {
			return fmt.Errorf("%s.%s: %+v, want verified %d", ns, name, e, want)
		}
		return nil
	})
}

// newTable creates namespace id[:len-1] (with props) and table id in cat.
func newTable(t *testing.T, cat *icerest.Catalog, id table.Identifier, props iceberg.Properties) *table.Table {
	t.Helper()
	ctx := context.Background()
	if err := cat.CreateNamespace(ctx, id[:len(id)-1], props); err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, id, icetest.Schema)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func metadataVersion(tbl *table.Table) int64 {
	loc := tbl.MetadataLocation()
	i := strings.LastIndex(loc, "/")
	var v int64
	fmt.Sscanf(loc[i+1:], "%05d-", &v)
	return v
}

func scan(t *testing.T, cat *icerest.Catalog, id table.Identifier) []int64 {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), id)
	if err != nil {
		t.Fatalf("load %v: %v", id, err)
	}
	ids, err := icetest.ScanIDs(context.Background(), tbl)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestRunbook walks the spec's runbook: replica first, then site
// replication; writes on the primary reach the replica's catalog; the
// replica refuses client writes; failover; writes on the promoted site; the
// old primary's stale writes are refused; recovery by resync open and
// rebuild; the role swap in the right order.
func TestRunbook(t *testing.T) {
	p := newDRPair(t, tablesSettings)
	ctx := context.Background()
	catA := p.catalog(p.primary)
	ns := table.Identifier{"sales"}
	id := table.Identifier{"sales", "orders"}
	if err := catA.CreateNamespace(ctx, ns, iceberg.Properties{"owner": "ops"}); err != nil {
		t.Fatal(err)
	}
	tbl, err := catA.CreateTable(ctx, id, icetest.Schema)
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 2; i++ {
		data := icetest.Rows(i*10, i*10+10)
		tbl, err = tbl.AppendTable(ctx, data, 1024, nil)
		data.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	v := metadataVersion(tbl)
	waitVerified(t, p.replica, "sales", "orders", v, 20*time.Second)

	// The replica serves the table from its own catalog and files.
	catB := p.catalog(p.replica)
	if got := scan(t, catB, id); !slices.Equal(got, icetest.Seq(0, 20)) {
		t.Fatalf("replica scan = %v", got)
	}
	nsB, err := catB.LoadNamespaceProperties(ctx, ns)
	if err != nil || nsB["owner"] != "ops" {
		t.Fatalf("replica namespace = %v, %v", nsB, err)
	}
	st := p.replica.Server().Scanner().Status(0, 0)
	if st.State != scanner.StateActive {
		t.Fatalf("replica scanner state %q", st.State)
	}
	// The status keeps the scanner's notable events without anyone having
	// followed the trace: here the table's versions it applied, newest
	// first, and no cycle summaries.
	applied := 0
	for i, e := range st.Events {
		if e.FuncName == "catalogScanner.cycle" {
			t.Errorf("status event %d is a cycle summary", i)
		}
		if i > 0 && e.Time.After(st.Events[i-1].Time) {
			t.Errorf("status events not newest first at %d", i)
		}
		if e.FuncName == "catalogScanner.apply" && strings.Contains(e.Path, "orders") {
			applied++
		}
	}
	if applied == 0 {
		t.Errorf("status events lack the table's applied versions: %+v", st.Events)
	}
	body, err := testsite.Scrape(p.replica.Site, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"twinlake_tables_scanner_cycles_total", "twinlake_tables_scanner_cycle_seconds_bucket",
		"twinlake_tables_scanner_tables_behind 0", "twinlake_tables_scanner_missing_files 0",
		"twinlake_tables_scanner_retry_requests_total", "twinlake_tables_scanner_held_tables 0",
		`twinlake_tables_scanner_state{state="active"} 1`, "twinlake_tables_scanner_last_success_timestamp_seconds",
		`twinlake_tables_scanner_tables{status="behind"} 0`, `twinlake_tables_scanner_tables{status="missing"} 0`,
		`twinlake_tables_scanner_tables{status="held"} 0`, `twinlake_tables_scanner_tables{status="ok"} `} {
		if !strings.Contains(body, m) {
			t.Fatalf("replica metrics lack %s", m)
		}
	}
	if strings.Contains(body, `twinlake_tables_scanner_tables{status="ok"} 0`) {
		t.Fatal("no table counted ok on the replica")
	}
	if s := p.primary.Server().Scanner().Status(0, 0); s.State != scanner.StateDisabled {
		t.Fatalf("primary scanner state %q", s.State)
	}

	// The replica refuses client writes to warehouses and catalog changes.
	_, err = p.s3(p.replica).PutObject(ctx, p.warehous, "x", bytes.NewReader([]byte("x")), 1, minio.PutObjectOptions{})
	if minio.ToErrorResponse(err).Code != "AccessDenied" {
		t.Fatalf("client write on the replica: %v", err)
	}
	if err := catB.CreateNamespace(ctx, table.Identifier{"other"}, nil); err == nil {
		t.Fatal("catalog change accepted on the replica")
	}
	// A second replica is refused.
	if err := set(t, p.primary, "tables", map[string]string{"replica_catalog": "on"}); err == nil || !strings.Contains(err.Error(), "already the replica") {
		t.Fatalf("second replica: %v", err)
	}

	// The primary is cut off and keeps writing: that divergent version
	// never reaches the replica.
	p.primary.Proxy.Cut()
	p.replica.Proxy.Cut()
	data := icetest.Rows(100, 105)
	if _, err := tbl.AppendTable(ctx, data, 1024, nil); err != nil {
		t.Fatal(err)
	}
	data.Release()

	// Failover: returns at once, completes asynchronously.
	start := time.Now()
	if err := p.replica.Server().Scanner().Failover(ctx); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error {
		if s := p.replica.Server().Scanner().Status(0, 0); s.State != scanner.StateDisabled || s.Promoting {
			return fmt.Errorf("promotion not complete: %+v", s.State)
		}
		return nil
	})
	t.Logf("failover to accepting writes: %v", time.Since(start))
	// The promoted site accepts writes.
	if _, err := icetest.AppendRetry(ctx, catB, id, 20, 30); err != nil {
		t.Fatalf("write on the promoted site: %v", err)
	}
	if got := scan(t, catB, id); !slices.Equal(got, icetest.Seq(0, 30)) {
		t.Fatalf("promoted scan = %v", got)
	}
	// The old primary comes back: its stale writes are refused (403).
	p.primary.Proxy.Restore()
	p.replica.Proxy.Restore()
	testsite.Eventually(t, 15*time.Second, func() error {
		entries, err := p.primary.Server().Replication().Backlog(ctx, p.warehous, 0)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if strings.Contains(e.Err, "not the Tables replica") {
				return nil
			}
		}
		return errors.New("no refusal recorded yet")
	})

	// Recovery: demote the old primary.
	if _, err := p.primary.Server().Scanner().ResyncOpen(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.replica.Server().Replication().ResyncStart(ctx, "site1"); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 30*time.Second, func() error {
		job, err := p.replica.Server().Replication().ResyncStatus(ctx, "site1")
		if err != nil {
			return err
		}
		if job.State != "completed" {
			return fmt.Errorf("resync %s", job.State)
		}
		return testsite.Drained(p.replica.Site)
	})
	if _, err := p.primary.Server().Scanner().ResyncRebuild(ctx, false); !errors.Is(err, scanner.ErrNotConfirmed) {
		t.Fatalf("unconfirmed rebuild: %v", err)
	}
	if _, err := p.primary.Server().Scanner().ResyncRebuild(ctx, true); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 20*time.Second, func() error {
		s := p.primary.Server().Scanner().Status(0, 0)
		if s.Rebuild.State != scanner.RebuildCompleted || s.State != scanner.StateActive {
			return fmt.Errorf("rebuild %+v state %s", s.Rebuild, s.State)
		}
		return nil
	})
	// The demoted site now serves the new primary's table: its own
	// divergent append (ids 100..104) is gone.
	want := metadataVersion(must(catB.LoadTable(ctx, id)))
	waitVerified(t, p.primary, "sales", "orders", want, 20*time.Second)
	if got := scan(t, catA, id); !slices.Equal(got, icetest.Seq(0, 30)) {
		t.Fatalf("demoted site scan = %v", got)
	}

	// Role swap, in the spec's order: demoting the promoted site first fails.
	if err := set(t, p.replica, "tables", map[string]string{"replica_catalog": "on"}); err == nil {
		t.Fatal("second replica accepted during the swap")
	}
	if err := set(t, p.primary, "tables", map[string]string{"replica_catalog": "off"}); err != nil {
		t.Fatal(err)
	}
	if err := set(t, p.replica, "tables", map[string]string{"replica_catalog": "on"}); err != nil {
		t.Fatal(err)
	}
}

func must(tbl *table.Table, err error) *table.Table {
	if err != nil {
		panic(err)
	}
	return tbl
}

// bigRows is an Arrow table whose parquet file is large and incompressible.
func bigAppend(t *testing.T, tbl *table.Table, from, n int64) *table.Table {
	t.Helper()
	data := icetest.RandomRows(from, n, 2048)
	defer data.Release()
	out, err := tbl.AppendTable(context.Background(), data, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestConsistencyModesWithDelayedFiles: a data file held back by a slow
// link keeps a strict replica on the previous version (and names the file
// as missing) while an eventual replica accepts the new version at once.
func TestConsistencyModesWithDelayedFiles(t *testing.T) {
	for _, mode := range []string{"strict", "eventual"} {
		t.Run(mode, func(t *testing.T) {
			settings := map[string]string{"replica_catalog_consistency": mode}
			for k, v := range tablesSettings {
				settings[k] = v
			}
			p := newDRPair(t, settings)
			ctx := context.Background()
			cat := p.catalog(p.primary)
			id := table.Identifier{"ns", "events"}
			tbl := newTable(t, cat, id, nil)
			waitVerified(t, p.replica, "ns", "events", metadataVersion(tbl), 20*time.Second)
			// ~0.5-1 MB of parquet through a 20 kB/s link: far longer than
			// the small metadata files that follow it.
			p.replica.Proxy.SetBandwidth(20 << 10)
			tbl = bigAppend(t, tbl, 0, 500)
			v := metadataVersion(tbl)
			switch mode {
			case "strict":
				testsite.Eventually(t, 8*time.Second, func() error {
					e, _ := entry(p.replica, "ns", "events")
					if e.Latest != v || len(e.MissingFiles) == 0 {
						return fmt.Errorf("entry %+v", e)
					}
					if e.Verified >= v || e.Status == "OK" {
						t.Fatalf("strict replica verified version %d before its data file arrived: %+v", v, e)
					}
					if !strings.Contains(strings.Join(e.MissingFiles, " "), ".parquet") {
						return fmt.Errorf("missing files %v", e.MissingFiles)
					}
					return nil
				})
			case "eventual":
				testsite.Eventually(t, 8*time.Second, func() error {
					e, _ := entry(p.replica, "ns", "events")
					if e.Verified != v {
						return fmt.Errorf("entry %+v", e)
					}
					return nil
				})
				if st := p.replica.Server().Scanner().Status(0, 0); st.State != scanner.StateTracking {
					t.Fatalf("eventual scanner state %q", st.State)
				}
			}
			p.replica.Proxy.SetBandwidth(0)
			waitVerified(t, p.replica, "ns", "events", v, 30*time.Second)
			// Eventual may verify before the data arrives; reads succeed
			// once it has.
			catB := p.catalog(p.replica)
			testsite.Eventually(t, 30*time.Second, func() error {
				tbl, err := catB.LoadTable(ctx, id)
				if err != nil {
					return err
				}
				ids, err := icetest.ScanIDs(ctx, tbl)
				if err != nil {
					return err
				}
				if len(ids) != 500 {
					return fmt.Errorf("%d rows", len(ids))
				}
				return nil
			})
		})
	}
}

// TestTransactionMembersHeld: members of a multi-table transaction are
// held (Verified -1) until every member arrives, or let through once the
// stale timeout passes.
func TestTransactionMembersHeld(t *testing.T) {
	for _, c := range []struct {
		name  string
		stale string
	}{{"within-timeout", "60s"}, {"past-timeout", "1s"}} {
		t.Run(c.name, func(t *testing.T) {
			settings := map[string]string{"replica_catalog_txn_stale_timeout": c.stale}
			for k, v := range tablesSettings {
				if _, ok := settings[k]; !ok {
					settings[k] = v
				}
			}
			p := newDRPair(t, settings)
			ctx := context.Background()
			cat := p.catalog(p.primary)
			if err := cat.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
				t.Fatal(err)
			}
			a, b := table.Identifier{"ns", "a"}, table.Identifier{"ns", "b"}
			ta, err := cat.CreateTable(ctx, a, icetest.Schema)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := cat.CreateTable(ctx, b, icetest.Schema)
			if err != nil {
				t.Fatal(err)
			}
			waitVerified(t, p.replica, "ns", "a", metadataVersion(ta), 20*time.Second)
			waitVerified(t, p.replica, "ns", "b", metadataVersion(tb), 20*time.Second)
			// b's new metadata file is large, so it arrives seconds after a's.
			p.replica.Proxy.SetBandwidth(100 << 10)
			big := strings.Repeat("x", 600<<10)
			err = cat.CommitTransaction(ctx, []table.TableCommit{
				{Identifier: a, Requirements: []table.Requirement{table.AssertTableUUID(ta.Metadata().TableUUID())},
					Updates: []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"k": "1"})}},
				{Identifier: b, Requirements: []table.Requirement{table.AssertTableUUID(tb.Metadata().TableUUID())},
					Updates: []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"blob": big})}},
			})
			if err != nil {
				t.Fatal(err)
			}
			na := metadataVersion(must(cat.LoadTable(ctx, a)))
			nb := metadataVersion(must(cat.LoadTable(ctx, b)))
			if c.name == "within-timeout" {
				testsite.Eventually(t, 5*time.Second, func() error {
					e, _ := entry(p.replica, "ns", "a")
					if e.Verified != -1 || e.Status != "Held" || e.Transaction == "" {
						return fmt.Errorf("a: %+v", e)
					}
					return nil
				})
				p.replica.Proxy.SetBandwidth(0)
				waitVerified(t, p.replica, "ns", "b", nb, 30*time.Second)
				waitVerified(t, p.replica, "ns", "a", na, 10*time.Second)
				return
			}
			// Past the timeout: a is let through while b is still arriving.
			testsite.Eventually(t, 8*time.Second, func() error {
				ea, _ := entry(p.replica, "ns", "a")
				eb, _ := entry(p.replica, "ns", "b")
				if ea.Verified != na {
					return fmt.Errorf("a: %+v", ea)
				}
				if eb.Verified >= nb {
					t.Fatalf("b arrived before the stale timeout could show: %+v", eb)
				}
				return nil
			})
			p.replica.Proxy.SetBandwidth(0)
			waitVerified(t, p.replica, "ns", "b", nb, 30*time.Second)
		})
	}
}

// TestWrongOrderThenResync: site replication configured before the DR site
// is made the replica: its warehouse replication is refused (403, traced
// as s3.ReplicationRequest); after setting the role, an object resync
// delivers what was missed and the catalog fills in.
func TestWrongOrderThenResync(t *testing.T) {
	m := testsite.StartMesh(t, 2, replSettings, nil)
	p := &drPair{t: t, m: m, primary: m.Sites[0], replica: m.Sites[1], warehous: "lake"}
	for _, s := range m.Sites {
		if err := set(t, s, "tables", tablesSettings); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := p.admin(p.replica).Trace(ctx, adminclient.TraceOptions{FuncName: "s3.ReplicationRequest", StatusCode: 403})
	if err != nil {
		t.Fatal(err)
	}
	refused := make(chan string, 1)
	go func() {
		for stream.Next() {
			select {
			case refused <- stream.Event().Path:
			default:
			}
		}
	}()
	if _, err := p.admin(p.primary).CreateWarehouse(ctx, p.warehous, adminclient.WarehouseCreateRequest{}); err != nil {
		t.Fatal(err)
	}
	cat := p.catalog(p.primary)
	id := table.Identifier{"ns", "t"}
	tbl := newTable(t, cat, id, nil)
	data := icetest.Rows(0, 10)
	tbl, err = tbl.AppendTable(ctx, data, 1024, nil)
	data.Release()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case path := <-refused:
		t.Logf("refused: %s", path)
	case <-time.After(10 * time.Second):
		t.Fatal("no s3.ReplicationRequest 403 traced on the DR site")
	}
	if _, ok := entry(p.replica, "ns", "t"); ok {
		t.Fatal("a table reached a site that is not the replica")
	}
	// Set the role, then resync: the warehouse data arrives.
	if err := set(t, p.replica, "tables", map[string]string{"replica_catalog": "on"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.primary.Server().Replication().ResyncStart(ctx, "site2"); err != nil {
		t.Fatal(err)
	}
	waitVerified(t, p.replica, "ns", "t", metadataVersion(tbl), 30*time.Second)
	if got := scan(t, p.catalog(p.replica), id); !slices.Equal(got, icetest.Seq(0, 10)) {
		t.Fatalf("replica scan = %v", got)
	}
}

// TestAddRefusesPeerWithWarehouse: tables data flows only from primary to
// replica, so a peer holding a warehouse cannot join.
func TestAddRefusesPeerWithWarehouse(t *testing.T) {
	m := testsite.StartSites(t, 2, nil, nil)
	p := &drPair{t: t, m: m, primary: m.Sites[0], replica: m.Sites[1]}
	if _, err := p.admin(p.replica).CreateWarehouse(context.Background(), "dr-lake", adminclient.WarehouseCreateRequest{}); err != nil {
		t.Fatal(err)
	}
	_, err := p.admin(p.primary).ReplicateAdd(context.Background(), []adminclient.ReplicationSite{
		{Name: "site1", Endpoint: p.primary.Proxy.URL(), AccessKey: p.primary.AccessKey, SecretKey: p.primary.SecretKey},
		{Name: "site2", Endpoint: p.replica.Proxy.URL(), AccessKey: p.replica.AccessKey, SecretKey: p.replica.SecretKey},
	})
	var ae *adminclient.Error
	if !errors.As(err, &ae) || ae.Code != adminclient.CodeSiteHasData || !strings.Contains(ae.Message, "warehouses") {
		t.Fatalf("add with a peer holding a warehouse: %v", err)
	}
}

// TestBackfillThenReplicate: a warehouse whose identity records are gone
// (as one created before Tables replication) is backfilled on the primary
// (metadata only, idempotent), then joined with a replica that rebuilds the
// catalog from the backfilled records.
func TestBackfillThenReplicate(t *testing.T) {
	m := testsite.StartSites(t, 2, replSettings, nil)
	p := &drPair{t: t, m: m, primary: m.Sites[0], replica: m.Sites[1], warehous: "old"}
	ctx := context.Background()
	for _, s := range m.Sites {
		if err := set(t, s, "tables", tablesSettings); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.admin(p.primary).CreateWarehouse(ctx, p.warehous, adminclient.WarehouseCreateRequest{}); err != nil {
		t.Fatal(err)
	}
	cat := p.catalog(p.primary)
	id := table.Identifier{"legacy", "t"}
	tbl := newTable(t, cat, id, iceberg.Properties{"team": "a"})
	data := icetest.Rows(0, 7)
	tbl, err := tbl.AppendTable(ctx, data, 1024, nil)
	data.Release()
	if err != nil {
		t.Fatal(err)
	}
	// Remove every identity record version, as if the warehouse predated them.
	c := p.s3(p.primary)
	for o := range c.ListObjects(ctx, p.warehous, minio.ListObjectsOptions{Prefix: ".twinlake/", Recursive: true, WithVersions: true}) {
		if err := c.RemoveObject(ctx, p.warehous, o.Key, minio.RemoveObjectOptions{VersionID: o.VersionID}); err != nil {
			t.Fatal(err)
		}
	}
	before := objectVersions(t, c, p.warehous)
	sc := p.primary.Server().Scanner()
	if _, err := sc.BackfillStatus(ctx); !errors.Is(err, scanner.ErrNoBackfill) {
		t.Fatalf("status before any backfill: %v", err)
	}
	runBackfill := func() scanner.BackfillJob {
		if _, err := sc.BackfillStart(ctx); err != nil {
			t.Fatal(err)
		}
		var job scanner.BackfillJob
		testsite.Eventually(t, 10*time.Second, func() error {
			job, err = sc.BackfillStatus(ctx)
			if err != nil || job.State != scanner.BackfillCompleted {
				return fmt.Errorf("%+v %v", job, err)
			}
			return nil
		})
		return job
	}
	job := runBackfill()
	if job.Tables != 1 || job.Namespaces != 1 || job.Written != 2 {
		t.Fatalf("first backfill %+v", job)
	}
	if again := runBackfill(); again.Written != 0 || again.Unchanged != 2 {
		t.Fatalf("second backfill is not idempotent: %+v", again)
	}
	// Object versions and ETags outside the identity records are unchanged.
	if after := objectVersions(t, c, p.warehous); after != before {
		t.Fatalf("backfill changed objects:\nbefore %s\nafter  %s", before, after)
	}
	// Now the replica, in the right order.
	if err := set(t, p.replica, "tables", map[string]string{"replica_catalog": "on"}); err != nil {
		t.Fatal(err)
	}
	m.Join(t)
	waitVerified(t, p.replica, "legacy", "t", metadataVersion(tbl), 30*time.Second)
	// The namespace's record is an object of its own: it may arrive after
	// the table's.
	testsite.Eventually(t, 10*time.Second, func() error {
		props, err := p.catalog(p.replica).LoadNamespaceProperties(ctx, id[:1])
		if err != nil || props["team"] != "a" {
			return fmt.Errorf("replica namespace %v %v", props, err)
		}
		return nil
	})
}

// objectVersions lists every version of the bucket outside .twinlake/.
func objectVersions(t *testing.T, c *minio.Client, bucket string) string {
	var out []string
	for o := range c.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Recursive: true, WithVersions: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		if !strings.HasPrefix(o.Key, ".twinlake/") {
			out = append(out, o.Key+" "+o.VersionID+" "+o.ETag)
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// TestResetAndRetryRequest: a replica whose copy of a data file is lost
// resets its catalog; the rebuild finds the file missing and, after the
// retry interval, asks the primary to send it again.
func TestResetAndRetryRequest(t *testing.T) {
	p := newDRPair(t, tablesSettings)
	ctx := context.Background()
	cat := p.catalog(p.primary)
	id := table.Identifier{"ns", "t"}
	tbl := newTable(t, cat, id, nil)
	created := metadataVersion(tbl)
	data := icetest.Rows(0, 5)
	tbl, err := tbl.AppendTable(ctx, data, 1024, nil)
	data.Release()
	if err != nil {
		t.Fatal(err)
	}
	v := metadataVersion(tbl)
	waitVerified(t, p.replica, "ns", "t", v, 20*time.Second)
	// Lose the replica's data file behind replication's back.
	var lost string
	for o := range p.s3(p.replica).ListObjects(ctx, p.warehous, minio.ListObjectsOptions{Prefix: strings.TrimPrefix(tbl.Location(), "s3://"+p.warehous+"/") + "/data/", Recursive: true, WithVersions: true}) {
		lost = o.Key
		if err := p.replica.Server().Objects().DiscardVersion(ctx, p.warehous, o.Key, o.VersionID); err != nil {
			t.Fatal(err)
		}
	}
	if lost == "" {
		t.Fatal("no data file found")
	}
	sc := p.replica.Server().Scanner()
	if _, err := sc.CatalogReset(ctx, false); !errors.Is(err, scanner.ErrNotConfirmed) {
		t.Fatalf("unconfirmed reset: %v", err)
	}
	label, err := sc.CatalogReset(ctx, true)
	if err != nil || label == "" {
		t.Fatalf("reset: %q %v", label, err)
	}
	// Rebuilt: the table is back at the version its files allow.
	testsite.Eventually(t, 10*time.Second, func() error {
		e, ok := entry(p.replica, "ns", "t")
		if !ok || e.Verified != created || len(e.MissingFiles) == 0 {
			return fmt.Errorf("%+v", e)
		}
		return nil
	})
	// After the retry interval the primary re-sends the file.
	waitVerified(t, p.replica, "ns", "t", v, 20*time.Second)
	if _, err := p.s3(p.replica).StatObject(ctx, p.warehous, lost, minio.StatObjectOptions{}); err != nil {
		t.Fatalf("lost file not re-sent: %v", err)
	}
}

// TestRebuildWaitsForResyncAndPrimary: a rebuild refuses to start while
// the primary is unreachable; started before the object resync has
// delivered the primary's files, it fails cleanly (FailureRetry) and
// completes once they arrive.
func TestRebuildWaitsForResyncAndPrimary(t *testing.T) {
	p := newDRPair(t, tablesSettings)
	ctx := context.Background()
	catA := p.catalog(p.primary)
	id := table.Identifier{"ns", "t"}
	tbl := newTable(t, catA, id, nil)
	waitVerified(t, p.replica, "ns", "t", metadataVersion(tbl), 20*time.Second)
	// Fail over; the promoted site writes while the old primary is demoted.
	if err := p.replica.Server().Scanner().Failover(ctx); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error {
		if s := p.replica.Server().Scanner().Status(0, 0); s.State != scanner.StateDisabled {
			return fmt.Errorf("state %s", s.State)
		}
		return nil
	})
	catB := p.catalog(p.replica)
	if _, err := icetest.AppendRetry(ctx, catB, id, 0, 5); err != nil {
		t.Fatal(err)
	}
	// The old primary refuses those files (not a replica, no window); the
	// sends are dropped after max_retries.
	testsite.Eventually(t, 15*time.Second, func() error { return testsite.Drained(p.replica.Site) })
	old := p.primary.Server().Scanner()
	if _, err := old.ResyncOpen(ctx); err != nil {
		t.Fatal(err)
	}
	// The new primary unreachable: the rebuild refuses to start.
	p.replica.Proxy.Cut()
	testsite.Eventually(t, 5*time.Second, func() error {
		st, _ := p.primary.Server().Replication().Status(ctx)
		if st.Targets[0].Online {
			return errors.New("link still up")
		}
		return nil
	})
	if _, err := old.ResyncRebuild(ctx, true); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("rebuild with the primary unreachable: %v", err)
	}
	p.replica.Proxy.Restore()
	testsite.Eventually(t, 5*time.Second, func() error {
		st, _ := p.primary.Server().Replication().Status(ctx)
		if !st.Targets[0].Online {
			return errors.New("link still down")
		}
		return nil
	})
	// Started before the object resync: the primary's new metadata file
	// is not here yet, so the attempt fails cleanly and is retried.
	if _, err := old.ResyncRebuild(ctx, true); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error {
		s := old.Status(0, 0)
		if s.Rebuild.State != scanner.RebuildFailureRetry || !strings.Contains(s.Rebuild.LastError, "has not arrived") {
			return fmt.Errorf("rebuild %+v", s.Rebuild)
		}
		return nil
	})
	// The object resync delivers it; the next attempt completes.
	if _, err := p.replica.Server().Replication().ResyncStart(ctx, "site1"); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 30*time.Second, func() error {
		s := old.Status(0, 0)
		if s.Rebuild.State != scanner.RebuildCompleted || s.State != scanner.StateActive {
			return fmt.Errorf("rebuild %+v state %s", s.Rebuild, s.State)
		}
		return nil
	})
	want := metadataVersion(must(catB.LoadTable(ctx, id)))
	waitVerified(t, p.primary, "ns", "t", want, 20*time.Second)
}

// failover promotes the replica and waits until it accepts writes.
func (p *drPair) failover() {
	p.t.Helper()
	if err := p.replica.Server().Scanner().Failover(context.Background()); err != nil {
		p.t.Fatal(err)
	}
	testsite.Eventually(p.t, 10*time.Second, func() error {
		if s := p.replica.Server().Scanner().Status(0, 0); s.State != scanner.StateDisabled || s.Promoting {
			return fmt.Errorf("promotion not complete: %s", s.State)
		}
		return nil
	})
}

// openAndResync opens the old primary's resync window and resyncs the
// object data from the new primary, until the resync has completed and
// drained.
func (p *drPair) openAndResync() {
	p.t.Helper()
	ctx := context.Background()
	old := p.primary.Server().Scanner()
	if _, err := old.ResyncOpen(ctx); err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.replica.Server().Replication().ResyncStart(ctx, p.primary.Name); err != nil {
		p.t.Fatal(err)
	}
	testsite.Eventually(p.t, 30*time.Second, func() error {
		job, err := p.replica.Server().Replication().ResyncStatus(ctx, p.primary.Name)
		if err != nil {
			return err
		}
		if job.State != "completed" {
			return fmt.Errorf("resync %s", job.State)
		}
		return testsite.Drained(p.replica.Site)
	})
}

// rebuild runs the demoted site's catalog rebuild until it is an active
// replica.
func (p *drPair) rebuild() {
	p.t.Helper()
	old := p.primary.Server().Scanner()
	if _, err := old.ResyncRebuild(context.Background(), true); err != nil {
		p.t.Fatal(err)
	}
	testsite.Eventually(p.t, 20*time.Second, func() error {
		s := old.Status(0, 0)
		if s.Rebuild.State != scanner.RebuildCompleted || s.State != scanner.StateActive {
			return fmt.Errorf("rebuild %+v state %s", s.Rebuild, s.State)
		}
		return nil
	})
}

// catalogState is what the rebuild must copy from the new primary: the
// warehouse's default encryption and every namespace with its properties.
func (p *drPair) catalogState(s *testsite.Member) string {
	p.t.Helper()
	ctx := context.Background()
	wh, err := p.admin(s).GetWarehouse(ctx, p.warehous)
	if err != nil {
		p.t.Fatal(err)
	}
	out := []string{"encryption=" + wh.Encryption}
	cat := p.catalog(s)
	nss, err := cat.ListNamespaces(ctx, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	for _, ns := range nss {
		props, err := cat.LoadNamespaceProperties(ctx, ns)
		if err != nil {
			p.t.Fatal(err)
		}
		keys := slices.Sorted(maps.Keys(props))
		for i, k := range keys {
			keys[i] = k + "=" + props[k]
		}
		out = append(out, strings.Join(ns, ".")+" {"+strings.Join(keys, ",")+"}")
	}
	return strings.Join(out, "; ")
}

// TestRebuildTakesPrimarySettings: after a failover both sites change the
// same namespace and the warehouse's default encryption, the old primary
// last. The rebuild gives the demoted site the new primary's namespace
// properties (keys set only here removed, changed ones overwritten), its
// namespaces (one created only here dropped) and its encryption, and the
// scanner's cycles after the rebuild keep them.
func TestRebuildTakesPrimarySettings(t *testing.T) {
	p := newDRPair(t, tablesSettings)
	ctx := context.Background()
	catA := p.catalog(p.primary)
	ns := table.Identifier{"sales"}
	tbl := newTable(t, catA, table.Identifier{"sales", "orders"}, iceberg.Properties{"owner": "ops", "tier": "gold"})
	waitVerified(t, p.replica, "sales", "orders", metadataVersion(tbl), 20*time.Second)

	p.primary.Proxy.Cut()
	p.replica.Proxy.Cut()
	p.failover()
	catB := p.catalog(p.replica)
	if _, err := catB.UpdateNamespaceProperties(ctx, ns, []string{"tier"}, iceberg.Properties{"owner": "dr"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.admin(p.replica).SetWarehouseEncryption(ctx, p.warehous, "AES256"); err != nil {
		t.Fatal(err)
	}
	// The old primary, still cut off, changes the namespace its own way and
	// creates one of its own.
	if _, err := catA.UpdateNamespaceProperties(ctx, ns, nil, iceberg.Properties{"owner": "local", "scratch": "x"}); err != nil {
		t.Fatal(err)
	}
	if err := catA.CreateNamespace(ctx, table.Identifier{"adhoc"}, iceberg.Properties{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	// It also clears the warehouse's default encryption after the new
	// primary set it. When the links come back, the promoted site refuses
	// that later change (it takes no warehouse replication from a peer),
	// and the object resync leaves it in place on the demoted site.
	for _, alg := range []string{"AES256", ""} {
		if _, err := p.admin(p.primary).SetWarehouseEncryption(ctx, p.warehous, alg); err != nil {
			t.Fatal(err)
		}
	}
	p.primary.Proxy.Restore()
	p.replica.Proxy.Restore()
	testsite.Eventually(t, 15*time.Second, func() error { return testsite.Drained(p.primary.Site) })

	want := p.catalogState(p.replica)
	if want != "encryption=AES256; sales {owner=dr}" {
		t.Fatalf("new primary: %s", want)
	}
	p.openAndResync()
	// Before the rebuild the demoted site still holds its own settings.
	if got := p.catalogState(p.primary); got != "encryption=; adhoc {k=v}; sales {owner=local,scratch=x,tier=gold}" {
		t.Fatalf("demoted site before the rebuild: %s", got)
	}
	p.rebuild()
	if got := p.catalogState(p.primary); got != want {
		t.Fatalf("demoted site after the rebuild:\n got %s\nwant %s", got, want)
	}
	// A later full pass over the identity records keeps them.
	sc := p.primary.Server().Scanner()
	cycles := sc.Status(0, 0).Cycles
	if _, err := sc.CatalogReset(ctx, true); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error {
		if s := sc.Status(0, 0); s.Cycles <= cycles || s.State != scanner.StateActive {
			return fmt.Errorf("no cycle since the reset: %d cycles, state %s", s.Cycles, s.State)
		}
		return nil
	})
	if got := p.catalogState(p.primary); got != want {
		t.Fatalf("demoted site after a reset:\n got %s\nwant %s", got, want)
	}
	if _, ok := entry(p.primary, "sales", "orders"); !ok {
		t.Fatal("sales.orders missing on the demoted site")
	}
}

// TestRestartedReplicaWaits: a restarted replica reads waiting, not
// disabled, until its scanner's first cycle reports. The scan interval is
// an hour and nothing arrives, so that cycle runs only when woken.
func TestRestartedReplicaWaits(t *testing.T) {
	settings := maps.Clone(tablesSettings)
	settings["replica_catalog_scan_interval"] = "1h"
	p := newDRPair(t, settings)
	ctx := context.Background()
	tbl := newTable(t, p.catalog(p.primary), table.Identifier{"ns", "t"}, nil)
	waitVerified(t, p.replica, "ns", "t", metadataVersion(tbl), 20*time.Second)
	testsite.Eventually(t, 10*time.Second, func() error { return testsite.Drained(p.primary.Site) })

	p.replica.Restart()
	st, err := p.admin(p.replica).TablesReplicationStatus(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != scanner.StateWaiting || st.Cycles != 0 {
		t.Fatalf("restarted replica: state %q after %d cycles, want %q before the first", st.State, st.Cycles, scanner.StateWaiting)
	}
	body, err := testsite.Scrape(p.replica.Site, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, `twinlake_tables_scanner_state{state="waiting"} 1`) {
		t.Fatal("restarted replica's state metric is not waiting")
	}
	if st, _ := p.admin(p.primary).TablesReplicationStatus(ctx, 0, 0); st.State != scanner.StateDisabled {
		t.Fatalf("primary: state %q", st.State)
	}

	p.replica.Server().Scanner().Wake()
	waitVerified(t, p.replica, "ns", "t", metadataVersion(tbl), 10*time.Second)
	if s := p.replica.Server().Scanner().State(); s != scanner.StateActive {
		t.Fatalf("after the first cycle: state %q", s)
	}
}

// TestBackfillResumesFromItsCursor: a backfill that a restart (or, on a
// multi-node site, a change of leader) stopped midway resumes on the next
// start from its saved cursor: the same job carries on, the records at or
// before the cursor are not handled again, and the rest are written.
func TestBackfillResumesFromItsCursor(t *testing.T) {
	m := testsite.StartSites(t, 1, replSettings, nil)
	p := &drPair{t: t, m: m, primary: m.Sites[0], warehous: "old"}
	ctx := context.Background()
	if _, err := p.admin(p.primary).CreateWarehouse(ctx, p.warehous, adminclient.WarehouseCreateRequest{}); err != nil {
		t.Fatal(err)
	}
	cat := p.catalog(p.primary)
	for _, ns := range []string{"a", "b", "c"} {
		newTable(t, cat, table.Identifier{ns, "t"}, nil)
	}
	c := p.s3(p.primary)
	removeRecords := func() {
		for o := range c.ListObjects(ctx, p.warehous, minio.ListObjectsOptions{Prefix: ".twinlake/", Recursive: true, WithVersions: true}) {
			if err := c.RemoveObject(ctx, p.warehous, o.Key, minio.RemoveObjectOptions{VersionID: o.VersionID}); err != nil {
				t.Fatal(err)
			}
		}
	}
	removeRecords()
	// Six records in key order; the stopped run handled the first two.
	keys := []string{
		catalog.NamespaceRecordKey([]string{"a"}), catalog.NamespaceRecordKey([]string{"b"}),
		catalog.NamespaceRecordKey([]string{"c"}), catalog.TableRecordKey([]string{"a"}, "t"),
		catalog.TableRecordKey([]string{"b"}, "t"), catalog.TableRecordKey([]string{"c"}, "t"),
	}
	if !slices.IsSorted(keys) {
		t.Fatalf("record keys out of order: %q", keys)
	}
	stopped := scanner.BackfillJob{ID: "stopped-midway", State: scanner.BackfillRunning, Started: time.Now().UTC(),
		Warehouses: 1, Namespaces: 2, Written: 2, Warehouse: p.warehous, After: keys[1]}
	if err := scanner.SaveBackfill(p.primary.Server().Scanner(), stopped); err != nil {
		t.Fatal(err)
	}
	p.primary.Restart()

	var job scanner.BackfillJob
	testsite.Eventually(t, 10*time.Second, func() error {
		var err error
		job, err = p.primary.Server().Scanner().BackfillStatus(ctx)
		if err != nil || job.State != scanner.BackfillCompleted {
			return fmt.Errorf("%+v %v", job, err)
		}
		return nil
	})
	if job.ID != stopped.ID || job.Warehouses != 1 || job.Namespaces != 3 || job.Tables != 3 || job.Written != 6 || job.Unchanged != 0 {
		t.Fatalf("resumed backfill %+v", job)
	}
	c = p.s3(p.primary)
	for i, key := range keys {
		_, err := c.StatObject(ctx, p.warehous, key, minio.StatObjectOptions{})
		switch {
		case i < 2 && err == nil:
			t.Errorf("%s, before the cursor, was written again", key)
		case i >= 2 && err != nil:
			t.Errorf("%s, after the cursor: %v", key, err)
		}
	}
}

// TestEvaluationReadsNewestVersions: a table gets an identity record
// version per commit, and the replica's evaluation of a new commit reads
// the newest versions down to the first complete one, not the table's
// whole history.
func TestEvaluationReadsNewestVersions(t *testing.T) {
	p := newDRPair(t, tablesSettings)
	id := table.Identifier{"hist", "t"}
	tbl := newTable(t, p.catalog(p.primary), id, nil)
	for i := range int64(20) {
		tbl = bigAppend(t, tbl, i*4, 4)
	}
	waitVerified(t, p.replica, "hist", "t", metadataVersion(tbl), 60*time.Second)
	reads := func() float64 {
		t.Helper()
		body, err := testsite.Scrape(p.replica.Site, "", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(body, "\n") {
			if v, ok := strings.CutPrefix(line, "twinlake_tables_scanner_record_reads_total "); ok {
				var n float64
				fmt.Sscan(v, &n)
				return n
			}
		}
		t.Fatal("no twinlake_tables_scanner_record_reads_total")
		return 0
	}
	before := reads()
	tbl = bigAppend(t, tbl, 1000, 4)
	waitVerified(t, p.replica, "hist", "t", metadataVersion(tbl), 60*time.Second)
	n := reads() - before
	t.Logf("one commit of a table with %d versions: %v record versions read", metadataVersion(tbl)+1, n)
	if n < 1 || n > 8 {
		t.Fatalf("evaluating one commit of a table with %d versions read %v record versions", metadataVersion(tbl)+1, n)
	}
}

// TestStatusOrderAndPages: the replica status lists tables by warehouse,
// namespace and name, and pages through them.
func TestStatusOrderAndPages(t *testing.T) {
	p := newDRPair(t, tablesSettings)
	ctx := context.Background()
	cat := p.catalog(p.primary)
	for _, ns := range []table.Identifier{{"b"}, {"a"}, {"a", "x"}} {
		if err := cat.CreateNamespace(ctx, ns, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []table.Identifier{{"b", "t1"}, {"a", "x", "t0"}, {"a", "t2"}, {"a", "t1"}} {
		tbl, err := cat.CreateTable(ctx, id, icetest.Schema)
		if err != nil {
			t.Fatal(err)
		}
		ns := strings.Join(id[:len(id)-1], ".")
		waitVerified(t, p.replica, ns, id[len(id)-1], metadataVersion(tbl), 30*time.Second)
	}
	want := []string{"a.t1", "a.t2", "a.x.t0", "b.t1"}
	names := func(es []scanner.EntryStatus) []string {
		var out []string
		for _, e := range es {
			out = append(out, strings.Join(e.Namespace, ".")+"."+e.Name)
		}
		return out
	}
	sc := p.replica.Server().Scanner()
	if got := names(sc.Status(0, 0).Entries); !slices.Equal(got, want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	page := sc.Status(1, 2)
	if got := names(page.Entries); page.Total != 4 || page.Offset != 1 || !slices.Equal(got, want[1:3]) {
		t.Fatalf("page from 1 of 2: %v (total %d, offset %d), want %v", got, page.Total, page.Offset, want[1:3])
	}
	if page := sc.Status(9, 2); len(page.Entries) != 0 || page.Total != 4 {
		t.Fatalf("page past the end: %+v", page.Entries)
	}
}
