package replication

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/trace"
)

// faults is what a fakePeer does to the calls through it. Rates are
// probabilities per call.
type faults struct {
	down    bool          // unreachable: every call fails with ErrLinkDown
	refuse  float64       // the peer answers with an error, applying nothing
	lostAck float64       // the peer applies the call, but the answer is lost (ErrLinkDown)
	dup     float64       // the call is applied twice (a retransmission)
	delay   time.Duration // each call waits up to this long, so calls overtake each other
	// incompatible: every send is refused for the protocol version (the
	// health probe still answers).
	incompatible bool
}

// fakePeer is a Peer in memory: it hands every call to the remote site's
// engine, as the peer API would, with seeded faults.
type fakePeer struct {
	remote *Engine

	mu    sync.Mutex
	rng   *rand.Rand
	f     faults
	calls int // sends attempted
	// seen records, per bucket/key, the operations applied in arrival
	// order ("v:<versionID>" or "p:<versionID>").
	seen map[string][]string
	// beforeRead, when set, runs as a streamed version's send starts,
	// before its data is read.
	beforeRead func(bucket, key, versionID string)
}

func (p *fakePeer) record(bucket, key, op string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen == nil {
		p.seen = map[string][]string{}
	}
	p.seen[bucket+"/"+key] = append(p.seen[bucket+"/"+key], op)
}

var _ Peer = (*fakePeer)(nil)

func (p *fakePeer) set(f faults) {
	p.mu.Lock()
	p.f = f
	p.mu.Unlock()
}

// roll decides the fate of one call: err when it fails before applying,
// times how often to apply it, lost when the answer is lost afterwards.
func (p *fakePeer) roll() (times int, lost bool, err error) {
	p.mu.Lock()
	f := p.f
	p.calls++
	r1, r2, r3 := p.rng.Float64(), p.rng.Float64(), p.rng.Float64()
	var d time.Duration
	if f.delay > 0 {
		d = time.Duration(p.rng.Int64N(int64(f.delay)))
	}
	p.mu.Unlock()
	time.Sleep(d)
	switch {
	case f.down:
		return 0, false, ErrLinkDown
	case f.incompatible:
		return 0, false, fmt.Errorf("%w: %w: the calling site speaks version 2, the called site version 3", ErrRefused, ErrIncompatible)
	case r1 < f.refuse:
		return 0, false, fmt.Errorf("%w: injected refusal (InternalError)", ErrRefused)
	}
	times = 1
	if r2 < f.dup {
		times = 2
	}
	return times, r3 < f.lostAck, nil
}

// call applies fn as the roll says.
func (p *fakePeer) call(fn func() error) error {
	times, lost, err := p.roll()
	if err != nil {
		return err
	}
	for range times {
		if err := fn(); err != nil {
			return fmt.Errorf("%w: %v", ErrRefused, err)
		}
	}
	if lost {
		return fmt.Errorf("%w: answer lost", ErrLinkDown)
	}
	return nil
}

// copyVersion round-trips v through its encoding, as the wire would.
func copyVersion(v *objects.Version) *objects.Version {
	out := &objects.Version{}
	if err := decode(encode(v), out); err != nil {
		panic(err)
	}
	return out
}

func (p *fakePeer) SendVersion(ctx context.Context, bucket, key string, v *objects.Version, body io.Reader, size int64) (objects.ApplyOutcome, error) {
	p.mu.Lock()
	before := p.beforeRead
	p.mu.Unlock()
	if before != nil {
		before(bucket, key, v.VersionID)
	}
	data, err := io.ReadAll(io.LimitReader(body, size))
	if err != nil {
		// As net/http reports a request body it could not read: a
		// transport failure.
		return 0, fmt.Errorf("%w: write request body: %v", ErrLinkDown, err)
	}
	var out objects.ApplyOutcome
	err = p.call(func() (err error) {
		out, err = p.remote.ReceiveVersion(ctx, bucket, key, copyVersion(v), bytes.NewReader(data))
		p.record(bucket, key, "v:"+v.VersionID)
		return err
	})
	return out, err
}

