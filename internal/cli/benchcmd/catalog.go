package benchcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/bench"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// benchCatalogFlags are the flags of bench catalog.
type benchCatalogFlags struct {
	warehouse   string
	tables      int
	hotTables   int
	concurrency int
	duration    time.Duration
	count       int64
	reads       int64
	snapshots   int
	pageSize    int
	writers     int
	purgeFiles  int
	keep        bool
}

func newBenchCatalogCmd(opts *cmdutil.Options) *cobra.Command {
	var f benchCatalogFlags
	cmd := &cobra.Command{
		Use:   "catalog ALIAS",
		Short: "Measure Iceberg catalog commit throughput and load/list latency",
		Long: `Phases, each at --concurrency:
  commit-1     commits (set-properties) to one table: commits/s and latency
  commit-N     commits spread over --hot-tables tables
  commit-1-Ww  commits to one table from exactly --writers concurrent writers
               (default 3): the latency an engine sees when others write the
               same table
  create       creates --tables tables in one namespace
  load         loads random tables among them (--reads operations)
  list         lists all --tables tables in one call (--reads/10 operations)
  list-paged   lists them page by page, --page-size names a page (each
               operation is a whole listing; --reads/10 operations)
  load-all, load-refs, load-304
               load one table of --snapshots snapshots with snapshots=all,
               with snapshots=refs, and with If-None-Match answered 304
               (--reads/10 operations each)
  purge        drops with purgeRequested a table of --purge-files data files
               (1 KiB objects written first, in manifests of 1,000): one
               operation; keys_per_sec is the files deleted per second
Commit phases run for --duration or --count operations. The bench works in a
fresh namespace of --warehouse (created if missing; default a new
twinlake-bench-* warehouse) and removes what it created unless --keep.`,
		Example: `  twinlake bench catalog site1
  twinlake bench catalog site1 --tables 10000 --concurrency 32 --duration 20s --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("count") {
				f.duration = 0
			}
			return runBenchCatalog(cmd, opts, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.warehouse, "warehouse", "", "warehouse to use (created if missing; default a new twinlake-bench-* warehouse)")
	fl.IntVar(&f.tables, "tables", 10000, "tables to create for the load and list phases")
	fl.IntVar(&f.hotTables, "hot-tables", 64, "tables the commit-N phase spreads commits over")
	fl.IntVar(&f.concurrency, "concurrency", 16, "operations in flight at once")
	fl.DurationVar(&f.duration, "duration", 10*time.Second, "length of each commit phase")
	fl.Int64Var(&f.count, "count", 0, "operations per commit phase, instead of --duration")
	fl.Int64Var(&f.reads, "reads", 2000, "load operations (list runs a tenth as many, at least 5)")
	fl.IntVar(&f.snapshots, "snapshots", 10000, "snapshots of the table the load-all/refs/304 phases load (0 skips them)")
	fl.IntVar(&f.pageSize, "page-size", 100, "page size of the list-paged phase")
	fl.IntVar(&f.writers, "writers", 3, "concurrent writers of the commit-1-Ww phase")
	fl.IntVar(&f.purgeFiles, "purge-files", 5000, "data files of the table the purge phase drops (0 skips it)")
	fl.BoolVar(&f.keep, "keep", false, "keep the namespace, tables (and warehouse) created")
	cmd.MarkFlagsMutuallyExclusive("duration", "count")
	return cmd
}

// benchCatalogReport is the --json output of bench catalog.
type BenchCatalogReport struct {
	Alias       string      `json:"alias"`
	Warehouse   string      `json:"warehouse"`
	Namespace   string      `json:"namespace"`
	Tables      int         `json:"tables"`
	Concurrency int         `json:"concurrency"`
	Results     []bench.Row `json:"results"`
}

// catalogBench is one bench catalog run.
type catalogBench struct {
	c    *adminclient.CatalogClient
	s3   *minio.Client
	wh   string
	ns   []string
	conc int
}

var benchSchema = json.RawMessage(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":false},{"id":2,"name":"v","type":"string","required":false}]}`)

func runBenchCatalog(cmd *cobra.Command, opts *cmdutil.Options, aliasName string, f benchCatalogFlags) error {
	phase := bench.Config{Concurrency: f.concurrency, Count: f.count, Duration: f.duration, StopOnError: true}
	if err := phase.Validate(); err != nil {
		return err
	}
	if f.tables < 1 || f.hotTables < 1 || f.reads < 1 || f.pageSize < 1 || f.writers < 1 {
		return fmt.Errorf("--tables, --hot-tables, --reads, --page-size and --writers must be at least 1")
	}
	if f.purgeFiles < 0 || f.purgeFiles > maxPurgeFiles {
		return fmt.Errorf("--purge-files must be from 0 to %d", maxPurgeFiles)
	}
	ctx := cmd.Context()
	id := benchRunID()
	wh := f.warehouse
	if wh == "" {
		wh = "twinlake-bench-" + id
	}
	adm, err := opts.AdminClient(aliasName)
	if err != nil {
		return err
	}
	w, err := adm.CreateWarehouse(ctx, wh, adminclient.WarehouseCreateRequest{IgnoreExisting: true})
	if err != nil {
		return fmt.Errorf("bench warehouse %s: %w", wh, err)
	}
	c, err := opts.CatalogClient(aliasName, wh)
	if err != nil {
		return err
	}
	s3, err := opts.S3Client(aliasName)
	if err != nil {
		return err
	}
	b := &catalogBench{c: c, s3: s3, wh: wh, ns: []string{"bench_" + id}, conc: f.concurrency}
	if _, err := c.CreateNamespace(ctx, b.ns, nil); err != nil {
		return fmt.Errorf("bench namespace: %w", err)
	}
	rep := BenchCatalogReport{Alias: aliasName, Warehouse: wh, Namespace: b.ns[0], Tables: f.tables, Concurrency: f.concurrency}
	if !f.keep {
		defer b.cleanup(ctx, cmd, adm, wh, w.Changed, f)
	}
	err = b.run(ctx, cmd, f, phase, &rep)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if opts.JSON {
		return cmdutil.PrintResult(out, opts, rep, "")
	}
	fmt.Fprintf(out, "bench catalog %s: warehouse %s, %d tables, concurrency %d, commit phases %s\n",
		aliasName, wh, f.tables, f.concurrency, benchBound(phase))
	if err := bench.WriteTable(out, rep.Results); err != nil {
		return err
	}
	for _, r := range rep.Results {
		if r.KeysPerSec > 0 {
			fmt.Fprintf(out, "%s: files deleted per second: %.0f\n", r.Op, r.KeysPerSec)
		}
	}
	return nil
}

// maxPurgeFiles bounds --purge-files.
const maxPurgeFiles = 1_000_000

func (b *catalogBench) ident(prefix string, i int64) adminclient.CatalogIdent {
	return adminclient.CatalogIdent{Namespace: b.ns, Name: fmt.Sprintf("%s%06d", prefix, i)}
}

// phaseRow runs one phase and appends its row; a failed op ends the bench.
func (b *catalogBench) phaseRow(ctx context.Context, cmd *cobra.Command, rep *BenchCatalogReport, name string, cfg bench.Config, op bench.Op) error {
	fmt.Fprintf(cmd.ErrOrStderr(), "bench: %s ...\n", name)
	res, err := runPhase(ctx, cmd, name, cfg, 0, op)
	rep.Results = append(rep.Results, bench.NewRow(name, 0, cfg.Concurrency, res))
	switch {
	case err != nil:
		return fmt.Errorf("bench %s: %w", name, err)
	case res.Errors > 0:
		return fmt.Errorf("bench %s: %d operation(s) failed, first: %w", name, res.Errors, res.FirstErr)
	}
	return nil
}

func (b *catalogBench) run(ctx context.Context, cmd *cobra.Command, f benchCatalogFlags, phase bench.Config, rep *BenchCatalogReport) error {
	create := func(ctx context.Context, id adminclient.CatalogIdent) error {
		_, err := b.c.CreateTable(ctx, id.Namespace, adminclient.CatalogCreateTable{Name: id.Name, Schema: benchSchema})
		return err
	}
	hot := int64(f.hotTables)
	setup := bench.Config{Concurrency: b.conc, Count: hot, StopOnError: true}
	if _, err := bench.Run(ctx, setup, func(ctx context.Context, seq int64) error { return create(ctx, b.ident("hot", seq)) }); err != nil {
		return err
	}
	commit := func(ctx context.Context, id adminclient.CatalogIdent, seq int64) error {
		upd := json.RawMessage(`[{"action":"set-properties","updates":{"bench.seq":"` + strconv.FormatInt(seq, 10) + `"}}]`)
		_, err := b.c.CommitTable(ctx, id, json.RawMessage(`[]`), upd)
		return err
	}
	if err := b.phaseRow(ctx, cmd, rep, "commit-1", phase, func(ctx context.Context, seq int64) error {
		return commit(ctx, b.ident("hot", 0), seq)
	}); err != nil {
		return err
	}
	if err := b.phaseRow(ctx, cmd, rep, fmt.Sprintf("commit-%d", hot), phase, func(ctx context.Context, seq int64) error {
		return commit(ctx, b.ident("hot", seq%hot), seq)
	}); err != nil {
		return err
	}
	writers := phase
	writers.Concurrency = f.writers
	if err := b.phaseRow(ctx, cmd, rep, fmt.Sprintf("commit-1-%dw", f.writers), writers, func(ctx context.Context, seq int64) error {
		return commit(ctx, b.ident("hot", hot-1), seq)
	}); err != nil {
		return err
	}
	n := int64(f.tables)
	if err := b.phaseRow(ctx, cmd, rep, "create", bench.Config{Concurrency: b.conc, Count: n, StopOnError: true},
		func(ctx context.Context, seq int64) error { return create(ctx, b.ident("t", seq)) }); err != nil {
		return err
	}
	if err := b.phaseRow(ctx, cmd, rep, "load", bench.Config{Concurrency: b.conc, Count: f.reads, StopOnError: true},
		func(ctx context.Context, seq int64) error {
			_, err := b.c.LoadTable(ctx, b.ident("t", (seq*7919)%n))
			return err
		}); err != nil {
		return err
	}
	lists := max(f.reads/10, 5)
	if err := b.phaseRow(ctx, cmd, rep, fmt.Sprintf("list-%d", n+hot), bench.Config{Concurrency: 1, Count: lists, StopOnError: true},
		func(ctx context.Context, seq int64) error {
			ids, err := b.c.ListTables(ctx, b.ns, 0)
			if err == nil && int64(len(ids)) != n+hot {
				err = fmt.Errorf("listed %d tables, want %d", len(ids), n+hot)
			}
			return err
		}); err != nil {
		return err
	}
	if err := b.phaseRow(ctx, cmd, rep, fmt.Sprintf("list-paged-%d", f.pageSize), bench.Config{Concurrency: 1, Count: lists, StopOnError: true},
		func(ctx context.Context, seq int64) error {
			ids, err := b.c.ListTables(ctx, b.ns, f.pageSize)
			if err != nil {
				return err
			}
			seen := make(map[string]bool, len(ids))
			for _, id := range ids {
				seen[id.Name] = true
			}
			if int64(len(ids)) != n+hot || int64(len(seen)) != n+hot {
				return fmt.Errorf("paged listing returned %d names (%d distinct), want %d", len(ids), len(seen), n+hot)
			}
			return nil
		}); err != nil {
		return err
	}
	if f.snapshots > 0 {
		if err := b.loadPhases(ctx, cmd, rep, f.snapshots, bench.Config{Concurrency: b.conc, Count: lists, StopOnError: true}); err != nil {
			return err
		}
	}
	if f.purgeFiles > 0 {
		return b.purgePhase(ctx, cmd, rep, f.purgeFiles)
	}
	return nil
}

// createTable creates table id of the bench's schema and returns its
// location.
func (b *catalogBench) createTable(ctx context.Context, id adminclient.CatalogIdent) (string, error) {
	res, err := b.c.CreateTable(ctx, id.Namespace, adminclient.CatalogCreateTable{Name: id.Name, Schema: benchSchema})
	if err != nil {
		return "", err
	}
	var md struct {
		Location string `json:"location"`
	}
	if err := json.Unmarshal(res.Metadata, &md); err != nil {
		return "", fmt.Errorf("bench: the metadata of table %s: %w", id.Name, err)
	}
	return md.Location, nil
}

// loadPhases builds a table of n snapshots (metadata only: add-snapshot
// commits of 1,000 snapshots each, naming a manifest list that is never
// read) and measures loading it with snapshots=all, =refs and a 304.
func (b *catalogBench) loadPhases(ctx context.Context, cmd *cobra.Command, rep *BenchCatalogReport, n int, cfg bench.Config) error {
	id := b.ident("snaps", 0)
	location, err := b.createTable(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "bench: building a table of %d snapshots ...\n", n)
	now := time.Now().UnixMilli()
	for from := 1; from <= n; from += 1000 {
		var upd []map[string]any
		for i := from; i < from+1000 && i <= n; i++ {
			snap := map[string]any{"snapshot-id": i, "sequence-number": i, "timestamp-ms": now + int64(i),
				"manifest-list": fmt.Sprintf("%s/metadata/snap-%d.avro", location, i),
				"summary":       map[string]string{"operation": "append"}, "schema-id": 0}
			if i > 1 {
				snap["parent-snapshot-id"] = i - 1
			}
			upd = append(upd, map[string]any{"action": "add-snapshot", "snapshot": snap})
			if i == from+999 || i == n {
				upd = append(upd, map[string]any{"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": i})
			}
		}
		raw, err := json.Marshal(upd)
		if err != nil {
			return err
		}
		if _, err := b.c.CommitTable(ctx, id, json.RawMessage(`[]`), raw); err != nil {
			return fmt.Errorf("bench: build the snapshots table: %w", err)
		}
	}
	cur, err := b.c.LoadTableWith(ctx, id, adminclient.LoadTableOptions{})
	if err != nil {
		return err
	}
	for _, p := range []struct {
		name string
		opts adminclient.LoadTableOptions
	}{
		{"load-all", adminclient.LoadTableOptions{Snapshots: "all"}},
		{"load-refs", adminclient.LoadTableOptions{Snapshots: "refs"}},
		{"load-304", adminclient.LoadTableOptions{IfNoneMatch: cur.ETag}},
	} {
		name := fmt.Sprintf("%s-%dsnap", p.name, n)
		if err := b.phaseRow(ctx, cmd, rep, name, cfg, func(ctx context.Context, _ int64) error {
			r, err := b.c.LoadTableWith(ctx, id, p.opts)
			if err == nil && p.opts.IfNoneMatch != "" && !r.NotModified {
				err = fmt.Errorf("load with If-None-Match %s: not 304", p.opts.IfNoneMatch)
			}
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

// cleanup drops every table, the namespace and (if the bench created it)
// the warehouse; a failure is reported, not returned.
func (b *catalogBench) cleanup(ctx context.Context, cmd *cobra.Command, adm *adminclient.Client, wh string, createdWH bool, f benchCatalogFlags) {
	ctx, cancel := cleanupContext(ctx)
	defer cancel()
	ids, err := b.c.ListTables(ctx, b.ns, 0)
	if err == nil {
		_, err = bench.Run(ctx, bench.Config{Concurrency: b.conc, Count: max(int64(len(ids)), 1)}, func(ctx context.Context, seq int64) error {
			if seq >= int64(len(ids)) {
				return nil
			}
			return b.c.DropTable(ctx, ids[seq], false)
		})
	}
	if err == nil {
		err = b.c.DropNamespace(ctx, b.ns)
	}
	if err == nil && createdWH {
		err = adm.RemoveWarehouse(ctx, wh)
	}
	if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "bench: cleanup: %v\n", err)
	}
}
