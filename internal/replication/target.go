package replication

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/trace"
)

const (
	scanBatch      = 1024                   // journal entries read per pump pass
	queueDepth     = 64                     // entries buffered per worker
	gapGrace       = 2 * time.Second        // how long a journal gap may hold the cursor back
	fullRescanTick = 30 * time.Second       // safety net: re-read the journal from its start
	idleWait       = 250 * time.Millisecond // pump wake-up when nothing signals
	sendTimeout    = 5 * time.Minute        // one send, data included
)

// job is one send: a journal entry, or a retry queue entry when mrf is set.
type job struct {
	e   Entry
	key []byte // its meta key (journal or retry queue)
	mrf *MRFEntry
}

// target sends this site's changes to one peer.
type target struct {
	e    *Engine
	site Site
	peer Peer

	*backlog // the peer's sequence and counts: they outlive a restart of the target
	wake     chan struct{}
	online   atomic.Bool
	latency  atomic.Int64 // last probe round trip, ns
	// needCompare is set when work for the peer was dropped, cameBack
	// when the link comes up: with both, once the backlog is empty,
	// mismatch detection runs at once instead of waiting for its interval.
	// A peer that keeps refusing is compared again only at the interval.
	needCompare, cameBack atomic.Bool

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	queues []chan job
	seed   maphash.Seed

	mu       sync.Mutex
	inflight map[string]bool
	cursor   uint64
	rewind   bool
	gapSince time.Time
	lastFull time.Time
}

func newTarget(e *Engine, s Site, p Peer, bl *backlog) *target {
	return &target{e: e, site: s, peer: p, backlog: bl, wake: make(chan struct{}, 1), inflight: map[string]bool{},
		seed: maphash.MakeSeed()}
}

// journal adds en to b for this target.
func (t *target) journal(b meta.Batch, en Entry) {
	b.Set(journalKey(t.site.ID, t.nextSeq()), encode(en))
	t.tally(en, 0, 1)
}

func (t *target) wakeUp() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

func (t *target) start() {
	t.ctx, t.cancel = context.WithCancel(t.e.ctx)
	n := t.e.cfg.Settings.Int(config.SubsysReplication, config.ReplicationWorkers)
	t.queues = make([]chan job, max(n, 1))
	for i := range t.queues {
		t.queues[i] = make(chan job, queueDepth)
		t.wg.Add(1)
		go t.worker(t.queues[i])
	}
	t.wg.Add(2)
	go t.pump()
	go t.prober()
}

func (t *target) stop() {
	if t.cancel == nil {
		return
	}
	t.cancel()
	t.wg.Wait()
}

