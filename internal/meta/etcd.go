package meta

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/twinlake/twinlake/internal/trace"
)

// EtcdStore is a Store kept in etcd under a key prefix, for a site of
// several nodes: every node reads the same metadata, reads are
// linearizable, and a batch is one etcd transaction (shared with the
// batches committed at the same time: see groupCommit), durable on a
// quorum of etcd members before Commit returns (sync or not). A fence, when set,
// is a condition every transaction carries (the writer still holds the
// site's leadership), so a node that lost it cannot write after the new
// leader started: its commits fail with ErrFenced.
//
// etcd bounds what it holds (its backend quota, 2 GiB by default and 8 GiB
// at most as etcd recommends) and each transaction (operations and request
// bytes, both server settings): the limits of a site's metadata, and so of
// its object count, are etcd's. See the architecture page.
type EtcdStore struct {
	c       clientv3.KV
	prefix  string
	fence   func() []clientv3.Cmp
	timeout time.Duration
	trace   *trace.Bus
	group   groupCommit
	// paged is set once etcd refused RangeStream: iterators read pages.
	paged atomic.Bool
}

var _ Store = (*EtcdStore)(nil)

// ErrFenced is returned by Commit when the store's fence no longer holds.
var ErrFenced = errors.New("meta: write fenced off: this node no longer holds the site's leadership")

// EtcdOptions configure an EtcdStore.
type EtcdOptions struct {
	// Prefix is prepended to every key (a site's namespace); required.
	Prefix string
	// Fence, when set, returns the conditions every commit carries.
	Fence func() []clientv3.Cmp
	// Timeout bounds each call to etcd (default 10s).
	Timeout time.Duration
	// Trace, when set, gets every call to etcd as a trace.Internal event
	// (etcd.Get, etcd.Txn, etcd.Range, etcd.Revision) while anyone
	// traces them: one atomic load per call otherwise.
	Trace *trace.Bus
}

// NewEtcd returns a Store over c (a *clientv3.Client, or another
// clientv3.KV such as a member's in process). Closing it does not close c.
func NewEtcd(c clientv3.KV, o EtcdOptions) (*EtcdStore, error) {
	if o.Prefix == "" {
		return nil, errors.New("meta: an etcd store needs a key prefix")
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Timeout < 100*time.Millisecond || o.Timeout > 5*time.Minute {
		return nil, fmt.Errorf("meta: etcd timeout %s outside [100ms, 5m]", o.Timeout)
	}
	return &EtcdStore{c: c, prefix: o.Prefix, fence: o.Fence, timeout: o.Timeout, trace: o.Trace}, nil
}

// traced makes one call to etcd, about key (without the prefix), and
// publishes it as the trace.Internal event etcd.op while anyone listens:
// call returns how many keys it wrote or read and their bytes.
func (s *EtcdStore) traced(op string, key []byte, write bool, call func() (keys int, bytes int64, err error)) error {
	if !s.trace.Enabled(trace.Internal) {
		_, _, err := call()
		return err
	}
	start := time.Now()
	keys, bytes, err := call()
	q := strconv.Quote(string(key)) // keys hold NULs and other bytes a terminal should not get
	ev := trace.Event{Type: trace.Internal, Time: start, FuncName: "etcd." + op, Path: q[1 : len(q)-1],
		Duration: time.Since(start), Attrs: map[string]string{"keys": strconv.Itoa(keys)}}
	if write {
		ev.BytesIn = bytes
	} else {
		ev.BytesOut = bytes
	}
	if err != nil {
		ev.Error = err.Error()
	}
	s.trace.Publish(ev)
	return err
}

func (s *EtcdStore) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.timeout)
}

func (s *EtcdStore) key(k []byte) string { return s.prefix + string(k) }

// end is the etcd range end for an upper bound (nil: the prefix's end).
func (s *EtcdStore) end(upper []byte) string {
	if upper != nil {
		return s.key(upper)
	}
	return string(PrefixEnd([]byte(s.prefix)))
}

// Get implements Store.
func (s *EtcdStore) Get(key []byte) ([]byte, error) {
	var out []byte
	err := s.View(key, func(v []byte) error {
		out = append([]byte(nil), v...)
		return nil
	})
	return out, err
}

