package blob

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/erasure"
)

func driveSet(t *testing.T, n int) (*Store, []string) {
	t.Helper()
	base := t.TempDir()
	var drives []string
	for i := range n {
		drives = append(drives, filepath.Join(base, fmt.Sprint("d", i)))
	}
	s, err := OpenDrives(drives, erasure.MinBlockSize, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Claim("dep1"); err != nil {
		t.Fatal(err)
	}
	return s, drives
}

// seededData is n bytes drawn from a generator seeded with seed: the same
// for the same seed.
func seededData(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, seed))
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	return data
}

func writeBlob(t *testing.T, s *Store, data []byte) string {
	t.Helper()
	w, err := s.Create()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	id, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func readBlob(s *Store, id string) ([]byte, error) {
	f, err := s.Open(id)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	got, err := io.ReadAll(f)
	if err == nil && int64(len(got)) != f.Size() {
		err = fmt.Errorf("read %d bytes of %d", len(got), f.Size())
	}
	return got, err
}

// localDrive is the drive at dir of a set driveSet made.
func localDrive(t *testing.T, dir string) *LocalDrive {
	t.Helper()
	d, err := NewLocalDrive(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// wrappedSet is a drive set over the local drives at dirs (of a set
// driveSet made), those at the indexes at passed through wrap: a test's
// fake around them (one that hangs, say).
func wrappedSet(t *testing.T, dirs []string, wrap func(d Drive) Drive, at ...int) *Store {
	t.Helper()
	set := make([]Drive, len(dirs))
	for i, dir := range dirs {
		set[i] = localDrive(t, dir)
		if slices.Contains(at, i) {
			set[i] = wrap(set[i])
		}
	}
	s, err := NewDriveSet(set, erasure.MinBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func shardPath(drives []string, i int, id string) string {
	return filepath.Join(drives[i], "blobs", id[:2], id)
}

// TestDriveSetReadsAroundLostDrives: on 4 drives (2+2) a blob reads back
// whole with any 2 shard files gone or one corrupt, and not with 3 gone.
func TestDriveSetReadsAroundLostDrives(t *testing.T) {
	s, drives := driveSet(t, 4)
	data := seededData(1, 5*erasure.MinBlockSize+123)
	id := writeBlob(t, s, data)
	if _, ok := OSFile(mustOpen(t, s, id)); ok {
		t.Fatal("a shard-coded blob offered a plain file")
	}
	if got, err := readBlob(s, id); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("healthy read: %v", err)
	}
	p := shardPath(drives, 2, id)
	raw, _ := os.ReadFile(p)
	raw[100] ^= 1
	os.WriteFile(p, raw, 0o600)
	if got, err := readBlob(s, id); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read with a corrupt shard: %v", err)
	}
	os.Remove(shardPath(drives, 0, id))
	os.Remove(shardPath(drives, 3, id))
	// Shard 2 corrupt and 0, 3 gone: only 1 sound, the read must fail.
	if got, err := readBlob(s, id); !errors.Is(err, erasure.ErrReadQuorum) {
		t.Fatalf("read with one sound shard: %d bytes, %v", len(got), err)
	}
	os.WriteFile(p, raw[:len(raw)-1], 0o600) // now cut short as well
	if _, err := readBlob(s, id); err == nil {
		t.Fatal("read with one sound shard succeeded")
	}
}

func mustOpen(t *testing.T, s *Store, id string) File {
	t.Helper()
	f, err := s.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestDriveSetHeal: a quick heal rebuilds missing and short shards, a
// deep one also a corrupt one, each byte for byte; a dry run changes
// nothing.
func TestDriveSetHeal(t *testing.T) {
	s, drives := driveSet(t, 5) // 3+2
	data := bytes.Repeat([]byte("twinlake heal "), 3000)
	id := writeBlob(t, s, data)
	orig := make([][]byte, 5)
	for i := range orig {
		orig[i], _ = os.ReadFile(shardPath(drives, i, id))
	}
	os.Remove(shardPath(drives, 1, id))
	os.WriteFile(shardPath(drives, 4, id), orig[4][:10], 0o600)

	if res, err := s.Heal(id, false, true); err != nil || fmt.Sprint(res.Bad) != "[1 4]" || res.Rebuilt != 0 {
		t.Fatalf("dry run: %+v %v", res, err)
	}
	if _, err := os.Stat(shardPath(drives, 1, id)); err == nil {
		t.Fatal("a dry run wrote a shard")
	}
	if res, err := s.Heal(id, false, false); err != nil || fmt.Sprint(res.Bad) != "[1 4]" || res.Rebuilt != 2 {
		t.Fatalf("quick heal: %+v %v", res, err)
	}
	corrupt := bytes.Clone(orig[2])
	corrupt[len(corrupt)/2] ^= 0xff
	os.WriteFile(shardPath(drives, 2, id), corrupt, 0o600)
	if res, err := s.Heal(id, false, false); err != nil || len(res.Bad) != 0 {
		t.Fatalf("a quick heal read a shard's contents: %+v %v", res, err)
	}
	if res, err := s.Heal(id, true, false); err != nil || fmt.Sprint(res.Bad) != "[2]" || res.Rebuilt != 1 {
		t.Fatalf("deep heal: %+v %v", res, err)
	}
	for i := range orig {
		got, _ := os.ReadFile(shardPath(drives, i, id))
		if !bytes.Equal(got, orig[i]) {
			t.Fatalf("shard %d differs after heal", i)
		}
	}
	if res, err := s.Heal(id, true, false); err != nil || len(res.Bad) != 0 {
		t.Fatalf("heal of a sound blob: %+v %v", res, err)
	}
}

// TestDriveSetWriteQuorum: a write goes on without one failed drive of 4
// and is refused without two; the refused write leaves no shard behind.
func TestDriveSetWriteQuorum(t *testing.T) {
	s, drives := driveSet(t, 4)
	breakDrive := func(i int) {
		root := filepath.Join(drives[i], "blobs")
		os.RemoveAll(root)
		os.WriteFile(root, []byte("not a directory"), 0o600)
	}
	breakDrive(1)
	s, _ = storeOver(t, drives)
	id := writeBlob(t, s, []byte("three of four"))
	if got, err := readBlob(s, id); err != nil || string(got) != "three of four" {
		t.Fatalf("read: %q %v", got, err)
	}
	breakDrive(3)
	w, err := s.Create()
	if err == nil {
		w.Write([]byte("x"))
		_, err = w.Commit()
	}
	if !errors.Is(err, erasure.ErrWriteQuorum) {
		t.Fatalf("write on 2 of 4 drives: %v", err)
	}
	n := 0
	s.Walk(func(string) bool { n++; return true })
	if n != 1 {
		t.Fatalf("%d blobs listed, want the one written", n)
	}
}

// storeOver is a drive set over drives as they are, some broken:
// NewLocalDrive would refuse a drive whose tree it cannot create.
func storeOver(t *testing.T, drives []string) (*Store, error) {
	t.Helper()
	set := make([]Drive, len(drives))
	for i, d := range drives {
		set[i] = &LocalDrive{root: filepath.Join(d, "blobs"), dirSynced: map[string]bool{}}
	}
	return NewDriveSet(set, erasure.MinBlockSize)
}

func TestDriveSetWalkRemoveClaim(t *testing.T) {
	s, drives := driveSet(t, 3)
	a := writeBlob(t, s, []byte("a"))
	b := writeBlob(t, s, []byte("b"))
	os.Remove(shardPath(drives, 0, a))
	var ids []string
	s.Walk(func(id string) bool { ids = append(ids, id); return true })
	if len(ids) != 2 || (ids[0] != a && ids[1] != a) {
		t.Fatalf("walk %v, want %s and %s once each", ids, a, b)
	}
	if err := s.Remove(a); err != nil {
		t.Fatal(err)
	}
	for i := range drives {
		if _, err := os.Stat(shardPath(drives, i, a)); err == nil {
			t.Fatalf("shard %d of a removed blob remains", i)
		}
	}
	if _, err := s.Open(a); !errors.Is(err, ErrNotFound) {
		t.Fatalf("open removed: %v", err)
	}
	// The drives keep their places: swapped, or claimed for another
	// deployment, they are refused; an empty drive is marked.
	swapped, _ := OpenDrives([]string{drives[1], drives[0], drives[2]}, 0, nil)
	if _, _, err := swapped.Claim("dep1"); err == nil || !strings.Contains(err.Error(), "original order") {
		t.Fatalf("swapped drives: %v", err)
	}
	if _, _, err := s.Claim("dep2"); err == nil {
		t.Fatal("drives of dep1 claimed for dep2")
	}
	os.RemoveAll(drives[2])
	s2, _ := OpenDrives(drives, 0, nil)
	if marked, _, err := s2.Claim("dep1"); err != nil || fmt.Sprint(marked) != "[2]" {
		t.Fatalf("claim with a replaced drive: %v %v", marked, err)
	}
}

// TestListSweepsStaleRewrites: a rewrite's file a crash left behind is
// removed when its directory is next listed; one still being written
// stays, and neither is listed as a shard.
func TestListSweepsStaleRewrites(t *testing.T) {
	d, err := NewLocalDrive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	id := NewID()
	w, err := d.Create(id)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("shard"))
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	p, _ := d.path(id)
	stale, live := p+rewriteMark+"00000000", p+rewriteMark+"11111111"
	for _, f := range []string{stale, live} {
		if err := os.WriteFile(f, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleRewrite)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	ids, err := d.List(id[:2])
	if err != nil || !slices.Equal(ids, []string{id}) {
		t.Fatalf("list = %v, %v", ids, err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale rewrite is still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the live rewrite was removed: %v", err)
	}
}

// TestPlacedByBucketAndKey: a blob of an object is placed by the object's
// bucket and key (erasure.Place over the drives), so every version and
// part of one key lands on the same drives in the same order while other
// keys spread; it writes, heals and reads like any blob. A blob ID without
// a key hash keeps the placement by ID.
func TestPlacedByBucketAndKey(t *testing.T) {
	s, drives := driveSet(t, 6)
	names := []string{"0", "1", "2", "3", "4", "5"}
	want := erasure.Place("photos", "2026/cat.jpg", names)
	a, b := NewPlacedID("photos", "2026/cat.jpg"), NewPlacedID("photos", "2026/cat.jpg")
	if a == b || !validID(a) {
		t.Fatalf("placed IDs %q %q", a, b)
	}
	for _, id := range []string{a, b} {
		var got []string
		for _, d := range s.driveOf(id) {
			got = append(got, fmt.Sprint(d))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s placed on %v, want erasure.Place of its bucket and key: %v", id, got, want)
		}
	}
	first := map[int]int{}
	for i := range 600 {
		first[s.driveOf(NewPlacedID("photos", fmt.Sprint(i)))[0]]++
	}
	for d := range 6 {
		if first[d] < 60 || first[d] > 140 {
			t.Errorf("drive %d holds shard 0 of %d of 600 keys", d, first[d])
		}
	}
	legacy := NewID()
	if got, want := s.driveOf(legacy), s.driveOf(legacy); !slices.Equal(got, want) || len(got) != 6 {
		t.Fatalf("an unplaced ID's drives %v", got)
	}

	data := bytes.Repeat([]byte("placed"), erasure.MinBlockSize)
	w, err := s.CreateAs(a)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	os.Remove(shardPath(drives, s.driveOf(a)[0], a))
	if res, err := s.Heal(a, false, false); err != nil || res.Rebuilt != 1 {
		t.Fatalf("heal %+v %v", res, err)
	}
	if got, err := readBlob(s, a); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}
}

// countingDrive counts the shards opened on a drive and those still open
// (drives are opened in parallel).
type countingDrive struct {
	Drive
	opened, open *atomic.Int64
}

func (d countingDrive) Open(id string) (ShardReader, error) {
	r, err := d.Drive.Open(id)
	if err != nil {
		return nil, err
	}
	d.opened.Add(1)
	d.open.Add(1)
	return countingReader{r, d.open}, nil
}

type countingReader struct {
	ShardReader
	open *atomic.Int64
}

func (r countingReader) Close() error {
	r.open.Add(-1)
	return r.ShardReader.Close()
}

// TestDriveSetReadsDataShardsOnly: a sound blob is read from its data
// shards alone; a parity shard is opened only when a data shard turns out
// corrupt while reading, every shard when one is missing; and closing the
// file closes whatever was opened.
func TestDriveSetReadsDataShardsOnly(t *testing.T) {
	base := t.TempDir()
	var drives []string
	set := make([]Drive, 4)
	var opened, open atomic.Int64
	for i := range set {
		drives = append(drives, filepath.Join(base, fmt.Sprint("d", i)))
		d, err := NewLocalDrive(drives[i])
		if err != nil {
			t.Fatal(err)
		}
		set[i] = countingDrive{d, &opened, &open}
	}
	s, err := NewDriveSet(set, erasure.MinBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	data := seededData(2, 3*erasure.MinBlockSize+77)
	id := writeBlob(t, s, data)
	read := func(what string, wantOpened int64) {
		t.Helper()
		opened.Store(0)
		got, err := readBlob(s, id)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s: %d bytes, %v", what, len(got), err)
		}
		if opened.Load() != wantOpened || open.Load() != 0 {
			t.Errorf("%s: %d shards opened (want %d), %d left open", what, opened.Load(), wantOpened, open.Load())
		}
	}
	read("sound blob", 2)

	order := s.driveOf(id) // shard i is on drive order[i]; 0 and 1 hold data
	p := shardPath(drives, order[1], id)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 1 // inside a block's piece: found corrupt while reading
	if err := os.WriteFile(p, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	read("a data shard corrupt", 3)

	if err := os.Remove(shardPath(drives, order[0], id)); err != nil {
		t.Fatal(err)
	}
	read("a data shard missing", 1+3) // the other data shard, then the three there
}

// hungDrive answers nothing about its mark until release is closed (its
// node paused, or its machine gone).
type hungDrive struct {
	Drive
	release <-chan struct{}
}

func (d hungDrive) ReadMark() ([]byte, error) {
	<-d.release
	return d.Drive.ReadMark()
}

// TestClaimGoesOnWithoutAHungDrive: a drive that does not answer is
// counted unreachable after claimWait, and the others are claimed; a
// mark that is not its drive's is still refused, and then no drive is
// marked.
func TestClaimGoesOnWithoutAHungDrive(t *testing.T) {
	defer func(w time.Duration) { claimWait = w }(claimWait)
	claimWait = 200 * time.Millisecond
	_, drives := driveSet(t, 4)
	open := func(order []int, hung int) *Store {
		release := make(chan struct{})
		t.Cleanup(func() { close(release) })
		set := make([]Drive, len(order))
		for k, i := range order {
			set[k] = localDrive(t, drives[i])
			if k == hung {
				set[k] = hungDrive{set[k], release}
			}
		}
		s, err := NewDriveSet(set, erasure.MinBlockSize)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	start := time.Now()
	marked, unreachable, err := open([]int{0, 1, 2, 3}, 1).Claim("dep1")
	if err != nil || fmt.Sprint(unreachable) != "[1]" || len(marked) != 0 {
		t.Fatalf("claim with drive 1 hung: marked %v, unreachable %v, %v; want none marked (driveSet did), [1], no error", marked, unreachable, err)
	}
	if took := time.Since(start); took > 10*claimWait {
		t.Fatalf("claim took %v with claimWait %v", took, claimWait)
	}

	os.RemoveAll(drives[3]) // now empty: it would be marked
	if _, _, err := open([]int{1, 0, 2, 3}, -1).Claim("dep1"); err == nil || !strings.Contains(err.Error(), "original order") {
		t.Fatalf("swapped drives: %v", err)
	}
	d3 := localDrive(t, drives[3])
	if _, err := d3.ReadMark(); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the empty drive after a refused claim: %v, want no mark", err)
	}
}

// TestDriveErrorsDoNotWaitForAHungDrive: what admin info and a metrics
// scrape report of the drives comes after markWait with a drive that
// does not answer, which is reported as not answering, the others as
// sound; once it answers again it is sound too.
func TestDriveErrorsDoNotWaitForAHungDrive(t *testing.T) {
	defer func(w time.Duration) { markWait = w }(markWait)
	markWait = 100 * time.Millisecond
	_, drives := driveSet(t, 4)
	release := make(chan struct{})
	const hung = 2
	s := wrappedSet(t, drives, func(d Drive) Drive { return hungDrive{d, release} }, hung)
	answered := make(chan []error, 1)
	go func() { answered <- s.DriveErrors() }()
	select {
	case errs := <-answered:
		for i, err := range errs {
			if want := error(nil); i == hung {
				if !errors.Is(err, errUnanswered) {
					t.Errorf("drive %d (hung): %v, want %v", i, err, errUnanswered)
				}
			} else if err != want {
				t.Errorf("drive %d: %v, want none", i, err)
			}
		}
	case <-time.After(30 * time.Second):
		close(release)
		t.Fatal("DriveErrors waits for a drive that does not answer")
	}
	if !s.unanswering(hung) {
		t.Error("the drive that did not answer is not marked so: reads and heals wait for it")
	}
	// Released, the drive answers the call left out: that answer ends
	// the mark (until then a read of the marks does not wait for it).
	close(release)
	for deadline := time.Now().Add(10 * time.Second); s.unanswering(hung); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the drive answering again stays marked")
		}
	}
	for i, err := range s.DriveErrors() {
		if err != nil {
			t.Errorf("drive %d answering again: %v", i, err)
		}
	}
}

// TestMarksDoNotWaitForADriveKnownHung: once a drive is marked hung (a
// read of the marks it left unanswered, or its node found silent by the
// caller: MarkHung), the next claim of the drives
// (a new leader's start, the drive watcher's check) does not wait for it
// at all, still asking it: its answer, when it comes, ends the mark, and
// the claim after that waits for it again.
func TestMarksDoNotWaitForADriveKnownHung(t *testing.T) {
	defer func(m, c time.Duration) { markWait, claimWait = m, c }(markWait, claimWait)
	markWait, claimWait = 100*time.Millisecond, time.Minute
	for _, tc := range []struct {
		name string
		mark func(s *Store, drive int)
	}{
		{"its mark unanswered", func(s *Store, _ int) { s.DriveErrors() }},
		{"its node found silent", func(s *Store, drive int) { s.MarkHung(drive) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, drives := driveSet(t, 4)
			release := make(chan struct{})
			const hung = 1
			s := wrappedSet(t, drives, func(d Drive) Drive { return hungDrive{d, release} }, hung)
			tc.mark(s, hung)
			if !s.isHung(hung) {
				t.Fatal("the drive is not marked hung")
			}
			unreachable, ok := claimWithin(t, s)
			if !ok {
				close(release)
				t.Fatal("the claim waits for a drive known hung")
			}
			if fmt.Sprint(unreachable) != fmt.Sprint([]int{hung}) {
				t.Fatalf("claim with drive %d known hung: unreachable %v", hung, unreachable)
			}
			close(release)
			for deadline := time.Now().Add(30 * time.Second); s.isHung(hung); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the drive's late answer does not end its hung mark")
				}
			}
			if _, unreachable, err := s.Claim("dep1"); err != nil || len(unreachable) != 0 {
				t.Fatalf("claim once the drive answers: unreachable %v, %v", unreachable, err)
			}
		})
	}
}

// claimWithin claims s for deployment dep1 and returns the drives it
// could not reach; ok is false when the claim has not returned within
// 30 s (it waits for a drive it should not). A claim's error fails the
// test.
func claimWithin(t *testing.T, s *Store) (unreachable []int, ok bool) {
	t.Helper()
	claimed := make(chan []int, 1)
	go func() {
		_, unreachable, err := s.Claim("dep1")
		if err != nil {
			t.Error(err)
		}
		claimed <- unreachable
	}()
	select {
	case unreachable = <-claimed:
		return unreachable, true
	case <-time.After(30 * time.Second):
		return nil, false
	}
}

// slowMarkDrive answers a read of its mark after delay.
type slowMarkDrive struct {
	Drive
	delay time.Duration
}

func (d slowMarkDrive) ReadMark() ([]byte, error) {
	time.Sleep(d.delay)
	return d.Drive.ReadMark()
}

// TestClaimWaitsForAHungMarkWhenShort: a drive marked hung long ago (its
// node stalled while another led, and this node never asked it since)
// that answers now is waited for when without it too few drives would
// answer for the set to serve: a new leader's claim does not fail for a
// stale mark, leaving out only the drive that does not answer.
func TestClaimWaitsForAHungMarkWhenShort(t *testing.T) {
	defer func(c time.Duration) { claimWait = c }(claimWait)
	claimWait = time.Minute
	_, drives := driveSet(t, 4) // 2+2: a write quorum of 3
	release := make(chan struct{})
	defer close(release)
	const hung, stale = 1, 2
	set := make([]Drive, len(drives))
	for i, dir := range drives {
		set[i] = localDrive(t, dir)
	}
	set[hung] = hungDrive{set[hung], release}
	set[stale] = slowMarkDrive{set[stale], 100 * time.Millisecond}
	s, err := NewDriveSet(set, erasure.MinBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	s.MarkHung(hung, stale)
	unreachable, ok := claimWithin(t, s)
	if !ok {
		t.Fatal("the claim waits for a drive known hung once the write quorum answered")
	}
	if fmt.Sprint(unreachable) != fmt.Sprint([]int{hung}) {
		t.Fatalf("claim with drive %d hung and drive %d marked but answering: unreachable %v, want [%d]", hung, stale, unreachable, hung)
	}
	if s.isHung(stale) {
		t.Error("the drive that answered the claim is still marked hung")
	}
}

// silentDrive answers nothing, to opens and lists as to reads of its
// mark (hungDrive), until release is closed (its node paused).
type silentDrive struct{ hungDrive }

func (d silentDrive) Open(id string) (ShardReader, error) {
	<-d.release
	return d.Drive.Open(id)
}

func (d silentDrive) List(dir string) ([]string, error) {
	<-d.release
	return d.Drive.List(dir)
}

// TestHealGoesOnWithoutAHungDrive: a heal scan's walk and a blob's heal
// do not wait for a drive that does not answer (each of its calls did,
// for its timeout: hours for a scan); the blob's shard missing on another
// drive is rebuilt, the silent drive's is reported unchecked and left for
// the heal once every drive answers (TakeSkipped).
func TestHealGoesOnWithoutAHungDrive(t *testing.T) {
	defer func(m, l, o time.Duration) { markWait, listWait, openHedge = m, l, o }(markWait, listWait, openHedge)
	markWait, listWait, openHedge = 100*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond
	s, drives := driveSet(t, 5) // 3+2
	data := seededData(7, 3*erasure.MinBlockSize)
	id := writeBlob(t, s, data)
	const lost, silent = 1, 3
	orig, err := os.ReadFile(shardPath(drives, lost, id))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(shardPath(drives, lost, id))
	release := make(chan struct{})
	defer close(release)
	hs := wrappedSet(t, drives, func(d Drive) Drive { return silentDrive{hungDrive{d, release}} }, silent)
	type outcome struct {
		walked []string
		res    HealResult
		err    error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		o.err = hs.Walk(func(id string) bool { o.walked = append(o.walked, id); return true })
		if o.err == nil {
			o.res, o.err = hs.Heal(id, false, false)
		}
		done <- o
	}()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a walk and a heal wait for a drive that does not answer")
	}
	if o.err != nil || fmt.Sprint(o.walked) != fmt.Sprint([]string{id}) {
		t.Fatalf("walk: %v, %v; want [%s]", o.walked, o.err, id)
	}
	if fmt.Sprint(o.res.Bad) != fmt.Sprint([]int{lost}) || o.res.Rebuilt != 1 || fmt.Sprint(o.res.Unanswered) != fmt.Sprint([]int{silent}) {
		t.Fatalf("heal with drive %d silent and drive %d's shard lost: %+v; want bad [%d], 1 rebuilt, unanswered [%d]", silent, lost, o.res, lost, silent)
	}
	if got, err := os.ReadFile(shardPath(drives, lost, id)); err != nil || !bytes.Equal(got, orig) {
		t.Fatalf("the lost shard after the heal: %d bytes, %v", len(got), err)
	}
	if !hs.TakeSkipped() {
		t.Fatal("the silent drive's shard left unchecked asks for no heal once it answers")
	}
}

// hungOpenDrive opens nothing until release is closed (its node paused,
// or its machine gone), and counts the opens that waited.
type hungOpenDrive struct {
	Drive
	release <-chan struct{}
	waited  *atomic.Int64
}

func (d hungOpenDrive) Open(id string) (ShardReader, error) {
	d.waited.Add(1)
	<-d.release
	return d.Drive.Open(id)
}

// TestReadGoesOnWithoutAHungDrive: a read whose data shard's drive does
// not answer goes on, after openHedge, with the shards the other drives
// opened, instead of waiting for that drive's call to time out; the next
// reads do not wait for that drive at all, nor call it again while the
// first call is out; once it answers, reads wait for it again; the shard
// it opened late is closed.
func TestReadGoesOnWithoutAHungDrive(t *testing.T) {
	defer func(w time.Duration) { openHedge = w }(openHedge)
	s, drives := driveSet(t, 4)
	data := seededData(4, 2*erasure.MinBlockSize+33)
	id := writeBlob(t, s, data)
	order := s.driveOf(id) // shard i is on drive order[i]; 0 and 1 hold data
	for _, hung := range []int{order[0], order[1], order[3]} {
		release := make(chan struct{})
		var waited, opened, open atomic.Int64
		set := make([]Drive, 4)
		for i := range set {
			set[i] = countingDrive{localDrive(t, drives[i]), &opened, &open}
			if i == hung {
				set[i] = hungOpenDrive{set[i], release, &waited}
			}
		}
		hs, err := NewDriveSet(set, erasure.MinBlockSize)
		if err != nil {
			t.Fatal(err)
		}
		read := func(what string) {
			t.Helper()
			type result struct {
				got []byte
				err error
			}
			done := make(chan result, 1)
			go func() {
				got, err := readBlob(hs, id)
				done <- result{got, err}
			}()
			select {
			case r := <-done:
				if r.err != nil || !bytes.Equal(r.got, data) {
					t.Fatalf("drive %d hung, %s: read %d bytes, %v", hung, what, len(r.got), r.err)
				}
			case <-time.After(time.Minute):
				t.Fatalf("drive %d hung, %s: the read waits for it", hung, what)
			}
		}
		openHedge = 50 * time.Millisecond
		read("the first read")
		if hung == order[3] {
			if waited.Load() != 0 {
				t.Errorf("a sound read opened the hung parity shard's drive")
			}
			close(release)
			continue
		}
		calls := waited.Load()
		openHedge = time.Hour // a read that waited for the hedge would wait for this
		read("the next read")
		if waited.Load() != calls {
			t.Errorf("drive %d hung: called again while its first call is out", hung)
		}
		close(release)
		waitAllClosed(t, func() bool {
			hs.mu.Lock()
			defer hs.mu.Unlock()
			return !hs.hung[hung] && open.Load() == 0
		})
		read("once it answered")
		if waited.Load() == calls {
			t.Errorf("drive %d: not called again once it answered", hung)
		}
		waitAllClosed(t, func() bool { return open.Load() == 0 })
	}
}

// waitAllClosed waits (up to a minute) until cond, that every shard
// opened is closed (and the hung drive answered), holds.
func waitAllClosed(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("a shard opened late is left open")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
