package benchcmd

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/bench"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
	"github.com/twinlake/twinlake/internal/cli/objcmd"
)

// benchS3Flags are the flags of bench s3.
type benchS3Flags struct {
	bucket      string
	sizes       string
	concurrency int
	duration    time.Duration
	count       int64
	keep        bool
}

// maxSinglePut is the largest object the bench writes in one PUT; S3 allows
// no more in a single request.
const maxSinglePut = 5 << 30

func newBenchS3Cmd(opts *cmdutil.Options) *cobra.Command {
	var f benchS3Flags
	cmd := &cobra.Command{
		Use:   "s3 ALIAS",
		Short: "Measure S3 PUT, GET, LIST and DELETE throughput and latency",
		Long: `For each object size: a PUT phase writes new objects, a GET phase reads them
back, and a LIST phase lists them in pages of 1,000 keys (ListObjectsV2 from
places spread over what was written), each at the given concurrency for
--duration or --count operations (a LIST phase under --count lists what was
written once). Unless --keep, a DELETE phase then removes what was written as
'twinlake rm --recursive' does: multi-object delete requests (DeleteObjects) of
1,000 keys, one after another.
Objects are written with single PUT requests from one payload generated up front,
over shared keep-alive connections, so the client is not the bottleneck.

The bench writes under a fresh prefix in --bucket (created if missing; by default
a new bucket named twinlake-bench-*) and removes what it wrote, and the bucket if
it created it, unless --keep.`,
		Example: `  twinlake bench s3 site1
  twinlake bench s3 site1 --size 4KiB,1MiB,64MiB --concurrency 32 --duration 30s
  twinlake bench s3 site1 --bucket perf --size 1MiB --count 1000 --keep --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("count") {
				f.duration = 0
			}
			return runBenchS3(cmd, opts, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.bucket, "bucket", "", "bucket to use (created if missing; default a new twinlake-bench-* bucket)")
	fl.StringVar(&f.sizes, "size", "4KiB,64MiB", "comma-separated object sizes (B, KiB, MiB, GiB; KB, MB, GB)")
	fl.IntVar(&f.concurrency, "concurrency", 16, "operations in flight at once")
	fl.DurationVar(&f.duration, "duration", 10*time.Second, "length of each phase")
	fl.Int64Var(&f.count, "count", 0, "operations per phase, instead of --duration")
	fl.BoolVar(&f.keep, "keep", false, "keep the objects (and bucket) written")
	cmd.MarkFlagsMutuallyExclusive("duration", "count")
	return cmd
}

// benchS3Report is the --json output of bench s3.
type BenchS3Report struct {
	Alias       string      `json:"alias"`
	Bucket      string      `json:"bucket"`
	Prefix      string      `json:"prefix"`
	Concurrency int         `json:"concurrency"`
	Count       int64       `json:"count,omitempty"`
	Duration    string      `json:"duration,omitempty"`
	Kept        bool        `json:"kept"`
	Results     []bench.Row `json:"results"`
}

// s3Bench is one bench s3 run against one bucket.
type s3Bench struct {
	c      *minio.Client
	bucket string
	prefix string
	cfg    bench.Config
	// cpu reads the CPU time of the servers of site (an alias) around
	// each phase; nil reads none.
	cpu  *cpuMeter
	site string
}

func runBenchS3(cmd *cobra.Command, opts *cmdutil.Options, aliasName string, f benchS3Flags) error {
	sizes, err := bench.ParseSizes(f.sizes)
	if err != nil {
		return err
	}
	for _, s := range sizes {
		if s > maxSinglePut {
			return fmt.Errorf("size %s: the bench writes single PUTs of at most 5GiB", bench.FormatSize(s))
		}
	}
	cfg := bench.Config{Concurrency: f.concurrency, Count: f.count, Duration: f.duration, StopOnError: true}
	if err := cfg.Validate(); err != nil {
		return err
	}
	a, err := opts.LookupAlias(aliasName)
	if err != nil {
		return err
	}
	c, err := newBenchClient(a, f.concurrency)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	id := benchRunID()
	b := &s3Bench{c: c, bucket: f.bucket, prefix: "twinlake-bench/" + id + "/", cfg: cfg,
		cpu: &cpuMeter{cmd: cmd, opts: opts}, site: aliasName}
	if b.bucket == "" {
		b.bucket = "twinlake-bench-" + id
	}
	created, err := b.ensureBucket(ctx)
	if err != nil {
		return err
	}
	if created && !f.keep {
		defer b.removeBucket(ctx, cmd)
	}
	rep := BenchS3Report{Alias: aliasName, Bucket: b.bucket, Prefix: b.prefix, Concurrency: f.concurrency,
		Count: f.count, Kept: f.keep}
	if f.count == 0 {
		rep.Duration = f.duration.String()
	}
	for _, size := range sizes {
		rows, err := b.runSize(ctx, cmd, size, f.keep)
		rep.Results = append(rep.Results, rows...)
		if err != nil {
			return err
		}
	}
	w := cmd.OutOrStdout()
	if opts.JSON {
		return cmdutil.PrintResult(w, opts, rep, "")
	}
	fmt.Fprintf(w, "bench s3 %s: bucket %s, concurrency %d, %s per phase\n", aliasName, b.bucket, f.concurrency, benchBound(cfg))
	if err := bench.WriteTable(w, rep.Results); err != nil {
		return err
	}
	for _, r := range rep.Results {
		if r.KeysPerSec > 0 {
			what := "listed"
			if r.Op == "DELETE" {
				what = "deleted"
			}
			fmt.Fprintf(w, "keys %s per second (%s objects): %.0f\n", what, bench.FormatSize(r.Size), r.KeysPerSec)
		}
		if r.ServerCPUPerOp > 0 {
			fmt.Fprintf(w, "server CPU per %s %s: %.0fµs%s\n", r.Op, bench.FormatSize(r.Size), r.ServerCPUPerOp, byNode(r.NodeCPUPerOp))
		}
		if r.ServerPeakRSSMiB > 0 {
			fmt.Fprintf(w, "server peak memory after %s %s: %.0f MiB resident\n", r.Op, bench.FormatSize(r.Size), r.ServerPeakRSSMiB)
		}
	}
	return nil
}

// byNode lists a multi-node site's CPU per operation by node.
func byNode(m map[string]float64) string {
	if len(m) < 2 {
		return ""
	}
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %.0fµs", n, m[n]))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// measure runs phase and adds to its row the CPU time the site's servers
// spent per operation: the servers that told it before and after.
func (b *s3Bench) measure(ctx context.Context, row func(bench.Result) bench.Row,
	phase func() (bench.Result, error)) (bench.Row, bench.Result, error) {
	before := b.cpu.read(ctx, b.site)
	res, err := phase()
	r := row(res)
	if err != nil || before == nil {
		return r, res, err
	}
	if total, byServer := cpuPerOp(before, b.cpu.read(ctx, b.site), res.Ops); len(byServer) > 0 {
		r.ServerCPUPerOp, r.NodeCPUPerOp = total, byServer
	}
	r.ServerPeakRSSMiB = b.cpu.peakRSSMiB(b.site)
	return r, res, nil
}

// newBenchClient builds a client whose connections all workers share and
// keep alive, and that does not retry: a retried op would hide an error
// and distort its latency.
func newBenchClient(a cmdutil.Alias, concurrency int) (*minio.Client, error) {
	u, err := url.Parse(a.URL)
	if err != nil {
		return nil, fmt.Errorf("alias URL %q: %w", a.URL, err)
	}
	tr, err := minio.DefaultTransport(u.Scheme == "https")
	if err != nil {
		return nil, err
	}
	tr.MaxIdleConnsPerHost = max(concurrency, tr.MaxIdleConnsPerHost)
	tr.MaxIdleConns = max(2*concurrency, tr.MaxIdleConns)
	return cmdutil.NewS3Client(a, cmdutil.S3ClientConfig{Transport: tr, MaxRetries: 1})
}

func benchRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

func benchBound(cfg bench.Config) string {
	if cfg.Count > 0 {
		return fmt.Sprintf("%d operations", cfg.Count)
	}
	return cfg.Duration.String()
}

// ensureBucket creates the bucket if it does not exist and says whether it did.
func (b *s3Bench) ensureBucket(ctx context.Context) (bool, error) {
	ok, err := b.c.BucketExists(ctx, b.bucket)
	if err != nil {
		return false, cmdutil.S3Err("bench bucket "+b.bucket, err)
	}
	if ok {
		return false, nil
	}
	if err := b.c.MakeBucket(ctx, b.bucket, minio.MakeBucketOptions{Region: cmdutil.S3Region}); err != nil {
		return false, cmdutil.S3Err("create bench bucket "+b.bucket, err)
	}
	return true, nil
}

// runSize runs the PUT, GET and LIST phases for one size and removes the
// objects it wrote unless keep.
func (b *s3Bench) runSize(ctx context.Context, cmd *cobra.Command, size int64, keep bool) ([]bench.Row, error) {
	dir := b.prefix + bench.FormatSize(size) + "/"
	if !keep {
		defer b.cleanup(ctx, cmd, dir)
	}
	payload := bench.Payload(size, uint64(time.Now().UnixNano()))
	fmt.Fprintf(cmd.ErrOrStderr(), "bench: PUT %s ...\n", bench.FormatSize(size))
	newRow := func(op string) func(bench.Result) bench.Row {
		return func(r bench.Result) bench.Row { return bench.NewRow(op, size, b.cfg.Concurrency, r) }
	}
	putRow, put, err := b.measure(ctx, newRow("PUT"), func() (bench.Result, error) {
		return runPhase(ctx, cmd, "PUT", b.cfg, size, func(ctx context.Context, seq int64) error {
			_, err := b.c.PutObject(ctx, b.bucket, benchKey(dir, seq), bytes.NewReader(payload), size,
				minio.PutObjectOptions{DisableMultipart: true, DisableContentSha256: true, ContentType: "application/octet-stream"})
			return err
		})
	})
	rows := []bench.Row{putRow}
	if err := benchPhaseErr("PUT", size, put, err); err != nil {
		return rows, err
	}
	written := put.Ops
	fmt.Fprintf(cmd.ErrOrStderr(), "bench: GET %s ...\n", bench.FormatSize(size))
	getRow, get, err := b.measure(ctx, newRow("GET"), func() (bench.Result, error) {
		return runPhase(ctx, cmd, "GET", b.cfg, size, func(ctx context.Context, seq int64) error {
			return b.getOne(ctx, benchKey(dir, seq%written), size)
		})
	})
	rows = append(rows, getRow)
	if err := benchPhaseErr("GET", size, get, err); err != nil {
		return rows, err
	}
	cfg := b.cfg
	if cfg.Count > 0 {
		cfg.Count = max(1, (written+listPage-1)/listPage) // one pass over what was written
	}
	core := minio.Core{Client: b.c}
	listRow, list, err := b.keysPhase(ctx, cmd, "LIST", size, cfg, func(ctx context.Context, seq int64) (int64, error) {
		return b.listOne(core, dir, seq, written)
	})
	rows = append(rows, listRow)
	if err := benchPhaseErr("LIST", size, list, err); err != nil || keep {
		return rows, err
	}
	// As `twinlake rm --recursive` removes them: pages of listPage keys,
	// one multi-object delete request after another.
	dcfg := bench.Config{Concurrency: 1, Count: (written + listPage - 1) / listPage, StopOnError: true}
	delRow, del, err := b.keysPhase(ctx, cmd, "DELETE", size, dcfg, func(ctx context.Context, seq int64) (int64, error) {
		return b.deletePage(ctx, dir, seq, written)
	})
	rows = append(rows, delRow)
	return rows, benchPhaseErr("DELETE", size, del, err)
}

// keysPhase runs a phase whose operations each move no object data but
// handle keys (op returns how many): its row reports the keys per second
// instead of MB/s.
func (b *s3Bench) keysPhase(ctx context.Context, cmd *cobra.Command, name string, size int64, cfg bench.Config,
	op func(ctx context.Context, seq int64) (int64, error)) (bench.Row, bench.Result, error) {
	fmt.Fprintf(cmd.ErrOrStderr(), "bench: %s %s ...\n", name, bench.FormatSize(size))
	var keys atomic.Int64
	return b.measure(ctx, func(r bench.Result) bench.Row {
		row := bench.NewRow(name, size, cfg.Concurrency, r)
		row.MBPerSec = 0
		if r.Elapsed > 0 {
			row.KeysPerSec = float64(keys.Load()) / r.Elapsed.Seconds()
		}
		return row
	}, func() (bench.Result, error) {
		return runPhase(ctx, cmd, name, cfg, 0, func(ctx context.Context, seq int64) error {
			n, err := op(ctx, seq)
			keys.Add(n)
			return err
		})
	})
}

// deletePage removes the seq-th page of the keys written in one
// multi-object delete request and returns how many it removed.
func (b *s3Bench) deletePage(ctx context.Context, dir string, seq, written int64) (int64, error) {
	first := seq * listPage
	n := min(listPage, written-first)
	keys := make(chan minio.ObjectInfo, n)
	for i := range n {
		keys <- minio.ObjectInfo{Key: benchKey(dir, first+i)}
	}
	close(keys)
	var err error
	for e := range b.c.RemoveObjects(ctx, b.bucket, keys, minio.RemoveObjectsOptions{}) {
		if err == nil {
			err = fmt.Errorf("DELETE %s: %w", e.ObjectName, e.Err)
		}
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

// listPage is how many keys one LIST operation asks for: S3's most.
const listPage = 1000

// listOne lists the page of the keys written that starts at the seq-th
// page (round the objects written), checks it holds the keys expected
// and returns how many it listed.
func (b *s3Bench) listOne(core minio.Core, dir string, seq, written int64) (int64, error) {
	pages := (written + listPage - 1) / listPage
	first := seq % pages * listPage
	after := ""
	if first > 0 {
		after = benchKey(dir, first-1)
	}
	res, err := core.ListObjectsV2(b.bucket, dir, after, "", "", listPage)
	if err != nil {
		return 0, err
	}
	want := min(listPage, written-first)
	if int64(len(res.Contents)) != want || res.Contents[0].Key != benchKey(dir, first) {
		return 0, fmt.Errorf("LIST after %q: %d keys, want %d from %s", after, len(res.Contents), want, benchKey(dir, first))
	}
	return want, nil
}

func benchKey(dir string, seq int64) string { return fmt.Sprintf("%s%09d", dir, seq) }

func (b *s3Bench) getOne(ctx context.Context, key string, size int64) error {
	obj, err := b.c.GetObject(ctx, b.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return err
	}
	defer obj.Close()
	n, err := io.Copy(io.Discard, obj)
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("GET %s: read %d bytes, want %d", key, n, size)
	}
	return nil
}

// benchPhaseErr turns a phase's interruption or failed operations into the
// command's error.
func benchPhaseErr(op string, size int64, res bench.Result, runErr error) error {
	what := fmt.Sprintf("bench %s %s", op, bench.FormatSize(size))
	switch {
	case runErr != nil:
		return fmt.Errorf("%s: %w", what, runErr)
	case res.Errors > 0:
		return cmdutil.S3Err(fmt.Sprintf("%s: %d operation(s) failed, first", what, res.Errors), res.FirstErr)
	case res.Ops == 0:
		return fmt.Errorf("%s: no operation completed", what)
	}
	return nil
}

// cleanupContext outlives an interrupted run so the bench can still remove
// what it wrote, but not forever.
func cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
}

// cleanup removes every version written under dir; a failure is reported,
// not returned, so it does not mask the measurement or its error.
func (b *s3Bench) cleanup(ctx context.Context, cmd *cobra.Command, dir string) {
	ctx, cancel := cleanupContext(ctx)
	defer cancel()
	if _, err := objcmd.RemoveObjects(ctx, b.c, b.bucket, objcmd.ObjSelection{Prefix: dir, AllVersions: true}, nil); err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "bench: cleanup of %s/%s: %v\n", b.bucket, dir, err)
	}
}

func (b *s3Bench) removeBucket(ctx context.Context, cmd *cobra.Command) {
	ctx, cancel := cleanupContext(ctx)
	defer cancel()
	if err := b.c.RemoveBucket(ctx, b.bucket); err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "bench: %v\n", cmdutil.S3Err("remove bucket "+b.bucket, err))
	}
}
