package replication

import (
	"cmp"
	"math"
	"slices"

	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
)

// Fresh entries: the journal entries committed since the journal was last
// read from the store, kept in memory so the pump's next pass takes them
// from there instead of reading the journal again. A read of the journal
// costs an iterator over the store and a step over each entry still in
// flight; it was the largest part of a replicating site's extra work per
// write (about 15µs of 75).
//
// The invariant: every committed journal entry not yet taken by a pass is
// in the record or at or past the journal's cursor. An entry joins the
// record when its batch's commit returns, after its sequence number left
// the open set: so a pass that reads settled and then takes the record
// either finds an entry below settled in what it took or finds it joins
// the record later; and a read of the journal that finds an entry still
// open knows it joins the record after the read began. When the record
// cannot take an entry (it is off, or full at maxFresh), the entry, and
// every entry the record drops with it, moves the cursor down to it, and
// the next pass reads the journal from there; a read of the journal turns
// the record on again as it starts. A failed commit (whose batch may have
// been applied after all, as an etcd transaction whose answer was lost)
// rewinds the journal to its first key. A read that leaves entries behind
// (held back for their bucket's order, or past the entries one pass takes)
// is followed by another read. Entries the record shares with a read of
// the journal are dispatched once: claim and present keep an entry from
// being sent twice.

// maxFresh bounds the entries kept; past it the journal is read instead.
var maxFresh = 8 * scanBatch

// A fresh entry of a new version or metadata change can carry a copy of
// the version as it was committed, so that its send does not read the
// record back from the store (a point lookup and a decode, about a tenth
// of a replicating site's extra work per PUT). Only versions whose data
// is in their record (or that have none) are carried, at most
// maxCarriedBytes of data each and maxFreshCarried in all the record
// holds: others are read at their send as before.
var (
	maxCarriedBytes = int64(16 << 10)
	maxFreshCarried = int64(16 << 20)
)

// freshEntry is a committed journal entry and its sequence number. check
// says a read of the journal may have seen it too (it joined the record
// before or during one): a pass checks that it is still stored before
// sending it, as it checks what a read finds. Entries joining while no
// read runs are in no read's snapshot, and sent without the check.
type freshEntry struct {
	seq   uint64
	en    Entry
	check bool
	// v, when set, is the version as committed (carried).
	v *objects.Version
}

// journal adds en to b for this target.
func (t *target) journal(b meta.Batch, en Entry) { t.journalVersion(b, en, nil) }

// journalVersion adds en to b for this target; v, when set, is the
// version en sends, final by the time b commits (the writer holds its
// key until then), which the entry may carry.
func (t *target) journalVersion(b meta.Batch, en Entry, v *objects.Version) {
	seq := t.nextSeq(b, func(seq uint64, err error) { t.committedEntry(seq, en, v, err) })
	b.Set(journalKey(t.site.ID, seq), encode(en))
	t.tally(en, 0, 1)
}

// committedEntry records that the batch of journal entry seq, holding en
// (of version v, when set), returned from its commit with err.
func (t *target) committedEntry(seq uint64, en Entry, v *objects.Version, err error) {
	var carried *objects.Version
	size := carriedSize(v)
	if err == nil && size >= 0 {
		carried = v.Copy()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case err != nil:
		t.dropFreshLocked(seq)
		t.rewindLocked()
	case !t.freshOK || len(t.fresh) >= maxFresh:
		t.dropFreshLocked(seq)
	default:
		if carried != nil && t.freshCarried+size > maxFreshCarried {
			carried = nil
		}
		if carried != nil {
			t.freshCarried += size
		}
		t.fresh = append(t.fresh, freshEntry{seq: seq, en: en, check: t.reading, v: carried})
	}
}

// carriedSize is the data a copy of v would hold, or -1 when v is not
// carried: none, or its data is in blobs or over maxCarriedBytes.
func carriedSize(v *objects.Version) int64 {
	if v == nil {
		return -1
	}
	var n int64
	for _, sg := range v.Segments {
		if sg.BlobID != "" {
			return -1
		}
		n += int64(len(sg.Inline))
	}
	if n > maxCarriedBytes {
		return -1
	}
	return n
}

// setFreshLocked makes fs the record, counting the data its entries
// carry. t.mu is held.
func (t *target) setFreshLocked(fs []freshEntry) {
	t.fresh, t.freshCarried = fs, 0
	for _, fe := range fs {
		if fe.v != nil {
			t.freshCarried += carriedSize(fe.v)
		}
	}
}

// dropFreshLocked turns the record off, moving the cursor down to the
// first of its entries and of also, which the next read of the journal
// then reads. t.mu is held.
func (t *target) dropFreshLocked(also ...uint64) {
	low := uint64(math.MaxUint64)
	for _, fe := range t.fresh {
		low = min(low, fe.seq)
	}
	for _, s := range also {
		low = min(low, s)
	}
	t.fresh, t.freshCarried, t.freshOK = nil, 0, false
	t.lowDropped = min(t.lowDropped, low)
	t.cursor = min(t.cursor, low)
}

// startFreshLocked turns the record on as a read of the journal starts
// from the cursor: what was dropped is at or past it. The entries in the
// record, and those joining until the read ends, may be in the read's
// snapshot too. t.mu is held.
func (t *target) startFreshLocked() {
	t.freshOK, t.lowDropped, t.reading = true, math.MaxUint64, true
	for i := range t.fresh {
		t.fresh[i].check = true
	}
}

// setCursorLocked moves the journal's cursor to c at the end of a pass,
// never past an entry dropped from the record since the pass began.
func (t *target) setCursorLocked(c uint64) { t.cursor = min(c, t.lowDropped) }

// fresh dispatches the fresh entries taken, the journal's cursor at from:
// those held back go back to the record, in front of the entries that
// joined it since, and the cursor stays below them.
func (p *journalPass) fresh(taken []freshEntry, from, settled uint64) {
	t := p.t
	slices.SortFunc(taken, func(a, b freshEntry) int { return cmp.Compare(a.seq, b.seq) })
	var keep []freshEntry
	for i, fe := range taken {
		if p.full() {
			keep = append(keep, taken[i:]...)
			break
		}
		k := journalKey(t.site.ID, fe.seq)
		if t.inFlight(k) {
			continue // taken by a read of the journal: its worker has it
		}
		if p.add(k, fe.en, fe.check, fe.v) {
			keep = append(keep, fe)
		}
	}
	cursor := max(from, settled)
	if len(keep) > 0 {
		cursor = min(cursor, keep[0].seq)
	}
	t.mu.Lock()
	t.setCursorLocked(cursor)
	if t.freshOK {
		t.setFreshLocked(append(keep, t.fresh...))
	}
	t.mu.Unlock()
}
