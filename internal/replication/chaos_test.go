package replication_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/lifecycle"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
	"github.com/twinlake/twinlake/internal/testsite/faultproxy"
)

// The chaos test: three sites of real processes joined by site
// replication, each reached by its peers through a fault-injecting proxy.
// Clients on every site write (now and then in a multipart upload),
// overwrite, tag, delete and permanently delete versions of a small shared
// key space while links are cut, slowed and reset mid-transfer, sites are
// SIGKILLed and restarted, and paused with SIGSTOP. After the faults heal,
// every site must hold exactly the same versions with the same tags,
// nothing acknowledged may be lost, nothing purged may come back, and
// every backlog must drain.
//
// Mismatch detection is held off (mismatch_interval 1h) and no work is
// dropped (max_retries 1000), so replication alone must converge: a
// comparison cannot paper over a lost journal entry or a resurrected
// version. Dropped work and its healing are tested on their own
// (TestDroppedWorkHealsAtRuntimeInterval).
//
// TWINLAKE_CHAOS_SEED replays a run; TWINLAKE_CHAOS_DURATION sets how long
// the faults last (default 12s in the normal suite; the long run uses
// 120s or more).

const chaosBucket = "chaos"

// chaosILMBucket has lifecycle rules that expire everything within a few
// seconds (1s lifecycle days) while the faults run: every site expires on
// its own, and the sites must still converge, to an empty bucket.
const chaosILMBucket = "chaos-ilm"

// chaosILMKeepBucket's rules expire current versions within seconds and
// keep noncurrent ones: the sites must converge to the same versions,
// every key's latest a delete marker.
const chaosILMKeepBucket = "chaos-ilm-keep"

// chaosChurnPrefix names the short-lived buckets the first site makes,
// fills, empties and removes one after another while the faults run, so
// that buckets' records race their objects' changes through the senders.
// Afterwards every site must hold the same of them, with the same
// versions.
const chaosChurnPrefix = "churn-"

// chaosSite is one site of the chaos mesh.
type chaosSite struct {
	name  string
	dir   string
	addr  string
	proxy *faultproxy.Proxy
	s3    *minio.Client
	adm   *adminclient.Client

	mu   sync.Mutex
	proc *testsite.Process
}

// ledger records what the clients were told.
type ledger struct {
	mu      sync.Mutex
	acked   map[string]string // "key vid" -> etag ("" for a delete marker) of acknowledged writes
	purging map[string]bool   // "key vid" a purge was attempted for (acknowledged or not)
	purged  map[string]bool   // "key vid" whose purge was acknowledged
	ops     map[string]int    // op -> count acknowledged
	errs    int
}

func (l *ledger) ack(op, key, vid, etag string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops[op]++
	if vid != "" {
		l.acked[key+" "+vid] = etag
	}
}

func chaosSeed(t *testing.T) uint64 {
	if s := os.Getenv("TWINLAKE_CHAOS_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("TWINLAKE_CHAOS_SEED: %v", err)
		}
		return seed
	}
	return uint64(time.Now().UnixNano())
}

func chaosDuration(t *testing.T) time.Duration {
	if s := os.Getenv("TWINLAKE_CHAOS_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("TWINLAKE_CHAOS_DURATION: %v", err)
		}
		return d
	}
	return 12 * time.Second
}

