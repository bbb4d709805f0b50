package replication

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twinlake/twinlake/internal/meta"
)

// counts is a backlog tally.
type counts struct{ n, bytes int64 }

// backlog is one peer's journal sequence and the tallies of its journal
// (pending) and retry queue entries, overall and per bucket. The engine
// keeps one per peer for as long as the peer is configured, across
// restarts of the peer's target, so a sequence number is never handed out
// twice (two journal entries under one key would lose one of them) and the
// tallies never count an entry twice or lose its count.
//
// Every entry is counted once when it is added (journal or retry queue)
// and uncounted once when it is removed; the target claims each entry
// before it acts on it, so an entry is removed once. A tally that would go
// negative is a bug: it is held at zero and logged.
type backlog struct {
	seq atomic.Uint64
	log *slog.Logger

	// open holds the sequence numbers handed out whose batch has not
	// committed yet, with when they were handed out: the journal reader
	// must not move its cursor past one of them (settled, dispatchJournal).
	omu  sync.Mutex
	open map[uint64]time.Time

	cmu       sync.Mutex
	pending   counts // journal
	retrying  counts // retry queue
	perBucket map[string]*[2]counts
	// retryQueued counts the retry queue's entries by the second their
	// change was queued (Entry.Queued), so the oldest is found without
	// reading the queue (ordered by due time, not by age).
	retryQueued map[int64]int64
}

// loadBacklog rebuilds a peer's tallies and sequence from its journal and
// retry queue.
func loadBacklog(store meta.Store, siteID string, log *slog.Logger) (*backlog, error) {
	bl := newBacklog(log)
	var maxSeq uint64
	jp := journalPrefix(siteID)
	err := meta.Scan(store, jp, meta.PrefixEnd(jp), func(k, v []byte) (bool, error) {
		var en Entry
		if err := decode(v, &en); err != nil {
			return false, err
		}
		maxSeq = max(maxSeq, seqOf(k))
		bl.tally(en, 0, 1)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	mp := mrfPrefix(siteID)
	err = meta.Scan(store, mp, meta.PrefixEnd(mp), func(k, v []byte) (bool, error) {
		var m MRFEntry
		if err := decode(v, &m); err != nil {
			return false, err
		}
		maxSeq = max(maxSeq, m.Seq)
		bl.tally(m.Entry, 1, 1)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	bl.seq.Store(max(maxSeq, seqFloor(time.Now())))
	return bl, nil
}

// seqFloor is the least sequence a peer's journal restarts from: the
// clock, in microseconds. The journal's live entries tell only part of
// the sequence its last run reached: entries sent since were deleted,
// and their tombstones stay in the store until compaction drops them.
// Numbering again from the last live entry would put every new entry
// below them, and each read of the journal's tail (dispatchJournal) would
// step over all of them: on a site restarted after a few hundred
// thousand replicated writes, that read took most of a core. No run
// hands out a million entries a second, so the clock at a start is past
// every sequence an earlier run used (unless the clock was set back,
// when the reads are slower until compaction, but as correct: a
// sequence is only an order within this site).
func seqFloor(now time.Time) uint64 { return uint64(max(now.UnixMicro(), 0)) }

func newBacklog(log *slog.Logger) *backlog {
	return &backlog{log: log, perBucket: map[string]*[2]counts{}, open: map[uint64]time.Time{}, retryQueued: map[int64]int64{}}
}

// nextSeq hands out the next journal sequence number for an entry written
// in batch; it is open until the batch's commit returns. committed, if not
// nil, is called with the number and the commit's error when it returns,
// after the number left the open set (so a reader that finds it still
// open knows committed has yet to run).
func (b *backlog) nextSeq(batch meta.Batch, committed func(seq uint64, err error)) uint64 {
	b.omu.Lock()
	s := b.seq.Add(1)
	b.open[s] = time.Now()
	b.omu.Unlock()
	batch.AfterCommit(func(err error) {
		b.omu.Lock()
		delete(b.open, s)
		b.omu.Unlock()
		if committed != nil {
			committed(s, err)
		}
	})
	return s
}

// settled returns the sequence number below which every journal entry is
// either committed (visible to any read started after this call) or never
// will be: the lowest one still open, or the next to be handed out. One
// open longer than grace (its batch was dropped, or its commit is stuck)
// is given up on; the journal's periodic full re-read finds it should it
// commit after all.
func (b *backlog) settled(now time.Time, grace time.Duration) uint64 {
	b.omu.Lock()
	defer b.omu.Unlock()
	low := b.seq.Load() + 1
	for s, at := range b.open {
		if now.Sub(at) > grace {
			delete(b.open, s)
			continue
		}
		low = min(low, s)
	}
	return low
}

// isOpen reports whether the batch of journal entry s has not committed
// yet. Pebble makes a batch's writes visible to readers once applied,
// before its WAL is synced (or even written): a reader may see an entry
// that a crash would lose, so the sender leaves it until its commit
// returns, lest the peer keep a version this site never made durable.
func (b *backlog) isOpen(s uint64) bool {
	b.omu.Lock()
	defer b.omu.Unlock()
	_, ok := b.open[s]
	return ok
}

// tally adds d entries to the journal (which 0) or retry queue (which 1)
// counts.
func (b *backlog) tally(en Entry, which int, d int64) {
	b.cmu.Lock()
	defer b.cmu.Unlock()
	c := &b.pending
	if which == 1 {
		c = &b.retrying
	}
	pb := b.perBucket[en.Bucket]
	if pb == nil {
		pb = &[2]counts{}
		b.perBucket[en.Bucket] = pb
	}
	bad := add(c, en.Size, d)
	bad = add(&pb[which], en.Size, d) || bad
	if pb[0].n == 0 && pb[1].n == 0 {
		delete(b.perBucket, en.Bucket)
	}
	if which == 1 {
		sec := en.Queued / int64(time.Second)
		if b.retryQueued[sec] += d; b.retryQueued[sec] <= 0 {
			delete(b.retryQueued, sec)
		}
	}
	if bad && b.log != nil {
		b.log.Error("replication backlog tally went negative: held at zero", "bucket", en.Bucket, "key", en.Key, "op", en.Op)
	}
}

// add adds d entries of size bytes to c, holding it at zero; it reports
// whether it had to.
func add(c *counts, size, d int64) bool {
	c.n += d
	c.bytes += d * size
	if c.n < 0 || c.bytes < 0 {
		c.n, c.bytes = max(c.n, 0), max(c.bytes, 0)
		return true
	}
	return false
}

// oldestRetried is the start of the second the oldest change in the retry
// queue was queued in, Unix ns; 0 when the queue is empty.
func (b *backlog) oldestRetried() int64 {
	b.cmu.Lock()
	defer b.cmu.Unlock()
	oldest := int64(0)
	for sec := range b.retryQueued {
		if oldest == 0 || sec < oldest {
			oldest = sec
		}
	}
	return oldest * int64(time.Second)
}

func (b *backlog) snapshot() (pending, retrying counts) {
	b.cmu.Lock()
	defer b.cmu.Unlock()
	return b.pending, b.retrying
}

func (b *backlog) bucketSnapshot(bucket string) (pending, retrying counts) {
	b.cmu.Lock()
	defer b.cmu.Unlock()
	if pb := b.perBucket[bucket]; pb != nil {
		return pb[0], pb[1]
	}
	return counts{}, counts{}
}