func (p *fakePeer) SendVersions(ctx context.Context, items []VersionItem) ([]ItemResult, error) {
	var results []ItemResult
	err := p.call(func() error {
		cp := make([]VersionItem, len(items))
		for i, it := range items {
			cp[i] = VersionItem{Bucket: it.Bucket, Key: it.Key, Version: copyVersion(it.Version), Data: it.Data}
			p.record(it.Bucket, it.Key, "v:"+it.Version.VersionID)
		}
		results = make([]ItemResult, len(items))
		return p.remote.ReceiveVersions(ctx, cp, nil, func(i int, out objects.ApplyOutcome, err error) {
			if err != nil {
				results[i] = ItemResult{Code: "InternalError", Message: err.Error()}
				return
			}
			results[i] = ItemResult{Outcome: out.String()}
		})
	})
	return results, err
}

func (p *fakePeer) SendPurge(ctx context.Context, bucket, key, versionID string, modTime int64, how objects.PurgeKind) (objects.ApplyOutcome, error) {
	var out objects.ApplyOutcome
	err := p.call(func() (err error) {
		out, err = p.remote.ReceivePurge(ctx, bucket, key, versionID, modTime, how)
		p.record(bucket, key, "p:"+versionID)
		return err
	})
	return out, err
}

func (p *fakePeer) SendBucket(ctx context.Context, b objects.Bucket, deleted bool, at int64) (objects.ApplyOutcome, error) {
	var out objects.ApplyOutcome
	err := p.call(func() (err error) {
		out, err = p.remote.ReceiveBucket(ctx, b, deleted, at)
		return err
	})
	return out, err
}

func (p *fakePeer) Health(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.f.down {
		return ErrLinkDown
	}
	return nil
}

func (p *fakePeer) Info(ctx context.Context) (PeerInfo, error) { return p.remote.LocalInfo(ctx), nil }
func (p *fakePeer) Join(ctx context.Context, st State) error   { return p.remote.Join(ctx, st) }
func (p *fakePeer) Digests(ctx context.Context) (map[string]objects.Digest, error) {
	if err := p.Health(ctx); err != nil {
		return nil, err
	}
	return p.remote.Digests(ctx)
}
func (p *fakePeer) SlotVersions(ctx context.Context, bucket string, slots []int) ([]objects.VersionRef, error) {
	return p.remote.SlotVersions(ctx, bucket, slots)
}
func (p *fakePeer) Resend(ctx context.Context, site, bucket, key string) (int, error) {
	return p.remote.Resend(ctx, site, bucket, key)
}
func (p *fakePeer) ResyncTo(ctx context.Context, site string) (ResyncJob, error) {
	return p.remote.ResyncStatus(ctx, site)
}
func (p *fakePeer) CatalogExport(context.Context) ([]byte, error) {
	return nil, errors.New("no catalog")
}

// droppedCount reads the site's dropped counter for its one peer.
func droppedCount(s *fakeSite) float64 { return peerCount(s, s.engine.m.dropped) }

// failedCount reads the site's failed-sends counter for its one peer.
func failedCount(s *fakeSite) float64 { return peerCount(s, s.engine.m.failedObjects) }

