package scanner_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
		st, _ := p.replica.Server().Replication().Status(ctx)
		if tg := st.Targets[0]; tg.Pending+tg.Retrying > 0 {
			return fmt.Errorf("backlog %d", tg.Pending+tg.Retrying)
		}
		return nil
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