func TestChaosThreeSitesConverge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	seed, dur := chaosSeed(t), chaosDuration(t)
	t.Logf("chaos seed %d duration %v (replay: TWINLAKE_CHAOS_SEED=%d TWINLAKE_CHAOS_DURATION=%v)", seed, dur, seed, dur)
	bin := testsite.BuildBinary(t)
	env := []string{"TWINLAKE_ROOT_USER=" + crashUser, "TWINLAKE_ROOT_PASSWORD=" + crashSecret,
		"TWINLAKE_METRICS_AUTH=public",
		"TWINLAKE_REPLICATION_RETRY_BASE_DELAY=20ms", "TWINLAKE_REPLICATION_RETRY_MAX_DELAY=200ms",
		"TWINLAKE_REPLICATION_MAX_RETRIES=1000", "TWINLAKE_REPLICATION_MISMATCH_INTERVAL=1h",
		"TWINLAKE_ILM_DAY_LENGTH=1s", "TWINLAKE_ILM_INTERVAL=200ms"}
	sites := startChaosSites(t, bin, env)
	ctx := context.Background()
	if err := sites[0].s3.MakeBucket(ctx, chaosBucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{chaosILMBucket, chaosILMKeepBucket} {
		if err := sites[0].s3.MakeBucket(ctx, b, minio.MakeBucketOptions{}); err != nil {
			t.Fatal(err)
		}
		rules := lifecycle.NewConfiguration()
		rules.Rules = []lifecycle.Rule{{ID: "all", Status: "Enabled", Expiration: lifecycle.Expiration{Days: 1}}}
		if b == chaosILMBucket {
			rules.Rules[0].NoncurrentVersionExpiration = lifecycle.NoncurrentVersionExpiration{NoncurrentDays: 1}
		}
		if err := sites[0].s3.SetBucketLifecycle(ctx, b, rules); err != nil {
			t.Fatal(err)
		}
	}
	testsite.Eventually(t, 20*time.Second, func() error {
		for _, s := range sites {
			for _, b := range []string{chaosBucket, chaosILMBucket, chaosILMKeepBucket} {
				if v, err := s.s3.GetBucketVersioning(ctx, b); err != nil || v.Status != "Enabled" {
					return fmt.Errorf("%s: %s versioning %v %v", s.name, b, v, err)
				}
			}
			for _, b := range []string{chaosILMBucket, chaosILMKeepBucket} {
				if lc, err := s.s3.GetBucketLifecycle(ctx, b); err != nil || len(lc.Rules) != 1 {
					return fmt.Errorf("%s: %s lifecycle %v", s.name, b, err)
				}
			}
		}
		return nil
	})

	led := &ledger{acked: map[string]string{}, purging: map[string]bool{}, purged: map[string]bool{}, ops: map[string]int{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ilmAcked, churned, metaAcked atomic.Int64
	wg.Add(1)
	go func(rng *rand.Rand) {
		defer wg.Done()
		chaosChurnClient(ctx, rng, sites[0], stop, &churned)
	}(rand.New(rand.NewPCG(seed, 14)))
	for i, s := range sites {
		wg.Add(1)
		go func(rng *rand.Rand) {
			defer wg.Done()
			chaosILMClient(ctx, rng, s, stop, &ilmAcked)
		}(rand.New(rand.NewPCG(seed, uint64(i*16+15))))
		wg.Add(1)
		go func(rng *rand.Rand) {
			defer wg.Done()
			chaosMetaClient(ctx, rng, s, led, stop, &metaAcked)
		}(rand.New(rand.NewPCG(seed, uint64(i*16+13))))
		for w := range 2 {
			wg.Add(1)
			go func(rng *rand.Rand) {
				defer wg.Done()
				chaosClient(ctx, rng, s, led, stop)
			}(rand.New(rand.NewPCG(seed, uint64(i*16+w+1))))
		}
	}
	faults := chaosFaults(t, rand.New(rand.NewPCG(seed, 0)), sites, bin, env, dur)
	close(stop)
	wg.Wait()
	healChaos(t, sites, bin, env)
	t.Logf("faults: %s", faults)
	t.Logf("acknowledged ops: %v, client errors (unknown outcome): %d; lifecycle bucket writes acknowledged: %d; churn buckets completed: %d; tag changes and multipart writes acknowledged: %d",
		led.ops, led.errs, ilmAcked.Load(), churned.Load(), metaAcked.Load())
	if ilmAcked.Load() == 0 {
		t.Error("no write to the lifecycle bucket succeeded")
	}
	if metaAcked.Load() == 0 {
		t.Error("no tag change succeeded")
	}

	converge := time.Now()
	defer func() {
		if t.Failed() {
			dumpChaos(t, ctx, sites)
		}
	}()
	testsite.Eventually(t, 120*time.Second, func() error {
		for _, s := range sites {
			st, err := s.adm.ReplicateStatus(ctx)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			for _, tg := range st.Targets {
				if tg.Pending+tg.Retrying > 0 {
					return fmt.Errorf("%s: backlog to %s: %d pending, %d retrying", s.name, tg.Name, tg.Pending, tg.Retrying)
				}
			}
		}
		if err := chaosConverged(ctx, sites); err != nil {
			return err
		}
		if err := chaosTagsConverged(ctx, sites); err != nil {
			return err
		}
		return churnConverged(ctx, sites)
	})
	t.Logf("converged %v after the faults healed", time.Since(converge).Round(time.Millisecond))
	// The lifecycle bucket: every site expires everything, and their
	// expiries (the same markers, the same purges) converge to nothing.
	testsite.Eventually(t, 60*time.Second, func() error {
		var left []string
		for _, s := range sites {
			vs, err := versions(ctx, s.s3, chaosILMBucket)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			if len(vs) > 0 {
				left = append(left, fmt.Sprintf("%s: %d versions left in the lifecycle bucket:\n  %s", s.name, len(vs), strings.Join(vs[:min(len(vs), 10)], "\n  ")))
			}
		}
		if len(left) > 0 {
			return errors.New(strings.Join(left, "\n"))
		}
		// The bucket that keeps noncurrent versions: the same everywhere,
		// every key expired.
		var all []*minio.Client
		for _, s := range sites {
			all = append(all, s.s3)
		}
		if err := converged(ctx, all, chaosILMKeepBucket); err != nil {
			return fmt.Errorf("%s: %w", chaosILMKeepBucket, err)
		}
		vs, err := versions(ctx, sites[0].s3, chaosILMKeepBucket)
		if err != nil {
			return err
		}
		for _, v := range vs {
			if strings.HasSuffix(v, " false latest=true") {
				return fmt.Errorf("%s: a current version not expired: %s", chaosILMKeepBucket, v)
			}
		}
		return nil
	})
	checkLedger(t, ctx, sites[0], led)
	totals := map[string]float64{}
	for _, s := range sites {
		for name, v := range checkReplicationGauges(t, s) {
			totals[name] += v
		}
	}
	t.Logf("replication counters over all sites: dropped=%v mismatches=%v failed=%v stale=%v",
		totals["twinlake_replication_dropped_objects_total"], totals["twinlake_replication_mismatches_total"],
		totals["twinlake_replication_failed_objects_total"], totals["twinlake_replication_rejected_total"])
	// A cut or killed link holds work without failing it, and each
	// bucket's record and objects keep their order: no send is refused.
	// (Versions overtaking their churn bucket's creation failed hundreds
	// of sends in a 12 s run.)
	if f := totals["twinlake_replication_failed_objects_total"]; f != 0 {
		t.Errorf("%v sends failed", f)
	}
}

func startChaosSites(t *testing.T, bin string, env []string) []*chaosSite {
	t.Helper()
	root := t.TempDir()
	var sites []*chaosSite
	for i := range 3 {
		s := &chaosSite{name: fmt.Sprintf("site%d", i+1), dir: filepath.Join(root, fmt.Sprintf("s%d", i+1)), addr: testsite.FreeAddr(t)}
		s.proc = testsite.StartProcess(t, bin, s.dir, s.addr, env...)
		p, err := faultproxy.New(s.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		s.proxy = p
		s.s3 = chaosClient0(t, "http://"+s.addr)
		if s.adm, err = adminclient.New("http://"+s.addr, adminclient.Credentials{AccessKey: crashUser, SecretKey: crashSecret}, adminclient.Config{}); err != nil {
			t.Fatal(err)
		}
		sites = append(sites, s)
	}
	var specs []adminclient.ReplicationSite
	for _, s := range sites {
		specs = append(specs, adminclient.ReplicationSite{Name: s.name, Endpoint: s.proxy.URL(), AccessKey: crashUser, SecretKey: crashSecret})
	}
	if _, err := sites[0].adm.ReplicateAdd(context.Background(), specs); err != nil {
		t.Fatal(err)
	}
	return sites
}

// chaosClient0 is a client that gives up quickly on a paused or dead site.
func chaosClient0(t *testing.T, endpoint string) *minio.Client {
	c := rawClient(t, endpoint)
	c.SetAppInfo("chaos", "1")
	return c
}

// chaosClient runs random operations against one site until stop.
func chaosClient(ctx context.Context, rng *rand.Rand, s *chaosSite, led *ledger, stop chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		key := fmt.Sprintf("k%02d", rng.IntN(12))
		opCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
		switch r := rng.IntN(10); {
		case r < 5:
			size := 1 + rng.IntN(8<<10)
			if rng.IntN(8) == 0 {
				size = 150<<10 + rng.IntN(200<<10) // past the batching limit
			}
			body := make([]byte, size)
			for i := range body {
				body[i] = byte(rng.Uint32())
			}
			info, err := s.s3.PutObject(opCtx, chaosBucket, key, bytes.NewReader(body), int64(size), minio.PutObjectOptions{})
			if err != nil {
				led.mu.Lock()
				led.errs++
				led.mu.Unlock()
			} else {
				led.ack("put", key, info.VersionID, info.ETag)
			}
		case r < 7:
			objs := make(chan minio.ObjectInfo, 1)
			objs <- minio.ObjectInfo{Key: key}
			close(objs)
			res := <-s.s3.RemoveObjectsWithResult(opCtx, chaosBucket, objs, minio.RemoveObjectsOptions{})
			if res.Err != nil {
				led.mu.Lock()
				led.errs++
				led.mu.Unlock()
			} else {
				led.ack("delete", key, res.DeleteMarkerVersionID, "")
			}
		default:
			chaosPurge(opCtx, rng, s, key, led)
		}
		cancel()
	}
}

// chaosILMClient writes and deletes objects in the two lifecycle buckets
// until stop; their outcome is not checked (the rules expire everything).
func chaosILMClient(ctx context.Context, rng *rand.Rand, s *chaosSite, stop chan struct{}, acked *atomic.Int64) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Duration(rng.IntN(50)) * time.Millisecond):
		}
		key := fmt.Sprintf("t%02d", rng.IntN(8))
		bucket := []string{chaosILMBucket, chaosILMKeepBucket}[rng.IntN(2)]
		opCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
		var err error
		if rng.IntN(4) == 0 {
			err = s.s3.RemoveObject(opCtx, bucket, key, minio.RemoveObjectOptions{})
		} else {
			_, err = s.s3.PutObject(opCtx, bucket, key, strings.NewReader(key), int64(len(key)), minio.PutObjectOptions{})
		}
		if err == nil {
			acked.Add(1)
		}
		cancel()
	}
}

