package e2e

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
	"github.com/twinlake/twinlake/internal/testsite/faultproxy"
	"github.com/twinlake/twinlake/internal/testsite/icetest"
)

// faultySite is a site the faults kill and pause a node of.
type faultySite interface {
	addr() string
	// killOne kills a node with SIGKILL and starts it again after d.
	killOne(t *testing.T, rng *rand.Rand, d time.Duration)
	// pauseOne stops a node with SIGSTOP for d.
	pauseOne(t *testing.T, rng *rand.Rand, d time.Duration)
}

type faultySingle struct{ *singleSite }

func (s *faultySingle) killOne(t *testing.T, _ *rand.Rand, d time.Duration) {
	s.kill()
	time.Sleep(d)
	s.start()
}

func (s *faultySingle) pauseOne(t *testing.T, _ *rand.Rand, d time.Duration) {
	s.p.Pause(t)
	time.Sleep(d)
	s.p.Resume(t)
}

// faultyCluster's faults hit any node, the leader among them.
type faultyCluster struct{ clusterSite }

func (s faultyCluster) killOne(t *testing.T, rng *rand.Rand, d time.Duration) {
	i := rng.IntN(len(s.c.Addrs))
	s.c.KillNode(i)
	time.Sleep(d)
	s.c.StartNode(i)
}

func (s faultyCluster) pauseOne(t *testing.T, rng *rand.Rand, d time.Duration) {
	i := rng.IntN(len(s.c.Addrs))
	s.c.PauseNode(i)
	time.Sleep(d)
	s.c.ResumeNode(i)
}

// tablesFaultTables are the tables the writers append to, two per writer.
var tablesFaultTables = []string{"t0", "t1", "t2", "t3"}

