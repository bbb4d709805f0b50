package meta

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/twinlake/twinlake/internal/cluster"
	"github.com/twinlake/twinlake/internal/trace"
)

// startEtcd runs one embedded etcd member on loopback for the test.
func startEtcd(t *testing.T) *clientv3.Client {
	t.Helper()
	_, c := startEtcdMember(t)
	return c
}

// startEtcdMember runs one embedded etcd member on loopback for the test,
// and returns it with a client of its client port.
func startEtcdMember(t *testing.T) (*cluster.Embedded, *clientv3.Client) {
	t.Helper()
	var ports [2]string
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = l.Addr().String()
		l.Close()
	}
	peer, client := "http://"+ports[0], "http://"+ports[1]
	e, err := cluster.StartEmbedded(context.Background(), cluster.EmbedConfig{
		Name: "m1", Dir: filepath.Join(t.TempDir(), "etcd"), PeerURL: peer, ClientURL: client,
		InitialCluster: map[string]string{"m1": peer}, ClusterToken: "meta-test",
		TickMs: 50, ElectionMs: 500,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return e, c
}

// TestEtcdStoreInProcess runs the conformance suite on a member's
// key-value API called in process (cluster.Embedded.LocalKV), with etcd's
// authentication on, as a site's leader uses it.
func TestEtcdStoreInProcess(t *testing.T) {
	e, _ := startEtcdMember(t)
	const password = "in-process-password"
	root, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL()}, DialTimeout: 5 * time.Second,
		Username: cluster.RootUser, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := cluster.EnableAuth(t.Context(), root, password); err != nil {
		t.Fatal(err)
	}
	kv := e.LocalKV(cluster.RootUser, password)
	n := 0
	testStore(t, func(t *testing.T) Store {
		n++
		s, err := NewEtcd(kv, EtcdOptions{Prefix: fmt.Sprintf("/local%d/", n)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
	// What it wrote is what the client port serves, to the root user only.
	s, _ := NewEtcd(kv, EtcdOptions{Prefix: "/shared/"})
	b := s.NewBatch()
	b.Set([]byte("k"), []byte("v"))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	if resp, err := root.Get(t.Context(), "/shared/k"); err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Fatalf("the client port reads %v, %v", resp, err)
	}
	wrong, _ := NewEtcd(e.LocalKV(cluster.RootUser, "wrong"), EtcdOptions{Prefix: "/shared/"})
	if _, err := wrong.Get([]byte("k")); err == nil {
		t.Fatal("a wrong password read through the in-process API")
	}
}

// TestEtcdStore runs the conformance suite on etcd, each case in a
// namespace of its own.
func TestEtcdStore(t *testing.T) {
	c := startEtcd(t)
	n := 0
	testStore(t, func(t *testing.T) Store {
		n++
		s, err := NewEtcd(c, EtcdOptions{Prefix: fmt.Sprintf("/conf%d/", n)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
	t.Run("PagesAndSnapshot", func(t *testing.T) {
		s, _ := NewEtcd(c, EtcdOptions{Prefix: "/pages/"})
		b := s.NewBatch()
		for i := range 1300 {
			b.Set([]byte(fmt.Sprintf("k%05d", i)), []byte("v"))
		}
		if err := b.Commit(true); err != nil {
			t.Fatal(err)
		}
		it, err := s.Iter([]byte("k00100"), []byte("k01250"))
		if err != nil {
			t.Fatal(err)
		}
		late := s.NewBatch()
		late.Set([]byte("k00999x"), []byte("after the iterator"))
		late.Delete([]byte("k01000"))
		if err := late.Commit(true); err != nil {
			t.Fatal(err)
		}
		want := 100
		for ok := it.First(); ok; ok = it.Next() {
			if got := string(it.Key()); got != fmt.Sprintf("k%05d", want) {
				t.Fatalf("key %q, want k%05d", got, want)
			}
			want++
		}
		if err := it.Close(); err != nil || want != 1250 {
			t.Fatalf("iterated to %d, %v", want, err)
		}
		if err := s.NewBatch().Commit(true); err != nil {
			t.Fatalf("empty batch: %v", err)
		}
	})
	t.Run("Fence", func(t *testing.T) {
		owner := "node-a"
		s, _ := NewEtcd(c, EtcdOptions{Prefix: "/fenced/", Fence: func() []clientv3.Cmp {
			return []clientv3.Cmp{clientv3.Compare(clientv3.Value("/leader"), "=", owner)}
		}})
		if _, err := c.Put(context.Background(), "/leader", "node-a"); err != nil {
			t.Fatal(err)
		}
		b := s.NewBatch()
		b.Set([]byte("x"), []byte("1"))
		if err := b.Commit(true); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Put(context.Background(), "/leader", "node-b"); err != nil {
			t.Fatal(err)
		}
		b = s.NewBatch()
		b.Set([]byte("x"), []byte("2"))
		if err := b.Commit(true); !errors.Is(err, ErrFenced) {
			t.Fatalf("commit after losing the lead: %v", err)
		}
		if v, _ := s.Get([]byte("x")); string(v) != "1" {
			t.Fatalf("a fenced commit wrote: %q", v)
		}
	})
	t.Run("GroupCommit", func(t *testing.T) {
		// 64 writers commit at once, each a batch of its own keys and one
		// key some other writer also writes; each may also be fenced off.
		bus := trace.New("node-a")
		var fenced atomic.Bool
		s, _ := NewEtcd(c, EtcdOptions{Prefix: "/group/", Trace: bus, Fence: func() []clientv3.Cmp {
			if fenced.Load() {
				return []clientv3.Cmp{clientv3.Compare(clientv3.Version("/group-fence"), ">", 0)}
			}
			return nil
		}})
		events, stop := bus.Subscribe(trace.Filter{Types: trace.Internal, FuncName: "etcd.Txn"}, 1024)
		defer stop()
		const writers, rounds = 64, 5
		var afters atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, writers*rounds)
		for w := range writers {
			wg.Go(func() {
				for r := range rounds {
					b := s.NewBatch()
					b.Set([]byte(fmt.Sprintf("w%02d/a", w)), []byte(fmt.Sprint(r)))
					b.Set([]byte(fmt.Sprintf("w%02d/b", w)), []byte(fmt.Sprint(r)))
					b.Set([]byte(fmt.Sprintf("shared%d", w%8)), []byte(fmt.Sprint(w)))
					b.Delete([]byte(fmt.Sprintf("w%02d/gone", w)))
					b.AfterCommit(func(err error) {
						if err == nil {
							afters.Add(1)
						}
					})
					errs <- b.Commit(true)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if afters.Load() != writers*rounds {
			t.Fatalf("%d AfterCommit calls, want %d", afters.Load(), writers*rounds)
		}
		for w := range writers {
			for _, k := range []string{"a", "b"} {
				if v, err := s.Get([]byte(fmt.Sprintf("w%02d/%s", w, k))); err != nil || string(v) != fmt.Sprint(rounds-1) {
					t.Fatalf("writer %d's %s: %q, %v", w, k, v, err)
				}
			}
		}
		txns := len(events)
		if txns >= writers*rounds {
			t.Fatalf("%d transactions for %d concurrent commits: none merged", txns, writers*rounds)
		}
		t.Logf("%d concurrent commits in %d transactions", writers*rounds, txns)
		// etcd's refusal of a transaction too large for it is told apart
		// (a merged round so refused is tried again batch by batch).
		big := s.NewBatch()
		for i := range 5000 {
			big.Set([]byte(fmt.Sprintf("big%05d", i)), []byte("v"))
		}
		if err := big.Commit(true); err == nil || !refusedMerged(err) {
			t.Fatalf("a batch of 5,000 writes: %v, want etcd's too-many-operations refusal", err)
		}
		if err := context.DeadlineExceeded; refusedMerged(err) {
			t.Fatalf("%v taken for a refusal of the merge", err)
		}
		// Fenced off, every batch of a merged round fails and writes nothing.
		fenced.Store(true)
		var fwg sync.WaitGroup
		for w := range writers {
			fwg.Go(func() {
				b := s.NewBatch()
				b.Set([]byte(fmt.Sprintf("w%02d/a", w)), []byte("fenced"))
				if err := b.Commit(true); !errors.Is(err, ErrFenced) {
					t.Errorf("writer %d fenced off: %v", w, err)
				}
			})
		}
		fwg.Wait()
		if v, _ := s.Get([]byte("w00/a")); string(v) != fmt.Sprint(rounds-1) {
			t.Fatalf("a fenced commit wrote %q", v)
		}
	})
	t.Run("Trace", func(t *testing.T) {
		bus := trace.New("node-a")
		s, _ := NewEtcd(c, EtcdOptions{Prefix: "/traced/", Trace: bus})
		quiet := s.NewBatch() // nothing listens: nothing published
		quiet.Set([]byte("q"), []byte("1"))
		if err := quiet.Commit(true); err != nil {
			t.Fatal(err)
		}
		events, stop := bus.Subscribe(trace.Filter{Types: trace.Internal}, 16)
		defer stop()
		b := s.NewBatch()
		b.Set([]byte("o/v/b\x00k"), []byte("version"))
		b.Set([]byte("o/j/1"), []byte("entry"))
		if err := b.Commit(true); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get([]byte("o/v/b\x00k")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get([]byte("missing")); !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
		if err := Scan(s, []byte("o/"), PrefixEnd([]byte("o/")), func(k, v []byte) (bool, error) { return true, nil }); err != nil {
			t.Fatal(err)
		}
		var got []string
		for range 5 {
			ev := <-events
			if ev.Node != "node-a" || ev.Duration <= 0 || ev.Error != "" {
				t.Fatalf("event %+v", ev)
			}
			got = append(got, fmt.Sprintf("%s %s keys=%s in=%d out=%d", ev.FuncName, ev.Path, ev.Attrs["keys"], ev.BytesIn, ev.BytesOut))
		}
		want := []string{
			`etcd.Txn o/v/b\x00k keys=2 in=24 out=0`,
			`etcd.Get o/v/b\x00k keys=1 in=0 out=7`,
			`etcd.Get missing keys=0 in=0 out=0`,
			`etcd.Revision o/ keys=0 in=0 out=0`,
			`etcd.Range o/ keys=2 in=0 out=40`,
		}
		if !slices.Equal(got, want) {
			t.Fatalf("traced etcd calls:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	if _, err := NewEtcd(c, EtcdOptions{}); err == nil {
		t.Fatal("a store without a prefix accepted")
	}
}
