package benchcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/bench"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// benchStartupFlags are the flags of bench startup.
type benchStartupFlags struct {
	objects     string
	size        string
	concurrency int
	restarts    int
	binary      string
	dir         string
	timeout     time.Duration
}

func newBenchStartupCmd(opts *cmdutil.Options) *cobra.Command {
	var f benchStartupFlags
	cmd := &cobra.Command{
		Use:   "startup",
		Short: "Measure a site's restart: seconds from exec to first answered HEAD, and RSS",
		Long: `Runs a private twinlake server process on a loopback port and a data directory
of its own, fills one bucket to each --objects count in turn (small objects,
written with single PUTs at --concurrency), and at each count stops the server
(SIGTERM) and starts it again --restarts times, measuring the seconds from exec to
the first HEAD of a stored object that is answered, and the server's resident
memory (VmRSS) right after it. The data directory is removed at the end unless
--dir names one to keep.

The time to first HEAD should not grow with the number of objects: opening a
store reads no per-object state.`,
		Example: `  twinlake bench startup --objects 10,200000
  twinlake bench startup --objects 1000000 --restarts 3 --json
  twinlake bench startup --objects 10 --binary ./twinlake-v1 --dir /tmp/startup-data`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBenchStartup(cmd, opts, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.objects, "objects", "10,200000", "comma-separated object counts, ascending; the store is filled up to each in turn")
	fl.StringVar(&f.size, "size", "1KiB", "object size (B, KiB, MiB)")
	fl.IntVar(&f.concurrency, "concurrency", 32, "PUTs in flight while filling")
	fl.IntVar(&f.restarts, "restarts", 3, "restarts measured at each count")
	fl.StringVar(&f.binary, "binary", "", "twinlake binary to run as the server (default this one)")
	fl.StringVar(&f.dir, "dir", "", "data directory to use and keep (default a temporary one, removed)")
	fl.DurationVar(&f.timeout, "timeout", 5*time.Minute, "how long one start may take before the bench fails")
	return cmd
}

// startupRow is one restart measurement.
type startupRow struct {
	Objects     int64   `json:"objects"`
	Restart     int     `json:"restart"`
	FirstHEADS  float64 `json:"first_head_seconds"`
	RSSMiB      float64 `json:"rss_mib"`
	DataDirMiB  float64 `json:"data_dir_mib"`
	FillSeconds float64 `json:"fill_seconds,omitempty"`
}

// benchStartupReport is the --json output of bench startup.
type benchStartupReport struct {
	Binary  string       `json:"binary"`
	Size    int64        `json:"size"`
	Results []startupRow `json:"results"`
}

func runBenchStartup(cmd *cobra.Command, opts *cmdutil.Options, f benchStartupFlags) error {
	counts, err := parseCounts(f.objects)
	if err != nil {
		return err
	}
	size, err := bench.ParseSizes(f.size)
	if err != nil || len(size) != 1 {
		return fmt.Errorf("--size %q: want one size", f.size)
	}
	if f.restarts < 1 || f.concurrency < 1 {
		return errors.New("--restarts and --concurrency must be at least 1")
	}
	if f.binary == "" {
		if f.binary, err = os.Executable(); err != nil {
			return err
		}
	}
	dir := f.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "twinlake-bench-startup-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	srv, err := newStartupServer(f.binary, dir, f.timeout)
	if err != nil {
		return err
	}
	defer srv.stop()
	rep := benchStartupReport{Binary: f.binary, Size: size[0]}
	ctx := cmd.Context()
	fill := &startupFill{srv: srv, size: size[0], concurrency: f.concurrency}
	for _, n := range counts {
		fmt.Fprintf(cmd.ErrOrStderr(), "bench: filling to %d objects ...\n", n)
		secs, err := fill.to(ctx, n)
		if err != nil {
			return err
		}
		for r := 1; r <= f.restarts; r++ {
			row, err := srv.restart(ctx, fill.headKey())
			if err != nil {
				return err
			}
			row.Objects, row.Restart = n, r
			if r == 1 {
				row.FillSeconds = secs
			}
			rep.Results = append(rep.Results, row)
		}
	}
	w := cmd.OutOrStdout()
	if opts.JSON {
		return cmdutil.PrintResult(w, opts, rep, "")
	}
	fmt.Fprintf(w, "bench startup: %s, %s objects\n", f.binary, bench.FormatSize(size[0]))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "OBJECTS\tRESTART\tFIRST HEAD s\tRSS MiB\tDATA MiB\t")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%d\t%d\t%.3f\t%.1f\t%.1f\t\n", r.Objects, r.Restart, r.FirstHEADS, r.RSSMiB, r.DataDirMiB)
	}
	return tw.Flush()
}

// parseCounts parses an ascending comma-separated list of object counts.
func parseCounts(s string) ([]int64, error) {
	var out []int64
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--objects: %q is not a positive count", p)
		}
		if len(out) > 0 && n < out[len(out)-1] {
			return nil, fmt.Errorf("--objects: counts must ascend (%d after %d)", n, out[len(out)-1])
		}
		out = append(out, n)
	}
	return out, nil
}