// View implements Store.
func (s *EtcdStore) View(key []byte, fn func([]byte) error) error {
	ctx, cancel := s.ctx()
	defer cancel()
	var resp *clientv3.GetResponse
	err := s.traced("Get", key, false, func() (int, int64, error) {
		var err error
		if resp, err = s.c.Get(ctx, s.key(key)); err != nil || len(resp.Kvs) == 0 {
			return 0, 0, err
		}
		return 1, int64(len(resp.Kvs[0].Value)), nil
	})
	if err != nil {
		return fmt.Errorf("meta: etcd get: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return ErrNotFound
	}
	return fn(resp.Kvs[0].Value)
}

// NewBatch implements Store.
func (s *EtcdStore) NewBatch() Batch { return &etcdBatch{s: s} }

// Close implements Store; the client stays open.
func (s *EtcdStore) Close() error { return nil }

type etcdBatch struct {
	s     *EtcdStore
	ops   []batchOp
	after []func(error)
}

func (b *etcdBatch) Set(key, value []byte) {
	b.ops = append(b.ops, batchOp{kind: opSet, key: clone(key), value: clone(value)})
}

func (b *etcdBatch) Delete(key []byte) {
	b.ops = append(b.ops, batchOp{kind: opDelete, key: clone(key)})
}

func (b *etcdBatch) DeleteRange(lower, upper []byte) {
	b.ops = append(b.ops, batchOp{kind: opDeleteRange, key: clone(lower), end: clone(upper)})
}

func (b *etcdBatch) Len() int                   { return len(b.ops) }
func (b *etcdBatch) AfterCommit(fn func(error)) { b.after = append(b.after, fn) }

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// Commit implements Batch: durable when it returns, in one etcd
// transaction, which may carry other batches committed at the same time
// (see groupCommit).
func (b *etcdBatch) Commit(bool) (err error) {
	defer func() {
		for _, fn := range b.after {
			fn(err)
		}
	}()
	s := b.s
	points, ranges := collapse(b.ops)
	c := &commit{done: make(chan error, 1), alone: len(ranges) > 0}
	c.ops = make([]clientv3.Op, 0, len(points)+len(ranges))
	for _, r := range ranges {
		c.ops = append(c.ops, clientv3.OpDelete(s.key(r.lo), clientv3.WithRange(s.end(r.hi))))
	}
	for _, w := range points {
		if w.delete {
			c.ops = append(c.ops, clientv3.OpDelete(s.key(w.key)))
		} else {
			c.ops = append(c.ops, clientv3.OpPut(s.key(w.key), string(w.value)))
		}
		c.keys = append(c.keys, w.key)
		c.bytes += int64(len(w.key) + len(w.value))
	}
	if len(c.ops) == 0 {
		return nil
	}
	if len(points) > 0 {
		c.first = points[0].key
	} else {
		c.first = ranges[0].lo
	}
	return s.group.commit(s, c)
}

// commit is one batch's transaction waiting for its turn.
type commit struct {
	ops   []clientv3.Op
	keys  [][]byte // the point keys, without the prefix
	alone bool     // a range delete: never merged with another batch
	first []byte   // the first key, for the trace
	bytes int64
	done  chan error
}

// groupCommit merges the batches committed while a transaction is under
// way into the next one: under concurrent writers etcd then proposes,
// replicates and applies one entry for several commits. A batch waits for
// no timer: the first one in commits at once, the next ones wait for that
// transaction and then go together. Only batches of distinct point keys
// are merged (etcd refuses a transaction that writes a key twice), up to
// maxMergedOps writes and maxMergedBytes, and in the order they came. A
// merged transaction etcd refuses for its size or shape is tried again
// batch by batch, so that each batch gets its own answer (see
// refusedMerged); any other failure is every batch's.
type groupCommit struct {
	mu      sync.Mutex
	queue   []*commit
	running bool // a goroutine commits the queue
}

// The bounds of a merged transaction: etcd's default limits are 128
// operations and 1.5 MiB a request; one batch alone may exceed them
// where etcd allows it.
const (
	maxMergedOps   = 128
	maxMergedBytes = 1 << 20
)

// commit queues c and returns its result. A batch that finds no commit
// running is first in the queue: it commits the first round itself and
// leaves what queued meanwhile to a goroutine.
func (g *groupCommit) commit(s *EtcdStore, c *commit) error {
	g.mu.Lock()
	g.queue = append(g.queue, c)
	if g.running {
		g.mu.Unlock()
		return <-c.done
	}
	g.running = true
	round := g.take() // c's
	g.mu.Unlock()
	s.commitRound(round)
	g.mu.Lock()
	if len(g.queue) == 0 {
		g.running = false
		g.mu.Unlock()
	} else {
		g.mu.Unlock()
		go g.drain(s)
	}
	return <-c.done
}

// drain commits rounds until the queue is empty.
func (g *groupCommit) drain(s *EtcdStore) {
	g.mu.Lock()
	for len(g.queue) > 0 {
		round := g.take()
		g.mu.Unlock()
		s.commitRound(round)
		g.mu.Lock()
	}
	g.running = false
	g.mu.Unlock()
}

// take removes the next round from the queue: its first batch and those
// after it that merge with it. g.mu is held.
func (g *groupCommit) take() []*commit {
	n, ops, bytes := 1, len(g.queue[0].ops), g.queue[0].bytes
	if !g.queue[0].alone {
		seen := make(map[string]bool, 2*len(g.queue[0].keys))
		for _, k := range g.queue[0].keys {
			seen[string(k)] = true
		}
	next:
		for _, c := range g.queue[1:] {
			if c.alone || ops+len(c.ops) > maxMergedOps || bytes+c.bytes > maxMergedBytes {
				break
			}
			for _, k := range c.keys {
				if seen[string(k)] {
					break next
				}
			}
			for _, k := range c.keys {
				seen[string(k)] = true
			}
			n, ops, bytes = n+1, ops+len(c.ops), bytes+c.bytes
		}
	}
	round := slices.Clone(g.queue[:n])
	g.queue = slices.Delete(g.queue, 0, n)
	return round
}

// commitRound commits a round as one transaction and answers each batch.
func (s *EtcdStore) commitRound(round []*commit) {
	if len(round) == 1 {
		round[0].done <- s.txn(round[0].first, round[0].ops, round[0].bytes)
		return
	}
	var ops []clientv3.Op
	var bytes int64
	for _, c := range round {
		ops = append(ops, c.ops...)
		bytes += c.bytes
	}
	err := s.txn(round[0].first, ops, bytes)
	if refusedMerged(err) {
		for _, c := range round {
			c.done <- s.txn(c.first, c.ops, c.bytes)
		}
		return
	}
	for _, c := range round {
		c.done <- err
	}
}

// refusedMerged reports whether etcd refused a merged transaction for
// what merging made of it (too many operations, too large, a key twice),
// which its batches alone may not be. Other failures (the fence, etcd
// out of reach) are every batch's answer as they are: tried again one by
// one, an unreachable etcd would cost each batch a timeout more.
func refusedMerged(err error) bool {
	for _, e := range []error{rpctypes.ErrTooManyOps, rpctypes.ErrRequestTooLarge, rpctypes.ErrDuplicateKey} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// txn commits ops as one transaction under the store's fence.
func (s *EtcdStore) txn(first []byte, ops []clientv3.Op, bytes int64) error {
	var cmps []clientv3.Cmp
	if s.fence != nil {
		cmps = s.fence()
	}
	ctx, cancel := s.ctx()
	defer cancel()
	err := s.traced("Txn", first, true, func() (int, int64, error) {
		resp, err := s.c.Txn(ctx).If(cmps...).Then(ops...).Commit()
		if err == nil && !resp.Succeeded {
			err = ErrFenced
		}
		return len(ops), bytes, err
	})
	if errors.Is(err, ErrFenced) {
		return ErrFenced
	}
	if err != nil {
		return fmt.Errorf("meta: etcd commit of %d writes: %w", len(ops), err)
	}
	return nil
}

// etcdPage is how many keys an iterator reads per request when it reads
// pages (an etcd without RangeStream).
const etcdPage = 512

// Iter implements Store: the iterator reads the range at the store's
// revision when it was created, so it sees one point in time however long
// it runs (unless etcd compacts that revision meanwhile).
//
// It streams the range (etcd's RangeStream, 3.7 and later): etcd sends it
// in chunks it sizes itself, starting small and growing, each read only
// once the one before was taken, so reading the first keys of a large
// range reads a few of them. A Range request with a limit, the other way
// to read part of a range, costs etcd a count of every key from its start
// to the range's end (each answer carries the range's total), so reading n
// keys in pages would cost about n²/(2·page) key visits: on 200,000 keys
// in process a whole scan took 3.7 s in pages and 0.23 s streamed, the
// first key 16 ms and 0.26 ms. An etcd that answers RangeStream with
// Unimplemented (before 3.7) is read in pages from then on.
func (s *EtcdStore) Iter(lower, upper []byte) (Iterator, error) {
	it := &etcdIter{s: s, lower: clone(lower), upper: clone(upper)}
	ctx, cancel := s.ctx()
	defer cancel()
	// A read that finds nothing still fixes the revision.
	var resp *clientv3.GetResponse
	err := s.traced("Revision", lower, false, func() (int, int64, error) {
		var err error
		resp, err = s.c.Get(ctx, s.key([]byte{}), clientv3.WithCountOnly())
		return 0, 0, err
	})
	if err != nil {
		return nil, fmt.Errorf("meta: etcd iterate: %w", err)
	}
	it.rev = resp.Header.Revision
	return it, nil
}

type etcdIter struct {
	s            *EtcdStore
	lower, upper []byte
	rev          int64
	page         [][2][]byte
	pos          int
	more         bool // pages: keys after the page
	err          error

	stream clientv3.GetStreamChan // open while streaming
	cancel context.CancelFunc     // ends the stream
	resume string                 // the etcd key the stream goes on from
}

func (i *etcdIter) First() bool { return i.seek(i.lower, true) }

func (i *etcdIter) SeekGE(k []byte) bool {
	if i.lower != nil && string(k) < string(i.lower) {
		k = i.lower
	}
	return i.seek(k, true)
}

// seek positions at the first key from k (inclusive or not): the first
// chunk of a stream from it, or the page that starts there.
func (i *etcdIter) seek(k []byte, inclusive bool) bool {
	i.endStream()
	from := i.s.key(k)
	if !inclusive {
		from += "\x00"
	}
	if !i.s.paged.Load() {
		err := i.openStream(from)
		if err == nil {
			var ok bool
			if ok, err = i.nextChunk(k); !unstreamed(err) {
				return ok
			}
		} else if !unstreamed(err) {
			i.fail(err)
			return false
		}
		i.s.paged.Store(true)
		i.err = nil
	}
	return i.readPage(k, from)
}

// openStream streams the range from etcd key from at the iterator's
// revision.
func (i *etcdIter) openStream(from string) error {
	i.endStream()
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := i.s.c.GetStream(ctx, from, clientv3.WithRange(i.s.end(i.upper)), clientv3.WithRev(i.rev))
	if err != nil {
		cancel()
		return err
	}
	i.stream, i.cancel, i.resume = stream, cancel, from
	return nil
}

// unstreamed reports whether err is an etcd refusing RangeStream.
func unstreamed(err error) bool { return status.Code(err) == codes.Unimplemented }

// nextChunk takes the stream's next chunk holding keys (k is where it
// reads from, for the trace); false at its end or on an error (which it
// returns and keeps for Close). A stream that fails part way (etcd cut it:
// its authentication data changed while it ran, a connection was lost) is
// opened again once from where it stopped: at the same revision it reads
// what the rest would have held.
func (i *etcdIter) nextChunk(k []byte) (bool, error) {
	kvs, end, err := i.receive(k)
	if err != nil && !unstreamed(err) {
		if err = i.openStream(i.resume); err == nil {
			kvs, end, err = i.receive(k)
		}
	}
	if err != nil {
		i.fail(err)
		return false, err
	}
	if end {
		i.endStream()
		i.page = nil
		return false, nil
	}
	i.fill(kvs)
	i.resume = string(kvs[len(kvs)-1].Key) + "\x00"
	return true, nil
}

// receive waits for the stream's next chunk holding keys; end at its end.
func (i *etcdIter) receive(k []byte) (kvs []*mvccpb.KeyValue, end bool, err error) {
	err = i.s.traced("Range", k, false, func() (int, int64, error) {
		timer := time.NewTimer(i.s.timeout)
		defer timer.Stop()
		for {
			select {
			case r, ok := <-i.stream:
				if !ok {
					end = true
					return 0, 0, nil
				}
				if err := r.Err(); err != nil {
					return 0, 0, err
				}
				if len(r.Kvs) == 0 {
					continue
				}
				kvs = r.Kvs
				var bytes int64
				for _, kv := range kvs {
					bytes += int64(len(kv.Key) + len(kv.Value))
				}
				return len(kvs), bytes, nil
			case <-timer.C:
				return 0, 0, fmt.Errorf("no answer from etcd in %s", i.s.timeout)
			}
		}
	})
	return kvs, end, err
}

// readPage reads the page from etcd key from (k without the prefix).
func (i *etcdIter) readPage(k []byte, from string) bool {
	ctx, cancel := i.s.ctx()
	defer cancel()
	var resp *clientv3.GetResponse
	err := i.s.traced("Range", k, false, func() (int, int64, error) {
		var err error
		resp, err = i.s.c.Get(ctx, from, clientv3.WithRange(i.s.end(i.upper)), clientv3.WithRev(i.rev),
			clientv3.WithLimit(etcdPage), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
		if err != nil {
			return 0, 0, err
		}
		var bytes int64
		for _, kv := range resp.Kvs {
			bytes += int64(len(kv.Key) + len(kv.Value))
		}
		return len(resp.Kvs), bytes, nil
	})
	if err != nil {
		i.fail(err)
		return false
	}
	i.fill(resp.Kvs)
	i.more = resp.More
	return len(i.page) > 0
}

func (i *etcdIter) fill(kvs []*mvccpb.KeyValue) {
	i.page = i.page[:0]
	for _, kv := range kvs {
		i.page = append(i.page, [2][]byte{kv.Key[len(i.s.prefix):], kv.Value})
	}
	i.pos = 0
}

func (i *etcdIter) fail(err error) {
	i.err = fmt.Errorf("meta: etcd iterate: %w", err)
	i.page = nil
	i.endStream()
}

// endStream ends the open stream, if any, and waits for its reader to
// stop (it would otherwise hold a chunk no one takes).
func (i *etcdIter) endStream() {
	if i.stream == nil {
		return
	}
	i.cancel()
	for range i.stream {
	}
	i.stream, i.cancel = nil, nil
}

func (i *etcdIter) Next() bool {
	if i.pos+1 < len(i.page) {
		i.pos++
		return true
	}
	if len(i.page) == 0 {
		return false
	}
	last := i.page[len(i.page)-1][0]
	if i.stream != nil {
		ok, _ := i.nextChunk(last)
		return ok
	}
	if !i.more {
		i.page = nil
		return false
	}
	return i.seek(last, false)
}

func (i *etcdIter) Key() []byte   { return i.page[i.pos][0] }
func (i *etcdIter) Value() []byte { return i.page[i.pos][1] }

func (i *etcdIter) Close() error {
	i.endStream()
	return i.err
}

// etcdViewMany is how many keys ViewMany reads per transaction: etcd's
// default bound on a transaction's operations (an external cluster's;
// an embedded member allows more).
const etcdViewMany = 128

// ViewMany implements MultiViewer: the keys are read in read-only
// transactions of up to etcdViewMany gets each, linearizable as Get is.
func (s *EtcdStore) ViewMany(keys [][]byte, fn func(i int, value []byte, found bool) error) error {
	for lo := 0; lo < len(keys); lo += etcdViewMany {
		chunk := keys[lo:min(lo+etcdViewMany, len(keys))]
		ops := make([]clientv3.Op, len(chunk))
		for i, k := range chunk {
			ops[i] = clientv3.OpGet(s.key(k))
		}
		ctx, cancel := s.ctx()
		var resp *clientv3.TxnResponse
		err := s.traced("Get", chunk[0], false, func() (int, int64, error) {
			var err error
			if resp, err = s.c.Txn(ctx).Then(ops...).Commit(); err != nil {
				return 0, 0, err
			}
			n, bytes := 0, int64(0)
			for _, r := range resp.Responses {
				for _, kv := range r.GetResponseRange().GetKvs() {
					n++
					bytes += int64(len(kv.Value))
				}
			}
			return n, bytes, nil
		})
		cancel()
		if err != nil {
			return fmt.Errorf("meta: etcd get of %d keys: %w", len(chunk), err)
		}
		if len(resp.Responses) != len(chunk) {
			return fmt.Errorf("meta: etcd get of %d keys answered %d", len(chunk), len(resp.Responses))
		}
		for i, r := range resp.Responses {
			kvs := r.GetResponseRange().GetKvs()
			var err error
			if len(kvs) == 0 {
				err = fn(lo+i, nil, false)
			} else {
				err = fn(lo+i, kvs[0].Value, true)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}
