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

// TestRetryCursor: where the next pass over the retry queue starts.
func TestRetryCursor(t *testing.T) {
	k := func(due int64) []byte { return mrfKey("p", due, 1) }
	hi := mrfKey("p", 100, 0)
	for _, tc := range []struct {
		name            string
		from, last, pin []byte
		bound           []byte
		full, failed    bool
		want            []byte
	}{
		{name: "read to the end", from: nil, bound: hi, want: hi},
		{name: "stopped full", from: k(1), last: k(50), bound: hi, full: true, want: append(k(50), 0)},
		{name: "a skipped entry holds it", from: k(1), pin: k(20), last: k(50), bound: hi, full: true, want: k(20)},
		{name: "an uncommitted failure holds it", from: k(1), bound: mrfKey("p", 30, 0), want: mrfKey("p", 30, 0)},
		{name: "never back from where it started", from: k(40), pin: k(20), bound: hi, want: k(40)},
		{name: "a failed read stays", from: k(10), bound: hi, failed: true, want: k(10)},
		{name: "a failed first read stays at the start", from: nil, bound: hi, failed: true, want: nil},
	} {
		got := retryCursor(tc.from, hi, tc.last, tc.pin, tc.bound, tc.full, tc.failed)
		if !bytes.Equal(got, tc.want) {
			t.Errorf("%s: cursor %x, want %x", tc.name, got, tc.want)
		}
	}
}

// TestRetryQueueReadFromCursor: once the entries a refused peer left in
// the retry queue have been sent, the next passes start past them (not at
// the queue's first key, stepping over their tombstones), and an entry
// queued after that is still sent.
func TestRetryQueueReadFromCursor(t *testing.T) {
	a, b, ab, tg, put := writerPair(t, map[string]string{"retry_base_delay": "10ms", "retry_max_delay": "50ms",
		"max_retries": "1000", "mismatch_interval": "1h"})
	ctx := context.Background()
	ab.set(faults{refuse: 1})
	for i := range 50 {
		put(fmt.Sprintf("k%02d", i))
	}
	// Every entry fails and lands in the retry queue; remember its last key.
	mp := mrfPrefix("site-b")
	var lastKey []byte
	eventually(t, 10*time.Second, func() error {
		n := 0
		lastKey = nil
		_ = meta.Scan(a.meta, mp, meta.PrefixEnd(mp), func(k, _ []byte) (bool, error) {
			n++
			lastKey = bytes.Clone(k)
			return true, nil
		})
		if n < 50 {
			return fmt.Errorf("%d entries in the retry queue", n)
		}
		return nil
	})
	ab.set(faults{})
	waitDrained(t, a, 10*time.Second)
	eventually(t, 5*time.Second, func() error {
		tg.wakeUp()
		tg.mu.Lock()
		defer tg.mu.Unlock()
		if bytes.Compare(tg.retryFrom, lastKey) <= 0 {
			return fmt.Errorf("retry cursor %x, not past the last entry sent %x", tg.retryFrom, lastKey)
		}
		return nil
	})
	// A later failure is still retried from where the cursor is.
	ab.set(faults{refuse: 1})
	put("late")
	eventually(t, 10*time.Second, func() error {
		if _, r := tg.snapshot(); r.n == 0 {
			return fmt.Errorf("the late entry is not in the retry queue yet")
		}
		return nil
	})
	ab.set(faults{})
	waitDrained(t, a, 10*time.Second)
	for _, key := range []string{"k00", "k49", "late"} {
		if _, err := b.objects.HeadObject(ctx, "bk1", key, ""); err != nil {
			t.Errorf("%s at site-b: %v", key, err)
		}
	}
}

// TestOldestJournaledReadsPastSentEntries: the age of the oldest change in
// the journal is read from where the last read found the first entry (not
// from the journal's first key, over the tombstones of the entries sent
// since), and still sees an entry whose batch commits after later ones.
func TestOldestJournaledReadsPastSentEntries(t *testing.T) {
	a, _, ab, tg, put := writerPair(t, map[string]string{"mismatch_interval": "1h"})
	for i := range 30 {
		put(fmt.Sprintf("k%02d", i))
	}
	waitDrained(t, a, 10*time.Second)
	if q := tg.oldestJournaled(); q != 0 {
		t.Fatalf("empty journal: oldest queued at %d, want 0", q)
	}
	tg.mu.Lock()
	from := tg.oldestFrom
	tg.mu.Unlock()
	if from <= tg.seq.Load() {
		t.Fatalf("read start %d, want past the last sequence %d", from, tg.seq.Load())
	}
	// With the link down, changes stay in the journal.
	cutLink(t, ab, tg)
	// A change whose batch is still being written, then a later one.
	open := a.meta.NewBatch()
	held := &objects.Version{VersionID: "00000000000000000000000000000001", Size: 4, ModTime: time.Now().UnixNano()}
	a.engine.Version(open, "bk1", "held", held)
	time.Sleep(2 * time.Millisecond)
	put("later")
	later := tg.oldestJournaled()
	if later == 0 {
		t.Fatal("the later change is not seen")
	}
	if err := open.Commit(true); err != nil {
		t.Fatal(err)
	}
	if q := tg.oldestJournaled(); q == 0 || q >= later {
		t.Fatalf("after the open batch committed: oldest queued at %d, want before the later change's %d", q, later)
	}
	ab.set(faults{})
}

// writerPair is a pair of sites replicating bucket bk1, a's target for b,
// and put, which writes a small object under a key at a.
func writerPair(t *testing.T, settings map[string]string) (a, b *fakeSite, ab *fakePeer, tg *target, put func(key string)) {
	t.Helper()
	a, b, ab, _ = fakePair(t, randomSeed(t), settings)
	ctx := context.Background()
	if err := a.objects.CreateBucket(ctx, "bk1"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error { _, err := b.objects.Bucket(ctx, "bk1"); return err })
	put = func(key string) {
		t.Helper()
		if _, err := a.objects.PutObject(ctx, "bk1", key, bytes.NewReader([]byte("data")), objects.PutOptions{Size: 4}); err != nil {
			t.Fatal(err)
		}
	}
	return a, b, ab, a.engine.target("site-b"), put
}