// prober checks the link: often while it is down, less so while up.
func (t *target) prober() {
	defer t.wg.Done()
	for {
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.ctx, 2*time.Second)
		err := t.peer.Health(ctx)
		cancel()
		if t.ctx.Err() != nil {
			return
		}
		if err == nil {
			t.latency.Store(int64(time.Since(start)))
			t.e.m.linkLatency.WithLabelValues(t.site.Name).Observe(time.Since(start).Seconds())
		}
		t.setOnline(err == nil)
		wait := t.e.cfg.HealthInterval
		if err != nil {
			wait = min(wait, 200*time.Millisecond)
		}
		select {
		case <-t.ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

func (t *target) setOnline(up bool) {
	if was := t.online.Swap(up); was != up {
		if up {
			t.e.log.Info("peer link up", "target", t.site.Name)
			if t.needCompare.Load() {
				t.cameBack.Store(true) // back after work for it was dropped
			}
			t.mu.Lock()
			t.rewind = true
			t.mu.Unlock()
			t.wakeUp()
		} else {
			t.e.log.Warn("peer link down", "target", t.site.Name)
		}
		t.e.traceEvent("replication.Link", t.site.Name, "", "", map[bool]string{true: "link up", false: "link down"}[up], time.Now(), nil)
	}
}

// pump reads due work from the journal and the retry queue and hands it to
// the workers, key by key in order.
func (t *target) pump() {
	defer t.wg.Done()
	defer func() {
		for _, q := range t.queues {
			close(q)
		}
	}()
	for t.ctx.Err() == nil {
		n := 0
		if t.online.Load() {
			n = t.dispatchJournal() + t.dispatchRetries()
		}
		if n > 0 {
			continue
		}
		t.compareIfDropped()
		select {
		case <-t.ctx.Done():
			return
		case <-t.wake:
		case <-time.After(idleWait):
		}
	}
}

func (t *target) compareIfDropped() {
	if !t.online.Load() || !t.needCompare.Load() || !t.cameBack.Load() {
		return
	}
	if p, r := t.snapshot(); p.n+r.n == 0 && t.needCompare.CompareAndSwap(true, false) {
		t.cameBack.Store(false)
		t.e.requestCompare()
	}
}

func (t *target) dispatch(j job) bool {
	h := maphash.String(t.seed, j.e.Bucket+"\x00"+j.e.Key)
	select {
	case t.queues[h%uint64(len(t.queues))] <- j:
		return true
	case <-t.ctx.Done():
		return false
	}
}

// dispatchJournal sends the journal's next entries to the workers. Entries
// commit out of sequence order when writers race, so a gap in the sequence
// holds the cursor back for a moment; a full re-read every so often is the
// safety net.
func (t *target) dispatchJournal() int {
	t.mu.Lock()
	if t.rewind || time.Since(t.lastFull) > fullRescanTick {
		t.cursor, t.rewind, t.lastFull = 0, false, time.Now()
	}
	from := t.cursor
	t.mu.Unlock()

	var jobs []job
	gap, next := uint64(0), from
	hi := meta.PrefixEnd(journalPrefix(t.site.ID))
	err := meta.Scan(t.e.cfg.Meta, journalKey(t.site.ID, from), hi, func(k, v []byte) (bool, error) {
		s := seqOf(k)
		if s > next && gap == 0 && from != 0 {
			gap = next
		}
		next = s + 1
		if !t.claim(k) {
			return true, nil
		}
		var en Entry
		if err := decode(v, &en); err != nil {
			return false, err
		}
		jobs = append(jobs, job{e: en, key: append([]byte(nil), k...)})
		return len(jobs) < scanBatch, nil
	})
	if err != nil {
		t.e.log.Error("read journal", "target", t.site.Name, "err", err)
	}
	t.mu.Lock()
	switch {
	case gap != 0 && t.gapSince.IsZero():
		t.gapSince = time.Now()
		t.cursor = gap
	case gap != 0 && time.Since(t.gapSince) < gapGrace:
		t.cursor = gap
	default:
		t.gapSince = time.Time{}
		t.cursor = next
	}
	t.mu.Unlock()
	for i, j := range jobs {
		if !t.dispatch(j) {
			t.release(jobs[i:]...)
			return i
		}
	}
	return len(jobs)
}

// dispatchRetries sends the retry queue entries that are due.
func (t *target) dispatchRetries() int {
	var jobs []job
	lo := mrfPrefix(t.site.ID)
	hi := mrfKey(t.site.ID, time.Now().UnixNano()+1, 0)
	err := meta.Scan(t.e.cfg.Meta, lo, hi, func(k, v []byte) (bool, error) {
		if !t.claim(k) {
			return true, nil
		}
		m := &MRFEntry{}
		if err := decode(v, m); err != nil {
			return false, err
		}
		jobs = append(jobs, job{e: m.Entry, key: append([]byte(nil), k...), mrf: m})
		return len(jobs) < scanBatch, nil
	})
	if err != nil {
		t.e.log.Error("read retry queue", "target", t.site.Name, "err", err)
	}
	for i, j := range jobs {
		if !t.dispatch(j) {
			t.release(jobs[i:]...)
			return i
		}
	}
	return len(jobs)
}

// claim marks the journal or retry queue entry k as in flight, unless it
// already is or is gone. A scan reads a snapshot, so it can still see an
// entry that a worker has since completed (deleted, then released); the
// check against the store after claiming keeps such an entry from being
// sent, counted, retried or dropped a second time.
func (t *target) claim(k []byte) bool {
	t.mu.Lock()
	busy := t.inflight[string(k)]
	if !busy {
		t.inflight[string(k)] = true
	}
	t.mu.Unlock()
	if busy {
		return false
	}
	if _, err := t.e.cfg.Meta.Get(k); err != nil {
		t.mu.Lock()
		delete(t.inflight, string(k))
		t.mu.Unlock()
		return false
	}
	return true
}

// release forgets that jobs are in flight, leaving them where they are to
// be read again.
func (t *target) release(jobs ...job) {
	t.mu.Lock()
	for _, j := range jobs {
		delete(t.inflight, string(j.key))
	}
	t.rewind = true
	t.mu.Unlock()
}

// Batching: small versions queued back to back for one worker travel in
// one request, in order, made durable at the peer by one sync.
const (
	maxBatchItems = 64
	maxBatchSize  = 128 << 10 // largest version batched
)

func batchable(j job) bool { return j.e.Op == OpVersion && j.e.Size <= maxBatchSize }

// maxAsync bounds the large sends one worker runs in the background.
const maxAsync = 4

func jobKey(j job) string { return j.e.Bucket + "\x00" + j.e.Key }

// worker sends its queue in order per key. Small versions queued back to
// back go as one batch; a large version is sent in the background so it
// does not hold up other keys behind it, while a later change of the same
// key waits for it.
func (t *target) worker(q chan job) {
	defer t.wg.Done()
	busy := map[string]chan struct{}{} // key -> done, for background sends
	reap := func() {
		for k, ch := range busy {
			select {
			case <-ch:
				delete(busy, k)
			default:
			}
		}
	}
	waitKey := func(k string) {
		if ch, ok := busy[k]; ok {
			<-ch
			delete(busy, k)
		}
	}
	defer func() {
		for _, ch := range busy {
			<-ch
		}
	}()
	var next *job
	for {
		var j job
		if next != nil {
			j, next = *next, nil
		} else {
			var ok bool
			if j, ok = <-q; !ok {
				return
			}
		}
		reap()
		if t.ctx.Err() != nil || !t.online.Load() {
			t.release(j)
			continue
		}
		waitKey(jobKey(j))
		if !batchable(j) {
			if j.e.Op != OpVersion {
				t.run(j)
				continue
			}
			for len(busy) >= maxAsync {
				for k, ch := range busy {
					<-ch
					delete(busy, k)
					break
				}
			}
			done := make(chan struct{})
			busy[jobKey(j)] = done
			go func(j job) {
				defer close(done)
				t.run(j)
			}(j)
			continue
		}
		batch := []job{j}
	gather:
		for len(batch) < maxBatchItems {
			select {
			case j2, ok := <-q:
				if !ok {
					break gather
				}
				if _, isBusy := busy[jobKey(j2)]; !batchable(j2) || isBusy {
					next = &j2 // keeps its place after the batch
					break gather
				}
				batch = append(batch, j2)
			default:
				break gather
			}
		}
		t.runBatch(batch)
	}
}

// runBatch sends small versions in one request (one alone goes as run).
func (t *target) runBatch(jobs []job) {
	if len(jobs) == 1 {
		t.run(jobs[0])
		return
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.ctx, sendTimeout)
	defer cancel()
	ol := t.e.cfg.Objects
	var items []VersionItem
	var sent []job
	for _, j := range jobs {
		v, err := ol.Version(ctx, j.e.Bucket, j.e.Key, j.e.VersionID)
		if errors.Is(err, objects.ErrVersionNotFound) || errors.Is(err, objects.ErrBucketNotFound) {
			t.succeeded(j, objects.Duplicate, 0, start) // purged since: its purge follows
			continue
		}
		var data []byte
		if err == nil && !v.DeleteMarker && v.Size > 0 {
			var rc io.ReadCloser
			if rc, err = ol.OpenRange(j.e.Bucket, j.e.Key, v, 0, v.Size); err == nil {
				data, err = io.ReadAll(rc)
				rc.Close()
			}
		}
		if err != nil {
			t.failed(j, err, start)
			continue
		}
		items = append(items, VersionItem{Bucket: j.e.Bucket, Key: j.e.Key, Version: v, Data: data})
		sent = append(sent, j)
	}
	if len(items) == 0 {
		return
	}
	results, err := t.peer.SendVersions(ctx, items)
	switch {
	case err == nil:
	case errors.Is(err, ErrLinkDown) || t.ctx.Err() != nil:
		t.setOnline(false)
		t.release(sent...)
		return
	default:
		for _, j := range sent {
			t.failed(j, err, start)
		}
		return
	}
	for i, j := range sent {
		r := results[i]
		if r.Code != "" {
			t.failed(j, fmt.Errorf("%w: %s (%s)", ErrRefused, r.Message, r.Code), start)
			continue
		}
		out := objects.Applied
		switch r.Outcome {
		case objects.Duplicate.String():
			out = objects.Duplicate
		case objects.Stale.String():
			out = objects.Stale
		}
		t.succeeded(j, out, int64(len(items[i].Data)), start)
	}
}

func (t *target) run(j job) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.ctx, sendTimeout)
	out, sent, err := t.send(ctx, j.e)
	cancel()
	switch {
	case err == nil:
		t.succeeded(j, out, sent, start)
	case errors.Is(err, ErrLinkDown) || t.ctx.Err() != nil:
		t.setOnline(false)
		t.release(j)
	default:
		t.failed(j, err, start)
	}
}

