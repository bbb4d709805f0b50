package benchcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/bench"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

type benchScannerFlags struct {
	tables      int
	burst       int
	concurrency int
	interval    time.Duration
	timeout     time.Duration
}

func newBenchScannerCmd(opts *cmdutil.Options) *cobra.Command {
	var f benchScannerFlags
	cmd := &cobra.Command{
		Use:   "scanner PRIMARY REPLICA",
		Short: "Measure the replica catalog scanner: idle cycle time and catch-up after a burst of commits",
		Long: `Creates --tables tables in a new warehouse on PRIMARY and waits until REPLICA's
scanner has verified them all; then measures the replica's scanner cycle time
while nothing changes (it should not grow with the number of tables); then
commits --burst times across the tables on PRIMARY and measures how long after the
last commit the replica has verified every new version. The replica's
replica_catalog_scan_interval is set to --interval for the run and restored
after. PRIMARY and REPLICA must be joined with REPLICA the Tables replica (see
'twinlake demo'). The warehouse is left in place; remove it with 'table
warehouse remove' after dropping its tables, or reset the demo.`,
		Example: `  twinlake bench scanner primary dr --tables 10000 --burst 1000
  twinlake bench scanner primary dr --tables 500 --burst 200 --json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBenchScanner(cmd, opts, args[0], args[1], f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.tables, "tables", 10000, "tables to create")
	fl.IntVar(&f.burst, "burst", 1000, "commits in the burst")
	fl.IntVar(&f.concurrency, "concurrency", 16, "requests in flight at once on the primary")
	fl.DurationVar(&f.interval, "interval", time.Second, "replica scan interval during the run")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Minute, "how long to wait for the replica to catch up")
	return cmd
}

// benchScannerReport is the --json output of bench scanner.
type benchScannerReport struct {
	Primary           string      `json:"primary"`
	Replica           string      `json:"replica"`
	Warehouse         string      `json:"warehouse"`
	Tables            int         `json:"tables"`
	InitialCatchUpSec float64     `json:"initial_catch_up_seconds"`
	IdleCycleMs       float64     `json:"idle_cycle_ms"`
	Burst             int         `json:"burst"`
	BurstVerifySec    float64     `json:"burst_verified_after_last_commit_seconds"`
	Results           []bench.Row `json:"results"`
}

func runBenchScanner(cmd *cobra.Command, opts *cmdutil.Options, primary, replica string, f benchScannerFlags) error {
	if f.tables < 1 || f.burst < 0 || f.concurrency < 1 {
		return fmt.Errorf("--tables and --concurrency must be at least 1, --burst at least 0")
	}
	ctx := cmd.Context()
	padm, err := opts.AdminClient(primary)
	if err != nil {
		return err
	}
	radm, err := opts.AdminClient(replica)
	if err != nil {
		return err
	}
	st, err := radm.TablesReplicationStatus(ctx, 0, 1)
	if err != nil {
		return fmt.Errorf("%s: %w", replica, err)
	}
	if st.State == "disabled" {
		return fmt.Errorf("%s is not the Tables replica (set tables replica_catalog=on there)", replica)
	}
	cfg, err := radm.GetConfig(ctx, "tables")
	if err != nil {
		return err
	}
	for _, kv := range cfg.Keys {
		if kv.Key == "replica_catalog_scan_interval" && kv.Source != "default" {
			defer radm.SetConfig(context.WithoutCancel(ctx), "tables", map[string]string{kv.Key: kv.Value})
		} else if kv.Key == "replica_catalog_scan_interval" {
			defer radm.SetConfig(context.WithoutCancel(ctx), "tables", map[string]string{kv.Key: ""})
		}
	}
	if _, err := radm.SetConfig(ctx, "tables", map[string]string{"replica_catalog_scan_interval": f.interval.String()}); err != nil {
		return err
	}
	id := benchRunID()
	wh := "twinlake-scan-" + id
	if _, err := padm.CreateWarehouse(ctx, wh, adminclient.WarehouseCreateRequest{}); err != nil {
		return fmt.Errorf("bench warehouse %s: %w", wh, err)
	}
	c, err := opts.CatalogClient(primary, wh)
	if err != nil {
		return err
	}
	ns := []string{"bench"}
	if _, err := c.CreateNamespace(ctx, ns, nil); err != nil {
		return err
	}
	ident := func(i int64) adminclient.CatalogIdent {
		return adminclient.CatalogIdent{Namespace: ns, Name: fmt.Sprintf("t%06d", i)}
	}
	rep := benchScannerReport{Primary: primary, Replica: replica, Warehouse: wh, Tables: f.tables, Burst: f.burst}
	errOut := cmd.ErrOrStderr()
	fmt.Fprintf(errOut, "bench: creating %d tables on %s ...\n", f.tables, primary)
	start := time.Now()
	create, err := runPhase(ctx, cmd, "create tables", bench.Config{Concurrency: f.concurrency, Count: int64(f.tables), StopOnError: true}, 0,
		func(ctx context.Context, seq int64) error {
			_, err := c.CreateTable(ctx, ns, adminclient.CatalogCreateTable{Name: ident(seq).Name, Schema: benchSchema})
			return err
		})
	if err := benchPhaseErr("create", 0, create, err); err != nil {
		return err
	}
	rep.Results = append(rep.Results, bench.NewRow("create", 0, f.concurrency, create))
	fmt.Fprintf(errOut, "bench: waiting for %s to verify them ...\n", replica)
	if err := waitReplicaVerified(ctx, radm, wh, f.tables, nil, f.timeout); err != nil {
		return err
	}
	rep.InitialCatchUpSec = time.Since(start).Seconds()

	// Idle cycles: nothing changes; read the scanner's own cycle time.
	first, err := radm.TablesReplicationStatus(ctx, 0, 1)
	if err != nil {
		return err
	}
	idle := &bench.Histogram{}
	deadline := time.Now().Add(10*f.interval + 30*time.Second)
	last := first.Cycles
	for idle.Count() < 5 && time.Now().Before(deadline) {
		time.Sleep(f.interval / 4)
		s, err := radm.TablesReplicationStatus(ctx, 0, 1)
		if err != nil {
			return err
		}
		if s.Cycles > last {
			last = s.Cycles
			idle.Record(s.CycleTime)
		}
	}
	rep.IdleCycleMs = float64(idle.Percentile(50)) / float64(time.Millisecond)
	rep.Results = append(rep.Results, bench.NewRow("idle-cycle", 0, 1, bench.Result{Ops: int64(idle.Count()), Latency: idle}))

	if f.burst > 0 {
		fmt.Fprintf(errOut, "bench: burst of %d commits on %s ...\n", f.burst, primary)
		want := map[string]int64{}
		commits, err := runPhase(ctx, cmd, "commits", bench.Config{Concurrency: f.concurrency, Count: int64(f.burst), StopOnError: true}, 0,
			func(ctx context.Context, seq int64) error {
				upd := json.RawMessage(`[{"action":"set-properties","updates":{"bench.seq":"` + strconv.FormatInt(seq, 10) + `"}}]`)
				_, err := c.CommitTable(ctx, ident(seq%int64(f.tables)), json.RawMessage(`[]`), upd)
				return err
			})
		if err := benchPhaseErr("commit", 0, commits, err); err != nil {
			return err
		}
		lastCommit := time.Now()
		rep.Results = append(rep.Results, bench.NewRow("burst-commit", 0, f.concurrency, commits))
		for i := 0; i < f.burst; i++ {
			want[ident(int64(i%f.tables)).Name]++
		}
		if err := waitReplicaVerified(ctx, radm, wh, f.tables, want, f.timeout); err != nil {
			return err
		}
		rep.BurstVerifySec = time.Since(lastCommit).Seconds()
	}
	out := cmd.OutOrStdout()
	if opts.JSON {
		return cmdutil.PrintResult(out, opts, rep, "")
	}
	if err := bench.WriteTable(out, rep.Results); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n%d tables: replica caught up %.2fs after the first create; idle scanner cycle p50 %.3f ms; burst of %d commits verified %.2fs after the last one\n",
		f.tables, rep.InitialCatchUpSec, rep.IdleCycleMs, f.burst, rep.BurstVerifySec)
	return nil
}

// waitReplicaVerified polls the replica until every table of wh is OK and,
// for the tables in bumped, at least that many versions past creation.
func waitReplicaVerified(ctx context.Context, c *adminclient.Client, wh string, tables int, bumped map[string]int64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		st, err := c.TablesReplicationStatus(ctx, 0, 0)
		if err != nil {
			return err
		}
		ok, seen := 0, 0
		for _, e := range st.Entries {
			if e.Warehouse != wh || e.Kind != "table" {
				continue
			}
			seen++
			if e.Status == "OK" && e.Verified >= bumped[e.Name] {
				ok++
			}
		}
		if ok == tables && seen == tables {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("replica verified %d of %d tables within %s", ok, tables, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