// TestTablesFailoverUnderFaults writes Iceberg tables on a primary while
// seeded faults hit its link to the DR site (cut, slowed, reset
// mid-transfer) and the DR site itself (kill -9, pause), then kills the
// primary with kill -9 in the middle of its writers' commits and fails
// over. On the promoted site every table must be there, at a version no
// older than the last one its scanner had verified, with every row of
// that version readable and no row of a later one; and each must take new
// commits. TWINLAKE_TABLES_FAULT_SEED replays a run;
// TWINLAKE_TABLES_FAULT_DURATION sets how long the faults last (default
// 8s); TWINLAKE_TABLES_FAULT_NODES=4 runs sites of 4 nodes, whose faults
// kill and pause any node of the DR site, its leader among them.
func TestTablesFailoverUnderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two server processes under faults")
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("TWINLAKE_TABLES_FAULT_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = n
	}
	dur := 8 * time.Second
	if v := os.Getenv("TWINLAKE_TABLES_FAULT_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("TWINLAKE_TABLES_FAULT_DURATION=%q: %v", v, err)
		}
		dur = d
	}
	nodes, err := 1, error(nil)
	if v := os.Getenv("TWINLAKE_TABLES_FAULT_NODES"); v != "" {
		if nodes, err = strconv.Atoi(v); err != nil || nodes < 1 {
			t.Fatalf("TWINLAKE_TABLES_FAULT_NODES=%q: want a number of nodes", v)
		}
	}
	t.Logf("seed %d duration %v, %d node(s) per site (replay: TWINLAKE_TABLES_FAULT_SEED=%d TWINLAKE_TABLES_FAULT_DURATION=%v TWINLAKE_TABLES_FAULT_NODES=%d)",
		seed, dur, nodes, seed, dur, nodes)
	rng := rand.New(rand.NewPCG(seed, 0))

	bin := testsite.BuildBinary(t)
	dir := t.TempDir()
	env := append(slices.Clone(runbookEnv), "TWINLAKE_REPLICATION_RETRY_BASE_DELAY=20ms", "TWINLAKE_REPLICATION_RETRY_MAX_DELAY=200ms",
		"TWINLAKE_REPLICATION_MAX_RETRIES=1000")
	drEnv := append(slices.Clone(env), "TWINLAKE_TABLES_REPLICA_CATALOG_SCAN_INTERVAL=1s")
	var primary runbookSite
	var dr faultySite
	if nodes == 1 {
		primary = newSingleSite(t, bin, filepath.Join(dir, "primary"), env)
		dr = &faultySingle{newSingleSite(t, bin, filepath.Join(dir, "dr"), drEnv)}
	} else {
		env = append(env, kmsEnv)
		drEnv = append(drEnv, kmsEnv)
		primary = clusterSite{testsite.StartCluster(t, bin, filepath.Join(dir, "primary"), nodes, env...)}
		dr = faultyCluster{clusterSite{testsite.StartCluster(t, bin, filepath.Join(dir, "dr"), nodes, drEnv...)}}
	}
	drAddr := dr.addr()
	link, err := faultproxy.New(drAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { link.Close() })

	ctx := context.Background()
	creds := adminclient.Credentials{AccessKey: rootUser, SecretKey: rootSecret}
	admP, err := adminclient.New("http://"+primary.addr(), creds, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	admD, err := adminclient.New("http://"+drAddr, creds, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admD.SetConfig(ctx, "tables", map[string]string{"replica_catalog": "on"}); err != nil {
		t.Fatal(err)
	}
	// The primary reaches the DR site through the faulty link.
	if _, err := admP.ReplicateAdd(ctx, []adminclient.ReplicationSite{
		{Name: "primary", Endpoint: "http://" + primary.addr(), AccessKey: rootUser, SecretKey: rootSecret},
		{Name: "dr", Endpoint: link.URL(), AccessKey: rootUser, SecretKey: rootSecret},
	}); err != nil {
		t.Fatal(err)
	}
	op := &operator{t: t, bin: bin, cfg: filepath.Join(dir, "client")}
	op.must("alias", "set", "myprimary", "http://"+primary.addr(), rootUser, rootSecret)
	op.must("alias", "set", "myreplica", "http://"+drAddr, rootUser, rootSecret)
	op.must("table", "warehouse", "create", "myprimary", "lake")
	catP := icetest.Catalog(t, "http://"+primary.addr(), rootUser, rootSecret, "lake")
	if err := catP.CreateNamespace(ctx, table.Identifier{"n"}, iceberg.Properties{}); err != nil {
		t.Fatal(err)
	}
	tables := map[string]*table.Table{}
	for _, name := range tablesFaultTables {
		tbl, err := catP.CreateTable(ctx, table.Identifier{"n", name}, icetest.Schema)
		if err != nil {
			t.Fatal(err)
		}
		tables[name] = tbl
	}
	for _, name := range tablesFaultTables {
		op.waitTable("myreplica", "n", name, version(tables[name]))
	}

	// The writers: each appends 10 rows at a time to its own two tables,
	// so a table's k-th append holds ids 10(k-1)..10k-1.
	var mu sync.Mutex
	acked := map[string]int{}    // appends acknowledged
	unknown := map[string]bool{} // an append whose outcome is unknown
	floor := map[string]int64{}  // highest version the DR site verified
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		mine := map[string]*table.Table{}
		names := tablesFaultTables[2*w : 2*w+2]
		for _, name := range names {
			mine[name] = tables[name]
		}
		go func(wrng *rand.Rand) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				name := names[wrng.IntN(len(names))]
				mu.Lock()
				k := int64(acked[name])
				mu.Unlock()
				data := icetest.Rows(10*k, 10*k+10)
				next, err := mine[name].AppendTable(ctx, data, 1024, nil)
				data.Release()
				mu.Lock()
				if err != nil {
					unknown[name] = true
					mu.Unlock()
					return // only the primary's death fails a commit
				}
				acked[name]++
				mu.Unlock()
				mine[name] = next
			}
		}(rand.New(rand.NewPCG(seed, uint64(w+1))))
	}
	// The watcher: what the DR site's scanner verified, table by table.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			st, err := admD.TablesReplicationStatus(ctx, 0, 0)
			if err != nil {
				continue // killed or paused
			}
			mu.Lock()
			for _, e := range st.Entries {
				floor[e.Name] = max(floor[e.Name], e.Verified)
			}
			mu.Unlock()
		}
	}()

	counts := map[string]int{}
	end := time.Now().Add(dur)
	hold := func() time.Duration { return time.Duration(100+rng.IntN(900)) * time.Millisecond }
	for time.Now().Before(end) {
		switch rng.IntN(5) {
		case 0:
			counts["cut"]++
			link.Cut()
			time.Sleep(hold())
			link.Restore()
		case 1:
			counts["slow"]++
			link.SetLatency(time.Duration(5+rng.IntN(40)) * time.Millisecond)
			link.SetBandwidth(int64(64<<10 + rng.IntN(1<<20)))
			time.Sleep(hold())
			link.SetLatency(0)
			link.SetBandwidth(0)
		case 2:
			counts["reset"]++
			for range 1 + rng.IntN(4) {
				time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
				link.Cut()
				link.Restore()
			}
		case 3:
			counts["kill9-dr"]++
			dr.killOne(t, rng, time.Duration(rng.IntN(500))*time.Millisecond)
		default:
			counts["pause-dr"]++
			dr.pauseOne(t, rng, hold())
		}
		time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
	}
	link.SetLatency(0)
	link.SetBandwidth(0)
	link.Restore()
	if rng.IntN(2) == 0 {
		// Half the runs wait, the writers still writing, until the DR
		// site has verified every table at the version it had reached when
		// the faults ended: nothing the faults held back stays stuck. The
		// others kill the primary with the link just restored.
		if c, ok := dr.(faultyCluster); ok {
			c.c.Start()
		}
		mu.Lock()
		healed := maps.Clone(acked)
		mu.Unlock()
		start := time.Now()
		// A multi-node site's objects cost far more CPU, and every node
		// of both sites shares this machine's cores.
		testsite.Eventually(t, time.Duration(60*nodes)*time.Second, func() error {
			var behind error
			mu.Lock()
			for name, n := range healed {
				if floor[name] < int64(n) {
					behind = fmt.Errorf("%s: the DR site verified version %d of the %d the primary had when the faults ended", name, floor[name], n)
					break
				}
			}
			mu.Unlock()
			if behind == nil {
				return nil
			}
			backlog := "unknown"
			if st, err := admP.ReplicateStatus(ctx); err == nil && len(st.Targets) > 0 {
				backlog = fmt.Sprintf("%d pending, %d retrying", st.Targets[0].Pending, st.Targets[0].Retrying)
			}
			return fmt.Errorf("%w (the primary's backlog: %s)", behind, backlog)
		})
		counts["caught-up-ms"] = int(time.Since(start).Milliseconds())
	}
	primary.kill()
	close(stop)
	wg.Wait()
	if c, ok := dr.(faultyCluster); ok {
		c.c.Start() // every node that a kill left starting is ready
	}
	t.Logf("faults: %v; appends acknowledged: %v; outcome unknown: %v; verified on the DR site before the primary died: %v",
		counts, acked, unknown, floor)

	op.must("table", "replicate", "failover", "myreplica")
	testsite.Eventually(t, 30*time.Second, func() error {
		if st := op.status("myreplica"); st.State != "disabled" || st.Promoting {
			return fmt.Errorf("state %s promoting %t", st.State, st.Promoting)
		}
		return nil
	})
	catD := icetest.Catalog(t, "http://"+drAddr, rootUser, rootSecret, "lake")
	for _, name := range tablesFaultTables {
		id := table.Identifier{"n", name}
		tbl, err := catD.LoadTable(ctx, id)
		if err != nil {
			t.Errorf("%s on the promoted site: %v", name, err)
			continue
		}
		if v := version(tbl); v < floor[name] {
			t.Errorf("%s: the promoted site serves version %d, older than the %d its scanner verified", name, v, floor[name])
		}
		ids, err := icetest.ScanIDs(ctx, tbl)
		if err != nil {
			t.Errorf("%s at version %d: %v", name, version(tbl), err)
			continue
		}
		k := int64(len(ids)) / 10
		most := int64(acked[name])
		if unknown[name] {
			most++
		}
		if !slices.Equal(ids, icetest.Seq(0, 10*k)) || k > most {
			t.Errorf("%s at version %d: %d rows, want the first 10×k ids for k ≤ %d appends: %v", name, version(tbl), len(ids), most, ids)
			continue
		}
		// The promoted site takes writes.
		data := icetest.Rows(10*k, 10*k+10)
		next, err := tbl.AppendTable(ctx, data, 1024, nil)
		data.Release()
		if err != nil {
			t.Errorf("%s: append on the promoted site: %v", name, err)
			continue
		}
		if ids, err := icetest.ScanIDs(ctx, next); err != nil || !slices.Equal(ids, icetest.Seq(0, 10*k+10)) {
			t.Errorf("%s after an append on the promoted site: %v %v", name, ids, err)
		}
		t.Logf("%s: %d of %d acknowledged appends on the promoted site (version %d, scanner had verified %d)",
			name, k, acked[name], version(tbl), floor[name])
	}
}
