package replication

import (
	"bytes"
	"context"
	"hash/maphash"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
)

const (
	scanBatch      = 1024                   // journal entries read per pump pass
	queueDepth     = 64                     // entries buffered per worker
	gapGrace       = 2 * time.Second        // how long an uncommitted entry may hold the cursor back
	fullRescanTick = 30 * time.Second       // safety net: re-read the journal from its start
	idleWait       = 250 * time.Millisecond // pump wake-up when nothing signals
	sendTimeout    = 5 * time.Minute        // one send, data included
)

// job is one send: a journal entry, or a retry queue entry when mrf is set.
type job struct {
	e   Entry
	key []byte // its meta key (journal or retry queue)
	mrf *MRFEntry
	// v, when set, is the version as its write committed it, carried
	// from the fresh record (fresh.go): the send reads no record.
	v *objects.Version
}

// target sends this site's changes to one peer.
type target struct {
	e    *Engine
	site Site
	peer Peer

	*backlog // the peer's sequence and counts: they outlive a restart of the target
	wake     chan struct{}
	link     atomic.Int32 // a linkState
	latency  atomic.Int64 // last probe round trip, ns
	lastOK   atomic.Int64 // when the peer last answered a probe, Unix ns; 0 never
	// lastFail is the last send to the peer that failed, nil if none
	// since this site started.
	lastFail atomic.Pointer[sendFailure]
	// needCompare is set when work for the peer was dropped, cameBack
	// when the link comes up: with both, once the backlog is empty,
	// mismatch detection runs at once instead of waiting for its interval.
	// A peer that keeps refusing is compared again only at the interval.
	needCompare, cameBack atomic.Bool
	// iam holds IAM records back from a peer that takes none (iamgate.go).
	iam iamGate

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	queues []chan job
	seed   maphash.Seed
	comb   combiner // small versions' batches, of every worker

	mu       sync.Mutex
	inflight map[string]bool
	order    bucketOrder // a bucket's record and objects in journal order
	cursor   uint64
	rewind   bool
	lastFull time.Time
	// fresh holds the journal entries committed since the journal was
	// last read, while freshOK; lowDropped is the first entry it dropped
	// since (fresh.go); freshCarried counts the data of the versions its
	// entries carry. journalScans counts the reads of the journal,
	// carriedSends the versions sent as carried, without a read.
	fresh        []freshEntry
	freshCarried int64
	freshOK      bool
	reading      bool // a read of the journal runs
	lowDropped   uint64
	journalScans atomic.Int64
	carriedSends atomic.Int64

	// The retry queue is read from retryFrom (nil: its first key), past
	// the entries earlier passes took, sent and removed, whose tombstones
	// a read from the first key would step over until a compaction drops
	// them; retryRewind and a full re-read every fullRescanTick (from
	// retryFull) start it at the first key again, as for the journal.
	// retryOpen holds the times of failures whose retry queue entry is
	// not committed yet: each entry is due no sooner than its failure, and
	// the cursor never passes the earliest of them.
	retryFrom   []byte
	retryRewind bool
	retryFull   time.Time
	retryOpen   map[int64]int
	// oldestJournaled reads from oldestFrom, and from the journal's first
	// key once oldestFull is fullRescanTick old.
	oldestFrom uint64
	oldestFull time.Time
}