// startupServer is the server process the bench starts and restarts.
type startupServer struct {
	bin, dir, addr string
	alias          cmdutil.Alias
	timeout        time.Duration
	env            []string // added to the environment of the server process
	cmd            *exec.Cmd
	done           chan struct{} // closed when cmd has exited
	log            lockedLog
	client         *minio.Client
}

// lockedLog collects the server's output written from exec's goroutines.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newStartupServer(bin, dir string, timeout time.Duration, env ...string) (*startupServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &startupServer{bin: bin, dir: dir, addr: addr, timeout: timeout, env: env,
		alias: cmdutil.Alias{URL: "http://" + addr, AccessKey: "bench-startup", SecretKey: "bench-startup-" + benchRunID() + benchRunID()}}
	if s.client, err = newBenchClient(s.alias, 64); err != nil {
		return nil, err
	}
	return s, s.start()
}

func (s *startupServer) start() error {
	cmd := exec.Command(s.bin, "server", "--address", s.addr, "--dir", s.dir, "--log-level", "warn")
	cmd.Env = append(os.Environ(), "TWINLAKE_ROOT_USER="+s.alias.AccessKey, "TWINLAKE_ROOT_PASSWORD="+s.alias.SecretKey)
	cmd.Env = append(cmd.Env, s.env...)
	cmd.Stdout, cmd.Stderr = &s.log, &s.log
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func(done chan struct{}) { cmd.Wait(); close(done) }(s.done)
	return nil
}

func (s *startupServer) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// stop ends the server gracefully (SIGTERM, then SIGKILL after a minute).
func (s *startupServer) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

// restart stops the server, starts it again and waits for the first HEAD
// of key to be answered.
func (s *startupServer) restart(ctx context.Context, key string) (startupRow, error) {
	s.stop()
	c, err := newBenchClient(s.alias, 64) // no connection to the old process
	if err != nil {
		return startupRow{}, err
	}
	s.client = c
	t0 := time.Now()
	if err := s.start(); err != nil {
		return startupRow{}, err
	}
	if err := s.waitHead(ctx, key); err != nil {
		return startupRow{}, err
	}
	row := startupRow{FirstHEADS: time.Since(t0).Seconds()}
	row.RSSMiB = float64(processRSS(s.cmd.Process.Pid)) / (1 << 20)
	row.DataDirMiB = float64(dirSize(s.dir)) / (1 << 20)
	return row, nil
}

// waitHead polls HEAD of bucket/key until it is answered with success.
func (s *startupServer) waitHead(ctx context.Context, key string) error {
	deadline := time.Now().Add(s.timeout)
	for {
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := s.client.StatObject(hctx, startupBucket, key, minio.StatObjectOptions{})
		cancel()
		if err == nil {
			return nil
		}
		if s.exited() || time.Now().After(deadline) {
			return fmt.Errorf("server did not answer HEAD %s/%s: %v\n%s", startupBucket, key, err, s.log.String())
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// processRSS returns a process's resident set size in bytes (Linux; 0
// where /proc is not there).
func processRSS(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

const startupBucket = "bench-startup"

// startupFill writes the bench's objects, continuing where it stopped.
type startupFill struct {
	srv         *startupServer
	size        int64
	concurrency int
	have        int64
}

func (f *startupFill) headKey() string { return startupKey(f.have / 2) }

func startupKey(i int64) string { return fmt.Sprintf("obj/%09d", i) }

// to fills the bucket up to n objects and returns the seconds it took.
func (f *startupFill) to(ctx context.Context, n int64) (float64, error) {
	c := f.srv.client
	if f.have == 0 {
		if err := f.srv.waitReady(ctx); err != nil {
			return 0, err
		}
		if err := c.MakeBucket(ctx, startupBucket, minio.MakeBucketOptions{Region: cmdutil.S3Region}); err != nil {
			return 0, cmdutil.S3Err("create bucket "+startupBucket, err)
		}
	}
	if n <= f.have {
		return 0, nil
	}
	payload := bench.Payload(f.size, uint64(n))
	base := f.have
	cfg := bench.Config{Concurrency: f.concurrency, Count: n - base, StopOnError: true}
	res, err := bench.Run(ctx, cfg, func(ctx context.Context, seq int64) error {
		_, err := c.PutObject(ctx, startupBucket, startupKey(base+seq), bytes.NewReader(payload), f.size,
			minio.PutObjectOptions{DisableMultipart: true, DisableContentSha256: true})
		return err
	})
	if err := benchPhaseErr("PUT", f.size, res, err); err != nil {
		return 0, err
	}
	f.have = n
	return res.Elapsed.Seconds(), nil
}

// waitReady waits for the first start of the server to answer.
func (s *startupServer) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(s.timeout)
	for {
		if _, err := s.client.ListBuckets(ctx); err == nil {
			return nil
		} else if s.exited() || time.Now().After(deadline) {
			return fmt.Errorf("server did not start: %v\n%s", err, s.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// dirSize returns the bytes of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