// send delivers one entry; sent is the data bytes sent.
func (t *target) send(ctx context.Context, en Entry) (objects.ApplyOutcome, int64, error) {
	ol := t.e.cfg.Objects
	switch en.Op {
	case OpVersion:
		v, err := ol.Version(ctx, en.Bucket, en.Key, en.VersionID)
		if errors.Is(err, objects.ErrVersionNotFound) || errors.Is(err, objects.ErrBucketNotFound) {
			return objects.Duplicate, 0, nil // purged since: its purge follows
		}
		if err != nil {
			return 0, 0, err
		}
		var body io.Reader = http0{}
		var rc io.ReadCloser
		if !v.DeleteMarker && v.Size > 0 {
			if rc, err = ol.OpenRange(en.Bucket, en.Key, v, 0, v.Size); err != nil {
				return 0, 0, err
			}
			defer rc.Close()
			body = rc
		}
		out, err := t.peer.SendVersion(ctx, en.Bucket, en.Key, v, body, v.Size)
		return out, v.Size, err
	case OpPurge:
		out, err := t.peer.SendPurge(ctx, en.Bucket, en.Key, en.VersionID, en.At)
		return out, 0, err
	case OpBucket:
		b, err := ol.Bucket(ctx, en.Bucket)
		if errors.Is(err, objects.ErrBucketNotFound) {
			return objects.Duplicate, 0, nil // deleted since: its deletion follows
		}
		if err != nil {
			return 0, 0, err
		}
		out, err := t.peer.SendBucket(ctx, b, false, 0)
		return out, 0, err
	case OpBucketDelete:
		out, err := t.peer.SendBucket(ctx, objects.Bucket{Name: en.Bucket}, true, en.At)
		return out, 0, err
	}
	return 0, 0, errors.New("replication: unknown journal operation " + en.Op)
}

