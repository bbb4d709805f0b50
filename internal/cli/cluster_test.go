package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/cli/cmdutil"
	"github.com/twinlake/twinlake/internal/testsite"
)

// clusterNode is one node process of a multi-node site.
type clusterNode struct {
	addr string
	dir  string
	cmd  *exec.Cmd
	log  *bytes.Buffer
	done chan struct{}
}

// freeTriple returns a loopback address whose port and the next two are
// free: a node and its etcd member's client and peer ports.
func freeTriple(t *testing.T, taken map[int]bool) string {
	t.Helper()
	for range 200 {
		addr := testsite.FreeAddr(t)
		_, ps, _ := net.SplitHostPort(addr)
		p, _ := strconv.Atoi(ps)
		ok := p < 65000
		for i := range 3 {
			if taken[p+i] {
				ok = false
			}
			if !ok {
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

func (n *clusterNode) start(t *testing.T, bin string, nodes []string, env []string) {
	t.Helper()
	n.cmd = exec.Command(bin, "server", "--address", n.addr, "--dir", n.dir, "--cluster", strings.Join(nodes, ","),
		"--cluster-lease", "2s", "--log-level", "warn")
	n.cmd.Env = append(os.Environ(), env...)
	n.log = &bytes.Buffer{}
	n.cmd.Stdout, n.cmd.Stderr = n.log, n.log
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n.done = make(chan struct{})
	go func() { n.cmd.Wait(); close(n.done) }()
}

func (n *clusterNode) kill() {
	if n.cmd != nil && n.cmd.Process != nil {
		n.cmd.Process.Kill()
		<-n.done
	}
}

func ready(addr string) error {
	resp, err := http.Get("http://" + addr + "/twinlake/health/ready")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: ready %d", addr, resp.StatusCode)
	}
	return nil
}

// TestClusterSurvivesNodeLoss: a site of 4 node processes (embedded etcd
// on 3 of them, object data 2+2 across all 4) serves S3 and the catalog
// from any node; kill -9 of the leader under concurrent writers loses no
// acknowledged write, another node takes the lead, reads and writes go on
// with 3 nodes, admin info shows the dead node offline; back, its
// missing shards are rebuilt by admin heal.
func TestClusterSurvivesNodeLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four server processes")
	}
	bin := testsite.BuildBinary(t)
	base := t.TempDir()
	taken := map[int]bool{}
	nodes := make([]*clusterNode, 4)
	var addrs []string
	for i := range nodes {
		nodes[i] = &clusterNode{addr: freeTriple(t, taken), dir: filepath.Join(base, fmt.Sprint("node", i))}
		addrs = append(addrs, nodes[i].addr)
	}
	env := []string{"TWINLAKE_ROOT_USER=clusteradmin", "TWINLAKE_ROOT_PASSWORD=cluster-secret-123",
		"TWINLAKE_KMS_SECRET_KEY=" + "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="}
	for _, n := range nodes {
		n.start(t, bin, addrs, env)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.kill()
		}
		if t.Failed() {
			for _, n := range nodes {
				t.Logf("node %s log:\n%s", n.addr, n.log)
			}
		}
	})
	testsite.Eventually(t, 90*time.Second, func() error {
		for _, n := range nodes {
			if err := ready(n.addr); err != nil {
				return err
			}
		}
		return nil
	})

	e := newCLIEnv(t)
	clients := make([]*minio.Client, len(nodes))
	for i, n := range nodes {
		e.must("alias", "set", fmt.Sprint("n", i), "http://"+n.addr, "clusteradmin", "cluster-secret-123")
		c, err := cmdutil.NewS3Client(cmdutil.Alias{URL: "http://" + n.addr, AccessKey: "clusteradmin", SecretKey: "cluster-secret-123"}, cmdutil.S3ClientConfig{})
		if err != nil {
			t.Fatal(err)
		}
		clients[i] = c
	}
	info := clusterInfo(t, e, "n0")
	leader := -1
	for i, n := range nodes {
		if info[n.addr] == "leader" {
			leader = i
		}
	}
	if leader < 0 || len(info) != 4 {
		t.Fatalf("admin info nodes: %v", info)
	}

	// Any node takes any request: a bucket made on one, objects written
	// on others, the catalog through a fourth.
	e.must("mb", fmt.Sprintf("n%d/data", (leader+1)%4))
	e.must("table", "warehouse", "create", fmt.Sprintf("n%d", (leader+2)%4), "lake")
	e.must("table", "namespace", "create", fmt.Sprintf("n%d", (leader+3)%4), "lake", "sales")
	e.must("table", "create", fmt.Sprintf("n%d", leader), "lake", "sales", "orders", "--schema", "id:long!,name:string")

	var mu sync.Mutex
	acked := map[string][]byte{}
	put := func(ctx context.Context, c *minio.Client, key string, body []byte) error {
		_, err := c.PutObject(ctx, "data", key, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{})
		if err == nil {
			mu.Lock()
			acked[key] = body
			mu.Unlock()
		}
		return err
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := 0; ctx.Err() == nil; i++ {
				size := 1 << 10
				if i%2 == 0 {
					size = 300 << 10 // a blob across the nodes, not inline
				}
				body := make([]byte, size)
				for j := range body {
					body[j] = byte(rng.Uint32())
				}
				c := clients[(w+i)%4]
				if (w+i)%4 == leader {
					c = clients[(leader+1)%4]
				}
				put(ctx, c, fmt.Sprintf("w%d/%d", w, i), body)
			}
		})
	}
	time.Sleep(2 * time.Second) // load before the kill, not an assertion
	nodes[leader].kill()
	time.Sleep(6 * time.Second) // load through the failover
	cancel()
	wg.Wait()
	if len(acked) == 0 {
		t.Fatal("no write acknowledged")
	}

	// A new leader; every acknowledged write reads back from any live node.
	var next int
	testsite.Eventually(t, 30*time.Second, func() error {
		info = clusterInfo(t, e, fmt.Sprintf("n%d", (leader+1)%4))
		next = -1
		for i, n := range nodes {
			if info[n.addr] == "leader" {
				next = i
			}
		}
		if next < 0 || next == leader || info[nodes[leader].addr] != "offline" {
			return fmt.Errorf("nodes %v", info)
		}
		return nil
	})
	t.Logf("%d writes acknowledged; leader %s killed, %s leads", len(acked), nodes[leader].addr, nodes[next].addr)
	var lost []string
	i := 0
	for key, want := range acked {
		c := clients[(leader+1+i%3)%4]
		i++
		got, err := getFrom(t.Context(), c, key)
		if err != nil || !bytes.Equal(got, want) {
			lost = append(lost, fmt.Sprintf("%s (%v)", key, err))
		}
	}
	if len(lost) > 0 {
		t.Fatalf("%d of %d acknowledged writes lost after kill -9 of the leader: %v", len(lost), len(acked), lost[:min(5, len(lost))])
	}
	if err := put(t.Context(), clients[(leader+1)%4], "after", []byte(strings.Repeat("x", 300<<10))); err != nil {
		t.Fatalf("write with 3 of 4 nodes: %v", err)
	}
	if out := e.must("table", "list", fmt.Sprintf("n%d", (leader+2)%4), "lake", "sales"); !strings.Contains(out, "orders") {
		t.Fatalf("table list after the failover:\n%s", out)
	}

	// The dead node comes back; admin heal rebuilds its shards.
	nodes[leader].start(t, bin, addrs, env)
	testsite.Eventually(t, 60*time.Second, func() error { return ready(nodes[leader].addr) })
	// The leader's drive watcher rebuilds its shards on its own; a heal
	// scan does the same on demand: either way, no blob stays degraded.
	testsite.Eventually(t, 60*time.Second, func() error {
		out := checkJSONStyle(t, e.must("admin", "heal", fmt.Sprintf("n%d", leader), "--scan", "--json"))[0]
		if out["missingCount"] != 0.0 || out["degraded"] != 0.0 || out["drives"] != 4.0 {
			return fmt.Errorf("heal: %v", out)
		}
		return nil
	})
	if got, want := len(shardIDs(t, nodes[leader].dir)), len(shardIDs(t, nodes[next].dir)); got != want || want == 0 {
		t.Fatalf("the returned node holds %d shards, the leader %d", got, want)
	}
	if info := clusterInfo(t, e, fmt.Sprintf("n%d", leader)); info[nodes[leader].addr] != "online" {
		t.Fatalf("nodes after the return: %v", info)
	}
}

// clusterInfo is admin info's nodes: address to state.
func clusterInfo(t *testing.T, e cliEnv, alias string) map[string]string {
	t.Helper()
	var info struct {
		Nodes []struct{ Address, State string } `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(e.must("admin", "info", alias, "--json")), &info); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range info.Nodes {
		out[n.Address] = n.State
	}
	return out
}

func getFrom(ctx context.Context, c *minio.Client, key string) ([]byte, error) {
	obj, err := c.GetObject(ctx, "data", key, minio.GetObjectOptions{})
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(obj)
	return b.Bytes(), err
}
