package testsite

import (
	"cmp"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Cluster is a multi-node site of node processes from the built binary,
// each on a loopback address whose next two ports its etcd member takes.
type Cluster struct {
	t     testing.TB
	bin   string
	env   []string
	Addrs []string
	dirs  []string
	nodes []*Process
	// past holds the logs of each node's processes before its current
	// one (killed, then started again), shown with it when a test fails.
	past []string
	// holes holds, for a node CutOff, what frees its ports.
	holes []func()

	opts   ClusterOptions
	client *http.Client // reaches the nodes' ports
}

var (
	portsMu sync.Mutex
	taken   = map[int]bool{}
)

// freeTriple returns a loopback address whose port and the next two are
// free and not handed out before by this process.
func freeTriple(t testing.TB) string {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 500 {
		addr := FreeAddr(t)
		_, ps, _ := net.SplitHostPort(addr)
		p, _ := strconv.Atoi(ps)
		ok := p < 65000
		for i := 0; ok && i < 3; i++ {
			if taken[p+i] {
				ok = false
				break
			}
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+i))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			for i := range 3 {
				taken[p+i] = true
			}
			return addr
		}
	}
	t.Fatal("no three free ports in a row")
	return ""
}

// StartCluster starts a site of n nodes under dir with env (which must
// give the root credentials and the KMS key) and waits until every node
// is ready. The nodes are killed at test cleanup; their logs are printed
// if the test failed, or always with TWINLAKE_TEST_NODE_LOGS set.
func StartCluster(t testing.TB, bin, dir string, n int, env ...string) *Cluster {
	t.Helper()
	return StartClusterWith(t, bin, dir, n, ClusterOptions{}, env...)
}

// ClusterOptions are the flags every node of a Cluster starts with.
type ClusterOptions struct {
	// Certs, when set, is every node's --certs-dir (see WriteCerts).
	Certs string
	// Drives, when set, gives every node that many drives (--drives),
	// directories driveJ in its own.
	Drives int
	// Etcd, when set, is every node's --etcd: the client URLs of an etcd
	// run apart from the site; EtcdSite, when set, its --etcd-site.
	Etcd     []string
	EtcdSite string
	// InlineLimit, when set, is every node's --cluster-inline-limit.
	InlineLimit string
	// EtcdQuota, when set, is every node's --etcd-quota.
	EtcdQuota string
	// Lease, when set, is every node's --cluster-lease (2s otherwise, so
	// that a node paused or cut off loses the lead soon).
	Lease string
	// Args are more arguments of every node's server command.
	Args []string
}

// StartClusterWith is StartCluster with opts.
func StartClusterWith(t testing.TB, bin, dir string, n int, opts ClusterOptions, env ...string) *Cluster {
	t.Helper()
	c := &Cluster{t: t, bin: bin, env: env, nodes: make([]*Process, n), past: make([]string, n), holes: make([]func(), n), opts: opts, client: http.DefaultClient}
	if opts.Certs != "" {
		c.client = CertsClient(t, opts.Certs)
	}
	for i := range n {
		c.Addrs = append(c.Addrs, freeTriple(t))
		c.dirs = append(c.dirs, filepath.Join(dir, fmt.Sprint("node", i)))
	}
	t.Cleanup(func() {
		c.Kill()
		for i := range c.holes {
			c.mend(i)
		}
		if t.Failed() || os.Getenv("TWINLAKE_TEST_NODE_LOGS") != "" {
			for i, p := range c.nodes {
				if p != nil {
					t.Logf("node %s log:\n%s%s", c.Addrs[i], c.past[i], p.Log())
				}
			}
		}
	})
	c.Start()
	return c
}

// Start starts every node that is not running and waits until all are
// ready.
func (c *Cluster) Start() {
	c.t.Helper()
	for i := range c.nodes {
		if c.nodes[i] == nil || c.nodes[i].Exited() {
			c.StartNode(i)
		}
	}
	Eventually(c.t, 120*time.Second, func() error {
		for i := range c.nodes {
			if err := c.Ready(i); err != nil {
				return err
			}
		}
		return nil
	})
}

// StartNode starts node i without waiting for it.
func (c *Cluster) StartNode(i int) {
	c.t.Helper()
	c.mend(i)
	args := []string{"--cluster", strings.Join(c.Addrs, ","), "--cluster-lease", cmp.Or(c.opts.Lease, "2s")}
	if c.opts.Certs != "" {
		args = append(args, "--certs-dir", c.opts.Certs)
	}
	if c.opts.Drives > 0 {
		args = append(args, "--drives", strings.Join(c.DriveDirs(i), ","))
	}
	if len(c.opts.Etcd) > 0 {
		args = append(args, "--etcd", strings.Join(c.opts.Etcd, ","))
	}
	if c.opts.EtcdSite != "" {
		args = append(args, "--etcd-site", c.opts.EtcdSite)
	}
	if c.opts.InlineLimit != "" {
		args = append(args, "--cluster-inline-limit", c.opts.InlineLimit)
	}
	if c.opts.EtcdQuota != "" {
		args = append(args, "--etcd-quota", c.opts.EtcdQuota)
	}
	args = append(args, c.opts.Args...)
	if p := c.nodes[i]; p != nil {
		c.past[i] += p.Log() + "        (process ended; the next one:)\n"
	}
	c.nodes[i] = spawn(c.t, c.bin, c.dirs[i], c.Addrs[i], args, c.env)
}

// URL is node i's base URL.
func (c *Cluster) URL(i int) string {
	if c.opts.Certs != "" {
		return "https://" + c.Addrs[i]
	}
	return "http://" + c.Addrs[i]
}

// Client is an HTTP client that reaches the nodes (trusting their
// certificate when they serve TLS).
func (c *Cluster) Client() *http.Client { return c.client }

// Node is node i's process, nil before it started.
func (c *Cluster) Node(i int) *Process { return c.nodes[i] }

// Ready reports whether node i answers ready.
func (c *Cluster) Ready(i int) error {
	resp, err := c.client.Get(c.URL(i) + "/twinlake/health/ready")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("node %s: ready %d", c.Addrs[i], resp.StatusCode)
	}
	return nil
}

// KillNode sends node i SIGKILL and waits for it to be gone.
func (c *Cluster) KillNode(i int) {
	if p := c.nodes[i]; p != nil {
		p.Kill(c.t)
	}
}

// PauseNode stops node i with SIGSTOP: it holds its sockets and answers
// nothing, its lease runs out; ResumeNode continues it.
func (c *Cluster) PauseNode(i int) { c.nodes[i].Pause(c.t) }

// ResumeNode continues a paused node with SIGCONT.
func (c *Cluster) ResumeNode(i int) { c.nodes[i].Resume(c.t) }

// Kill kills every node.
func (c *Cluster) Kill() {
	for i := range c.nodes {
		c.KillNode(i)
	}
}

// Dir is node i's directory.
func (c *Cluster) Dir(i int) string { return c.dirs[i] }

// DriveDirs are node i's drives: its directory, or with Drives those in
// it.
func (c *Cluster) DriveDirs(i int) []string {
	if c.opts.Drives == 0 {
		return []string{c.dirs[i]}
	}
	var dirs []string
	for j := range c.opts.Drives {
		dirs = append(dirs, filepath.Join(c.dirs[i], fmt.Sprint("drive", j)))
	}
	return dirs
}