// chaosPurge permanently deletes one version of key that this site holds.
func chaosPurge(ctx context.Context, rng *rand.Rand, s *chaosSite, key string, led *ledger) {
	var vids []string
	for o := range s.s3.ListObjects(ctx, chaosBucket, minio.ListObjectsOptions{WithVersions: true, Prefix: key}) {
		if o.Err != nil {
			led.mu.Lock()
			led.errs++
			led.mu.Unlock()
			return
		}
		if o.Key == key {
			vids = append(vids, o.VersionID)
		}
	}
	if len(vids) == 0 {
		return
	}
	vid := vids[rng.IntN(len(vids))]
	led.mu.Lock()
	led.purging[key+" "+vid] = true
	led.mu.Unlock()
	if err := s.s3.RemoveObject(ctx, chaosBucket, key, minio.RemoveObjectOptions{VersionID: vid}); err != nil {
		led.mu.Lock()
		led.errs++
		led.mu.Unlock()
		return
	}
	led.mu.Lock()
	led.purged[key+" "+vid] = true
	led.ops["purge"]++
	led.mu.Unlock()
}

// chaosFaults injects one fault after another until dur has passed, and
// returns a count of each kind.
func chaosFaults(t *testing.T, rng *rand.Rand, sites []*chaosSite, bin string, env []string, dur time.Duration) string {
	counts := map[string]int{}
	end := time.Now().Add(dur)
	hold := func() time.Duration { return time.Duration(200+rng.IntN(1300)) * time.Millisecond }
	for time.Now().Before(end) {
		s := sites[rng.IntN(len(sites))]
		switch rng.IntN(6) {
		case 0:
			counts["cut"]++
			s.proxy.Cut()
			time.Sleep(hold())
			s.proxy.Restore()
		case 1:
			counts["slow"]++
			s.proxy.SetLatency(time.Duration(5+rng.IntN(60)) * time.Millisecond)
			s.proxy.SetBandwidth(int64(64<<10 + rng.IntN(1<<20)))
			time.Sleep(hold())
			s.proxy.SetLatency(0)
			s.proxy.SetBandwidth(0)
		case 2:
			counts["reset"]++
			for range 1 + rng.IntN(4) {
				time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
				s.proxy.Cut() // resets every open connection mid-transfer
				s.proxy.Restore()
			}
		case 3:
			counts["kill9"]++
			s.mu.Lock()
			s.proc.Kill(t)
			time.Sleep(time.Duration(rng.IntN(800)) * time.Millisecond)
			s.proc = testsite.StartProcess(t, bin, s.dir, s.addr, env...)
			s.mu.Unlock()
		case 4:
			counts["pause"]++
			s.mu.Lock()
			s.proc.Pause(t)
			time.Sleep(hold())
			s.proc.Resume(t)
			s.mu.Unlock()
		default:
			time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond) // a quiet spell
		}
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, fmt.Sprintf("%s=%d", k, counts[k]))
	}
	sort.Strings(keys)
	return strings.Join(keys, " ")
}

