package meta

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// rangeCounter is a clientv3.KV that counts the reads of a range that
// are not streamed (Get with a range end, each answered with a count of
// the whole rest of the range).
type rangeCounter struct {
	clientv3.KV
	ranges, streams atomic.Int64
}

func (r *rangeCounter) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if op := clientv3.OpGet(key, opts...); op.RangeBytes() != nil && !op.IsCountOnly() {
		r.ranges.Add(1)
	}
	return r.KV.Get(ctx, key, opts...)
}

func (r *rangeCounter) GetStream(ctx context.Context, key string, opts ...clientv3.OpOption) (clientv3.GetStreamChan, error) {
	r.streams.Add(1)
	return r.KV.GetStream(ctx, key, opts...)
}

func fill(t *testing.T, s Store, n int) {
	t.Helper()
	for lo := 0; lo < n; lo += 1000 {
		b := s.NewBatch()
		for i := lo; i < min(lo+1000, n); i++ {
			b.Set([]byte(fmt.Sprintf("k%06d", i)), []byte("v"))
		}
		if err := b.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEtcdIterStreams: an iterator streams its range, never reading it in
// counted pages (whose cost grows with the rest of the range: a whole scan
// quadratic in its keys), both over a client and in process; one closed
// early leaves nothing running.
func TestEtcdIterStreams(t *testing.T) {
	e, c := startEtcdMember(t)
	for _, kv := range []struct {
		name string
		kv   clientv3.KV
	}{{"client", c}, {"in process", e.LocalKV("root", "unused: authentication is off")}} {
		t.Run(kv.name, func(t *testing.T) {
			rc := &rangeCounter{KV: kv.kv}
			s, _ := NewEtcd(rc, EtcdOptions{Prefix: "/stream-" + kv.name + "/"})
			const n = 5000
			fill(t, s, n)
			got := 0
			err := Scan(s, []byte("k"), []byte("l"), func(k, _ []byte) (bool, error) {
				if want := fmt.Sprintf("k%06d", got); string(k) != want {
					return false, fmt.Errorf("key %q, want %s", k, want)
				}
				got++
				return true, nil
			})
			if err != nil || got != n {
				t.Fatalf("scanned %d keys of %d: %v", got, n, err)
			}
			if rc.ranges.Load() != 0 || rc.streams.Load() != 1 {
				t.Fatalf("a scan made %d counted range reads and %d streams, want 0 and 1", rc.ranges.Load(), rc.streams.Load())
			}
			// Iterators left after their first key, or after a seek into
			// the middle, end their streams.
			before := runtime.NumGoroutine()
			for i := range 50 {
				it, err := s.Iter(nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				k := []byte(fmt.Sprintf("k%06d", i*97))
				if !it.SeekGE(k) || string(it.Key()) != string(k) || !it.Next() {
					t.Fatalf("seek to %s: at %q", k, it.Key())
				}
				if err := it.Close(); err != nil {
					t.Fatal(err)
				}
			}
			deadline := time.Now().Add(5 * time.Second)
			for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if g := runtime.NumGoroutine(); g > before+2 {
				t.Fatalf("%d goroutines after 50 iterators closed early, %d before", g, before)
			}
		})
	}
}

// unstreamedKV answers RangeStream as an etcd before 3.7 does: the stream
// opens, and its first receive is Unimplemented.
type unstreamedKV struct{ etcdserverpb.KVClient }

func (unstreamedKV) RangeStream(context.Context, *etcdserverpb.RangeRequest, ...grpc.CallOption) (etcdserverpb.KV_RangeStreamClient, error) {
	return refusedStream{}, nil
}

type refusedStream struct{ grpc.ClientStream }

func (refusedStream) Recv() (*etcdserverpb.RangeStreamResponse, error) {
	return nil, status.Error(codes.Unimplemented, "unknown method RangeStream for service etcdserverpb.KV")
}

// TestEtcdStoreWithoutStreams runs the conformance suite on an etcd that
// refuses RangeStream: the store reads ranges in pages.
func TestEtcdStoreWithoutStreams(t *testing.T) {
	c := startEtcd(t)
	kv := clientv3.NewKVFromKVClient(unstreamedKV{etcdserverpb.NewKVClient(c.ActiveConnection())}, nil)
	var stores []*EtcdStore
	testStore(t, func(t *testing.T) Store {
		s, err := NewEtcd(kv, EtcdOptions{Prefix: fmt.Sprintf("/paged%d/", len(stores))})
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
		return s
	})
	s, _ := NewEtcd(kv, EtcdOptions{Prefix: "/paged-many/"})
	fill(t, s, 1300) // more than two pages
	got := 0
	if err := Scan(s, nil, nil, func(k, _ []byte) (bool, error) { got++; return true, nil }); err != nil || got != 1300 {
		t.Fatalf("paged scan read %d keys of 1300: %v", got, err)
	}
	if !s.paged.Load() {
		t.Fatal("the store did not fall back to pages")
	}
}

// cuttingKV cuts its first stream after one chunk, as etcd does when its
// authentication data changes under a stream.
type cuttingKV struct {
	etcdserverpb.KVClient
	cut atomic.Bool
}

func (c *cuttingKV) RangeStream(ctx context.Context, in *etcdserverpb.RangeRequest, opts ...grpc.CallOption) (etcdserverpb.KV_RangeStreamClient, error) {
	st, err := c.KVClient.RangeStream(ctx, in, opts...)
	if err != nil || !c.cut.CompareAndSwap(false, true) {
		return st, err
	}
	return &cutStream{KV_RangeStreamClient: st}, nil
}

type cutStream struct {
	etcdserverpb.KV_RangeStreamClient
	n int
}

func (c *cutStream) Recv() (*etcdserverpb.RangeStreamResponse, error) {
	if c.n++; c.n > 1 {
		return nil, status.Error(codes.Unavailable, "etcdserver: revision of auth store is old")
	}
	return c.KV_RangeStreamClient.Recv()
}

// TestEtcdIterResumesCutStream: a stream cut part way is read on from
// where it stopped, at the iterator's revision: every key once, in order,
// none written after the iterator was made.
func TestEtcdIterResumesCutStream(t *testing.T) {
	c := startEtcd(t)
	ckv := &cuttingKV{KVClient: etcdserverpb.NewKVClient(c.ActiveConnection())}
	s, _ := NewEtcd(clientv3.NewKVFromKVClient(ckv, nil), EtcdOptions{Prefix: "/cut/"})
	const n = 3000
	fill(t, s, n)
	it, err := s.Iter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	later := s.NewBatch()
	later.Set([]byte("k000500x"), []byte("after the iterator"))
	if err := later.Commit(true); err != nil {
		t.Fatal(err)
	}
	got := 0
	for ok := it.First(); ok; ok = it.Next() {
		if want := fmt.Sprintf("k%06d", got); string(it.Key()) != want {
			t.Fatalf("key %q, want %s", it.Key(), want)
		}
		got++
	}
	if err := it.Close(); err != nil || got != n {
		t.Fatalf("read %d keys of %d: %v", got, n, err)
	}
	if !ckv.cut.Load() {
		t.Fatal("no stream was cut")
	}
}