func newTarget(e *Engine, s Site, p Peer, bl *backlog) *target {
	// Every per-peer counter exists from the start at 0, so a rate or an
	// alert on it works before its first event.
	for _, c := range []interface {
		WithLabelValues(...string) prometheus.Counter
	}{
		e.m.sentObjects, e.m.sentBytes, e.m.failedObjects, e.m.dropped, e.m.mismatches, e.m.batchRequests, e.m.batchVersions} {
		c.WithLabelValues(s.Name)
	}
	return &target{e: e, site: s, peer: p, backlog: bl, wake: make(chan struct{}, 1), inflight: map[string]bool{},
		order: newBucketOrder(), seed: maphash.MakeSeed(), lowDropped: math.MaxUint64}
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
		if t.online() {
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
	if !t.online() || !t.needCompare.Load() || !t.cameBack.Load() {
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
// commit out of sequence order when writers race: the cursor never passes
// an entry whose batch has not committed yet (backlog.settled), and moves
// past every entry already read, so a pass reads only what is new, not the
// entries sent (and deleted) since. A full re-read every so often is the
// safety net.
//
// Most passes read nothing from the store: the entries committed since the
// last read are taken from memory (fresh.go), and the journal is read only
// when that record is not whole (at the start, after a failed commit or a
// send given back, once it overflowed) and at the full re-reads.
func (t *target) dispatchJournal() int {
	now := time.Now()
	every := currentRetryPolicy(t.e.cfg.Settings).maxDelay
	// Read before the journal or the fresh entries are: every entry below
	// settled that will ever exist is visible to a read started after it,
	// and in the fresh entries taken after it (fresh.go).
	settled := t.settled(now, gapGrace)
	t.mu.Lock()
	scan := !t.freshOK
	if t.rewind || now.Sub(t.lastFull) > fullRescanTick || t.iam.probeDue(now, every) {
		t.cursor, t.rewind, t.lastFull = 0, false, now
		scan = true
	}
	var taken []freshEntry
	if scan {
		t.startFreshLocked()
	} else {
		taken = t.fresh
		t.setFreshLocked(nil)
	}
	from := t.cursor
	t.mu.Unlock()

	p := journalPass{t: t, now: now, every: every, stalled: map[string]bool{}}
	if scan {
		t.journalScans.Add(1)
		p.scan(from, settled)
	} else {
		p.fresh(taken, from, settled)
	}
	jobs := append(t.present(p.jobs), p.unseen...)
	for i, j := range jobs {
		if !t.dispatch(j) {
			t.release(jobs[i:]...)
			return i
		}
	}
	return len(jobs)
}

// journalPass gathers one pass's jobs from journal entries in sequence
// order.
type journalPass struct {
	t     *target
	now   time.Time
	every time.Duration
	// jobs are checked against the store before they go (present); the
	// fresh entries no read of the journal can have seen go unchecked,
	// after them (their keys' earlier entries, if any, are among jobs).
	jobs, unseen []job
	// Entries held back for their bucket's order (bucketOrder) are read
	// again from the first of them; once one of a bucket's is held, so is
	// the rest of that bucket's in this pass, keeping their order.
	held      int
	firstHeld uint64
	stalled   map[string]bool
}

// full reports whether the pass has all it takes.
func (p *journalPass) full() bool { return len(p.jobs)+len(p.unseen)+p.held >= scanBatch }

// add claims the committed journal entry en under k for a job, unless it
// is in flight already or held back; it reports whether en was held back
// (to be read again). An IAM record for a peer that takes none is left
// where it is, for the gate's probe to read again.
func (p *journalPass) add(k []byte, en Entry, check bool, v *objects.Version) (held bool) {
	t := p.t
	if en.Op == OpIAM && !t.iam.admit(p.now, p.every) {
		return false
	}
	c := claimHeld
	if !p.stalled[en.Bucket] {
		c = t.claim(k, en, false)
	}
	switch c {
	case claimBusy:
		return false
	case claimHeld:
		p.stalled[en.Bucket] = true
		if p.held == 0 {
			p.firstHeld = seqOf(k)
		}
		p.held++
		return true
	}
	j := job{e: en, key: append([]byte(nil), k...), v: v}
	if check {
		p.jobs = append(p.jobs, j)
	} else {
		p.unseen = append(p.unseen, j)
	}
	return false
}

// scan reads the journal from the cursor from, and moves the cursor.
func (p *journalPass) scan(from, settled uint64) {
	t := p.t
	next, full := from, false
	hi := meta.PrefixEnd(journalPrefix(t.site.ID))
	err := meta.Scan(t.e.cfg.Meta, journalKey(t.site.ID, from), hi, func(k, v []byte) (bool, error) {
		next = seqOf(k) + 1
		if t.inFlight(k) {
			return true, nil // sent already and not yet answered: nothing to decode
		}
		if t.isOpen(seqOf(k)) {
			// Visible but not yet durable: its commit's return puts it
			// in the fresh entries (or keeps the cursor below it) and
			// wakes the next pass.
			return true, nil
		}
		var en Entry
		if err := decode(v, &en); err != nil {
			return false, err
		}
		p.add(k, en, true, nil)
		full = p.full()
		return !full, nil
	})
	if err != nil {
		t.e.log.Error("read journal", "target", t.site.Name, "err", err)
	}
	// A pass that read to the end saw every entry below settled; one cut
	// short saw those below next.
	cursor := settled
	if full || err != nil {
		cursor = min(next, settled)
	}
	if p.held > 0 {
		cursor = min(cursor, p.firstHeld)
	}
	t.mu.Lock()
	t.reading = false
	t.setCursorLocked(max(from, cursor))
	if full || err != nil || p.held > 0 {
		// What this read left behind (entries past where it stopped,
		// entries held back) is in the journal only: the next pass
		// reads it again.
		t.dropFreshLocked()
	}
	t.mu.Unlock()
}

// dispatchRetries sends the retry queue entries that are due, read from
// the retry cursor: an entry skipped because it must wait (its bucket's
// order, or a peer that takes no IAM records) holds the cursor at it; one
// in flight does not, since it leaves its place once answered (removed,
// or queued again at a later due time) or is released (which rewinds).
func (t *target) dispatchRetries() int {
	every := currentRetryPolicy(t.e.cfg.Settings).maxDelay
	_, queued := t.snapshot()
	t.mu.Lock()
	// The time is read under the lock openRetry takes: a failure not
	// registered by now has a later time, and its entry a later due.
	now := time.Now()
	if t.retryRewind || now.Sub(t.retryFull) > fullRescanTick {
		t.retryFrom, t.retryRewind, t.retryFull = nil, false, now
	} else if queued.n == 0 && len(t.retryOpen) == 0 {
		// Nothing queued nor being queued: no read, which would cost an
		// iterator at every pass. A tally wrong by a bug delays a retry
		// until the full re-read at most.
		t.mu.Unlock()
		return 0
	}
	from := t.retryFrom
	bound := now.UnixNano()
	for at := range t.retryOpen {
		bound = min(bound, at)
	}
	t.mu.Unlock()
	lo := mrfPrefix(t.site.ID)
	if from != nil {
		lo = from
	}
	hi := mrfKey(t.site.ID, now.UnixNano()+1, 0)
	var (
		jobs      []job
		pin, last []byte
		full      bool
	)
	err := meta.Scan(t.e.cfg.Meta, lo, hi, func(k, v []byte) (bool, error) {
		m := &MRFEntry{}
		if err := decode(v, m); err != nil {
			return false, err
		}
		c := claimHeld
		if m.Op != OpIAM || t.iam.admit(now, every) {
			c = t.claim(k, m.Entry, true)
		}
		switch c {
		case claimBusy:
		case claimHeld:
			if pin == nil {
				pin = bytes.Clone(k)
			}
		default:
			jobs = append(jobs, job{e: m.Entry, key: bytes.Clone(k), mrf: m})
		}
		if full = len(jobs) >= scanBatch; full {
			last = bytes.Clone(k)
		}
		return !full, nil
	})
	if err != nil {
		t.e.log.Error("read retry queue", "target", t.site.Name, "err", err)
	}
	t.advanceRetries(retryCursor(from, hi, last, pin, mrfKey(t.site.ID, bound, 0), full, err != nil))
	jobs = t.present(jobs)
	for i, j := range jobs {
		if !t.dispatch(j) {
			t.release(jobs[i:]...)
			return i
		}
	}
	return len(jobs)
}

// retryCursor is where the next pass over the retry queue starts after one
// that read from from up to hi: past the last entry it read when it
// stopped full (else past hi), but not past the first entry it had to
// skip (pin), nor past bound (the key of the earliest failure whose entry
// may not be visible yet), nor back from where it started; where it
// started after an error.
func retryCursor(from, hi, last, pin, bound []byte, full, failed bool) []byte {
	if failed {
		return from
	}
	next := hi
	if full {
		next = append(last, 0) // the least key after last
	}
	for _, k := range [][]byte{pin, bound} {
		if k != nil && bytes.Compare(k, next) < 0 {
			next = k
		}
	}
	if bytes.Compare(next, from) < 0 {
		return from
	}
	return next
}

func (t *target) advanceRetries(cursor []byte) {
	t.mu.Lock()
	t.retryFrom = cursor
	t.mu.Unlock()
}

// openRetry registers a failure about to queue (or queue again) an entry
// for retry, and returns its time: the entry is due no sooner. closeRetry
// ends it once the entry is committed (or was not written).
func (t *target) openRetry() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	if t.retryOpen == nil {
		t.retryOpen = map[int64]int{}
	}
	t.retryOpen[now.UnixNano()]++
	return now
}

func (t *target) closeRetry(at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := at.UnixNano()
	if t.retryOpen[k]--; t.retryOpen[k] <= 0 {
		delete(t.retryOpen, k)
	}
}

// inFlight reports whether journal entry k is being sent.
func (t *target) inFlight(k []byte) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.inflight[string(k)]
}

// claimResult is what claim did.
type claimResult int

const (
	claimBusy claimResult = iota // in flight already
	claimHeld                    // waits for its bucket's other work (bucketOrder)
	claimOK                      // now in flight
)

// claim marks the journal or retry queue entry k, holding en, as in
// flight, unless it already is or must wait for its bucket's order; retry
// says it is from the retry queue. The caller then keeps only the claimed
// entries still in the store (present).
func (t *target) claim(k []byte, en Entry, retry bool) claimResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.inflight[string(k)] {
		return claimBusy
	}
	if !t.order.admit(en, retry) {
		return claimHeld
	}
	t.inflight[string(k)] = true
	return claimOK
}

