package benchcmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/lifecycle"
	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/bench"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

type benchILMFlags struct {
	objects     int64
	duePercent  float64
	concurrency int
	day         time.Duration
	binary, dir string
	timeout     time.Duration
}

func newBenchILMCmd(opts *cmdutil.Options) *cobra.Command {
	var f benchILMFlags
	cmd := &cobra.Command{
		Use:   "ilm",
		Short: "Measure bucket lifecycle: the cost of a run with a few objects due among many",
		Long: `Runs a private twinlake server process (a loopback port and a data directory of
its own) with a short lifecycle day (--day), writes --objects small objects in one
bucket, of which --due-percent (spread over the key space) are written first and
the rest a few lifecycle days later, then sets one rule expiring every object of
the bucket some days after it was written, chosen so that the early ones fall
due after the rule is in place and the late ones long after.

Setting the rule makes the site evaluate every key once (the index rebuild, the
only lifecycle work proportional to the number of objects); the bench waits for
it, then for the early objects to expire, and reports from the site's metrics
how many keys the lifecycle runs evaluated for that and how long the runs took.
The cost of the expiry should follow the due objects, not the bucket: keys
evaluated about equal to the due count, and the seconds per due key about the
rebuild's seconds per key.`,
		Example: `  twinlake bench ilm --objects 1000000 --due-percent 1
  twinlake bench ilm --objects 20000 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runBenchILM(cmd, opts, f) },
	}
	fl := cmd.Flags()
	fl.Int64Var(&f.objects, "objects", 1000000, "objects in the bucket")
	fl.Float64Var(&f.duePercent, "due-percent", 1, "share of the objects that fall due, in percent (0.01–50)")
	fl.IntVar(&f.concurrency, "concurrency", 32, "PUTs in flight while filling")
	fl.DurationVar(&f.day, "day", 2*time.Second, "the length of a lifecycle day on the bench's server (1s–1h)")
	fl.StringVar(&f.binary, "binary", "", "twinlake binary to run (default: this one)")
	fl.StringVar(&f.dir, "dir", "", "data directory to use and keep (default: a temporary one, removed)")
	fl.DurationVar(&f.timeout, "timeout", time.Hour, "how long to wait for the rebuild and the expiry")
	return cmd
}

// benchILMReport is the --json output of bench ilm.
type benchILMReport struct {
	Objects           int64   `json:"objects"`
	Due               int64   `json:"due"`
	FillSeconds       float64 `json:"fill_seconds"`
	RebuildKeys       float64 `json:"rebuild_keys_evaluated"`
	RebuildSeconds    float64 `json:"rebuild_seconds"`
	DueKeys           float64 `json:"due_keys_evaluated"`
	Expired           float64 `json:"expired"`
	ExpiryRunSeconds  float64 `json:"expiry_run_seconds"`
	ExpiryRuns        float64 `json:"expiry_runs"`
	IdleRunMs         float64 `json:"idle_run_ms"`
	ExpiryWorkSeconds float64 `json:"expiry_work_seconds"`
	KeysPerDue        float64 `json:"keys_evaluated_per_due_object"`
	RebuildUsPerKey   float64 `json:"rebuild_us_per_key"`
	ExpiryUsPerDueKey float64 `json:"expiry_us_per_due_key"`
	ExpiryVsFullPass  float64 `json:"expiry_work_vs_full_pass"`
}

const ilmBucket = "bench-ilm"

func runBenchILM(cmd *cobra.Command, opts *cmdutil.Options, f benchILMFlags) error {
	switch {
	case f.objects < 100:
		return errors.New("--objects must be at least 100")
	case f.duePercent < 0.01 || f.duePercent > 50:
		return errors.New("--due-percent must be within 0.01–50")
	case f.day < time.Second || f.day > time.Hour:
		return errors.New("--day must be within 1s–1h")
	case f.concurrency < 1:
		return errors.New("--concurrency must be at least 1")
	}
	var err error
	if f.binary == "" {
		if f.binary, err = os.Executable(); err != nil {
			return err
		}
	}
	dir := f.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "twinlake-bench-ilm-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	srv, err := newStartupServer(f.binary, dir, f.timeout,
		"TWINLAKE_ILM_DAY_LENGTH="+f.day.String(), "TWINLAKE_ILM_INTERVAL=250ms")
	if err != nil {
		return err
	}
	defer srv.stop()
	ctx, cancel := context.WithTimeout(cmd.Context(), f.timeout)
	defer cancel()
	if err := srv.waitReady(ctx); err != nil {
		return err
	}
	c := srv.client
	if err := c.MakeBucket(ctx, ilmBucket, minio.MakeBucketOptions{Region: cmdutil.S3Region}); err != nil {
		return cmdutil.S3Err("create bucket "+ilmBucket, err)
	}
	every := int64(math.Round(100 / f.duePercent)) // one due object in every `every`
	due := (f.objects + every - 1) / every
	logf := func(format string, args ...any) { fmt.Fprintf(cmd.ErrOrStderr(), "bench: "+format+"\n", args...) }

	// The due objects first, then, a few lifecycle days later, the rest.
	start := time.Now()
	put := func(keys func(seq int64) int64, n int64) error {
		payload := bench.Payload(64, uint64(n))
		res, err := bench.Run(ctx, bench.Config{Concurrency: f.concurrency, Count: n, StopOnError: true}, func(ctx context.Context, seq int64) error {
			_, err := c.PutObject(ctx, ilmBucket, startupKey(keys(seq)), bytes.NewReader(payload), 64,
				minio.PutObjectOptions{DisableMultipart: true, DisableContentSha256: true})
			return err
		})
		return benchPhaseErr("PUT", 64, res, err)
	}
	logf("writing %d objects that will fall due ...", due)
	if err := put(func(seq int64) int64 { return seq * every }, due); err != nil {
		return err
	}
	firstDone := time.Now()
	select {
	case <-time.After(3 * f.day):
	case <-ctx.Done():
		return ctx.Err()
	}
	logf("writing the other %d objects ...", f.objects-due)
	rest := f.objects - due
	if err := put(func(seq int64) int64 { return seq + seq/(every-1) + 1 }, rest); err != nil {
		return err
	}
	fill := time.Since(start).Seconds()

	// Days chosen so the early objects fall due once the rebuild is surely
	// over: three lifecycle days plus 50µs per object after now (the
	// rebuild takes about 10µs per object).
	margin := 3*f.day + time.Duration(f.objects)*50*time.Microsecond
	days := int(math.Ceil(float64(time.Since(start)+margin) / float64(f.day)))
	before, err := scrapeILM(ctx, srv.alias)
	if err != nil {
		return err
	}
	cfg := lifecycle.NewConfiguration()
	cfg.Rules = []lifecycle.Rule{{ID: "bench", Status: "Enabled", Expiration: lifecycle.Expiration{Days: lifecycle.ExpirationDays(days)}}}
	ruleSet := time.Now()
	if err := c.SetBucketLifecycle(ctx, ilmBucket, cfg); err != nil {
		return cmdutil.S3Err("set lifecycle", err)
	}
	logf("rule set: expire after %d days of %s; waiting for the rebuild ...", days, f.day)
	afterRebuild, err := waitILM(ctx, srv.alias, func(m ilmMetrics) bool { return m.rebuild-before.rebuild >= float64(f.objects) })
	if err != nil {
		return err
	}
	rebuildSecs := afterRebuild.runSeconds - before.runSeconds
	dueAt := firstDone.Add(time.Duration(days+1) * f.day)
	if time.Now().After(dueAt) || afterRebuild.expired > before.expired {
		return fmt.Errorf("the rebuild took until the objects fell due (%s after the rule was set): rerun with a longer --day", time.Since(ruleSet).Round(time.Second))
	}
	logf("rebuild done (%.2fs of lifecycle runs); waiting for %d objects to expire (at about %s) ...", rebuildSecs, due, dueAt.Format(time.TimeOnly))
	// The runs until then find nothing due: they give the cost of an
	// idle run, taken off the expiry's.
	select {
	case <-time.After(time.Until(dueAt.Add(-2 * f.day))):
	case <-ctx.Done():
		return ctx.Err()
	}
	preDue, err := scrapeILM(ctx, srv.alias)
	if err != nil {
		return err
	}
	if preDue.expired > before.expired {
		return errors.New("objects expired before they were due")
	}
	end, err := waitILM(ctx, srv.alias, func(m ilmMetrics) bool { return m.expired-before.expired >= float64(due) })
	if err != nil {
		return err
	}
	rep := benchILMReport{Objects: f.objects, Due: due, FillSeconds: fill,
		RebuildKeys: afterRebuild.rebuild - before.rebuild, RebuildSeconds: rebuildSecs,
		DueKeys: end.due - afterRebuild.due, Expired: end.expired - before.expired,
		ExpiryRunSeconds: end.runSeconds - preDue.runSeconds, ExpiryRuns: end.runs - preDue.runs}
	if idleRuns := preDue.runs - afterRebuild.runs; idleRuns > 0 {
		rep.IdleRunMs = 1e3 * (preDue.runSeconds - afterRebuild.runSeconds) / idleRuns
	}
	rep.ExpiryWorkSeconds = max(0, rep.ExpiryRunSeconds-rep.ExpiryRuns*rep.IdleRunMs/1e3)
	rep.KeysPerDue = rep.DueKeys / float64(due)
	rep.RebuildUsPerKey = 1e6 * rep.RebuildSeconds / rep.RebuildKeys
	rep.ExpiryUsPerDueKey = 1e6 * rep.ExpiryWorkSeconds / float64(due)
	// The expiry's work against one pass over every key (the rebuild,
	// which deletes nothing): a scanning design pays at least 1.0.
	rep.ExpiryVsFullPass = rep.ExpiryWorkSeconds / rep.RebuildSeconds
	w := cmd.OutOrStdout()
	if opts.JSON {
		return cmdutil.PrintResult(w, opts, rep, "")
	}
	fmt.Fprintf(w, "bench ilm: %d objects, %d due (%.2f%%), lifecycle day %s\n", f.objects, due, f.duePercent, f.day)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "PHASE\tKEYS EVALUATED\tWORK SECONDS\tµs PER KEY\t")
	fmt.Fprintf(tw, "rebuild (every key, once)\t%.0f\t%.3f\t%.1f\t\n", rep.RebuildKeys, rep.RebuildSeconds, rep.RebuildUsPerKey)
	fmt.Fprintf(tw, "expiry (%.0f expired)\t%.0f\t%.3f\t%.1f\t\n", rep.Expired, rep.DueKeys, rep.ExpiryWorkSeconds, rep.ExpiryUsPerDueKey)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "keys evaluated per due object %.2f; expiry work / one pass over every key %.3f; idle run %.2f ms\n",
		rep.KeysPerDue, rep.ExpiryVsFullPass, rep.IdleRunMs)
	return err
}

// ilmMetrics are the lifecycle counters of a site.
type ilmMetrics struct {
	due, rebuild, expired, runSeconds, runs float64
}

func scrapeILM(ctx context.Context, a cmdutil.Alias) (ilmMetrics, error) {
	var buf bytes.Buffer
	if err := cmdutil.ScrapeMetrics(ctx, a, &buf); err != nil {
		return ilmMetrics{}, err
	}
	var m ilmMetrics
	sc := bufio.NewScanner(&buf)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "twinlake_ilm_") {
			continue
		}
		name, val, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			continue
		}
		switch name {
		case `twinlake_ilm_keys_evaluated_total{reason="due"}`:
			m.due = v
		case `twinlake_ilm_keys_evaluated_total{reason="rebuild"}`:
			m.rebuild = v
		case `twinlake_ilm_actions_total{action="expired"}`:
			m.expired = v
		case "twinlake_ilm_run_duration_seconds_sum":
			m.runSeconds = v
		case "twinlake_ilm_run_duration_seconds_count":
			m.runs = v
		}
	}
	return m, sc.Err()
}

// waitILM polls the site's lifecycle metrics until done says so.
func waitILM(ctx context.Context, a cmdutil.Alias, done func(ilmMetrics) bool) (ilmMetrics, error) {
	for {
		m, err := scrapeILM(ctx, a)
		if err != nil {
			return m, err
		}
		if done(m) {
			return m, nil
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return m, fmt.Errorf("waiting for the lifecycle runs: %w", ctx.Err())
		}
	}
}
