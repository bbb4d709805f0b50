package replication

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
)

// TestBacklogSettled: a sequence number stays open until its batch's
// commit returns, whatever the order batches commit in; settled is the
// lowest open one, or the next to hand out; one open past the grace is
// given up on.
func TestBacklogSettled(t *testing.T) {
	store := meta.NewMem()
	bl := newBacklog(nil)
	now := time.Now()
	if got := bl.settled(now, time.Minute); got != 1 {
		t.Fatalf("empty: settled %d, want 1", got)
	}
	b1, b2, b3 := store.NewBatch(), store.NewBatch(), store.NewBatch()
	s1, s2, s3 := bl.nextSeq(b1, nil), bl.nextSeq(b2, nil), bl.nextSeq(b3, nil)
	if s1 != 1 || s2 != 2 || s3 != 3 {
		t.Fatalf("sequences %d %d %d, want 1 2 3", s1, s2, s3)
	}
	for _, b := range []meta.Batch{b1, b2, b3} {
		b.Set(journalKey("p", 0), []byte("x"))
	}
	if err := b2.Commit(false); err != nil {
		t.Fatal(err)
	}
	if got := bl.settled(time.Now(), time.Minute); got != 1 {
		t.Errorf("1 and 3 open: settled %d, want 1", got)
	}
	if err := b1.Commit(true); err != nil {
		t.Fatal(err)
	}
	if got := bl.settled(time.Now(), time.Minute); got != 3 {
		t.Errorf("3 open: settled %d, want 3", got)
	}
	// b3 is never committed (its writer failed): past the grace it no
	// longer holds the cursor back.
	if got := bl.settled(time.Now().Add(2*time.Minute), time.Minute); got != 4 {
		t.Errorf("3 abandoned: settled %d, want 4", got)
	}
	// A failed commit settles its sequence too.
	store.Close()
	b4 := store.NewBatch()
	s4 := bl.nextSeq(b4, nil)
	b4.Set([]byte("k"), []byte("v"))
	if err := b4.Commit(true); err == nil {
		t.Fatal("commit on a closed store succeeded")
	}
	if got := bl.settled(time.Now(), time.Minute); got != s4+1 {
		t.Errorf("after a failed commit: settled %d, want %d", got, s4+1)
	}
}

