package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/encrypt"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/app"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
	"github.com/twinlake/twinlake/internal/cluster"
	"github.com/twinlake/twinlake/internal/erasure"
	"github.com/twinlake/twinlake/internal/nodeapi"
	"github.com/twinlake/twinlake/internal/testsite"
)

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
	env := []string{"TWINLAKE_ROOT_USER=clusteradmin", "TWINLAKE_ROOT_PASSWORD=cluster-secret-123",
		"TWINLAKE_KMS_SECRET_KEY=" + "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="}
	// Its etcd members hold 3 GiB, not etcd's default 2 GiB.
	// Its leaders write one access log.
	accessLog := filepath.Join(t.TempDir(), "access.log")
	cl := testsite.StartClusterWith(t, bin, t.TempDir(), 4, testsite.ClusterOptions{EtcdQuota: "3GiB", Args: []string{"--access-log", accessLog}}, env...)
	nodes := cl.Addrs

	e := newCLIEnv(t)
	clients := make([]*minio.Client, len(nodes))
	for i, n := range nodes {
		e.must("alias", "set", fmt.Sprint("n", i), "http://"+n, "clusteradmin", "cluster-secret-123")
		c, err := cmdutil.NewS3Client(cmdutil.Alias{URL: "http://" + n, AccessKey: "clusteradmin", SecretKey: "cluster-secret-123"}, cmdutil.S3ClientConfig{})
		if err != nil {
			t.Fatal(err)
		}
		clients[i] = c
	}
	info := clusterInfo(t, e, "n0")
	leader := -1
	for i, n := range nodes {
		if info[n] == "leader" {
			leader = i
		}
	}
	if leader < 0 || len(info) != 4 {
		t.Fatalf("admin info nodes: %v", info)
	}
	// How much of etcd's quota the metadata uses, from its 3 voters, and
	// which nodes they are (the first 3 of the sorted list).
	infoText := e.must("admin", "info", "n0")
	if !regexp.MustCompile(`Etcd: +[0-9.]+[KMG]iB in use of a 3\.0GiB quota \(0%\), file [0-9.]+[KMG]iB\n`).MatchString(infoText) {
		t.Fatalf("admin info does not tell etcd's use of its quota:\n%s", infoText)
	}
	sorted := slices.Sorted(slices.Values(nodes))
	for i, n := range sorted {
		line := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(n) + ` .*$`).FindString(infoText)
		if voter := strings.Contains(line, "  etcd voter"); voter != (i < 3) {
			t.Fatalf("admin info's line of node %s (%d of the sorted list) is %q: want it a voter only among the first 3", n, i+1, line)
		}
	}
	// Only a voter leads, and its member holds etcd's raft leadership.
	raftLeader(t, e, "n0", nodes[leader])

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
	cl.KillNode(leader)
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
			if info[n] == "leader" {
				next = i
			}
		}
		if next < 0 || next == leader || info[nodes[leader]] != "offline" {
			return fmt.Errorf("nodes %v", info)
		}
		return nil
	})
	t.Logf("%d writes acknowledged; leader %s killed, %s leads", len(acked), nodes[leader], nodes[next])
	raftLeader(t, e, fmt.Sprintf("n%d", next), nodes[next])
	// The metrics, through any node, tell the dead node and its drive, and
	// each live node's CPU time (the dead one cannot tell it). A node that
	// does not answer within a second is left out of one scrape, as the
	// metric's help says: under load that happens, so the scrape is
	// repeated, as Prometheus would, for a while.
	metricsWant := func(scraped string) []string {
		var missing []string
		for _, want := range []string{fmt.Sprintf(`twinlake_cluster_node_up{node=%q} 0`, nodes[leader]), fmt.Sprintf(`twinlake_cluster_node_leader{node=%q} 1`, nodes[next]),
			fmt.Sprintf(`twinlake_drive_up{drive=%q} 0`, nodes[leader]), fmt.Sprintf(`twinlake_drive_up{drive=%q} 1`, nodes[next]),
			"twinlake_cluster_etcd_quota_bytes 3.221225472e+09", "twinlake_cluster_etcd_nospace 0"} {
			if !strings.Contains(scraped, want) {
				missing = append(missing, want)
			}
		}
		for i, n := range nodes {
			for _, metric := range []string{"twinlake_cluster_node_cpu_seconds_total", "twinlake_cluster_node_requests_held", "twinlake_cluster_node_leaders_deposed_total"} {
				line := fmt.Sprintf(`%s{node=%q} `, metric, n)
				if got := strings.Contains(scraped, line); got != (i != leader) {
					missing = append(missing, fmt.Sprintf("%s of node %s (killed %v) shown: %v", metric, n, i == leader, got))
				}
			}
		}
		return missing
	}
	var missing []string
	var scraped strings.Builder
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		scraped.Reset()
		if err := cmdutil.ScrapeMetrics(t.Context(), cmdutil.Alias{URL: "http://" + nodes[(leader+2)%4], AccessKey: "clusteradmin", SecretKey: "cluster-secret-123"}, &scraped); err != nil {
			t.Fatal(err)
		}
		if missing = metricsWant(scraped.String()); len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(missing) > 0 {
		t.Fatalf("metrics lack %q:\n%s", missing, testsite.GrepLines(scraped.String(), "twinlake_cluster_")+testsite.GrepLines(scraped.String(), "twinlake_drive_"))
	}
	var lost []string
	i := 0
	for key, want := range acked {
		c := clients[(leader+1+i%3)%4]
		i++
		got, err := getObject(t.Context(), c, "data", key)
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
	readsServedHere(t, e, clients, nodes, leader, next)
	sameThroughEveryNode(t, nodes, leader, next, "clusteradmin", "cluster-secret-123")
	sourceIPThroughEveryNode(t, clients[next], nodes, leader)
	specialKeysThroughEveryNode(t, clients, nodes, leader, next)
	writesThroughEveryNode(t, e, clients, nodes, leader, next, accessLog, "clusteradmin", "cluster-secret-123")
	// bench s3 tells what each live node spent per operation.
	benchOut := e.must("bench", "s3", fmt.Sprintf("n%d", (leader+1)%4), "--size", "1KiB", "--concurrency", "2", "--count", "10", "--json")
	var bench struct {
		Results []struct {
			Op     string             `json:"op"`
			CPU    float64            `json:"server_cpu_us_per_op"`
			ByNode map[string]float64 `json:"node_cpu_us_per_op"`
		}
	}
	if err := json.Unmarshal([]byte(benchOut), &bench); err != nil {
		t.Fatalf("%v\n%s", err, benchOut)
	}
	for _, r := range bench.Results {
		if r.Op == "LIST" || r.Op == "DELETE" {
			continue // one request: too little CPU to see on every node
		}
		if _, dead := r.ByNode[nodes[leader]]; r.CPU <= 0 || len(r.ByNode) != 3 || dead || r.ByNode[nodes[next]] <= 0 {
			t.Errorf("%s: server CPU %vµs per op, by node %v (killed %s)", r.Op, r.CPU, r.ByNode, nodes[leader])
		}
	}
	if out := e.must("table", "list", fmt.Sprintf("n%d", (leader+2)%4), "lake", "sales"); !strings.Contains(out, "orders") {
		t.Fatalf("table list after the failover:\n%s", out)
	}

	// The dead node comes back; admin heal rebuilds its shards.
	cl.Start()
	// The leader's drive watcher rebuilds its shards on its own; a heal
	// scan does the same on demand: either way, no blob stays degraded.
	testsite.Eventually(t, 60*time.Second, func() error {
		out, err := healScanJSON(t, e, fmt.Sprintf("n%d", leader))
		if err != nil {
			return err
		}
		if out["missingCount"] != 0.0 || out["degraded"] != 0.0 || out["unanswered"] != 0.0 || out["drives"] != 4.0 {
			return fmt.Errorf("heal: %v", out)
		}
		return nil
	})
	if got, want := len(nodeShards(t, cl, leader, 0)), len(nodeShards(t, cl, next, 0)); got != want || want == 0 {
		t.Fatalf("the returned node holds %d shards, the leader %d", got, want)
	}
	if info := clusterInfo(t, e, fmt.Sprintf("n%d", leader)); info[nodes[leader]] != "online" {
		t.Fatalf("nodes after the return: %v", info)
	}

	// admin trace through one node follows every node: the S3 call on
	// the leader, a shard written on each node's drive, the follower
	// passing the request to the leader and the leader's etcd commits.
	out, stop := adminEnv{cliEnv: e}.startTrace(t, "--json", "-v", "--call", "s3,storage,internal", fmt.Sprintf("n%d", leader))
	var puts, writers, forwards, commits map[string]bool
	waitWithin(t, 30*time.Second, "trace events from every node", func() bool {
		if err := put(t.Context(), clients[leader], "traced", make([]byte, 300<<10)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		puts, writers, forwards, commits = map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
		for _, line := range strings.Split(out.String(), "\n") {
			var ev struct {
				Type, Node, FuncName, Path string
				Attrs                      map[string]string
			}
			if json.Unmarshal([]byte(line), &ev) != nil {
				continue
			}
			switch {
			case ev.Type == "s3" && ev.FuncName == "s3.PutObject" && ev.Path == "/data/traced":
				puts[ev.Node] = true
			case ev.Type == "storage" && ev.FuncName == "storage.WriteShard":
				writers[ev.Node] = true
			case ev.Type == "internal" && ev.FuncName == "node.Forward" && ev.Path == "/data/traced" && ev.Attrs["leader"] == nodes[next]:
				forwards[ev.Node] = true
			case ev.Type == "internal" && ev.FuncName == "etcd.Txn":
				commits[ev.Node] = true
			}
		}
		return puts[nodes[next]] && len(writers) == len(nodes) && forwards[nodes[leader]] && commits[nodes[next]]
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if !writers[n] {
			t.Fatalf("no shard write traced on %s: %v", n, writers)
		}
	}
	offeredWriteNodeKilled(t, e, cl, clients, next, "clusteradmin", "cluster-secret-123")
}

// readsServedHere: a large object read through a node that does not lead
// (with a node dead, its shards read around) has its data read by that
// node from the drives, whole or a range of it, and the node counts it in
// admin info; an encrypted object's bytes still come from the leader.
// Objects stored with Content-Encoding: gzip, large and small, read as
// stored, with their Content-Encoding (minio-go sends no Accept-Encoding).
func readsServedHere(t *testing.T, e cliEnv, clients []*minio.Client, nodes []string, dead, leader int) {
	t.Helper()
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(7, 8))
	body := make([]byte, 12<<20)
	for i := range body {
		body[i] = byte(rng.Uint32())
	}
	// Three parts of 5, 5 and 2 MiB.
	if _, err := clients[leader].PutObject(ctx, "data", "large", bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{PartSize: 5 << 20}); err != nil {
		t.Fatal(err)
	}
	sse := body[:2<<20]
	if _, err := clients[leader].PutObject(ctx, "data", "sealed", bytes.NewReader(sse), int64(len(sse)), minio.PutObjectOptions{ServerSideEncryption: encrypt.NewSSE()}); err != nil {
		t.Fatal(err)
	}
	gzipped := map[string][]byte{}
	for name, size := range map[string]int{"packed-large": 3 << 19, "packed-small": 200 << 10} {
		var packed bytes.Buffer
		zw := gzip.NewWriter(&packed)
		zw.Write(body[:size])
		zw.Close()
		gzipped[name] = packed.Bytes()
		if _, err := clients[leader].PutObject(ctx, "data", name, bytes.NewReader(packed.Bytes()), int64(packed.Len()), minio.PutObjectOptions{ContentEncoding: "gzip"}); err != nil {
			t.Fatal(err)
		}
	}
	readsHere := func() map[string]int64 { return hereCounts(t, e, leader, "readsHere") }
	before := readsHere()
	for i, c := range clients {
		if i == dead || i == leader {
			continue
		}
		if got, err := getObject(ctx, c, "data", "large"); err != nil || !bytes.Equal(got, body) {
			t.Fatalf("the object through %s: %d bytes, %v", nodes[i], len(got), err)
		}
		opts := minio.GetObjectOptions{}
		opts.SetRange(4<<20+3, 11<<20)
		obj, err := c.GetObject(ctx, "data", "large", opts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(obj)
		obj.Close()
		if want := body[4<<20+3 : 11<<20+1]; err != nil || !bytes.Equal(got, want) {
			t.Fatalf("a range of it through %s: %d bytes of %d, %v", nodes[i], len(got), len(want), err)
		}
		if got, err := getObject(ctx, c, "data", "sealed"); err != nil || !bytes.Equal(got, sse) {
			t.Fatalf("the encrypted object through %s: %d bytes, %v", nodes[i], len(got), err)
		}
		opts = minio.GetObjectOptions{}
		opts.SetRange(100<<10+5, 100<<10+5+1<<20)
		if obj, err = c.GetObject(ctx, "data", "sealed", opts); err != nil {
			t.Fatal(err)
		}
		got, err = io.ReadAll(obj)
		obj.Close()
		if want := sse[100<<10+5 : 100<<10+6+1<<20]; err != nil || !bytes.Equal(got, want) {
			t.Fatalf("a range of the encrypted object through %s: %d bytes of %d, %v", nodes[i], len(got), len(want), err)
		}
		for name, want := range gzipped {
			obj, err := c.GetObject(ctx, "data", name, minio.GetObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(obj)
			st, _ := obj.Stat()
			obj.Close()
			if err != nil || !bytes.Equal(got, want) || st.Metadata.Get("Content-Encoding") != "gzip" {
				t.Fatalf("%s through %s: %d bytes of %d stored, Content-Encoding %q, %v", name, nodes[i], len(got), len(want), st.Metadata.Get("Content-Encoding"), err)
			}
		}
	}
	after := readsHere()
	for i, n := range nodes {
		if want := before[n] + 5; i != dead && i != leader && after[n] != want {
			t.Errorf("%s read %d GETs' data itself, want %d (the object, the encrypted one, a range of each and the large gzip-encoded one; not the small ones)", n, after[n]-before[n], want-before[n])
		}
	}
	if after[nodes[leader]] != 0 {
		t.Errorf("the leader counts %d reads passed to a leader", after[nodes[leader]])
	}
}

// clusterInfo is admin info's nodes: address to state.
func clusterInfo(t *testing.T, e cliEnv, alias string) map[string]string {
	t.Helper()
	info, err := tryClusterInfo(e, alias)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// tryClusterInfo is clusterInfo for a node that may not answer.
func tryClusterInfo(e cliEnv, alias string) (map[string]string, error) {
	out, err := e.run("admin", "info", alias, "--json")
	if err != nil {
		return nil, err
	}
	var info struct {
		Nodes []struct{ Address, State string } `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		return nil, err
	}
	states := map[string]string{}
	for _, n := range info.Nodes {
		states[n.Address] = n.State
	}
	return states, nil
}

// TestClusterTLSAndDrives: a site of 3 nodes of 2 drives each (6 drives,
// 3+3), started with --certs-dir, speaks TLS between its nodes: S3
// through any node over HTTPS, shards and forwarded requests between
// nodes, and etcd, whose peer port takes no connection without the nodes'
// certificate. Every drive of every node holds a shard of each object; a
// leader lost with its two drives is replaced over TLS, reads and writes
// go on, and back, its drives are healed; a node's etcd member made with
// TLS does not start without it.
func TestClusterTLSAndDrives(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three server processes")
	}
	bin := testsite.BuildBinary(t)
	certs := t.TempDir()
	testsite.WriteCerts(t, certs)
	env := []string{"TWINLAKE_ROOT_USER=clusteradmin", "TWINLAKE_ROOT_PASSWORD=cluster-secret-123",
		"TWINLAKE_KMS_SECRET_KEY=" + "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="}
	cl := testsite.StartClusterWith(t, bin, t.TempDir(), 3, testsite.ClusterOptions{Certs: certs, Drives: 2}, env...)
	clients := make([]*minio.Client, 3)
	for i, n := range cl.Addrs {
		c, err := minio.New(n, &minio.Options{Creds: credentials.NewStaticV4("clusteradmin", "cluster-secret-123", ""),
			Secure: true, Transport: cl.Client().Transport})
		if err != nil {
			t.Fatal(err)
		}
		clients[i] = c
	}
	ctx := t.Context()
	if err := clients[0].MakeBucket(ctx, "tls", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	// Objects across the nodes: two of 300 KiB and one of 4 KiB, which
	// a single node would keep inline; the version records in etcd keep
	// only tiny objects' data (the 100-byte one).
	body := bytes.Repeat([]byte("shard over tls "), 20<<10)
	bodies := [][]byte{body[:4<<10], body, body}
	for i, c := range clients {
		if _, err := c.PutObject(ctx, "tls", fmt.Sprint("k", i), bytes.NewReader(bodies[i]), int64(len(bodies[i])), minio.PutObjectOptions{}); err != nil {
			t.Fatalf("put through node %d: %v", i, err)
		}
	}
	if _, err := clients[1].PutObject(ctx, "tls", "tiny", bytes.NewReader(body[:100]), 100, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	readAll := func(live []int) {
		t.Helper()
		for _, i := range live {
			for k := range clients {
				got, err := getObject(ctx, clients[i], "tls", fmt.Sprint("k", k))
				if err != nil || !bytes.Equal(got, bodies[k]) {
					t.Fatalf("get k%d through node %d: %v", k, i, err)
				}
			}
			if got, err := getObject(ctx, clients[i], "tls", "tiny"); err != nil || !bytes.Equal(got, body[:100]) {
				t.Fatalf("get tiny through node %d: %v", i, err)
			}
		}
	}
	readAll([]int{0, 1, 2})
	for i := range cl.Addrs {
		for j, d := range cl.DriveDirs(i) {
			if got := len(nodeShards(t, cl, i, j)); got != len(clients) {
				t.Fatalf("drive %s holds %d shards, want one of each of the %d objects above 1 KiB", d, got, len(clients))
			}
		}
	}
	if _, err := os.Stat(filepath.Join(cl.Dir(0), "blobs")); err == nil {
		t.Fatal("the node's directory holds shards besides its drives")
	}
	// Each object's shards are placed by its bucket and key: the drive
	// set (node by node, in the nodes' order) in erasure.Place order
	// holds shards 0, 1, ...
	sorted, err := cluster.SortNodes(cl.Addrs)
	if err != nil {
		t.Fatal(err)
	}
	var places []string
	for i := range 6 {
		places = append(places, strconv.Itoa(i))
	}
	for k := range clients {
		key := fmt.Sprint("k", k)
		for shard, place := range erasure.Place("tls", key, places) {
			d, _ := strconv.Atoi(place)
			node := slices.Index(cl.Addrs, sorted[d/2])
			drive := cl.DriveDirs(node)[d%2]
			shards := nodeShards(t, cl, node, d%2)
			var raw []byte
			for id, data := range shards {
				if len(id) == 48 && id[:16] == fmt.Sprintf("%016x", erasure.KeyHash("tls", key)) {
					raw = data
				}
			}
			if raw == nil {
				t.Fatalf("drive %s holds no shard of %s: %v", drive, key, slices.Collect(maps.Keys(shards)))
			}
			if h, err := erasure.ParseHeader(raw); err != nil || h.Index != shard {
				t.Fatalf("drive %s holds shard %d of %s (%v), want shard %d by its bucket and key", drive, h.Index, key, err, shard)
			}
		}
	}

	// Encrypted with the client's key (SSE-C, taken over TLS only) and
	// written and read through the nodes that do not lead: each of them
	// encrypts and decrypts the data itself, under the data key the
	// leader made and sends it sealed.
	ac := tlsAdmin(t, cl, 0)
	leader := clusterLeaderTLS(t, ac, cl)
	here := func() map[string][2]int64 {
		info, err := ac.ServerInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][2]int64{}
		for _, n := range info.Nodes {
			out[n.Address] = [2]int64{n.WritesHere, n.ReadsHere}
		}
		return out
	}
	ssec, err := encrypt.NewSSEC(bytes.Repeat([]byte("c"), 32))
	if err != nil {
		t.Fatal(err)
	}
	secretBody := make([]byte, 2<<20+7)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range secretBody {
		secretBody[i] = byte(rng.Uint32())
	}
	before := here()
	for i := range clients {
		if i == leader {
			continue
		}
		key := fmt.Sprint("ssec-", i)
		if _, err := clients[i].PutObject(ctx, "tls", key, bytes.NewReader(secretBody), int64(len(secretBody)), minio.PutObjectOptions{ServerSideEncryption: ssec}); err != nil {
			t.Fatalf("an SSE-C PUT through node %d: %v", i, err)
		}
		opts := minio.GetObjectOptions{ServerSideEncryption: ssec}
		opts.SetRange(1<<20+3, 2<<20+6)
		for _, want := range [][]byte{secretBody, secretBody[1<<20+3:]} {
			if len(want) < len(secretBody) {
				obj, err := clients[i].GetObject(ctx, "tls", key, opts)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(obj)
				obj.Close()
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("a range of %s through node %d: %d bytes of %d, %v", key, i, len(got), len(want), err)
				}
				continue
			}
			obj, err := clients[i].GetObject(ctx, "tls", key, minio.GetObjectOptions{ServerSideEncryption: ssec})
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(obj)
			obj.Close()
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s through node %d: %d bytes, %v", key, i, len(got), err)
			}
		}
		if _, err := getObject(ctx, clients[leader], "tls", key); err == nil {
			t.Fatalf("%s read without its key", key)
		}
	}
	after := here()
	for i, n := range cl.Addrs {
		d := [2]int64{after[n][0] - before[n][0], after[n][1] - before[n][1]}
		if want := [2]int64{1, 2}; i != leader && d != want {
			t.Errorf("node %d wrote and read %v SSE-C bodies itself, want %v", i, d, want)
		}
	}

	// etcd's peer port takes nothing without the nodes' certificate; its
	// client port speaks only TLS (and needs the nodes' etcd password).
	host, port, _ := net.SplitHostPort(cl.Addrs[0])
	p, _ := strconv.Atoi(port)
	peerURL := "https://" + net.JoinHostPort(host, strconv.Itoa(p+2)) + "/members"
	http1 := cl.Client().Transport.(*http.Transport).Clone() // etcd's peer port speaks HTTP/1.1
	http1.ForceAttemptHTTP2, http1.TLSClientConfig.NextProtos = false, []string{"http/1.1"}
	if resp, err := (&http.Client{Transport: http1}).Get(peerURL); err == nil {
		resp.Body.Close()
		t.Fatalf("etcd's peer port answered %d without a client certificate", resp.StatusCode)
	}
	for _, etcdPort := range []int{p + 1, p + 2} {
		if resp, err := http.Get("http://" + net.JoinHostPort(host, strconv.Itoa(etcdPort)) + "/members"); err == nil {
			resp.Body.Close()
			if resp.StatusCode < 400 {
				t.Fatalf("etcd port %d answered plain HTTP with %d", etcdPort, resp.StatusCode)
			}
		}
	}
	withCert := http1.Clone()
	cert, err := tls.LoadX509KeyPair(filepath.Join(certs, "public.crt"), filepath.Join(certs, "private.key"))
	if err != nil {
		t.Fatal(err)
	}
	withCert.TLSClientConfig.Certificates = []tls.Certificate{cert}
	resp, err := (&http.Client{Transport: withCert}).Get(peerURL)
	if err != nil {
		t.Fatalf("etcd's peer port refuses the nodes' certificate: %v", err)
	}
	resp.Body.Close()

	// The leader lost: another takes over through etcd over TLS.
	cl.KillNode(leader)
	live := []int{(leader + 1) % 3, (leader + 2) % 3}
	testsite.Eventually(t, 60*time.Second, func() error {
		_, err := getObject(ctx, clients[live[0]], "tls", "k0")
		return err
	})
	readAll(live)
	if _, err := clients[live[1]].PutObject(ctx, "tls", "after", bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
		t.Fatalf("write with 2 of 3 nodes (4 of 6 drives): %v", err)
	}
	info, err := tlsAdmin(t, cl, live[0]).ServerInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range info.Nodes {
		if n.Address == cl.Addrs[leader] && (n.State != "offline" || !strings.HasPrefix(n.Drive, "2 of 2 drives unreachable")) {
			t.Fatalf("the dead node in admin info: %+v", n)
		}
	}

	// The killed node without --certs-dir: its etcd member refuses.
	plain := testsite.SpawnProcess(t, bin, cl.Dir(leader), cl.Addrs[leader],
		[]string{"--cluster", strings.Join(cl.Addrs, ","), "--cluster-lease", "2s"}, env...)
	testsite.Eventually(t, 30*time.Second, func() error {
		if !strings.Contains(plain.Log(), "was made with https between the nodes") {
			return fmt.Errorf("log so far:\n%s", plain.Log())
		}
		return nil
	})
	plain.Kill(t)

	// Back as it started, its drives get the shard they missed: each
	// drive then holds one of every object above 1 KiB (the three, the
	// SSE-C ones and "after").
	shardsEach := len(clients) + len(clients) - 1 + 1
	cl.Start()
	testsite.Eventually(t, 60*time.Second, func() error {
		rep, err := tlsAdmin(t, cl, leader).HealScan(ctx, adminclient.HealOptions{})
		if err != nil || rep.Degraded != 0 || rep.Unanswered != 0 || rep.MissingCount != 0 || rep.Drives != 6 || rep.Layout != "3+3" {
			return fmt.Errorf("heal %+v: %v", rep, err)
		}
		return nil
	})
	for j, d := range cl.DriveDirs(leader) {
		if got := len(nodeShards(t, cl, leader, j)); got != shardsEach {
			t.Fatalf("drive %s holds %d shards after the heal, want %d", d, got, shardsEach)
		}
	}

	// A node put back empty, its disks replaced: its etcd member is
	// replaced in the running cluster, and its drives are healed.
	now := clusterLeaderTLS(t, tlsAdmin(t, cl, leader), cl)
	empty := (now + 1) % 3
	cl.KillNode(empty)
	if err := os.RemoveAll(cl.Dir(empty)); err != nil {
		t.Fatal(err)
	}
	cl.Start()
	testsite.Eventually(t, 60*time.Second, func() error {
		rep, err := tlsAdmin(t, cl, empty).HealScan(ctx, adminclient.HealOptions{})
		if err != nil || rep.Degraded != 0 || rep.Unanswered != 0 || rep.MissingCount != 0 {
			return fmt.Errorf("heal %+v: %v", rep, err)
		}
		return nil
	})
	for j, d := range cl.DriveDirs(empty) {
		if got := len(nodeShards(t, cl, empty, j)); got != shardsEach {
			t.Fatalf("drive %s of the node put back empty holds %d shards, want %d", d, got, shardsEach)
		}
	}
	info, err = tlsAdmin(t, cl, empty).ServerInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range info.Nodes {
		if n.State == "offline" || n.Drive != "ok" {
			t.Fatalf("after the node came back empty: %+v", info.Nodes)
		}
	}
	// Its member votes again: with another node killed, it and the third
	// still hold etcd's quorum, and the site serves.
	other := (empty + 1) % 3
	cl.KillNode(other)
	testsite.Eventually(t, 60*time.Second, func() error {
		_, err := getObject(ctx, clients[empty], "tls", "after")
		return err
	})
}

// tlsAdmin is an admin client of node i of a TLS site.
// nodeShards returns the shards on drive j of node i, read through the
// node API: a node keeps its small shards in a store that only it opens.
func nodeShards(t *testing.T, cl *testsite.Cluster, i, j int) map[string][]byte {
	t.Helper()
	d, err := nodeapi.NewDrive(cl.URL(i), j, app.DeriveNodeSecret("cluster-secret-123"), cl.Client())
	if err != nil {
		t.Fatal(err)
	}
	shards := map[string][]byte{}
	for fan := range 256 {
		ids, err := d.List(fmt.Sprintf("%02x", fan))
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			r, err := d.Open(id)
			if err != nil {
				t.Fatal(err)
			}
			raw := make([]byte, r.Size())
			_, err = r.ReadAt(raw, 0)
			r.Close()
			if err != nil {
				t.Fatalf("read shard %s of drive %d of node %d: %v", id, j, i, err)
			}
			shards[id] = raw
		}
	}
	return shards
}

func tlsAdmin(t *testing.T, cl *testsite.Cluster, i int) *adminclient.Client {
	t.Helper()
	ac, err := adminclient.New(cl.URL(i), adminclient.Credentials{AccessKey: "clusteradmin", SecretKey: "cluster-secret-123"}, adminclient.Config{HTTPClient: cl.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return ac
}

// clusterLeaderTLS is the index of the site's leader, as admin info says.
func clusterLeaderTLS(t *testing.T, ac *adminclient.Client, cl *testsite.Cluster) int {
	t.Helper()
	info, err := ac.ServerInfo(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range info.Nodes {
		if n.State == "leader" {
			return slices.Index(cl.Addrs, n.Address)
		}
	}
	t.Fatalf("no leader in %+v", info.Nodes)
	return -1
}

// TestClusterResyncResumesOnNewLeader: a resync from a 4-node site to a
// single-node peer that is down fills the backlog resync_backlog allows
// and waits there; the leader is killed; the new leader carries on the
// same job from its saved cursor (nothing queued twice), and once the
// peer is back the job completes and the backlog drains.
func TestClusterResyncResumesOnNewLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five server processes")
	}
	f := startClusterAndPeer(t)
	cl, e := f.cl, f.e
	e.must("admin", "replicate", "add", "p0", "dr")
	e.must("mb", "p1/data")
	const objects = 600
	c, err := cmdutil.NewS3Client(cmdutil.Alias{URL: "http://" + cl.Addrs[1], AccessKey: "clusteradmin", SecretKey: "cluster-secret-123"}, cmdutil.S3ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	keys := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range keys {
				body := fmt.Appendf(nil, "object %d", i)
				if _, err := c.PutObject(t.Context(), "data", fmt.Sprintf("k%04d", i), bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	for i := range objects {
		keys <- i
	}
	close(keys)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	resync := func(alias string) adminclient.ResyncStatus {
		var job adminclient.ResyncStatus
		if err := json.Unmarshal([]byte(e.must("admin", "replicate", "resync", "status", alias, "dr", "--json")), &job); err != nil {
			t.Fatal(err)
		}
		return job
	}
	backlog := func(alias string) int64 {
		var st adminclient.ReplicationStatus
		if err := json.Unmarshal([]byte(e.must("admin", "replicate", "status", alias, "--json")), &st); err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, tg := range st.Targets {
			n += tg.Pending + tg.Retrying
		}
		return n
	}
	// The join's own resync and the writes reach the peer first.
	testsite.Eventually(t, 60*time.Second, func() error {
		if job := resync("p0"); job.State != "completed" {
			return fmt.Errorf("join resync %s", job.State)
		}
		if n := backlog("p0"); n > 0 {
			return fmt.Errorf("backlog %d", n)
		}
		return nil
	})

	// The peer goes down; a resync fills the backlog it may and waits.
	f.dr.Kill(t)
	e.must("admin", "replicate", "resync", "start", "p0", "dr")
	var held adminclient.ResyncStatus
	testsite.Eventually(t, 30*time.Second, func() error {
		held = resync("p0")
		if held.State != "running" || held.Queued < 256 {
			return fmt.Errorf("resync %s, %d queued", held.State, held.Queued)
		}
		return nil
	})
	if held.Queued >= objects {
		t.Fatalf("the resync queued %d of %d versions with its peer down: resync_backlog did not hold it", held.Queued, objects)
	}

	// The leader dies; another node takes the job on where it stood.
	_, other := f.killLeader(t)
	if job := resync(other); job.ID != held.ID || job.State != "running" || job.Queued < held.Queued || job.Queued >= objects {
		t.Fatalf("after the leader's loss the resync is %+v, was %+v", job, held)
	}

	// The peer returns: the job completes, having queued each version once.
	f.startPeer(t)
	testsite.Eventually(t, 90*time.Second, func() error {
		job := resync(other)
		if job.State != "completed" {
			return fmt.Errorf("resync %s, %d queued", job.State, job.Queued)
		}
		if job.ID != held.ID || job.Queued != objects || job.Buckets != 1 {
			t.Fatalf("resumed resync %+v: want job %s, %d versions of 1 bucket, each queued once", job, held.ID, objects)
		}
		if n := backlog(other); n > 0 {
			return fmt.Errorf("backlog %d", n)
		}
		return nil
	})
	out := e.must("ls", "--recursive", "dr/data")
	if n := strings.Count(out, "\n"); n != objects {
		t.Fatalf("the peer lists %d objects, want %d", n, objects)
	}
}

// TestClusterBackfillResumesOnNewLeader: a catalog backfill on a 4-node
// site holds while its peer is away (each record it writes is a change
// queued for the peer, and it stops at replication resync_backlog), the
// leader is killed, the new leader takes the job on from its cursor, and
// once the peer is back the job completes, every record handled once and
// every record on the peer.
func TestClusterBackfillResumesOnNewLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five server processes")
	}
	f := startClusterAndPeer(t)
	cl, e, drAddr := f.cl, f.e, f.drAddr

	// A warehouse whose namespaces lack their identity records, as if it
	// predated them.
	const namespaces = 300
	e.must("table", "warehouse", "create", "p1", "lake")
	for i := range namespaces {
		e.must("table", "namespace", "create", fmt.Sprint("p", i%4), "lake", fmt.Sprintf("ns%03d", i))
	}
	s3At := func(addr string) *minio.Client {
		c, err := cmdutil.NewS3Client(cmdutil.Alias{URL: "http://" + addr, AccessKey: "clusteradmin", SecretKey: "cluster-secret-123"}, cmdutil.S3ClientConfig{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := s3At(cl.Addrs[2])
	records := func(c *minio.Client) []string {
		var keys []string
		for o := range c.ListObjects(t.Context(), "lake", minio.ListObjectsOptions{Prefix: ".twinlake/", Recursive: true, WithVersions: true}) {
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			keys = append(keys, o.Key+" "+o.VersionID)
		}
		return keys
	}
	for _, kv := range records(c) {
		key, version, _ := strings.Cut(kv, " ")
		if err := c.RemoveObject(t.Context(), "lake", key, minio.RemoveObjectOptions{VersionID: version}); err != nil {
			t.Fatal(err)
		}
	}
	if left := records(c); len(left) != 0 {
		t.Fatalf("identity records left: %v", left[:min(5, len(left))])
	}
	e.must("admin", "config", "set", "dr", "tables", "replica_catalog=on")
	e.must("admin", "replicate", "add", "p0", "dr")
	backfill := func(alias string) adminclient.BackfillJob {
		var job adminclient.BackfillJob
		if err := json.Unmarshal([]byte(e.must("table", "replicate", "backfill", "status", alias, "--json")), &job); err != nil {
			t.Fatal(err)
		}
		return job
	}
	testsite.Eventually(t, 60*time.Second, func() error {
		var job adminclient.ResyncStatus
		if err := json.Unmarshal([]byte(e.must("admin", "replicate", "resync", "status", "p0", "dr", "--json")), &job); err != nil {
			t.Fatal(err)
		}
		if job.State != "completed" {
			return fmt.Errorf("join resync %s", job.State)
		}
		var st adminclient.ReplicationStatus
		if err := json.Unmarshal([]byte(e.must("admin", "replicate", "status", "p0", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		for _, tg := range st.Targets {
			if n := tg.Pending + tg.Retrying; n > 0 {
				return fmt.Errorf("backlog %d", n)
			}
		}
		return nil
	})

	// The peer goes down; the backfill writes what the backlog allows and
	// holds.
	f.dr.Kill(t)
	e.must("table", "replicate", "backfill", "start", "p0")
	var held adminclient.BackfillJob
	testsite.Eventually(t, 30*time.Second, func() error {
		held = backfill("p0")
		if held.State != "running" || held.Written < 192 {
			return fmt.Errorf("backfill %s, %d written", held.State, held.Written)
		}
		return nil
	})
	time.Sleep(time.Second) // a backfill not held would finish meanwhile
	if held = backfill("p0"); held.State != "running" || held.Namespaces >= namespaces {
		t.Fatalf("with its peer down the backfill is %+v: resync_backlog did not hold it", held)
	}

	// The leader dies; another node takes the job on where it stood.
	leader, other := f.killLeader(t)
	if job := backfill(other); job.ID != held.ID || job.State != "running" || job.Namespaces < held.Namespaces || job.Namespaces >= namespaces {
		t.Fatalf("after the leader's loss the backfill is %+v, was %+v", job, held)
	}

	// The peer returns: the job completes, each record handled once, and
	// the peer holds every record.
	f.startPeer(t)
	testsite.Eventually(t, 90*time.Second, func() error {
		job := backfill(other)
		if job.State != "completed" {
			return fmt.Errorf("backfill %s, %d written", job.State, job.Written)
		}
		if job.ID != held.ID || job.Namespaces != namespaces || job.Written+job.Unchanged != namespaces || job.Warehouses != 1 {
			t.Fatalf("resumed backfill %+v: want job %s, %d namespaces of 1 warehouse, each handled once", job, held.ID, namespaces)
		}
		return nil
	})
	live, drc := s3At(cl.Addrs[(leader+1)%4]), s3At(drAddr)
	testsite.Eventually(t, 60*time.Second, func() error {
		want, got := records(live), records(drc)
		slices.Sort(want)
		slices.Sort(got)
		if len(want) < namespaces || !slices.Equal(got, want) {
			return fmt.Errorf("the peer holds %d identity record versions, the site %d (want at least %d)", len(got), len(want), namespaces)
		}
		return nil
	})
}

// clusterAndPeer is a 4-node site (aliases p0 to p3) and a single-node
// peer (alias dr), whose resync and backfill hold at a backlog of 256 and
// whose senders retry quickly and long, for tests that catch a job
// midway.
type clusterAndPeer struct {
	bin, dir, drAddr string
	env              []string
	cl               *testsite.Cluster
	dr               *testsite.Process
	e                cliEnv
}

func startClusterAndPeer(t *testing.T) *clusterAndPeer {
	f := &clusterAndPeer{bin: testsite.BuildBinary(t), dir: t.TempDir(), drAddr: testsite.FreeAddr(t),
		env: []string{"TWINLAKE_ROOT_USER=clusteradmin", "TWINLAKE_ROOT_PASSWORD=cluster-secret-123",
			"TWINLAKE_KMS_SECRET_KEY=" + "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
			"TWINLAKE_REPLICATION_RESYNC_BACKLOG=256", "TWINLAKE_REPLICATION_MAX_RETRIES=1000",
			"TWINLAKE_REPLICATION_RETRY_BASE_DELAY=50ms", "TWINLAKE_REPLICATION_RETRY_MAX_DELAY=500ms"}}
	f.cl = testsite.StartCluster(t, f.bin, filepath.Join(f.dir, "p"), 4, f.env...)
	f.startPeer(t)
	f.e = newCLIEnv(t)
	for i, n := range f.cl.Addrs {
		f.e.must("alias", "set", fmt.Sprint("p", i), "http://"+n, "clusteradmin", "cluster-secret-123")
	}
	f.e.must("alias", "set", "dr", "http://"+f.drAddr, "clusteradmin", "cluster-secret-123")
	return f
}

// startPeer starts the peer, or starts it again where it was.
func (f *clusterAndPeer) startPeer(t *testing.T) {
	f.dr = testsite.StartProcess(t, f.bin, filepath.Join(f.dir, "dr"), f.drAddr, f.env...)
}

// killLeader kills the site's leader (kill -9) and waits for another node
// to lead; it returns the killed node and the alias of the one after it.
func (f *clusterAndPeer) killLeader(t *testing.T) (leader int, other string) {
	t.Helper()
	info := clusterInfo(t, f.e, "p0")
	leader = slices.IndexFunc(f.cl.Addrs, func(a string) bool { return info[a] == "leader" })
	if leader < 0 {
		t.Fatalf("no leader: %v", info)
	}
	other = fmt.Sprint("p", (leader+1)%4)
	f.cl.KillNode(leader)
	testsite.Eventually(t, 30*time.Second, func() error {
		if info := clusterInfo(t, f.e, other); !slices.Contains(slices.Collect(maps.Values(info)), "leader") {
			return fmt.Errorf("no new leader: %v", info)
		}
		return nil
	})
	return leader, other
}

// raftLeader checks that admin info through alias names leader as the
// site's leader, a voter whose etcd member is etcd's raft leader (it
// takes it before it serves), and every other node as neither.
func raftLeader(t *testing.T, e cliEnv, alias, leader string) {
	t.Helper()
	testsite.Eventually(t, 30*time.Second, func() error {
		var info struct{ Nodes []adminclient.NodeInfo }
		if err := json.Unmarshal([]byte(e.must("admin", "info", alias, "--json")), &info); err != nil {
			return err
		}
		for _, n := range info.Nodes {
			if lead := n.Address == leader; (n.State == "leader") != lead || n.EtcdLeader != lead || lead && !n.Voter {
				return fmt.Errorf("node %s: state %s, voter %t, etcd's raft leader %t; want %s alone to lead, a voter, etcd's raft leader too",
					n.Address, n.State, n.Voter, n.EtcdLeader, leader)
			}
		}
		return nil
	})
}
