// Package e2e drives the built twinlake binary the way an operator does:
// real server processes, the twinlake CLI for every operator command, and
// apache/iceberg-go as the data engineer's engine.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
	"github.com/twinlake/twinlake/internal/testsite/icetest"
)

const (
	rootUser   = "runbook-admin"
	rootSecret = "runbook-admin-secret"
)

// operator runs the twinlake CLI with its own client configuration.
type operator struct {
	t   *testing.T
	bin string
	cfg string
}

func (o *operator) run(args ...string) (string, error) {
	o.t.Helper()
	cmd := exec.Command(o.bin, args...)
	cmd.Env = append(os.Environ(), "TWINLAKE_CONFIG_DIR="+o.cfg)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (o *operator) must(args ...string) string {
	o.t.Helper()
	out, err := o.run(args...)
	if err != nil {
		o.t.Fatalf("twinlake %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (o *operator) status(alias string) adminclient.TablesReplicationStatus {
	o.t.Helper()
	var st adminclient.TablesReplicationStatus
	if err := json.Unmarshal([]byte(o.must("table", "replicate", "status", alias, "--json")), &st); err != nil {
		o.t.Fatal(err)
	}
	return st
}

// waitTable waits until alias's scanner serves version want of ns.name.
func (o *operator) waitTable(alias, ns, name string, want int64) {
	o.t.Helper()
	testsite.Eventually(o.t, 30*time.Second, func() error {
		for _, e := range o.status(alias).Entries {
			if strings.Join(e.Namespace, ".") == ns && e.Name == name {
				if e.Status == "OK" && e.Verified == want {
					return nil
				}
				return fmt.Errorf("%+v", e)
			}
		}
		return fmt.Errorf("%s.%s not tracked on %s yet", ns, name, alias)
	})
}

func version(tbl *table.Table) int64 {
	loc := tbl.MetadataLocation()
	var v int64
	fmt.Sscanf(loc[strings.LastIndex(loc, "/")+1:], "%05d-", &v)
	return v
}

// runbookSite is a site the runbook starts, kills and starts again: one
// server process, or the node processes of a multi-node site.
type runbookSite interface {
	addr() string
	kill()
	start()
}

// singleSite is a site of one server process.
type singleSite struct {
	t        *testing.T
	bin, dir string
	address  string
	env      []string
	p        *testsite.Process
}

func newSingleSite(t *testing.T, bin, dir string, env []string) *singleSite {
	s := &singleSite{t: t, bin: bin, dir: dir, address: testsite.FreeAddr(t), env: env}
	s.start()
	return s
}

func (s *singleSite) addr() string { return s.address }
func (s *singleSite) kill()        { s.p.Kill(s.t) }
func (s *singleSite) start()       { s.p = testsite.StartProcess(s.t, s.bin, s.dir, s.address, s.env...) }

// clusterSite is a site of node processes; the operator reaches it
// through its first node.
type clusterSite struct{ c *testsite.Cluster }

func (s clusterSite) addr() string { return s.c.Addrs[0] }
func (s clusterSite) kill()        { s.c.Kill() }
func (s clusterSite) start()       { s.c.Start() }

// runbookEnv are the settings every runbook site starts with.
var runbookEnv = []string{"TWINLAKE_ROOT_USER=" + rootUser, "TWINLAKE_ROOT_PASSWORD=" + rootSecret,
	"TWINLAKE_TABLES_REPLICA_CATALOG_SCAN_INTERVAL=200ms", "TWINLAKE_REPLICATION_RETRY_BASE_DELAY=50ms",
	"TWINLAKE_REPLICATION_RETRY_MAX_DELAY=500ms", "TWINLAKE_REPLICATION_MAX_RETRIES=3"}

// kmsEnv is the KMS key of the sites the tests start: a multi-node
// site's nodes all need the same one.
const kmsEnv = "TWINLAKE_KMS_SECRET_KEY=MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

// clusterEnv is runbookEnv with kmsEnv, for a runbook site of several
// nodes.
func clusterEnv() []string { return append(slices.Clone(runbookEnv), kmsEnv) }

// TestRunbookThroughTheBinary follows spec 000 end to end: make the DR
// site the replica, join the sites naming the primary first, confirm the
// roles, write tables, watch status, fail over after the primary dies,
// write on the promoted site, recover the old primary with resync open,
// object resync and rebuild, and swap the roles back in the right order.
func TestRunbookThroughTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testsite.BuildBinary(t)
	dir := t.TempDir()
	runbook(t, bin, dir, newSingleSite(t, bin, filepath.Join(dir, "primary"), runbookEnv),
		newSingleSite(t, bin, filepath.Join(dir, "dr"), runbookEnv))
}

// TestRunbookFourNodeSites is the same runbook with a primary and a DR
// site of 4 nodes each (eight processes, two embedded etcd clusters).
func TestRunbookFourNodeSites(t *testing.T) {
	if testing.Short() {
		t.Skip("runs eight server processes")
	}
	bin := testsite.BuildBinary(t)
	dir := t.TempDir()
	env := clusterEnv()
	// The DR site's scanner scans every 3s (it runs at once on arrivals
	// and commands): long enough that its waiting state after a change
	// of leader is seen before the new leader's first cycle.
	drEnv := append(slices.Clone(env), "TWINLAKE_TABLES_REPLICA_CATALOG_SCAN_INTERVAL=3s")
	runbook(t, bin, dir, clusterSite{testsite.StartCluster(t, bin, filepath.Join(dir, "primary"), 4, env...)},
		clusterSite{testsite.StartCluster(t, bin, filepath.Join(dir, "dr"), 4, drEnv...)})
}

// loseLeader kills the site's leader node, points alias at another node
// while it is down, runs check, then restarts the node.
func (s clusterSite) loseLeader(t *testing.T, op *operator, alias string, check func()) {
	t.Helper()
	var info adminclient.ServerInfo
	if err := json.Unmarshal([]byte(op.must("admin", "info", alias, "--json")), &info); err != nil {
		t.Fatal(err)
	}
	leader := slices.IndexFunc(info.Nodes, func(n adminclient.NodeInfo) bool { return n.State == "leader" })
	if leader < 0 {
		t.Fatalf("no leader among %+v", info.Nodes)
	}
	i := slices.Index(s.c.Addrs, info.Nodes[leader].Address)
	other := s.c.Addrs[(i+1)%len(s.c.Addrs)]
	op.must("alias", "set", alias, "http://"+other, rootUser, rootSecret)
	s.c.KillNode(i)
	start := time.Now()
	check()
	t.Logf("leader %s killed; the scanner on the new leader serves the tables again after %v", s.c.Addrs[i], time.Since(start))
	s.c.Start()
	op.must("alias", "set", alias, "http://"+s.addr(), rootUser, rootSecret)
}

func runbook(t *testing.T, bin, dir string, primary, dr runbookSite) {
	pAddr, dAddr := primary.addr(), dr.addr()
	op := &operator{t: t, bin: bin, cfg: filepath.Join(dir, "client")}
	op.must("alias", "set", "myprimary", "http://"+pAddr, rootUser, rootSecret)
	op.must("alias", "set", "myreplica", "http://"+dAddr, rootUser, rootSecret)

	// Set up: the replica first, then site replication naming the primary first.
	op.must("admin", "config", "set", "myreplica", "tables", "replica_catalog=on")
	op.must("admin", "replicate", "add", "myprimary", "myreplica")
	if out := op.must("admin", "config", "get", "myprimary", "tables"); !strings.Contains(out, "replica_catalog=off") {
		t.Fatalf("primary role:\n%s", out)
	}
	if out := op.must("admin", "config", "get", "myreplica", "tables"); !strings.Contains(out, "replica_catalog=on") {
		t.Fatalf("replica role:\n%s", out)
	}
	// A second replica is refused.
	if out, err := op.run("admin", "config", "set", "myprimary", "tables", "replica_catalog=on"); err == nil || !strings.Contains(out, "already the replica") {
		t.Fatalf("second replica accepted: %v\n%s", err, out)
	}

	// A data engineer writes tables on the primary.
	op.must("table", "warehouse", "create", "myprimary", "lake")
	ctx := context.Background()
	catP := icetest.Catalog(t, "http://"+pAddr, rootUser, rootSecret, "lake")
	id := table.Identifier{"sales", "orders"}
	if err := catP.CreateNamespace(ctx, id[:1], iceberg.Properties{"owner": "ops"}); err != nil {
		t.Fatal(err)
	}
	tbl, err := catP.CreateTable(ctx, id, icetest.Schema)
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
	op.waitTable("myreplica", "sales", "orders", version(tbl))
	if st := op.status("myreplica"); st.State != "active" {
		t.Fatalf("replica scanner %q", st.State)
	}
	out := op.must("table", "replicate", "status", "myreplica")
	for _, want := range []string{"Scanner: active", "lake", "sales", "orders", "Status:   OK"} {
		if !strings.Contains(out, want) {
			t.Fatalf("status lacks %q:\n%s", want, out)
		}
	}
	// The replica refuses client writes to the warehouse.
	src := filepath.Join(dir, "f.txt")
	os.WriteFile(src, []byte("x"), 0o600)
	if out, err := op.run("cp", src, "myreplica/lake/x.txt"); err == nil {
		t.Fatalf("client write on the replica accepted:\n%s", out)
	}
	// A multi-node replica loses its leader: the scanner moves to the
	// new leader, reports waiting until its first cycle there (its state
	// starts empty), then serves every table again.
	if c, ok := dr.(clusterSite); ok {
		c.loseLeader(t, op, "myreplica", func() {
			testsite.Eventually(t, 30*time.Second, func() error {
				if st := op.status("myreplica"); st.State != "waiting" {
					return fmt.Errorf("scanner %q, want waiting before the new leader's first cycle", st.State)
				}
				return nil
			})
			op.waitTable("myreplica", "sales", "orders", version(tbl))
			if st := op.status("myreplica"); st.State != "active" {
				t.Fatalf("scanner after its first cycle on the new leader: %q", st.State)
			}
		})
	}

	// The primary dies. Fail over.
	primary.kill()
	start := time.Now()
	op.must("table", "replicate", "failover", "myreplica")
	testsite.Eventually(t, 10*time.Second, func() error {
		if st := op.status("myreplica"); st.State != "disabled" || st.Promoting {
			return fmt.Errorf("state %s promoting %t", st.State, st.Promoting)
		}
		return nil
	})
	t.Logf("failover to accepting writes: %v", time.Since(start))
	if out := op.must("admin", "config", "get", "myreplica", "tables"); !strings.Contains(out, "replica_catalog=off") {
		t.Fatalf("promoted role:\n%s", out)
	}
	catD := icetest.Catalog(t, "http://"+dAddr, rootUser, rootSecret, "lake")
	if _, err := icetest.AppendRetry(ctx, catD, id, 20, 30); err != nil {
		t.Fatalf("write on the promoted site: %v", err)
	}
	promoted, err := catD.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}

	// The old primary returns and is demoted: resync open, object resync
	// from the new primary, then the catalog rebuild.
	primary.start()
	op.must("table", "replicate", "resync", "open", "myprimary")
	op.must("admin", "replicate", "resync", "start", "myreplica", "myprimary")
	testsite.Eventually(t, 60*time.Second, func() error {
		var job adminclient.ResyncStatus
		if err := json.Unmarshal([]byte(op.must("admin", "replicate", "resync", "status", "myreplica", "myprimary", "--json")), &job); err != nil {
			return err
		}
		if job.State != "completed" {
			return fmt.Errorf("resync %s", job.State)
		}
		var st adminclient.ReplicationStatus
		if err := json.Unmarshal([]byte(op.must("admin", "replicate", "status", "myreplica", "--json")), &st); err != nil {
			return err
		}
		for _, tg := range st.Targets {
			if tg.Pending+tg.Retrying > 0 {
				return fmt.Errorf("backlog to %s: %d", tg.Name, tg.Pending+tg.Retrying)
			}
		}
		return nil
	})
	op.must("table", "replicate", "resync", "rebuild", "myprimary", "--yes", "--wait")
	testsite.Eventually(t, 30*time.Second, func() error {
		st := op.status("myprimary")
		if st.Rebuild.State != "Completed" || st.State != "active" {
			return fmt.Errorf("rebuild %+v scanner %s", st.Rebuild, st.State)
		}
		return nil
	})
	op.waitTable("myprimary", "sales", "orders", version(promoted))
	catP2 := icetest.Catalog(t, "http://"+pAddr, rootUser, rootSecret, "lake")
	back, err := catP2.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := icetest.ScanIDs(ctx, back)
	if err != nil || !slices.Equal(ids, icetest.Seq(0, 30)) {
		t.Fatalf("demoted site scan = %v, %v", ids, err)
	}

	// Role swap: promote the old primary first, then demote.
	if out, err := op.run("admin", "config", "set", "myreplica", "tables", "replica_catalog=on"); err == nil {
		t.Fatalf("demoting first was accepted:\n%s", out)
	}
	op.must("admin", "config", "set", "myprimary", "tables", "replica_catalog=off")
	op.must("admin", "config", "set", "myreplica", "tables", "replica_catalog=on")
	if out := op.must("admin", "config", "get", "myprimary", "tables"); !strings.Contains(out, "replica_catalog=off") {
		t.Fatalf("after swap:\n%s", out)
	}
}
