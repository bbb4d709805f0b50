package benchcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/bench"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
	"github.com/twinlake/twinlake/internal/trace"
)

type benchReplFlags struct {
	bucket      string
	size        string
	concurrency int
	duration    time.Duration
	rate        float64
	drain       time.Duration
	baseline    string
}

func newBenchReplicationCmd(opts *cmdutil.Options) *cobra.Command {
	var f benchReplFlags
	cmd := &cobra.Command{
		Use:   "replication SOURCE TARGET",
		Short: "Measure replication throughput and lag between two joined sites",
		Long: `Writes objects to SOURCE under a steady PUT load (as fast as --concurrency
allows, or paced to --rate PUTs per second) while following TARGET's trace of
received replication; then waits for the backlog to drain. It reports the PUT
rate at the source, the replication rate (objects applied at the target per
second, from the first PUT to the last arrival) and the lag percentiles: for each
object, the time from its PUT being acknowledged at the source to its copy
being committed at the target. SOURCE and TARGET must be aliases of sites joined
by site replication (see 'twinlake demo').

With --baseline ALIAS (a site outside site replication, on comparable
hardware), two unpaced PUT phases run first: one against the baseline site
alone and one against SOURCE, each as fast as --concurrency allows; the
report adds both rates and their ratio, the PUT rate SOURCE keeps with
replication on, and each site's CPU time per PUT. The objects of the SOURCE
phase must reach TARGET (SOURCE's backlog to it empty, and TARGET holding
them all) before the measured (paced) phase starts; their flushes and
compactions may still run during it, so measure the lag alone without
--baseline. TARGET's trace is followed in the measured phase only, so its
cost is not counted in the unpaced phases.`,
		Example: `  twinlake bench replication primary dr
  twinlake bench replication primary dr --size 4KiB --concurrency 16 --duration 30s --rate 1000 --json
  twinlake bench replication primary dr --baseline standalone --duration 10s --rate 800 --json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBenchReplication(cmd, opts, args[0], args[1], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.bucket, "bucket", "", "bucket to write (created if missing; default a new twinlake-bench-* bucket)")
	fl.StringVar(&f.size, "size", "4KiB", "object size")
	fl.IntVar(&f.concurrency, "concurrency", 16, "PUTs in flight at once")
	fl.DurationVar(&f.duration, "duration", 10*time.Second, "length of the PUT load")
	fl.Float64Var(&f.rate, "rate", 0, "PUTs per second to pace the load at (0: as fast as possible)")
	fl.DurationVar(&f.drain, "drain-timeout", 2*time.Minute, "how long to wait for the target to catch up")
	fl.StringVar(&f.baseline, "baseline", "", "also measure the unpaced PUT rate of this site (outside replication) and of SOURCE, and their ratio")
	return cmd
}

// benchReplReport is the --json output of bench replication.
type benchReplReport struct {
	Source        string  `json:"source"`
	Target        string  `json:"target"`
	Bucket        string  `json:"bucket"`
	Size          int64   `json:"size"`
	Rate          float64 `json:"rate,omitempty"`
	Written       int64   `json:"written"`
	Replicated    int64   `json:"replicated"`
	Missing       int64   `json:"missing"`
	DrainSeconds  float64 `json:"drain_seconds"`
	PutOpsPerSec  float64 `json:"put_ops_per_sec"`
	ReplOpsPerSec float64 `json:"replicated_ops_per_sec"`
	// With --baseline: the unpaced PUT rates of the baseline site alone
	// and of SOURCE with replication on, and the second over the first.
	Baseline             string  `json:"baseline,omitempty"`
	BaselinePutOpsPerSec float64 `json:"baseline_put_ops_per_sec,omitempty"`
	MaxPutOpsPerSec      float64 `json:"max_put_ops_per_sec,omitempty"`
	OnOffRatio           float64 `json:"on_off_ratio,omitempty"`
	// Where the cost goes, with --baseline: the CPU time each site's
	// servers (all nodes of a multi-node site) spent per PUT of the
	// unpaced phases (the baseline site alone; the source, and the target
	// applying the copies, replicating), from their admin info. Absent when a site cannot
	// tell.
	BaselineCPUPerPut float64 `json:"baseline_cpu_us_per_put,omitempty"`
	SourceCPUPerPut   float64 `json:"source_cpu_us_per_put,omitempty"`
	TargetCPUPerPut   float64 `json:"target_cpu_us_per_put,omitempty"`
	// The most resident memory any server of each site had held since it
	// started, read after the unpaced phases, in MiB; absent when a site
	// cannot tell.
	BaselinePeakRSSMiB float64     `json:"baseline_peak_rss_mib,omitempty"`
	SourcePeakRSSMiB   float64     `json:"source_peak_rss_mib,omitempty"`
	TargetPeakRSSMiB   float64     `json:"target_peak_rss_mib,omitempty"`
	Results            []bench.Row `json:"results"`
}

// arrivals records when each key's copy was committed at the target.
type arrivals struct {
	mu   sync.Mutex
	at   map[string]time.Time
	last time.Time
	seen chan struct{}
}

func (a *arrivals) add(key string, t time.Time) {
	a.mu.Lock()
	if _, ok := a.at[key]; !ok {
		a.at[key] = t
		if t.After(a.last) {
			a.last = t
		}
	}
	a.mu.Unlock()
	select {
	case a.seen <- struct{}{}:
	default:
	}
}

func (a *arrivals) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.at)
}

func runBenchReplication(cmd *cobra.Command, opts *cmdutil.Options, srcAlias, dstAlias string, f benchReplFlags) error {
	size, err := bench.ParseSize(f.size)
	if err != nil {
		return err
	}
	cfg := bench.Config{Concurrency: f.concurrency, Duration: f.duration, StopOnError: true}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if f.rate < 0 {
		return errors.New("--rate must not be negative")
	}
	src, err := opts.LookupAlias(srcAlias)
	if err != nil {
		return err
	}
	sc, err := newBenchClient(src, f.concurrency)
	if err != nil {
		return err
	}
	dstAdmin, err := opts.AdminClient(dstAlias)
	if err != nil {
		return err
	}
	dc, err := opts.S3Client(dstAlias)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	id := benchRunID()
	b := &s3Bench{c: sc, bucket: f.bucket, prefix: "twinlake-bench/" + id + "/"}
	if b.bucket == "" {
		b.bucket = "twinlake-bench-" + id
	}
	created, err := b.ensureBucket(ctx)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := cleanupContext(ctx)
		defer cancel()
		b.cleanup(cctx, cmd, b.prefix)
		if created {
			b.removeBucket(cctx, cmd)
		}
	}()
	// Wait for the bucket to reach the target before loading it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, err := dc.BucketExists(ctx, b.bucket)
		if err == nil && ok {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bucket %s did not reach %s within 30s: is site replication configured?", b.bucket, dstAlias)
		}
		time.Sleep(50 * time.Millisecond)
	}

	payload := bench.Payload(size, uint64(time.Now().UnixNano()))
	putTo := func(ctx context.Context, c *minio.Client, key string) error {
		_, err := c.PutObject(ctx, b.bucket, key, bytes.NewReader(payload), size,
			minio.PutObjectOptions{DisableMultipart: true, DisableContentSha256: true, ContentType: "application/octet-stream"})
		return err
	}
	var extraRows []bench.Row
	var cmp *onOff
	if f.baseline != "" {
		cmp, err = b.measureOnOff(cmd, opts, f, size, srcAlias, dstAlias, putTo)
		if err != nil {
			return err
		}
		extraRows = cmp.rows
	}
	// The trace is followed in the paced phase only: streaming an event per
	// copy costs the target and this process CPU the unpaced phases would
	// count as replication's.
	arr := &arrivals{at: map[string]time.Time{}, seen: make(chan struct{}, 1)}
	tctx, stopTrace := context.WithCancel(ctx)
	defer stopTrace()
	stream, err := dstAdmin.Trace(tctx, adminclient.TraceOptions{Types: trace.Replication, FuncName: "replication.Receive", Path: b.bucket + "/" + b.prefix + "*"})
	if err != nil {
		return fmt.Errorf("trace %s: %w", dstAlias, err)
	}
	traceDone := make(chan error, 1)
	go func() {
		defer stream.Close()
		for stream.Next() {
			ev := stream.Event()
			if ev.Error != "" {
				continue
			}
			key := strings.TrimPrefix(ev.Path, b.bucket+"/")
			arr.add(key, ev.Time.Add(ev.Duration))
		}
		traceDone <- stream.Err()
	}()

	arrivedBefore := arr.count()
	var ackMu sync.Mutex
	acks := map[string]time.Time{}
	start := time.Now()
	fmt.Fprintf(cmd.ErrOrStderr(), "bench: PUT %s to %s for %s, following %s ...\n", bench.FormatSize(size), srcAlias, f.duration, dstAlias)
	paced := cfg
	paced.Rate = f.rate
	put, err := runPhase(ctx, cmd, "PUT", paced, size, func(ctx context.Context, seq int64) error {
		key := benchKey(b.prefix, seq)
		err := putTo(ctx, sc, key)
		if err == nil {
			ackMu.Lock()
			acks[key] = time.Now()
			ackMu.Unlock()
		}
		return err
	})
	if err := benchPhaseErr("PUT", size, put, err); err != nil {
		return err
	}
	loadEnd := time.Now()
	// Drain: wait until every acknowledged key arrived, or the timeout.
	drainDeadline := time.After(f.drain)
	for arr.count()-arrivedBefore < len(acks) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-traceDone:
			return fmt.Errorf("trace stream of %s ended: %v", dstAlias, err)
		case <-drainDeadline:
			fmt.Fprintf(cmd.ErrOrStderr(), "bench: %d of %d objects had not arrived after %s\n", len(acks)-(arr.count()-arrivedBefore), len(acks), f.drain)
		case <-arr.seen:
			continue
		case <-time.After(time.Second):
			continue
		}
		break
	}
	stopTrace()

	lag := &bench.Histogram{}
	arr.mu.Lock()
	var replicated int64
	for key, ack := range acks {
		at, ok := arr.at[key]
		if !ok {
			continue
		}
		replicated++
		lag.Record(max(at.Sub(ack), 0))
	}
	last := arr.last
	arr.mu.Unlock()
	window := last.Sub(start)
	if window <= 0 {
		window = time.Since(start)
	}
	rep := benchReplReport{Source: srcAlias, Target: dstAlias, Bucket: b.bucket, Size: size, Rate: f.rate,
		Written: int64(len(acks)), Replicated: replicated, Missing: int64(len(acks)) - replicated,
		DrainSeconds: max(last.Sub(loadEnd), 0).Seconds(), PutOpsPerSec: put.OpsPerSec(),
		ReplOpsPerSec: float64(replicated) / window.Seconds()}
	rep.Results = append(extraRows,
		bench.NewRow("PUT", size, f.concurrency, put),
		bench.NewRow("REPLICATE(lag)", size, f.concurrency, bench.Result{Ops: replicated, Elapsed: window, Latency: lag}),
	)
	if cmp != nil {
		rep.Baseline, rep.BaselinePutOpsPerSec, rep.MaxPutOpsPerSec = f.baseline, cmp.alone, cmp.replicated
		rep.OnOffRatio = cmp.replicated / max(cmp.alone, 1e-9)
		rep.BaselineCPUPerPut, rep.SourceCPUPerPut, rep.TargetCPUPerPut = cmp.cpuAlone, cmp.cpuSource, cmp.cpuTarget
		rep.BaselinePeakRSSMiB, rep.SourcePeakRSSMiB, rep.TargetPeakRSSMiB = cmp.peakAlone, cmp.peakSource, cmp.peakTarget
	}
	w := cmd.OutOrStdout()
	if opts.JSON {
		return cmdutil.PrintResult(w, opts, rep, "")
	}
	if err := bench.WriteTable(w, rep.Results); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nwritten %d, replicated %d, missing %d; source PUT %.1f ops/s, replicated %.1f ops/s (%.0f%%); drained %.2fs after the load stopped\n",
		rep.Written, rep.Replicated, rep.Missing, rep.PutOpsPerSec, rep.ReplOpsPerSec, 100*rep.ReplOpsPerSec/max(rep.PutOpsPerSec, 1e-9), rep.DrainSeconds)
	if cmp != nil {
		fmt.Fprintf(w, "unpaced PUT: %s alone %.1f ops/s, %s replicating %.1f ops/s (%.0f%%)\n",
			f.baseline, rep.BaselinePutOpsPerSec, srcAlias, rep.MaxPutOpsPerSec, 100*rep.OnOffRatio)
		if rep.SourceCPUPerPut > 0 {
			fmt.Fprintf(w, "CPU per PUT: %s alone %.0fµs; replicating, %s %.0fµs and %s %.0fµs\n",
				f.baseline, rep.BaselineCPUPerPut, srcAlias, rep.SourceCPUPerPut, dstAlias, rep.TargetCPUPerPut)
		}
		if rep.SourcePeakRSSMiB > 0 {
			fmt.Fprintf(w, "peak memory: %s %.0f MiB; %s %.0f MiB and %s %.0f MiB resident\n",
				f.baseline, rep.BaselinePeakRSSMiB, srcAlias, rep.SourcePeakRSSMiB, dstAlias, rep.TargetPeakRSSMiB)
		}
	}
	return nil
}

// onOff is the unpaced PUT rate of a site alone and of the source with
// replication on, and the CPU microseconds per PUT and peak memory in MiB
// of each site (0 when not measured).
type onOff struct {
	alone, replicated                 float64
	cpuAlone, cpuSource, cpuTarget    float64
	peakAlone, peakSource, peakTarget float64
	rows                              []bench.Row
}

// measureOnOff runs the unpaced PUT phases of --baseline: against the
// baseline site (in a bucket of the same name, created if missing and then
// removed), then against the source, whose objects it waits to reach the
// target (the source's backlog to it empty) before it reads the sites' CPU
// time, and then counts at the target.
func (b *s3Bench) measureOnOff(cmd *cobra.Command, opts *cmdutil.Options, f benchReplFlags, size int64, srcAlias, dstAlias string,
	putTo func(ctx context.Context, c *minio.Client, key string) error) (*onOff, error) {
	ctx := cmd.Context()
	base, err := opts.LookupAlias(f.baseline)
	if err != nil {
		return nil, err
	}
	bc, err := newBenchClient(base, f.concurrency)
	if err != nil {
		return nil, err
	}
	bb := &s3Bench{c: bc, bucket: b.bucket, prefix: b.prefix}
	created, err := bb.ensureBucket(ctx)
	if err != nil {
		return nil, fmt.Errorf("baseline %s: %w", f.baseline, err)
	}
	defer func() {
		cctx, cancel := cleanupContext(ctx)
		defer cancel()
		bb.cleanup(cctx, cmd, bb.prefix)
		if created {
			bb.removeBucket(cctx, cmd)
		}
	}()
	cfg := bench.Config{Concurrency: f.concurrency, Duration: f.duration, StopOnError: true}
	cpu := &cpuMeter{cmd: cmd, opts: opts}
	fmt.Fprintf(cmd.ErrOrStderr(), "bench: unpaced PUT %s to %s (alone) for %s ...\n", bench.FormatSize(size), f.baseline, f.duration)
	aloneCPU := cpu.read(ctx, f.baseline)
	alone, err := runPhase(ctx, cmd, "PUT", cfg, size, func(ctx context.Context, seq int64) error {
		return putTo(ctx, bc, benchKey(b.prefix+"baseline/", seq))
	})
	if err := benchPhaseErr("PUT", size, alone, err); err != nil {
		return nil, fmt.Errorf("baseline %s: %w", f.baseline, err)
	}
	aloneCPUEnd := cpu.read(ctx, f.baseline)
	fmt.Fprintf(cmd.ErrOrStderr(), "bench: unpaced PUT %s to %s (replicating) for %s ...\n", bench.FormatSize(size), "source", f.duration)
	srcCPU, dstCPU := cpu.read(ctx, srcAlias), cpu.read(ctx, dstAlias)
	on, err := runPhase(ctx, cmd, "PUT", cfg, size, func(ctx context.Context, seq int64) error {
		return putTo(ctx, b.c, benchKey(b.prefix+"unpaced/", seq))
	})
	if err := benchPhaseErr("PUT", size, on, err); err != nil {
		return nil, err
	}
	if err := waitDrained(ctx, opts, srcAlias, dstAlias, b.bucket, f.drain); err != nil {
		return nil, err
	}
	// Read once every copy has arrived: the target's share is all of it.
	srcCPUEnd, dstCPUEnd := cpu.read(ctx, srcAlias), cpu.read(ctx, dstAlias)
	if err := b.countAt(ctx, opts, dstAlias, b.prefix+"unpaced/", on.Ops); err != nil {
		return nil, err
	}
	cmp := &onOff{alone: alone.OpsPerSec(), replicated: on.OpsPerSec(), rows: []bench.Row{
		bench.NewRow("PUT(alone,unpaced)", size, f.concurrency, alone),
		bench.NewRow("PUT(replicating,unpaced)", size, f.concurrency, on),
	}}
	cmp.cpuAlone, _ = cpuPerOp(aloneCPU, aloneCPUEnd, alone.Ops)
	cmp.cpuSource, _ = cpuPerOp(srcCPU, srcCPUEnd, on.Ops)
	cmp.cpuTarget, _ = cpuPerOp(dstCPU, dstCPUEnd, on.Ops)
	cmp.peakAlone, cmp.peakSource, cmp.peakTarget = cpu.peakRSSMiB(f.baseline), cpu.peakRSSMiB(srcAlias), cpu.peakRSSMiB(dstAlias)
	return cmp, nil
}

// waitDrained waits until the source holds nothing more of bucket to send
// to the target: its journal and retry queue entries for the target site
// all gone (each is removed once the target acknowledged the copy durable).
func waitDrained(ctx context.Context, opts *cmdutil.Options, srcAlias, dstAlias, bucket string, timeout time.Duration) error {
	sa, err := opts.AdminClient(srcAlias)
	if err != nil {
		return err
	}
	da, err := opts.AdminClient(dstAlias)
	if err != nil {
		return err
	}
	dst, err := da.ReplicateStatus(ctx)
	if err != nil {
		return fmt.Errorf("replication status of %s: %w", dstAlias, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		st, err := sa.BucketReplicationStatus(ctx, bucket)
		if err != nil {
			return fmt.Errorf("replication status of %s at %s: %w", bucket, srcAlias, err)
		}
		left, found := backlogTo(st, dst.Site)
		if !found {
			return fmt.Errorf("%s does not replicate to %s (site %q)", srcAlias, dstAlias, dst.Site)
		}
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d objects of the unpaced phase had not reached %s after %s", left, dstAlias, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// backlogTo is how many entries of a bucket's status are still to be sent
// to site (pending and retrying), and whether site is one of its targets.
func backlogTo(st adminclient.BucketReplicationStatus, site string) (int64, bool) {
	for _, t := range st.Targets {
		if t.Name == site {
			return t.Pending + t.Retrying, true
		}
	}
	return 0, false
}

// countAt checks that the site of alias holds want objects under prefix of
// the bench's bucket.
func (b *s3Bench) countAt(ctx context.Context, opts *cmdutil.Options, alias, prefix string, want int64) error {
	c, err := opts.S3Client(alias)
	if err != nil {
		return err
	}
	var n int64
	for o := range c.ListObjects(ctx, b.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return fmt.Errorf("list %s at %s: %w", b.bucket, alias, o.Err)
		}
		n++
	}
	if n != want {
		return fmt.Errorf("%s holds %d of the %d objects of the unpaced phase once the source's backlog drained", alias, n, want)
	}
	return nil
}