// http0 is an empty body.
type http0 struct{}

func (http0) Read([]byte) (int, error) { return 0, io.EOF }

func (t *target) succeeded(j job, out objects.ApplyOutcome, sent int64, start time.Time) {
	drop := func(b meta.Batch) { b.Delete(j.key) }
	var err error
	if j.e.Op == OpVersion {
		// The status and the journal entry's removal commit together.
		err = t.e.cfg.Objects.SetTargetStatusWith(j.e.Bucket, j.e.Key, j.e.VersionID, t.site.ID, objects.StatusCompleted, drop)
	} else {
		b := t.e.cfg.Meta.NewBatch()
		drop(b)
		err = b.Commit(false)
	}
	if err != nil && !errors.Is(err, objects.ErrBucketNotFound) {
		t.e.log.Error("complete journal entry", "err", err)
	}
	which := 0
	if j.mrf != nil {
		which = 1
	}
	t.tally(j.e, which, -1)
	t.mu.Lock()
	delete(t.inflight, string(j.key))
	t.mu.Unlock()
	t.e.m.sentObjects.WithLabelValues(t.site.Name).Inc()
	t.e.m.sentBytes.WithLabelValues(t.site.Name).Add(float64(sent))
	if t.e.cfg.Trace.Enabled(trace.Replication) {
		t.e.traceEvent("replication.Send", t.site.Name, j.e.Bucket, j.e.Key, j.e.Op+" "+j.e.VersionID+": "+out.String(), start, nil)
	}
}