// healChaos ends every fault: links restored and unthrottled, every site
// running.
func healChaos(t *testing.T, sites []*chaosSite, bin string, env []string) {
	for _, s := range sites {
		s.proxy.Restore()
		s.proxy.SetLatency(0)
		s.proxy.SetBandwidth(0)
		s.mu.Lock()
		s.proc.Resume(t)
		if s.proc.Exited() {
			s.proc = testsite.StartProcess(t, bin, s.dir, s.addr, env...)
		}
		s.mu.Unlock()
	}
}

// chaosConverged checks that every site lists the same versions with the
// same latest per key.
func chaosConverged(ctx context.Context, sites []*chaosSite) error {
	first, err := versions(ctx, sites[0].s3, chaosBucket)
	if err != nil {
		return err
	}
	for _, s := range sites[1:] {
		got, err := versions(ctx, s.s3, chaosBucket)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if d := diffLines(first, got); d != "" {
			return fmt.Errorf("%s differs from %s (- %s, + %s):\n%s", s.name, sites[0].name, sites[0].name, s.name, d)
		}
	}
	return nil
}

// chaosChurnClient makes short-lived buckets on s one after another: each
// is made, given one to four objects, and, two times in three, emptied
// (its versions purged) and removed. A step that fails leaves the bucket
// as it is and the client goes on with the next; done counts the buckets
// whose every step succeeded.
func chaosChurnClient(ctx context.Context, rng *rand.Rand, s *chaosSite, stop chan struct{}, done *atomic.Int64) {
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		opCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if churnBucket(opCtx, rng, s, fmt.Sprintf("%s%d", chaosChurnPrefix, n)) == nil {
			done.Add(1)
		}
		cancel()
	}
}