// present returns the claimed jobs whose entries are still in the store,
// and unclaims the others. A scan reads a snapshot, so it can still see an
// entry that a worker has since completed (deleted, then released); the
// check against the store after claiming keeps such an entry from being
// sent, counted, retried or dropped a second time. The entries are read
// in one call (meta.ViewMany): on a multi-node site one round trip to
// etcd, where one per entry held the whole pass to a few hundred entries
// a second.
func (t *target) present(jobs []job) []job {
	if len(jobs) == 0 {
		return jobs
	}
	keys := make([][]byte, len(jobs))
	for i, j := range jobs {
		keys[i] = j.key
	}
	found := make([]bool, len(jobs))
	err := meta.ViewMany(t.e.cfg.Meta, keys, func(i int, _ []byte, ok bool) error {
		found[i] = ok
		return nil
	})
	if err != nil {
		// The claimed entries go back unsent, and the cursors already
		// passed them: both read from the start again.
		t.e.log.Error("read claimed entries", "target", t.site.Name, "err", err)
		t.rewindCursors()
	}
	kept := make([]job, 0, len(jobs))
	for i, j := range jobs {
		if err == nil && found[i] {
			kept = append(kept, j)
		} else {
			t.unclaim(j.key, j.e)
		}
	}
	return kept
}

