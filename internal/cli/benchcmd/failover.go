package benchcmd

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
	"github.com/twinlake/twinlake/internal/netcut"
)

// benchFailoverFlags are the flags of bench failover.
type benchFailoverFlags struct {
	nodes   int
	faults  string
	rounds  int
	lease   time.Duration
	binary  string
	timeout time.Duration
}

// The faults bench failover can put on a leader.
const (
	faultKill  = "kill"  // SIGKILL: the process gone, its address refusing connections
	faultPause = "pause" // SIGSTOP: the process there, taking connections, answering none
	faultCut   = "cut"   // SIGKILL, its ports then taking no connection: its machine down or cut off
)

func newBenchFailoverCmd(opts *cmdutil.Options) *cobra.Command {
	var f benchFailoverFlags
	cmd := &cobra.Command{
		Use:   "failover",
		Short: "Measure a multi-node site's failover: seconds from the leader's fault to the first read and write served",
		Long: `Runs a private site of --nodes twinlake server processes on loopback ports
(embedded etcd, data in a temporary directory, removed at the end), writes an
object, and then, --rounds times for each of --faults, puts the fault on the
site's leader and measures through another node:

  first GET   one GET of the object sent right after the fault, with no
              retry: the node holds it until a leader serves
  first PUT   PUTs of a small object, each given 1 s, until one is
              acknowledged

kill is SIGKILL (the process gone: its address refuses connections); pause is
SIGSTOP (the process there: its kernel takes connections and nothing answers
them); cut is SIGKILL with the node's three ports then held taking no
connection, so that connections to them time out (its machine down or cut
off). After each measurement the node is started again (kill, cut) or
continued (pause), and the bench waits for every node to be back. All should
stay far below --cluster-lease: the other nodes end the session of a leader
whose address refuses connections, or that answers none of their probes for
3 s, or, once most of them have voted so, whose connections have timed out
for 3 s.`,
		Example: `  twinlake bench failover
  twinlake bench failover --faults pause,cut --rounds 5 --json
  twinlake bench failover --nodes 3 --lease 30s --binary ./twinlake-v1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBenchFailover(cmd, opts, f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.nodes, "nodes", 4, "nodes of the site (3 to 16)")
	fl.StringVar(&f.faults, "faults", faultKill+","+faultPause+","+faultCut, "comma-separated faults put on the leader: kill, pause, cut")
	fl.IntVar(&f.rounds, "rounds", 3, "measurements of each fault (1 to 100)")
	fl.DurationVar(&f.lease, "lease", 10*time.Second, "the nodes' --cluster-lease (2s to 60s)")
	fl.StringVar(&f.binary, "binary", "", "twinlake binary to run as the nodes (default this one)")
	fl.DurationVar(&f.timeout, "timeout", 2*time.Minute, "how long a start, or one failover, may take before the bench fails")
	return cmd
}

// failoverRow is one measurement.
type failoverRow struct {
	Fault      string  `json:"fault"`
	Round      int     `json:"round"`
	Leader     string  `json:"leader"`
	NewLeader  string  `json:"new_leader"`
	FirstGETS  float64 `json:"first_get_seconds"`
	FirstPUTS  float64 `json:"first_put_seconds"`
	PUTRetries int     `json:"put_attempts"`
}

// benchFailoverReport is the --json output of bench failover.
type benchFailoverReport struct {
	Binary       string        `json:"binary"`
	Nodes        int           `json:"nodes"`
	LeaseSeconds float64       `json:"lease_seconds"`
	Results      []failoverRow `json:"results"`
}

// parseFaults checks a --faults list.
func parseFaults(s string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p != faultKill && p != faultPause && p != faultCut {
			return nil, fmt.Errorf("--faults: %q is not a fault (kill, pause, cut)", p)
		}
		out = append(out, p)
	}
	return out, nil
}

func runBenchFailover(cmd *cobra.Command, opts *cmdutil.Options, f benchFailoverFlags) error {
	faults, err := parseFaults(f.faults)
	switch {
	case err != nil:
		return err
	case f.nodes < 3 || f.nodes > 16:
		return fmt.Errorf("--nodes %d: want 3 to 16 (a site keeps serving without one node from 3 on)", f.nodes)
	case f.rounds < 1 || f.rounds > 100:
		return fmt.Errorf("--rounds %d: want 1 to 100", f.rounds)
	case f.lease < 2*time.Second || f.lease > time.Minute || f.lease%time.Second != 0:
		return fmt.Errorf("--lease %v: want whole seconds from 2s to 60s", f.lease)
	case f.timeout <= 0:
		return errors.New("--timeout must be positive")
	}
	if f.binary == "" {
		if f.binary, err = os.Executable(); err != nil {
			return err
		}
	}
	dir, err := os.MkdirTemp("", "twinlake-bench-failover-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	site, err := startFailoverSite(f, dir)
	if err != nil {
		return err
	}
	defer site.stop()
	ctx := cmd.Context()
	if err := site.waitAll(ctx); err != nil {
		return err
	}
	body, err := site.prepare(ctx)
	if err != nil {
		return err
	}
	rep := benchFailoverReport{Binary: f.binary, Nodes: f.nodes, LeaseSeconds: f.lease.Seconds()}
	for r := 1; r <= f.rounds; r++ {
		for _, fault := range faults {
			fmt.Fprintf(cmd.ErrOrStderr(), "bench: %s the leader, round %d ...\n", fault, r)
			row, err := site.failOver(ctx, fault, body)
			if err != nil {
				return err
			}
			row.Round = r
			rep.Results = append(rep.Results, row)
		}
	}
	w := cmd.OutOrStdout()
	if opts.JSON {
		return cmdutil.PrintResult(w, opts, rep, "")
	}
	fmt.Fprintf(w, "bench failover: %d nodes, lease %v, %s\n", f.nodes, f.lease, f.binary)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "FAULT\tROUND\tLEADER\tNEW LEADER\tFIRST GET s\tFIRST PUT s\tPUT ATTEMPTS\t")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.3f\t%.3f\t%d\t\n", r.Fault, r.Round, r.Leader, r.NewLeader, r.FirstGETS, r.FirstPUTS, r.PUTRetries)
	}
	return tw.Flush()
}

// failoverSite is the bench's site: a process per node.
type failoverSite struct {
	bin     string
	lease   time.Duration
	timeout time.Duration
	dir     string
	addrs   []string
	env     []string
	alias   []cmdutil.Alias
	procs   []*failoverNode
	s3      []*minio.Client
	admin   []*adminclient.Client
}

// failoverNode is one node's process.
type failoverNode struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	log  lockedLog
}

const failoverBucket = "bench-failover"

func startFailoverSite(f benchFailoverFlags, dir string) (*failoverSite, error) {
	s := &failoverSite{bin: f.binary, lease: f.lease, timeout: f.timeout, dir: dir}
	for range f.nodes {
		addr, err := freePortTriple(s.addrs)
		if err != nil {
			return nil, err
		}
		s.addrs = append(s.addrs, addr)
	}
	var key [32]byte
	_, _ = rand.Read(key[:]) // crypto/rand.Read never fails
	user, secret := "bench-failover", "bench-failover-"+benchRunID()+benchRunID()
	s.env = []string{"TWINLAKE_ROOT_USER=" + user, "TWINLAKE_ROOT_PASSWORD=" + secret,
		"TWINLAKE_KMS_SECRET_KEY=k1:" + base64.StdEncoding.EncodeToString(key[:])}
	for _, addr := range s.addrs {
		a := cmdutil.Alias{URL: "http://" + addr, AccessKey: user, SecretKey: secret}
		c, err := newBenchClient(a, 4)
		if err != nil {
			return nil, err
		}
		ac, err := adminclient.New(a.URL, adminclient.Credentials{AccessKey: user, SecretKey: secret}, adminclient.Config{})
		if err != nil {
			return nil, err
		}
		s.alias, s.s3, s.admin = append(s.alias, a), append(s.s3, c), append(s.admin, ac)
	}
	s.procs = make([]*failoverNode, f.nodes)
	for i := range s.addrs {
		if err := s.start(i); err != nil {
			s.stop()
			return nil, err
		}
	}
	return s, nil
}

// freePortTriple finds a loopback address whose port and the two after it
// (a node's etcd client and peer ports) are free and not among taken's.
func freePortTriple(taken []string) (string, error) {
	for range 200 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		p := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		ok := p < 65000
		for i := 0; ok && i < 3; i++ {
			for _, t := range taken {
				_, tp, _ := net.SplitHostPort(t)
				if n, _ := strconv.Atoi(tp); p+i >= n && p+i <= n+2 {
					ok = false
				}
			}
			if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+i)); err != nil {
				ok = false
			} else {
				l.Close()
			}
		}
		if ok {
			return fmt.Sprintf("127.0.0.1:%d", p), nil
		}
	}
	return "", errors.New("no three free ports in a row on 127.0.0.1")
}

// start starts node i's process.
func (s *failoverSite) start(i int) error {
	cmd := exec.Command(s.bin, "server", "--address", s.addrs[i], "--dir", filepath.Join(s.dir, fmt.Sprint("node", i)),
		"--cluster", strings.Join(s.addrs, ","), "--cluster-lease", s.lease.String(), "--log-level", "warn")
	cmd.Env = append(os.Environ(), s.env...)
	n := &failoverNode{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &n.log, &n.log
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { cmd.Wait(); close(n.done) }()
	s.procs[i] = n
	return nil
}

// stop kills every node (the bench's data goes with its directory).
func (s *failoverSite) stop() {
	for _, n := range s.procs {
		if n != nil {
			_ = n.cmd.Process.Signal(syscall.SIGCONT)
			_ = n.cmd.Process.Kill()
			<-n.done
		}
	}
}

// logs is every node's output, for a failure's message.
func (s *failoverSite) logs() string {
	var b strings.Builder
	for i, n := range s.procs {
		if n != nil {
			fmt.Fprintf(&b, "--- node %s:\n%s", s.addrs[i], n.log.String())
		}
	}
	return b.String()
}

// info asks node i who leads and which nodes are online.
func (s *failoverSite) info(ctx context.Context, i int) (adminclient.ServerInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return s.admin[i].ServerInfo(ctx)
}

// leader is the index of the node that leads, as node i sees it.
func (s *failoverSite) leader(ctx context.Context, i int) (int, error) {
	info, err := s.info(ctx, i)
	if err != nil {
		return -1, err
	}
	for _, n := range info.Nodes {
		if n.State == "leader" {
			return slices.Index(s.addrs, n.Address), nil
		}
	}
	return -1, fmt.Errorf("no leader among %d nodes", len(info.Nodes))
}

// waitAll waits until every node runs and, as the leader sees it, is
// online with its drive reached.
func (s *failoverSite) waitAll(ctx context.Context) error {
	deadline := time.Now().Add(s.timeout)
	for {
		err := s.allBack(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the site is not whole after %v: %v\n%s", s.timeout, err, s.logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (s *failoverSite) allBack(ctx context.Context) error {
	for i, n := range s.procs {
		select {
		case <-n.done:
			return fmt.Errorf("node %s exited", s.addrs[i])
		default:
		}
	}
	info, err := s.info(ctx, 0)
	if err != nil {
		return err
	}
	if len(info.Nodes) != len(s.addrs) {
		return fmt.Errorf("%d nodes known, want %d", len(info.Nodes), len(s.addrs))
	}
	for _, n := range info.Nodes {
		if (n.State != "leader" && n.State != "online") || n.Drive != "ok" {
			return fmt.Errorf("node %s: %s, drive %s", n.Address, n.State, n.Drive)
		}
	}
	return nil
}

// prepare makes the bucket and writes the object the GETs read.
func (s *failoverSite) prepare(ctx context.Context) ([]byte, error) {
	if err := s.s3[0].MakeBucket(ctx, failoverBucket, minio.MakeBucketOptions{Region: cmdutil.S3Region}); err != nil {
		return nil, cmdutil.S3Err("create bucket "+failoverBucket, err)
	}
	body := make([]byte, 256<<10) // coded across the nodes
	_, _ = rand.Read(body)
	if _, err := s.s3[0].PutObject(ctx, failoverBucket, "obj", bytes.NewReader(body), int64(len(body)),
		minio.PutObjectOptions{DisableMultipart: true}); err != nil {
		return nil, cmdutil.S3Err("put "+failoverBucket+"/obj", err)
	}
	return body, nil
}

// failOver puts fault on the leader, measures the first GET and PUT served
// through the next node, then brings the leader back and waits for every
// node.
func (s *failoverSite) failOver(ctx context.Context, fault string, body []byte) (failoverRow, error) {
	leader, err := s.leader(ctx, 0)
	if err != nil {
		return failoverRow{}, err
	}
	via := (leader + 1) % len(s.addrs)
	row := failoverRow{Fault: fault, Leader: s.addrs[leader]}
	proc := s.procs[leader].cmd.Process
	sig := syscall.SIGKILL
	if fault == faultPause {
		sig = syscall.SIGSTOP
	}
	if err := proc.Signal(sig); err != nil {
		return row, err
	}
	t0 := time.Now()
	var release func() // frees the ports of a node cut off
	defer func() {
		if release != nil {
			release()
		}
	}()
	if fault == faultCut {
		<-s.procs[leader].done
		if release, err = s.cut(leader); err != nil {
			return row, err
		}
	}
	// The GET's outcome comes back on got, never through row: the PUTs
	// below may give up and return row while the GET still waits.
	type answer struct {
		secs float64
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		gctx, cancel := context.WithTimeout(ctx, s.timeout)
		defer cancel()
		err := s.readBack(gctx, via, body)
		got <- answer{time.Since(t0).Seconds(), err}
	}()
	small := []byte("written while the leader failed\n")
	for {
		row.PUTRetries++
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := s.s3[via].PutObject(pctx, failoverBucket, "during", bytes.NewReader(small), int64(len(small)),
			minio.PutObjectOptions{DisableMultipart: true, DisableContentSha256: true})
		cancel()
		if err == nil {
			break
		}
		if time.Since(t0) > s.timeout || ctx.Err() != nil {
			return row, fmt.Errorf("no PUT through %s acknowledged %v after the leader's %s: %v\n%s", s.addrs[via], s.timeout, fault, err, s.logs())
		}
	}
	row.FirstPUTS = time.Since(t0).Seconds()
	a := <-got
	if a.err != nil {
		return row, fmt.Errorf("GET through %s after the leader's %s: %v\n%s", s.addrs[via], fault, a.err, s.logs())
	}
	row.FirstGETS = a.secs
	if next, err := s.leader(ctx, via); err == nil {
		row.NewLeader = s.addrs[next]
	}
	if fault == faultPause {
		err = proc.Signal(syscall.SIGCONT)
	} else {
		<-s.procs[leader].done
		if release != nil {
			release()
			release = nil
		}
		err = s.start(leader)
	}
	if err != nil {
		return row, err
	}
	return row, s.waitAll(ctx)
}

// cut holds node i's three ports (its address and its etcd member's)
// taking no connection (netcut.Hold), its process killed, and returns what
// frees them.
func (s *failoverSite) cut(i int) (func(), error) {
	return netcut.HoldPorts(s.addrs[i], 3)
}

// readBack reads the object through node via, once, and checks it.
func (s *failoverSite) readBack(ctx context.Context, via int, body []byte) error {
	obj, err := s.s3[via].GetObject(ctx, failoverBucket, "obj", minio.GetObjectOptions{})
	if err != nil {
		return err
	}
	defer obj.Close()
	got, err := io.ReadAll(obj)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, body) {
		return fmt.Errorf("read %d bytes, not the %d written", len(got), len(body))
	}
	return nil
}