func churnBucket(ctx context.Context, rng *rand.Rand, s *chaosSite, bucket string) error {
	if err := s.s3.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		return err
	}
	var written []minio.UploadInfo
	for i := range 1 + rng.IntN(4) {
		key := fmt.Sprintf("c%d", i)
		info, err := s.s3.PutObject(ctx, bucket, key, strings.NewReader(key), int64(len(key)), minio.PutObjectOptions{})
		if err != nil {
			return err
		}
		written = append(written, info)
	}
	if rng.IntN(3) == 0 {
		return nil
	}
	for _, w := range written {
		if err := s.s3.RemoveObject(ctx, bucket, w.Key, minio.RemoveObjectOptions{VersionID: w.VersionID}); err != nil {
			return err
		}
	}
	return s.s3.RemoveBucket(ctx, bucket)
}

// churnConverged checks that every site holds the same churn buckets with
// the same versions.
func churnConverged(ctx context.Context, sites []*chaosSite) error {
	held := func(s *chaosSite) (map[string][]string, error) {
		bs, err := s.s3.ListBuckets(ctx)
		if err != nil {
			return nil, err
		}
		out := map[string][]string{}
		for _, b := range bs {
			if !strings.HasPrefix(b.Name, chaosChurnPrefix) {
				continue
			}
			if out[b.Name], err = versions(ctx, s.s3, b.Name); err != nil {
				return nil, fmt.Errorf("%s: %w", b.Name, err)
			}
		}
		return out, nil
	}
	first, err := held(sites[0])
	if err != nil {
		return fmt.Errorf("%s: %w", sites[0].name, err)
	}
	for _, s := range sites[1:] {
		got, err := held(s)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		for b, vs := range first {
			other, ok := got[b]
			if !ok {
				return fmt.Errorf("%s lacks bucket %s, which %s holds with %d versions", s.name, b, sites[0].name, len(vs))
			}
			if d := diffLines(vs, other); d != "" {
				return fmt.Errorf("%s: bucket %s differs from %s's:\n%s", s.name, b, sites[0].name, d)
			}
		}
		for b := range got {
			if _, ok := first[b]; !ok {
				return fmt.Errorf("%s holds bucket %s, which %s removed or never made", s.name, b, sites[0].name)
			}
		}
	}
	return nil
}