// failed moves a journal entry to the retry queue, or reschedules a retry
// with exponential backoff, or drops it after max_retries.
func (t *target) failed(j job, cause error, start time.Time) {
	s := t.e.cfg.Settings
	maxRetries := s.Int(config.SubsysReplication, config.ReplicationMaxRetries)
	now := time.Now()
	m := j.mrf
	which := 0
	if m == nil {
		m = &MRFEntry{Entry: j.e, Target: t.site.ID, Seq: seqOf(j.key)}
	} else {
		m.RetryCount++
		which = 1
	}
	m.FailedAt, m.Err = now.UnixNano(), cause.Error()
	b := t.e.cfg.Meta.NewBatch()
	b.Delete(j.key)
	dropped := j.mrf != nil && m.RetryCount >= maxRetries
	if !dropped {
		m.Due = now.Add(backoff(m.RetryCount, s.Duration(config.SubsysReplication, config.ReplicationRetryBaseDelay),
			s.Duration(config.SubsysReplication, config.ReplicationRetryMaxDelay))).UnixNano()
		b.Set(mrfKey(t.site.ID, m.Due, m.Seq), encode(m))
	}
	if err := b.Commit(false); err != nil {
		t.e.log.Error("queue retry", "err", err)
	}
	t.tally(j.e, which, -1)
	if !dropped {
		t.tally(j.e, 1, 1)
	}
	t.mu.Lock()
	delete(t.inflight, string(j.key))
	t.mu.Unlock()
	t.e.m.failedObjects.WithLabelValues(t.site.Name).Inc()
	if j.e.Op == OpVersion {
		if err := t.e.cfg.Objects.SetTargetStatus(j.e.Bucket, j.e.Key, j.e.VersionID, t.site.ID, objects.StatusFailed); err != nil &&
			!errors.Is(err, objects.ErrVersionNotFound) {
			t.e.log.Warn("record replication status", "err", err)
		}
	}
	if dropped {
		t.needCompare.Store(true)
		t.e.m.dropped.WithLabelValues(t.site.Name).Inc()
		t.e.log.Error("replication dropped after max retries", "target", t.site.Name, "bucket", j.e.Bucket,
			"key", j.e.Key, "versionID", j.e.VersionID, "op", j.e.Op, "retries", m.RetryCount, "err", cause)
		t.e.traceEvent("replication.Drop", t.site.Name, j.e.Bucket, j.e.Key, "dropped after max retries", start, cause)
		return
	}
	fn := "replication.Retry"
	if j.mrf == nil {
		fn = "replication.Fail"
	}
	t.e.traceEvent(fn, t.site.Name, j.e.Bucket, j.e.Key, j.e.Op+" "+j.e.VersionID+": queued for retry", start, cause)
}

// backoff is the wait before retry attempt n+1 after n failed retries: the
// first retry is immediate, then base, 2×base, 4×base … capped at maxDelay.
func backoff(n int, base, maxDelay time.Duration) time.Duration {
	if n <= 0 {
		return 0
	}
	d := base
	for i := 1; i < n && d < maxDelay; i++ {
		d *= 2
	}
	return min(d, maxDelay)
}

// oldestPending is the age of the oldest work waiting for this target.
func (t *target) oldestPending() time.Duration {
	oldest := int64(0)
	jp := journalPrefix(t.site.ID)
	_ = meta.Scan(t.e.cfg.Meta, jp, meta.PrefixEnd(jp), func(k, v []byte) (bool, error) {
		var en Entry
		if err := decode(v, &en); err == nil {
			oldest = en.Queued
		}
		return false, nil
	})
	mp := mrfPrefix(t.site.ID)
	_ = meta.Scan(t.e.cfg.Meta, mp, meta.PrefixEnd(mp), func(k, v []byte) (bool, error) {
		var m MRFEntry
		if err := decode(v, &m); err == nil && (oldest == 0 || m.Queued < oldest) {
			oldest = m.Queued
		}
		return true, nil
	})
	if oldest == 0 {
		return 0
	}
	return time.Since(time.Unix(0, oldest))
}