// peerCount reads counter c of the site for its one peer.
func peerCount(s *fakeSite, c *prometheus.CounterVec) float64 {
	peer := map[string]string{"site-a": "site-b", "site-b": "site-a"}[s.id]
	var m dto.Metric
	if err := c.WithLabelValues(peer).Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

// waitDrained waits until s has nothing pending or to retry for its one
// peer.
// cutLink makes p unreachable and waits until tg, the target sending
// through it, sees the link down.
func cutLink(t *testing.T, p *fakePeer, tg *target) {
	t.Helper()
	p.set(faults{down: true})
	eventually(t, 10*time.Second, func() error {
		if tg.online() {
			return errors.New("link still up")
		}
		return nil
	})
}

func waitDrained(t *testing.T, s *fakeSite, timeout time.Duration) {
	t.Helper()
	tg := (*s.engine.targets.Load())[0]
	eventually(t, timeout, func() error {
		if p, r := tg.snapshot(); p.n+r.n > 0 {
			return fmt.Errorf("backlog %d/%d", p.n, r.n)
		}
		return nil
	})
}

// fakeSite is one site in memory: metadata, blobs, objects and engine.
type fakeSite struct {
	id      string
	meta    meta.Store
	objects *objects.Layer
	engine  *Engine
	trace   *trace.Bus
}

// fakePair starts two sites in memory joined by site replication through
// fakePeers (ab carries site a's calls to b, ba the other way).
func fakePair(t *testing.T, seed uint64, settings map[string]string) (a, b *fakeSite, ab, ba *fakePeer) {
	t.Helper()
	sites := map[string]*fakeSite{}
	peers := map[string]*fakePeer{}
	for i, id := range []string{"site-a", "site-b"} {
		// Pebble, as a site runs: its iterators read a snapshot while
		// writers commit, which the in-memory store does not show.
		m, err := meta.OpenPebble(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		bl, err := blob.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		ol, err := objects.New(m, bl, objects.Config{SiteID: id, InlineLimit: 1 << 10})
		if err != nil {
			t.Fatal(err)
		}
		st, err := config.New(m, config.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Set(context.Background(), config.SubsysReplication, settings); err != nil {
			t.Fatal(err)
		}
		s := &fakeSite{id: id, meta: m, objects: ol, trace: trace.New(id)}
		self := id
		s.engine, err = New(Config{Meta: m, Objects: ol, Settings: st, Trace: s.trace, SiteID: id, SiteName: id,
			HealthInterval: 20 * time.Millisecond,
			Dial: func(endpoint string, _ Credentials) (Peer, error) {
				if p := peers[self+">"+endpoint]; p != nil {
					return p, nil
				}
				return nil, fmt.Errorf("no fake peer %s", endpoint)
			}})
		if err != nil {
			t.Fatal(err)
		}
		ol.SetReplicator(s.engine)
		sites[id] = s
		_ = i
	}
	a, b = sites["site-a"], sites["site-b"]
	ab = &fakePeer{remote: b.engine, rng: rand.New(rand.NewPCG(seed, 101))}
	ba = &fakePeer{remote: a.engine, rng: rand.New(rand.NewPCG(seed, 102))}
	peers["site-a>fake://site-b"], peers["site-b>fake://site-a"] = ab, ba
	peers["site-a>fake://site-a"], peers["site-b>fake://site-b"] = ba, ab // never used to send
	for _, s := range []*fakeSite{a, b} {
		if err := s.engine.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.engine.Close)
	}
	_, err := a.engine.Add(context.Background(), []SiteSpec{
		{Name: "site-a", Endpoint: "fake://site-a", AccessKey: "ak", SecretKey: "secret-key"},
		{Name: "site-b", Endpoint: "fake://site-b", AccessKey: "ak", SecretKey: "secret-key"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return a, b, ab, ba
}

// siteVersions lists every version of bucket as "key vid origin dm size
// latest", sorted.
func siteVersions(t *testing.T, s *fakeSite, bucket string) []string {
	t.Helper()
	ctx := context.Background()
	keys := map[string]bool{}
	err := s.objects.WalkVersions(ctx, bucket, "", "", func(r objects.VersionRef) bool { keys[r.Key] = true; return true })
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for k := range keys {
		vs, err := s.objects.KeyVersions(ctx, bucket, k)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vs {
			out = append(out, fmt.Sprintf("%s %s %s dm=%t etag=%s latest=%t", k, v.VersionID, v.Origin, v.DeleteMarker, v.ETag, i == 0))
		}
	}
	sort.Strings(out)
	return out
}

// checkTallies compares each target's tallies with its journal and retry
// queue as stored.
func checkTallies(s *fakeSite) error {
	for _, tg := range *s.engine.targets.Load() {
		var j, m int64
		jp, mp := journalPrefix(tg.site.ID), mrfPrefix(tg.site.ID)
		meta.Scan(s.meta, jp, meta.PrefixEnd(jp), func(_, _ []byte) (bool, error) { j++; return true, nil })
		meta.Scan(s.meta, mp, meta.PrefixEnd(mp), func(_, _ []byte) (bool, error) { m++; return true, nil })
		p, r := tg.snapshot()
		if p.n < 0 || r.n < 0 || p.bytes < 0 || r.bytes < 0 {
			return fmt.Errorf("%s: negative tally %+v %+v", s.id, p, r)
		}
		if p.n != j || r.n != m {
			return fmt.Errorf("%s→%s: tallies %d pending %d retrying, stored %d and %d", s.id, tg.site.Name, p.n, r.n, j, m)
		}
	}
	return nil
}

func eventually(t *testing.T, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not reached within %v: %v", timeout, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func randomSeed(t *testing.T) uint64 {
	if s := os.Getenv("TWINLAKE_FAKEPEER_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return seed
	}
	return uint64(time.Now().UnixNano())
}

// randomSteps runs n random steps against the pair: writes, deletes and
// purges on both sites, and fault changes on both links. It returns the
// versions whose purge was acknowledged and those written and never
// purged.
func randomSteps(t *testing.T, rng *rand.Rand, n int, a, b *fakeSite, ab, ba *fakePeer, refuse float64) (purged, kept map[string]bool) {
	ctx := context.Background()
	purged, kept = map[string]bool{}, map[string]bool{}
	for range n {
		s := []*fakeSite{a, b}[rng.IntN(2)]
		key := fmt.Sprintf("k%d", rng.IntN(8))
		switch r := rng.IntN(20); {
		case r < 9:
			size := rng.IntN(300)
			if rng.IntN(10) == 0 {
				size = 150 << 10 // sent alone, not batched
			}
			body := bytes.Repeat([]byte{byte(rng.Uint32())}, size)
			v, err := s.objects.PutObject(ctx, "bk1", key, bytes.NewReader(body), objects.PutOptions{Size: int64(size)})
			if err != nil {
				t.Fatal(err)
			}
			kept[key+" "+v.VersionID] = true
		case r < 12:
			res, err := s.objects.DeleteObject(ctx, "bk1", key, "")
			if err != nil {
				t.Fatal(err)
			}
			kept[key+" "+res.VersionID] = true
		case r < 15:
			vs, err := s.objects.KeyVersions(ctx, "bk1", key)
			if err != nil {
				t.Fatal(err)
			}
			if len(vs) == 0 {
				continue
			}
			v := vs[rng.IntN(len(vs))]
			if _, err := s.objects.DeleteObject(ctx, "bk1", key, v.VersionID); err != nil {
				t.Fatal(err)
			}
			purged[key+" "+v.VersionID] = true
			delete(kept, key+" "+v.VersionID)
		default:
			p := []*fakePeer{ab, ba}[rng.IntN(2)]
			p.set(faults{down: rng.IntN(4) == 0, refuse: refuse * rng.Float64(), lostAck: 0.2 * rng.Float64(),
				dup: 0.2 * rng.Float64(), delay: time.Duration(rng.IntN(3)) * time.Millisecond})
		}
		if rng.IntN(50) == 0 {
			time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond) // let the senders run
		}
	}
	return purged, kept
}

// checkConverged: both sites hold the same versions with the same latest,
// no acknowledged purge came back, no kept version is missing, and the
// tallies match the stored journal.
func checkConverged(t *testing.T, a, b *fakeSite, purged, kept map[string]bool) {
	t.Helper()
	eventually(t, 30*time.Second, func() error {
		for _, s := range []*fakeSite{a, b} {
			for _, tg := range *s.engine.targets.Load() {
				if p, r := tg.snapshot(); p.n+r.n > 0 {
					return fmt.Errorf("%s→%s backlog %d pending %d retrying", s.id, tg.site.Name, p.n, r.n)
				}
			}
		}
		va, vb := siteVersions(t, a, "bk1"), siteVersions(t, b, "bk1")
		if strings.Join(va, "\n") != strings.Join(vb, "\n") {
			return fmt.Errorf("sites differ:\n%s\n--\n%s", strings.Join(va, "\n"), strings.Join(vb, "\n"))
		}
		return nil
	})
	have := map[string]bool{}
	for _, line := range siteVersions(t, a, "bk1") {
		f := strings.Fields(line)
		have[f[0]+" "+f[1]] = true
	}
	for kv := range purged {
		if have[kv] {
			t.Errorf("purged version %s came back", kv)
		}
	}
	for kv := range kept {
		if !have[kv] {
			t.Errorf("version %s lost", kv)
		}
	}
	for _, s := range []*fakeSite{a, b} {
		if err := checkTallies(s); err != nil {
			t.Error(err)
		}
	}
}

// TestFakePeerRandomConverges drives two whole engines through fake peers
// for thousands of random steps: links go down, answers are refused, lost
// after applying, duplicated and delayed, while both sites write, delete
// and purge the same keys. With no work dropped, replication alone (no
// mismatch detection) must converge, and the tallies must equal the
// stored journal throughout. TWINLAKE_FAKEPEER_SEED replays a run.
func TestFakePeerRandomConverges(t *testing.T) {
	seed := randomSeed(t)
	t.Logf("seed %d (replay: TWINLAKE_FAKEPEER_SEED=%d)", seed, seed)
	a, b, ab, ba := fakePair(t, seed, map[string]string{"retry_base_delay": "1ms", "retry_max_delay": "5ms",
		"max_retries": "1000", "mismatch_interval": "1h"})
	ctx := context.Background()
	if err := a.objects.CreateBucket(ctx, "bk1"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error { _, err := b.objects.Bucket(ctx, "bk1"); return err })
	rng := rand.New(rand.NewPCG(seed, 1))
	steps := 3000
	if testing.Short() {
		steps = 500
	}
	purged, kept := randomSteps(t, rng, steps, a, b, ab, ba, 0.3)
	ab.set(faults{})
	ba.set(faults{})
	checkConverged(t, a, b, purged, kept)
	for _, s := range []*fakeSite{a, b} {
		if d := droppedCount(s); d != 0 {
			t.Errorf("%s dropped %v entries with max_retries unbounded", s.id, d)
		}
	}
}

// TestFakePeerDropsOnceAndHeals: with a tiny max_retries and a peer that
// refuses often, work is dropped; each entry is dropped (and traced) once,
// and after the faults heal mismatch detection brings the sites together.
func TestFakePeerDropsOnceAndHeals(t *testing.T) {
	seed := randomSeed(t)
	t.Logf("seed %d (replay: TWINLAKE_FAKEPEER_SEED=%d)", seed, seed)
	a, b, ab, ba := fakePair(t, seed, map[string]string{"retry_base_delay": "1ms", "retry_max_delay": "2ms",
		"max_retries": "1", "mismatch_interval": "1h"})
	drops := map[*fakeSite]<-chan trace.Event{}
	for _, s := range []*fakeSite{a, b} {
		ch, cancel := s.trace.Subscribe(trace.Filter{Types: trace.Replication, FuncName: "replication.Drop"}, 1<<16)
		t.Cleanup(cancel)
		drops[s] = ch
	}
	ctx := context.Background()
	if err := a.objects.CreateBucket(ctx, "bk1"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error { _, err := b.objects.Bucket(ctx, "bk1"); return err })
	rng := rand.New(rand.NewPCG(seed, 2))
	purged, kept := randomSteps(t, rng, 1500, a, b, ab, ba, 0.9)
	ab.set(faults{})
	ba.set(faults{})
	eventually(t, 30*time.Second, func() error {
		for _, s := range []*fakeSite{a, b} {
			if _, err := s.engine.CheckMismatches(ctx); err != nil {
				return err
			}
		}
		va, vb := siteVersions(t, a, "bk1"), siteVersions(t, b, "bk1")
		if strings.Join(va, "\n") != strings.Join(vb, "\n") {
			return fmt.Errorf("sites differ: %d vs %d versions", len(va), len(vb))
		}
		return nil
	})
	checkConverged(t, a, b, purged, kept)
	total := 0.0
	for _, s := range []*fakeSite{a, b} {
		seen := map[string]int{}
		n := 0
	read:
		for {
			select {
			case ev := <-drops[s]:
				seen[ev.Path+" "+ev.Msg]++
				if seen[ev.Path+" "+ev.Msg] > 1 {
					t.Errorf("%s: dropped twice: %s %s", s.id, ev.Path, ev.Msg)
				}
				n++
			default:
				break read
			}
		}
		if got := droppedCount(s); got != float64(n) {
			t.Errorf("%s: dropped counter %v, %d drop events", s.id, got, n)
		}
		total += float64(n)
		if s.trace.Dropped() != 0 {
			t.Fatalf("trace events lost: %d", s.trace.Dropped())
		}
	}
	if total == 0 {
		t.Fatal("nothing was dropped: the test exercised no drop")
	}
	t.Logf("%v entries dropped and healed", total)
}

// TestIncompatiblePeerSpendsNoRetries: sends refused for the protocol
// version wait in the journal like sends to an unreachable peer: no retry
// is spent and nothing is dropped, however often the link comes back; once
// the sites speak compatible versions again, everything is delivered.
func TestIncompatiblePeerSpendsNoRetries(t *testing.T) {
	seed := randomSeed(t)
	a, b, ab, _ := fakePair(t, seed, map[string]string{"retry_base_delay": "1ms", "retry_max_delay": "2ms",
		"max_retries": "1", "mismatch_interval": "1h"})
	ctx := context.Background()
	if err := a.objects.CreateBucket(ctx, "bk1"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error { _, err := b.objects.Bucket(ctx, "bk1"); return err })
	eventually(t, 10*time.Second, func() error { // the bucket's own entries are sent
		if p, r := (*a.engine.targets.Load())[0].snapshot(); p.n+r.n > 0 {
			return fmt.Errorf("backlog %d/%d", p.n, r.n)
		}
		return nil
	})
	ab.set(faults{incompatible: true})
	ab.mu.Lock()
	before := ab.calls
	ab.mu.Unlock()
	for i := range 20 {
		if _, err := a.objects.PutObject(ctx, "bk1", fmt.Sprintf("k%d", i), strings.NewReader("x"), objects.PutOptions{Size: 1}); err != nil {
			t.Fatal(err)
		}
	}
	// The link goes down on each refusal and the prober brings it back:
	// let that happen a number of times.
	eventually(t, 20*time.Second, func() error {
		ab.mu.Lock()
		defer ab.mu.Unlock()
		if ab.calls-before < 10 {
			return fmt.Errorf("%d sends attempted", ab.calls-before)
		}
		return nil
	})
	tg := (*a.engine.targets.Load())[0]
	if p, r := tg.snapshot(); p.n != 20 || r.n != 0 || droppedCount(a) != 0 {
		t.Fatalf("after refusals: %d pending, %d retrying, %v dropped; want 20, 0, 0", p.n, r.n, droppedCount(a))
	}
	ab.set(faults{})
	checkConverged(t, a, b, nil, nil)
}

// TestPerKeyOrder: with a backlog of many keys' changes waiting (small
// versions that travel in batches, large ones sent in the background, and
// purges), the peer receives each key's changes in the order they were
// made, while different keys interleave.
func TestPerKeyOrder(t *testing.T) {
	seed := randomSeed(t)
	t.Logf("seed %d (replay: TWINLAKE_FAKEPEER_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	a, b, ab, _ := fakePair(t, seed, map[string]string{"mismatch_interval": "1h", "workers": "4"})
	ctx := context.Background()
	if err := a.objects.CreateBucket(ctx, "bk1"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error { _, err := b.objects.Bucket(ctx, "bk1"); return err })
	ab.set(faults{down: true})
	want := map[string][]string{}
	live := map[string][]string{} // key -> versions not purged
	for range 600 {
		key := fmt.Sprintf("k%02d", rng.IntN(24))
		if vs := live[key]; len(vs) > 0 && rng.IntN(6) == 0 {
			i := rng.IntN(len(vs))
			vid := vs[i]
			live[key] = append(vs[:i:i], vs[i+1:]...)
			if _, err := a.objects.DeleteObject(ctx, "bk1", key, vid); err != nil {
				t.Fatal(err)
			}
			want["bk1/"+key] = append(want["bk1/"+key], "p:"+vid)
			continue
		}
		size := rng.IntN(200)
		if rng.IntN(15) == 0 {
			size = 140 << 10
		}
		v, err := a.objects.PutObject(ctx, "bk1", key, bytes.NewReader(make([]byte, size)), objects.PutOptions{Size: int64(size)})
		if err != nil {
			t.Fatal(err)
		}
		want["bk1/"+key] = append(want["bk1/"+key], "v:"+v.VersionID)
		live[key] = append(live[key], v.VersionID)
	}
	ab.set(faults{delay: time.Millisecond})
	checkConverged(t, a, b, nil, nil)
	ab.mu.Lock()
	defer ab.mu.Unlock()
	for k, ops := range want {
		got := ab.seen[k]
		// A version purged before it was sent is skipped (the purge
		// follows); otherwise arrival order is creation order.
		var expect []string
		purged := map[string]bool{}
		for _, op := range ops {
			if strings.HasPrefix(op, "p:") {
				purged[strings.TrimPrefix(op, "p:")] = true
			}
		}
		for _, op := range ops {
			if strings.HasPrefix(op, "v:") && purged[strings.TrimPrefix(op, "v:")] {
				continue
			}
			expect = append(expect, op)
		}
		if strings.Join(got, " ") != strings.Join(expect, " ") {
			t.Errorf("%s: arrived %v, want %v", k, got, expect)
		}
	}
}

// TestPurgeWhileStreamingIsNotTheLink: a large version purged on this
// site while its data streams to the peer fails the send reading its own
// data, which a transport reports as it reports an unreachable peer. The
// sender tells the two apart: the link stays up, nothing is retried or
// counted failed, and both sites end without the version.
func TestPurgeWhileStreamingIsNotTheLink(t *testing.T) {
	seed := randomSeed(t)
	a, b, ab, _ := fakePair(t, seed, map[string]string{"retry_base_delay": "1ms", "retry_max_delay": "2ms", "mismatch_interval": "1h"})
	ctx := context.Background()
	if err := a.objects.CreateBucket(ctx, "bk1"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error { _, err := b.objects.Bucket(ctx, "bk1"); return err })
	links, cancel := a.trace.Subscribe(trace.Filter{Types: trace.Replication, FuncName: "replication.Link"}, 64)
	defer cancel()
	var once sync.Once
	purged := make(chan struct{})
	ab.mu.Lock()
	ab.beforeRead = func(bucket, key, versionID string) {
		once.Do(func() {
			if _, err := a.objects.DeleteObject(ctx, bucket, key, versionID); err != nil {
				t.Errorf("purge: %v", err)
			}
			close(purged)
		})
	}
	ab.mu.Unlock()
	// In two parts: the second part's data is opened once the first is
	// read, after the purge has removed it.
	up, err := a.objects.CreateMultipartUpload(ctx, "bk1", "big", objects.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var parts []objects.CompletePart
	for i, n := range []int{objects.MinPartSize, maxBatchSize} {
		p, err := a.objects.UploadPart(ctx, "bk1", "big", up.UploadID, i+1, strings.NewReader(strings.Repeat("d", n)), objects.PutOptions{Size: int64(n)})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, objects.CompletePart{Number: i + 1, ETag: p.Segment.ETag})
	}
	if _, err := a.objects.CompleteMultipartUpload(ctx, "bk1", "big", up.UploadID, parts, objects.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	<-purged
	waitDrained(t, a, 10*time.Second)
	select {
	case e := <-links:
		t.Fatalf("the link changed: %s %s", e.Msg, e.Error)
	default:
	}
	if f := failedCount(a); f != 0 {
		t.Fatalf("%v sends counted failed", f)
	}
	checkConverged(t, a, b, nil, nil)
}

// TestBucketEmptiedAndDeletedDropsNothing: a bucket made, written,
// emptied of every version and deleted at once (what a test suite or a
// job's scratch bucket does) reaches the peer in whatever order the
// sender queues deliver it: the purges that arrive after the bucket's
// deletion find nothing to purge instead of being refused until dropped.
func TestBucketEmptiedAndDeletedDropsNothing(t *testing.T) {
	seed := randomSeed(t)
	// Retries enough to outlast the orders that do resolve (a version
	// before its bucket, the bucket's deletion before the purges that
	// empty it), not a purge refused for good.
	a, b, ab, _ := fakePair(t, seed, map[string]string{"retry_base_delay": "1ms", "retry_max_delay": "20ms",
		"max_retries": "50", "mismatch_interval": "1h"})
	ab.set(faults{delay: 30 * time.Millisecond}) // calls overtake each other
	ctx := context.Background()
	for round := range 5 {
		putAndDelete(t, a, fmt.Sprintf("scratch%d", round), 20)
	}
	waitDrained(t, a, 20*time.Second)
	if d := droppedCount(a); d != 0 {
		t.Fatalf("%v entries dropped", d)
	}
	for round := range 5 {
		if _, err := b.objects.Bucket(ctx, fmt.Sprintf("scratch%d", round)); !errors.Is(err, objects.ErrBucketNotFound) {
			t.Fatalf("scratch%d on the peer: %v", round, err)
		}
	}
}

// TestObjectsFollowTheirBucket: a bucket's record and its first versions
// are sent by different workers. With calls overtaking each other, a
// version that reached the peer before its bucket was refused
// (NoSuchBucket), spent a retry, and with few retries was dropped, leaving
// the sites apart until mismatch detection. The versions now wait for
// their bucket's record, and the bucket's deletion for the purges before
// it: nothing is refused.
func TestObjectsFollowTheirBucket(t *testing.T) {
	seed := randomSeed(t)
	a, b, ab, _ := fakePair(t, seed, map[string]string{"retry_base_delay": "1ms", "retry_max_delay": "2ms",
		"max_retries": "1", "mismatch_interval": "1h", "workers": "8"})
	ab.set(faults{delay: 20 * time.Millisecond}) // calls overtake each other
	ctx := context.Background()
	for round := range 6 {
		bucket := fmt.Sprintf("fresh%d", round)
		if err := a.objects.CreateBucket(ctx, bucket); err != nil {
			t.Fatal(err)
		}
		for i := range 16 {
			if _, err := a.objects.PutObject(ctx, bucket, fmt.Sprintf("k%d", i), strings.NewReader("x"), objects.PutOptions{Size: 1}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A bucket filled, emptied and deleted at once.
	if err := a.objects.CreateBucket(ctx, "scratch"); err != nil {
		t.Fatal(err)
	}
	for i := range 16 {
		key := fmt.Sprintf("gone%d", i)
		v, err := a.objects.PutObject(ctx, "scratch", key, strings.NewReader("x"), objects.PutOptions{Size: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.objects.DeleteObject(ctx, "scratch", key, v.VersionID); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.objects.DeleteBucket(ctx, "scratch"); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, a, 20*time.Second)
	if f, d := failedCount(a), droppedCount(a); f != 0 || d != 0 {
		t.Fatalf("%v sends refused, %v dropped (seed %d)", f, d, seed)
	}
	if _, err := b.objects.Bucket(ctx, "scratch"); !errors.Is(err, objects.ErrBucketNotFound) {
		t.Fatalf("scratch on the peer: %v", err)
	}
	for round := range 6 {
		bucket := fmt.Sprintf("fresh%d", round)
		if got, want := siteVersions(t, b, bucket), siteVersions(t, a, bucket); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s: peer has %d versions, this site %d", bucket, len(got), len(want))
		}
	}
}
