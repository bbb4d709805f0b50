package e2e

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	icerest "github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
	"github.com/twinlake/twinlake/internal/testsite/icetest"
)

// TestClusterFaults runs a 4-node site under S3 writers and deleters and
// an Iceberg appender, all spread over the nodes, while seeded faults hit
// one node at a time (kill -9, a pause, or a cut: killed, its ports then
// taking no connection, as a machine down; the leader half the time), then
// checks: every acknowledged write reads back from any node, every
// acknowledged delete stays deleted, every acknowledged append's rows are
// in the table exactly once, and no blob is left degraded or lost. Large
// objects overwritten under readers (whose data the nodes read from the
// drives themselves) read as one whole body written to them, never a mix
// or a corrupt one, during the faults and after. One
// round runs in the normal suite; TWINLAKE_CLUSTER_SOAK=10m runs rounds
// for that long. The seed is printed; TWINLAKE_CLUSTER_SEED replays it.
// TWINLAKE_CLUSTER_LEASE sets the nodes' --cluster-lease (2s otherwise):
// with 10s, a paused leader is deposed by the others for not answering
// (after 3 s) before its lease runs out.
func TestClusterFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four server processes under faults")
	}
	var soak time.Duration
	if v := os.Getenv("TWINLAKE_CLUSTER_SOAK"); v != "" {
		var err error
		if soak, err = time.ParseDuration(v); err != nil {
			t.Fatalf("TWINLAKE_CLUSTER_SOAK=%q: %v", v, err)
		}
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("TWINLAKE_CLUSTER_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = n
	}
	t.Logf("seed %d (replay: TWINLAKE_CLUSTER_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	bin := testsite.BuildBinary(t)
	dir := t.TempDir()
	env := clusterEnv()
	lease := os.Getenv("TWINLAKE_CLUSTER_LEASE")
	cl := testsite.StartClusterWith(t, bin, filepath.Join(dir, "site"), 4, testsite.ClusterOptions{Lease: lease}, env...)
	op := &operator{t: t, bin: bin, cfg: filepath.Join(dir, "client")}
	for i, a := range cl.Addrs {
		op.must("alias", "set", fmt.Sprint("n", i), "http://"+a, rootUser, rootSecret)
	}
	op.must("mb", "n1/soak")
	op.must("table", "warehouse", "create", "n2", "lake")
	op.must("table", "namespace", "create", "n3", "lake", "soak")
	op.must("table", "create", "n0", "lake", "soak", "events", "--schema", "id:long!,name:string")

	s3 := make([]*minio.Client, len(cl.Addrs))
	for i, a := range cl.Addrs {
		c, err := minio.New(a, &minio.Options{Creds: credentials.NewStaticV4(rootUser, rootSecret, "")})
		if err != nil {
			t.Fatal(err)
		}
		s3[i] = c
	}
	ld := &soakLedger{puts: map[string][]byte{}, deleted: map[string]bool{}, large: map[string]map[[md5.Size]byte]bool{},
		largeAcked: map[string]bool{}}
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for w := range 3 {
		wseed := rng.Uint64()
		wg.Go(func() { ld.s3Writer(ctx, s3, w, wseed) })
	}
	wg.Go(func() { ld.appender(ctx, t, cl.Addrs) })
	lseed := rng.Uint64()
	wg.Go(func() { ld.largeWriter(ctx, s3, lseed) })
	rseed := rng.Uint64()
	wg.Go(func() { ld.largeReader(ctx, t, s3, rseed) })

	rounds := 0
	deadline := time.Now().Add(soak)
	for rounds == 0 || time.Now().Before(deadline) {
		rounds++
		i := rng.IntN(len(cl.Addrs))
		if rng.IntN(2) == 0 {
			i = clusterLeader(t, op, cl)
		}
		hold := time.Duration(2000+rng.IntN(3000)) * time.Millisecond
		time.Sleep(time.Duration(500+rng.IntN(1500)) * time.Millisecond) // load between faults
		switch rng.IntN(3) {
		case 0:
			t.Logf("round %d: kill -9 node %d for %v", rounds, i, hold)
			cl.KillNode(i)
			time.Sleep(hold)
			cl.Start()
		case 1:
			t.Logf("round %d: cut off node %d (killed, its ports taking no connection) for %v", rounds, i, hold)
			cl.CutOff(i)
			time.Sleep(hold)
			cl.Start()
		default:
			t.Logf("round %d: pause node %d for %v", rounds, i, hold)
			cl.PauseNode(i)
			time.Sleep(hold)
			cl.ResumeNode(i)
			cl.Start()
		}
	}
	time.Sleep(time.Second)
	stop()
	wg.Wait()
	t.Logf("%d rounds; acknowledged: %d puts, %d deletes, %d appends; large objects read %d times during the faults",
		rounds, len(ld.puts), len(ld.deleted), len(ld.appends), ld.largeReads.Load())
	ld.check(t, s3, op, cl.Addrs)
}

// soakLedger records what the site acknowledged.
type soakLedger struct {
	mu       sync.Mutex
	puts     map[string][]byte
	deleted  map[string]bool
	appends  [][2]int64 // acknowledged id ranges [from, to)
	attempts [][2]int64 // every range tried
	// large holds, for each large key, the digest of every body a PUT
	// tried to write to it, acknowledged or not.
	large      map[string]map[[md5.Size]byte]bool
	largeAcked map[string]bool // a PUT to the key was acknowledged
	largeReads atomic.Int64    // whole bodies read during the faults
}

// largeKeys are the keys largeWriter overwrites.
const largeKeys = 3

// largeWriter overwrites a few keys with bodies of 1.5 MiB (their data
// read by reference when a node that does not lead serves a GET), through
// the nodes at random.
func (ld *soakLedger) largeWriter(ctx context.Context, s3 []*minio.Client, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 5))
	body := make([]byte, 3<<19)
	for ctx.Err() == nil {
		for j := range body {
			body[j] = byte(rng.Uint32())
		}
		key := fmt.Sprintf("large/%d", rng.IntN(largeKeys))
		ld.mu.Lock()
		if ld.large[key] == nil {
			ld.large[key] = map[[md5.Size]byte]bool{}
		}
		ld.large[key][md5.Sum(body)] = true
		ld.mu.Unlock()
		if _, err := s3[rng.IntN(len(s3))].PutObject(ctx, "soak", key, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err == nil {
			ld.mu.Lock()
			ld.largeAcked[key] = true
			ld.mu.Unlock()
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// largeReader reads the large keys through the nodes at random: a read
// may fail while its node is down, but one that succeeds must be a whole
// body written to the key.
func (ld *soakLedger) largeReader(ctx context.Context, t *testing.T, s3 []*minio.Client, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 6))
	for ctx.Err() == nil {
		key := fmt.Sprintf("large/%d", rng.IntN(largeKeys))
		if got, err := ld.readLarge(ctx, s3[rng.IntN(len(s3))], key); err == nil {
			ld.largeReads.Add(1)
			if !got {
				t.Errorf("%s read as a body never written to it", key)
			}
		}
	}
}

// readLarge reads key through c and reports whether its body is one that
// was written to it.
func (ld *soakLedger) readLarge(ctx context.Context, c *minio.Client, key string) (bool, error) {
	obj, err := c.GetObject(ctx, "soak", key, minio.GetObjectOptions{})
	if err != nil {
		return false, err
	}
	defer obj.Close()
	h := md5.New()
	if _, err := io.Copy(h, obj); err != nil {
		return false, err
	}
	var sum [md5.Size]byte
	h.Sum(sum[:0])
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return ld.large[key][sum], nil
}

func (ld *soakLedger) s3Writer(ctx context.Context, s3 []*minio.Client, w int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	for i := 0; ctx.Err() == nil; i++ {
		c := s3[rng.IntN(len(s3))]
		if i%5 == 4 {
			ld.mu.Lock()
			var key string
			for k := range ld.puts {
				if !ld.deleted[k] {
					key = k
					break
				}
			}
			ld.mu.Unlock()
			if key != "" {
				// A delete not acknowledged may or may not have happened:
				// the key leaves the ledger either way.
				ld.mu.Lock()
				delete(ld.puts, key)
				ld.mu.Unlock()
				if err := c.RemoveObject(ctx, "soak", key, minio.RemoveObjectOptions{}); err == nil {
					ld.mu.Lock()
					ld.deleted[key] = true
					ld.mu.Unlock()
				}
				continue
			}
		}
		size := 2 << 10
		if rng.IntN(2) == 0 {
			size = 200 << 10 // a blob across the nodes
		}
		body := make([]byte, size)
		for j := range body {
			body[j] = byte(rng.Uint32())
		}
		key := fmt.Sprintf("w%d/%d", w, i)
		if _, err := c.PutObject(ctx, "soak", key, bytes.NewReader(body), int64(size), minio.PutObjectOptions{}); err == nil {
			ld.mu.Lock()
			ld.puts[key] = body
			ld.mu.Unlock()
		}
	}
}

// appender appends fresh id ranges through the nodes in turn; a failed
// append is retried with new ids, never the same ones.
func (ld *soakLedger) appender(ctx context.Context, t *testing.T, addrs []string) {
	cats := make([]*icerest.Catalog, len(addrs))
	for i := 0; ctx.Err() == nil; i++ {
		from := int64(i) * 10
		n := i % len(addrs)
		if cats[n] == nil {
			// Opening reads the catalog's config: it fails while the node
			// is down, and is tried again on the node's next turn.
			cat, err := icetest.OpenCatalog(ctx, "http://"+addrs[n], rootUser, rootSecret, "lake")
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			t.Cleanup(func() { cat.Close() })
			cats[n] = cat
		}
		cat := cats[n]
		ld.mu.Lock()
		ld.attempts = append(ld.attempts, [2]int64{from, from + 10})
		ld.mu.Unlock()
		actx, cancel := context.WithTimeout(ctx, 20*time.Second)
		_, err := icetest.AppendRetry(actx, cat, table.Identifier{"soak", "events"}, from, from+10)
		cancel()
		if err == nil {
			ld.mu.Lock()
			ld.appends = append(ld.appends, [2]int64{from, from + 10})
			ld.mu.Unlock()
		}
	}
}

func (ld *soakLedger) check(t *testing.T, s3 []*minio.Client, op *operator, addrs []string) {
	t.Helper()
	ctx := t.Context()
	i := 0
	for key, want := range ld.puts {
		c := s3[i%len(s3)]
		i++
		obj, err := c.GetObject(ctx, "soak", key, minio.GetObjectOptions{})
		var got bytes.Buffer
		if err == nil {
			_, err = got.ReadFrom(obj)
			obj.Close()
		}
		if err != nil || !bytes.Equal(got.Bytes(), want) {
			t.Errorf("acknowledged write %s: %d bytes, %v", key, got.Len(), err)
		}
	}
	for key := range ld.large {
		for n, c := range s3 {
			ok, err := ld.readLarge(ctx, c, key)
			if err != nil && (ld.largeAcked[key] || minio.ToErrorResponse(err).StatusCode != 404) || err == nil && !ok {
				t.Errorf("%s through node %d: a body never written to it, or %v", key, n, err)
			}
		}
	}
	if ld.largeReads.Load() == 0 {
		t.Error("no large object read during the faults")
	}
	for key := range ld.deleted {
		if _, err := s3[i%len(s3)].StatObject(ctx, "soak", key, minio.StatObjectOptions{}); minio.ToErrorResponse(err).StatusCode != 404 {
			t.Errorf("acknowledged delete %s came back: %v", key, err)
		}
	}
	cat := icetest.Catalog(t, "http://"+addrs[0], rootUser, rootSecret, "lake")
	tbl, err := cat.LoadTable(ctx, table.Identifier{"soak", "events"})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := icetest.ScanIDs(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, id := range ids {
		seen[id]++
	}
	for _, r := range ld.appends {
		for id := r[0]; id < r[1]; id++ {
			if seen[id] != 1 {
				t.Errorf("acknowledged append [%d, %d): id %d is in the table %d times", r[0], r[1], id, seen[id])
			}
		}
	}
	for id, n := range seen {
		if n != 1 || !slices.ContainsFunc(ld.attempts, func(r [2]int64) bool { return id >= r[0] && id < r[1] }) {
			t.Errorf("id %d in the table %d times, appended by no attempt", id, n)
		}
	}
	// The site's usage counters, kept in stats cells by every write (and
	// cached by each leader's object layer), equal what the buckets list,
	// through every change of leader.
	testsite.Eventually(t, 30*time.Second, func() error {
		var info adminclient.ServerInfo
		if err := json.Unmarshal([]byte(op.must("admin", "info", "n0", "--json")), &info); err != nil {
			return err
		}
		var objects, size int64
		buckets, err := s3[0].ListBuckets(ctx)
		if err != nil {
			return err
		}
		for _, b := range buckets {
			for o := range s3[0].ListObjects(ctx, b.Name, minio.ListObjectsOptions{Recursive: true}) {
				if o.Err != nil {
					return o.Err
				}
				objects++
				size += o.Size
			}
		}
		if info.Objects != objects || info.TotalBytes != size {
			return fmt.Errorf("usage counters: %d objects, %d bytes; the buckets list %d objects, %d bytes", info.Objects, info.TotalBytes, objects, size)
		}
		return nil
	})
	testsite.Eventually(t, 60*time.Second, func() error {
		var rep adminclient.HealReport
		// It exits 1 while blobs are missing or left unchecked; the
		// report comes first either way.
		out, _ := op.run("admin", "heal", "n0", "--scan", "--json")
		if err := json.NewDecoder(strings.NewReader(out)).Decode(&rep); err != nil {
			return fmt.Errorf("heal: %v: %s", err, out)
		}
		if rep.MissingCount != 0 || rep.Degraded != 0 || rep.Unanswered != 0 {
			return fmt.Errorf("heal: %d missing, %d degraded", rep.MissingCount, rep.Degraded)
		}
		return nil
	})
}

// clusterLeader is the index of the site's leader node.
func clusterLeader(t *testing.T, op *operator, cl *testsite.Cluster) int {
	t.Helper()
	for try := range 50 {
		if i, err := leaderSeenBy(op, cl, try%len(cl.Addrs)); err == nil {
			return i
		}
		time.Sleep(200 * time.Millisecond)
	}
	return 0
}

// leaderSeenBy is the index of the leader of cl as its node i reports it
// (admin info through alias n<i>).
func leaderSeenBy(op *operator, cl *testsite.Cluster, i int) (int, error) {
	out, err := op.run("admin", "info", fmt.Sprint("n", i), "--json")
	if err != nil {
		return -1, err
	}
	var info adminclient.ServerInfo
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		return -1, err
	}
	for _, n := range info.Nodes {
		if n.State == "leader" {
			return slices.Index(cl.Addrs, n.Address), nil
		}
	}
	return -1, fmt.Errorf("no leader among %+v", info.Nodes)
}