// unclaim forgets that the entry k, holding en, is in flight. Work held
// back behind it is woken.
func (t *target) unclaim(k []byte, en Entry) {
	t.mu.Lock()
	delete(t.inflight, string(k))
	wake := t.order.finish(en)
	t.mu.Unlock()
	if wake {
		t.wakeUp()
	}
}

// rewindCursors makes the next pass read the journal and the retry queue
// from their first keys.
func (t *target) rewindCursors() {
	t.mu.Lock()
	t.rewindLocked()
	t.mu.Unlock()
}

// rewindLocked is rewindCursors for a caller holding t.mu.
func (t *target) rewindLocked() { t.rewind, t.retryRewind = true, true }

// release forgets that jobs are in flight, leaving them where they are to
// be read again.
func (t *target) release(jobs ...job) {
	t.mu.Lock()
	for _, j := range jobs {
		delete(t.inflight, string(j.key))
		t.order.finish(j.e)
	}
	t.rewindLocked()
	t.mu.Unlock()
}

// oldestPending is the age of the oldest work waiting for this target
// (for work in the retry queue, from the start of the second it was
// queued in).
func (t *target) oldestPending() time.Duration {
	oldest := t.oldestJournaled()
	if r := t.oldestRetried(); r != 0 && (oldest == 0 || r < oldest) {
		oldest = r
	}
	if oldest == 0 {
		return 0
	}
	return time.Since(time.Unix(0, oldest))
}

// oldestJournaled is when the oldest change still in the journal (not yet
// sent, or sending) was queued, Unix ns; 0 when the journal is empty. It
// reads one record, from where the last call found the first (the entries
// sent and removed before it are tombstones a read from the journal's
// first key would step over): entries are only added past every sequence
// handed out, and one handed out but not committed yet is below settled,
// which the start never passes. It starts at the first key again every
// fullRescanTick, as the pump does.
func (t *target) oldestJournaled() int64 {
	now := time.Now()
	settled := t.settled(now, gapGrace) // before the read: see dispatchJournal
	t.mu.Lock()
	if now.Sub(t.oldestFull) > fullRescanTick {
		t.oldestFrom, t.oldestFull = 0, now
	}
	from := t.oldestFrom
	t.mu.Unlock()
	oldest, first := int64(0), settled
	jp := journalPrefix(t.site.ID)
	_ = meta.Scan(t.e.cfg.Meta, journalKey(t.site.ID, from), meta.PrefixEnd(jp), func(k, v []byte) (bool, error) {
		first = min(first, seqOf(k))
		var en Entry
		if err := decode(v, &en); err == nil {
			oldest = en.Queued
		}
		return false, nil
	})
	t.mu.Lock()
	t.oldestFrom = max(t.oldestFrom, first)
	t.mu.Unlock()
	return oldest
}
