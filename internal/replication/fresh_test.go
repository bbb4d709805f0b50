package replication

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/objects"
)

// putAndDelete writes n objects to a new bucket, removes them all and the
// bucket: a bucket record, n versions, n purges and the bucket's deletion,
// which waits for the purges before it (bucketOrder).
func putAndDelete(t *testing.T, s *fakeSite, bucket string, n int) {
	t.Helper()
	ctx := context.Background()
	if err := s.objects.CreateBucket(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	var vs []*objects.Version
	for i := range n {
		v, err := s.objects.PutObject(ctx, bucket, fmt.Sprintf("k%d", i), strings.NewReader("x"), objects.PutOptions{Size: 1})
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	for i, v := range vs {
		if _, err := s.objects.DeleteObject(ctx, bucket, fmt.Sprintf("k%d", i), v.VersionID); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.objects.DeleteBucket(ctx, bucket); err != nil {
		t.Fatal(err)
	}
}

// pairWithBucket is a fake pair whose site-a has created bucket and sent
// it, and site-a's sender to site-b.
func pairWithBucket(t *testing.T, bucket string) (a, b *fakeSite, tg *target) {
	t.Helper()
	a, b, _, _ = fakePair(t, randomSeed(t), map[string]string{"mismatch_interval": "1h"})
	if err := a.objects.CreateBucket(context.Background(), bucket); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, a, 10*time.Second)
	return a, b, a.engine.target("site-b")
}

// TestFreshEntriesSpareJournalReads: while every entry committed since the
// last read of the journal is in memory, the pump takes them from there:
// a few hundred writes sent one after another cost a few reads of the
// journal, not one per pass, and all of them arrive.
func TestFreshEntriesSpareJournalReads(t *testing.T) {
	a, b, tg := pairWithBucket(t, "bkt")
	ctx := context.Background()
	before := tg.journalScans.Load()
	const n = 300
	for i := range n {
		if _, err := a.objects.PutObject(ctx, "bkt", fmt.Sprintf("k%03d", i), strings.NewReader("x"), objects.PutOptions{Size: 1}); err != nil {
			t.Fatal(err)
		}
	}
	waitDrained(t, a, 20*time.Second)
	if got := len(siteVersions(t, b, "bkt")); got != n {
		t.Fatalf("%d versions on the peer, want %d", got, n)
	}
	// Reads come from the full re-read (every 30 s) and any rewind; one
	// per pass would be hundreds.
	if scans := tg.journalScans.Load() - before; scans > n/10 {
		t.Fatalf("the journal was read %d times for %d writes", scans, n)
	}
	if err := checkTallies(a); err != nil {
		t.Fatal(err)
	}
}

// TestHeldEntriesOfAJournalReadGoNext: a read of the journal that holds an
// entry back (a bucket's deletion behind the purges it claimed in the same
// read) is followed by another read, not by passes over the fresh entries
// only, which never held it: the deletion waited for the full re-read, 30
// s later, and a chaos run that kept claiming the purges at each re-read
// never converged.
func TestHeldEntriesOfAJournalReadGoNext(t *testing.T) {
	a, b, ab, _ := fakePair(t, randomSeed(t), map[string]string{"mismatch_interval": "1h"})
	tg := a.engine.target("site-b")
	cutLink(t, ab, tg)
	putAndDelete(t, a, "gone", 20)
	tg.rewindCursors() // the next pass reads the journal, all of it at once
	ab.set(faults{})
	waitDrained(t, a, 15*time.Second)
	if _, err := b.objects.Bucket(context.Background(), "gone"); !errors.Is(err, objects.ErrBucketNotFound) {
		t.Fatalf("the bucket on the peer: %v", err)
	}
	if err := checkTallies(a); err != nil {
		t.Fatal(err)
	}
}

// TestFreshRecordOverflowReadsTheJournal: past maxFresh entries the
// record is dropped and the journal read instead, from below every entry
// not yet taken: nothing is left behind.
func TestFreshRecordOverflowReadsTheJournal(t *testing.T) {
	old := maxFresh
	maxFresh = 16
	t.Cleanup(func() { maxFresh = old })
	a, b, ab, _ := fakePair(t, randomSeed(t), map[string]string{"mismatch_interval": "1h"})
	tg := a.engine.target("site-b")
	ctx := context.Background()
	if err := a.objects.CreateBucket(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, a, 10*time.Second)
	cutLink(t, ab, tg)
	before := tg.journalScans.Load()
	for i := range 100 {
		if _, err := a.objects.PutObject(ctx, "bkt", fmt.Sprintf("k%03d", i), strings.NewReader("x"), objects.PutOptions{Size: 1}); err != nil {
			t.Fatal(err)
		}
	}
	ab.set(faults{})
	waitDrained(t, a, 15*time.Second)
	if got := len(siteVersions(t, b, "bkt")); got != 100 {
		t.Fatalf("%d versions on the peer, want 100", got)
	}
	if tg.journalScans.Load() == before {
		t.Fatal("the record overflowed, yet the journal was never read")
	}
}

// TestFailedCommitReadsTheJournalFromItsStart: an entry whose batch's
// commit failed may be in the journal anyway (an etcd transaction whose
// answer was lost): the record is dropped and the next pass reads the
// journal from its first key.
func TestFailedCommitReadsTheJournalFromItsStart(t *testing.T) {
	a, _, _, _ := fakePair(t, randomSeed(t), map[string]string{"mismatch_interval": "1h"})
	tg := a.engine.target("site-b")
	tg.mu.Lock()
	tg.freshOK = true
	tg.mu.Unlock()
	tg.committedEntry(1, Entry{Op: OpVersion, Bucket: "b", Key: "k"}, nil, nil)
	tg.committedEntry(2, Entry{Op: OpVersion, Bucket: "b", Key: "k"}, nil, errors.New("answer lost"))
	tg.committedEntry(3, Entry{Op: OpVersion, Bucket: "b", Key: "k"}, nil, nil)
	tg.mu.Lock()
	defer tg.mu.Unlock()
	if tg.freshOK || len(tg.fresh) != 0 || !tg.rewind {
		t.Fatalf("after a failed commit: record kept %v (%d entries), rewind %v", tg.freshOK, len(tg.fresh), tg.rewind)
	}
}

// TestCarriedSize: what a fresh entry may carry of its version.
func TestCarriedSize(t *testing.T) {
	big := make([]byte, maxCarriedBytes+1)
	for _, tc := range []struct {
		name string
		v    *objects.Version
		want int64
	}{
		{"no version", nil, -1},
		{"delete marker", &objects.Version{DeleteMarker: true}, 0},
		{"empty object", &objects.Version{Segments: []objects.Segment{{}}}, 0},
		{"inline", &objects.Version{Segments: []objects.Segment{{Inline: []byte("abc")}}}, 3},
		{"inline parts", &objects.Version{Segments: []objects.Segment{{Inline: []byte("ab")}, {Inline: []byte("cd")}}}, 4},
		{"in a blob", &objects.Version{Segments: []objects.Segment{{BlobID: "b1", Size: 5}}}, -1},
		{"inline and a blob", &objects.Version{Segments: []objects.Segment{{Inline: []byte("ab")}, {BlobID: "b1"}}}, -1},
		{"inline, too large", &objects.Version{Segments: []objects.Segment{{Inline: big}}}, -1},
	} {
		if got := carriedSize(tc.v); got != tc.want {
			t.Errorf("%s: carriedSize %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestCarriedVersionsArriveAsCommitted: small versions go from the fresh
// record as their writes committed them, without reading them back; a
// version retagged right after its write arrives with its tags (the
// retag's own entry follows the first send), and both sends leave the
// source's status COMPLETED, never the older send's status over the
// newer's. Versions in blobs are read, and arrive too.
func TestCarriedVersionsArriveAsCommitted(t *testing.T) {
	a, b, tg := pairWithBucket(t, "bkt")
	ctx := context.Background()
	before := tg.carriedSends.Load()
	const n = 40
	ids := map[string]string{}
	for i := range n {
		key, body := fmt.Sprintf("k%02d", i), "x"
		if i%8 == 0 {
			body = strings.Repeat("y", 4<<10) // past the 1 KiB inline limit: a blob
		}
		v, err := a.objects.PutObject(ctx, "bkt", key, strings.NewReader(body), objects.PutOptions{Size: int64(len(body))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.objects.PutObjectTags(ctx, "bkt", key, v.VersionID, map[string]string{"n": fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
		ids[key] = v.VersionID
	}
	waitDrained(t, a, 20*time.Second)
	if tg.carriedSends.Load() == before {
		t.Fatal("no version was sent as carried")
	}
	for i := range n {
		key := fmt.Sprintf("k%02d", i)
		got, err := b.objects.HeadObject(ctx, "bkt", key, ids[key])
		if err != nil {
			t.Fatalf("%s on the peer: %v", key, err)
		}
		if got.Tags["n"] != fmt.Sprint(i) {
			t.Errorf("%s on the peer: tags %v, want n=%d", key, got.Tags, i)
		}
		src, err := a.objects.HeadObject(ctx, "bkt", key, ids[key])
		if err != nil {
			t.Fatal(err)
		}
		if st := src.ReplicationStatus(); st != objects.StatusCompleted {
			t.Errorf("%s on the source: status %s, want COMPLETED", key, st)
		}
	}
	if err := checkTallies(a); err != nil {
		t.Fatal(err)
	}
}