// TestJournalCursorWaitsForOpenBatch: an entry whose batch commits after
// later entries were committed, sent and removed is still sent (the
// cursor waits for it, not for the periodic full re-read); once it is
// sent too, the cursor has moved past every entry, so the next passes
// read no entry already sent.
func TestJournalCursorWaitsForOpenBatch(t *testing.T) {
	a, b, tg, held := heldPair(t)
	ctx := context.Background()
	// A change whose batch is still being written: its journal entry has
	// a sequence number, but is not committed.
	open := a.meta.NewBatch()
	a.engine.Version(open, "bk1", "held", &objects.Version{VersionID: held.VersionID, Size: held.Size, ModTime: held.ModTime})
	heldSeq := tg.seq.Load()
	for i := range 20 {
		if _, err := a.objects.PutObject(ctx, "bk1", fmt.Sprintf("k%02d", i), bytes.NewReader([]byte("data")), objects.PutOptions{Size: 4}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, func() error {
		for i := range 20 {
			if _, err := b.objects.HeadObject(ctx, "bk1", fmt.Sprintf("k%02d", i), ""); err != nil {
				return err
			}
		}
		return nil
	})
	tg.mu.Lock()
	cursor := tg.cursor
	tg.mu.Unlock()
	if cursor > heldSeq {
		t.Fatalf("cursor %d passed the open entry %d", cursor, heldSeq)
	}
	if err := open.Commit(false); err != nil {
		t.Fatal(err)
	}
	tg.wakeUp()
	jp := journalPrefix("site-b")
	eventually(t, 10*time.Second, func() error {
		n := 0
		_ = meta.Scan(a.meta, jp, meta.PrefixEnd(jp), func(k, v []byte) (bool, error) { n++; return true, nil })
		if n > 0 {
			return fmt.Errorf("%d journal entries left", n)
		}
		tg.mu.Lock()
		defer tg.mu.Unlock()
		if last := tg.seq.Load(); tg.cursor <= last {
			return fmt.Errorf("cursor %d, want past %d", tg.cursor, last)
		}
		return nil
	})
}

// heldPair is a pair of sites replicating bucket bk1, with key "held"
// written on a, and a's target for b.
func heldPair(t *testing.T) (a, b *fakeSite, tg *target, held *objects.Version) {
	t.Helper()
	a, b, _, _ = fakePair(t, randomSeed(t), map[string]string{"mismatch_interval": "1h"})
	ctx := context.Background()
	if err := a.objects.CreateBucket(ctx, "bk1"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error { _, err := b.objects.Bucket(ctx, "bk1"); return err })
	held, err := a.objects.PutObject(ctx, "bk1", "held", bytes.NewReader([]byte("held")), objects.PutOptions{Size: 4})
	if err != nil {
		t.Fatal(err)
	}
	return a, b, a.engine.target("site-b"), held
}

// TestJournalHoldsVisibleEntriesOfOpenBatches: Pebble makes a batch
// visible once applied, before its WAL is synced, so the sender can read a
// journal entry whose commit has not returned and that a crash would
// lose. It sends no such entry (the peer would keep a version this site
// never made durable) until the commit returns.
func TestJournalHoldsVisibleEntriesOfOpenBatches(t *testing.T) {
	a, b, tg, held := heldPair(t)
	ctx := context.Background()
	eventually(t, 10*time.Second, func() error { _, err := b.objects.HeadObject(ctx, "bk1", "held", held.VersionID); return err })
	// A second version of "held" whose batch is open; its journal entry
	// made visible by hand, as Pebble shows an applied batch before its
	// commit returns.
	v2 := &objects.Version{VersionID: "00000000000000000000000000000002", Size: 4, ModTime: held.ModTime + 1}
	open := a.meta.NewBatch()
	a.engine.Version(open, "bk1", "held", v2)
	seq := tg.seq.Load()
	en := Entry{Op: OpVersion, Bucket: "bk1", Key: "held", VersionID: v2.VersionID, Size: 4, At: v2.ModTime, Queued: time.Now().UnixNano()}
	visible := a.meta.NewBatch()
	visible.Set(journalKey("site-b", seq), encode(en))
	if err := visible.Commit(true); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		tg.wakeUp()
		time.Sleep(50 * time.Millisecond)
	}
	if tg.inFlight(journalKey("site-b", seq)) {
		t.Fatal("the entry of an open batch was taken to be sent")
	}
	jp := journalPrefix("site-b")
	n := 0
	_ = meta.Scan(a.meta, jp, meta.PrefixEnd(jp), func(k, v []byte) (bool, error) { n++; return true, nil })
	if n != 1 {
		t.Fatalf("%d journal entries, want the open batch's one still there", n)
	}
	// Committed, it is sent (the version itself is missing here, so the
	// send ends as the engine ends such an entry: it leaves the journal).
	if err := open.Commit(true); err != nil {
		t.Fatal(err)
	}
	tg.wakeUp()
	eventually(t, 10*time.Second, func() error {
		n := 0
		_ = meta.Scan(a.meta, jp, meta.PrefixEnd(jp), func(k, v []byte) (bool, error) { n++; return true, nil })
		if n > 0 {
			return fmt.Errorf("%d journal entries left", n)
		}
		return nil
	})
}

// TestBacklogSequenceNeverRestartsBelowItsLastRun: a peer's journal
// numbers its entries on from the clock (in microseconds) at a start, not
// from its last live entry, so new entries never land below the deleted
// entries of an earlier run (whose tombstones each read of the tail would
// step over); a live entry numbered past the clock is followed on from.
func TestBacklogSequenceNeverRestartsBelowItsLastRun(t *testing.T) {
	store := meta.NewMem()
	en := Entry{Op: OpVersion, Bucket: "b", Key: "k", VersionID: "v"}
	put := func(seq uint64) {
		b := store.NewBatch()
		b.Set(journalKey("p", seq), encode(en))
		if err := b.Commit(true); err != nil {
			t.Fatal(err)
		}
	}
	// An earlier run sent (and deleted) entries up to a recent sequence;
	// one of its entries, 7, is still to send.
	before := seqFloor(time.Now())
	put(7)
	bl, err := loadBacklog(store, "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := bl.nextSeq(store.NewBatch(), nil); got <= before {
		t.Fatalf("first sequence after a start %d, want past the clock's %d", got, before)
	}
	ahead := seqFloor(time.Now()) + 1e12
	put(ahead)
	if bl, err = loadBacklog(store, "p", nil); err != nil {
		t.Fatal(err)
	}
	if got := bl.nextSeq(store.NewBatch(), nil); got != ahead+1 {
		t.Fatalf("after a live entry numbered %d: next %d, want %d", ahead, got, ahead+1)
	}
}