func diffLines(a, b []string) string {
	in := func(xs []string) map[string]bool {
		m := map[string]bool{}
		for _, x := range xs {
			m[x] = true
		}
		return m
	}
	ia, ib := in(a), in(b)
	var out []string
	for _, x := range a {
		if !ib[x] {
			out = append(out, "- "+x)
		}
	}
	for _, x := range b {
		if !ia[x] {
			out = append(out, "+ "+x)
		}
	}
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("... %d more", len(out)-20))
	}
	return strings.Join(out, "\n")
}

// checkLedger checks the converged state against what clients were told:
// every acknowledged write not since purged is there with its ETag, and
// nothing whose purge was acknowledged came back.
func checkLedger(t *testing.T, ctx context.Context, s *chaosSite, led *ledger) {
	t.Helper()
	have := map[string]minio.ObjectInfo{}
	for o := range s.s3.ListObjects(ctx, chaosBucket, minio.ListObjectsOptions{WithVersions: true, Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		have[o.Key+" "+o.VersionID] = o
	}
	for kv := range led.purged {
		if _, ok := have[kv]; ok {
			t.Errorf("purged version %s came back", kv)
		}
	}
	for kv, etag := range led.acked {
		if led.purging[kv] {
			continue
		}
		o, ok := have[kv]
		switch {
		case !ok:
			t.Errorf("acknowledged version %s lost", kv)
		case etag == "" && !o.IsDeleteMarker:
			t.Errorf("acknowledged delete marker %s is an object", kv)
		case etag != "" && strings.Trim(o.ETag, `"`) != strings.Trim(etag, `"`):
			t.Errorf("acknowledged version %s: ETag %s, want %s", kv, o.ETag, etag)
		}
	}
}

// checkReplicationGauges reads a site's metrics: no gauge may be negative.
// It returns the replication metrics summed over their labels.
func checkReplicationGauges(t *testing.T, s *chaosSite) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + s.addr + "/twinlake/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	sums := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "twinlake_replication_") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil && v < 0 {
			t.Errorf("%s: negative metric: %s", s.name, line)
		}
		name, _, _ := strings.Cut(f[0], "{")
		sums[name] += v
	}
	return sums
}

// dumpChaos prints, for a failed run, the versions each site holds of every
// key whose versions differ, with their replication status, and the end of
// each server's log.
func dumpChaos(t *testing.T, ctx context.Context, sites []*chaosSite) {
	all := map[string]map[string]bool{} // key -> site -> listing
	per := make([]map[string][]string, len(sites))
	for i, s := range sites {
		per[i] = map[string][]string{}
		for o := range s.s3.ListObjects(ctx, chaosBucket, minio.ListObjectsOptions{WithVersions: true, Recursive: true}) {
			if o.Err != nil {
				continue
			}
			line := fmt.Sprintf("%s dm=%t etag=%s latest=%t", o.VersionID, o.IsDeleteMarker, o.ETag, o.IsLatest)
			if !o.IsDeleteMarker {
				if st, err := s.s3.StatObject(ctx, chaosBucket, o.Key, minio.StatObjectOptions{VersionID: o.VersionID}); err == nil {
					for h, v := range st.Metadata {
						if strings.HasPrefix(strings.ToLower(h), "x-twinlake") || strings.EqualFold(h, "X-Amz-Replication-Status") {
							line += " " + h + "=" + strings.Join(v, ",")
						}
					}
				}
			}
			per[i][o.Key] = append(per[i][o.Key], line)
			if all[o.Key] == nil {
				all[o.Key] = map[string]bool{}
			}
		}
	}
	for key := range all {
		differ := false
		for i := range sites[1:] {
			if strings.Join(per[i+1][key], "\n") != strings.Join(per[0][key], "\n") {
				differ = true
			}
		}
		if !differ {
			continue
		}
		for i, s := range sites {
			t.Logf("%s %s:\n  %s", s.name, key, strings.Join(per[i][key], "\n  "))
		}
	}
	for _, s := range sites {
		s.mu.Lock()
		log := s.proc.Log()
		s.mu.Unlock()
		if len(log) > 3000 {
			log = log[len(log)-3000:]
		}
		t.Logf("%s log (end):\n%s", s.name, log)
	}
}
