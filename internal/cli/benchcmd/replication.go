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
by site replication (see 'twinlake demo').`,
		Example: `  twinlake bench replication primary dr
  twinlake bench replication primary dr --size 4KiB --concurrency 16 --duration 30s --rate 1000 --json`,
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
	return cmd
}

// benchReplReport is the --json output of bench replication.
type benchReplReport struct {
	Source        string      `json:"source"`
	Target        string      `json:"target"`
	Bucket        string      `json:"bucket"`
	Size          int64       `json:"size"`
	Rate          float64     `json:"rate,omitempty"`
	Written       int64       `json:"written"`
	Replicated    int64       `json:"replicated"`
	Missing       int64       `json:"missing"`
	DrainSeconds  float64     `json:"drain_seconds"`
	PutOpsPerSec  float64     `json:"put_ops_per_sec"`
	ReplOpsPerSec float64     `json:"replicated_ops_per_sec"`
	Results       []bench.Row `json:"results"`
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

	payload := bench.Payload(size, uint64(time.Now().UnixNano()))
	var ackMu sync.Mutex
	acks := map[string]time.Time{}
	start := time.Now()
	fmt.Fprintf(cmd.ErrOrStderr(), "bench: PUT %s to %s for %s, following %s ...\n", bench.FormatSize(size), srcAlias, f.duration, dstAlias)
	put, err := runPhase(ctx, cmd, "PUT", cfg, func(ctx context.Context, seq int64) error {
		if f.rate > 0 {
			due := start.Add(time.Duration(float64(seq) / f.rate * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(d):
				}
			}
		}
		key := benchKey(b.prefix, seq)
		_, err := sc.PutObject(ctx, b.bucket, key, bytes.NewReader(payload), size,
			minio.PutObjectOptions{DisableMultipart: true, DisableContentSha256: true, ContentType: "application/octet-stream"})
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
	for arr.count() < len(acks) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-traceDone:
			return fmt.Errorf("trace stream of %s ended: %v", dstAlias, err)
		case <-drainDeadline:
			fmt.Fprintf(cmd.ErrOrStderr(), "bench: %d of %d objects had not arrived after %s\n", len(acks)-arr.count(), len(acks), f.drain)
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
	rep.Results = []bench.Row{
		bench.NewRow("PUT", size, f.concurrency, put),
		bench.NewRow("REPLICATE(lag)", size, f.concurrency, bench.Result{Ops: replicated, Elapsed: window, Latency: lag}),
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
	return nil
}
