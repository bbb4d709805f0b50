package blob

import (
	"bytes"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/erasure"
)

// hungRemoveDrive removes nothing until release is closed (its node
// paused, or its machine gone), and counts the removals asked of it.
type hungRemoveDrive struct {
	Drive
	release <-chan struct{}
	asked   *atomic.Int64
}

func (d hungRemoveDrive) Remove(id string) error {
	d.asked.Add(1)
	<-d.release
	return d.Drive.Remove(id)
}

// TestRemovalGoesOnWithoutAHungDrive: a removal whose drive does not answer
// succeeds graceWait after the write quorum removed theirs, instead of
// waiting for that drive's call; the next removals skip that drive while
// the first is out, leaving their shard there for the heal scan; once it
// answers, removals call it and wait for it again.
func TestRemovalGoesOnWithoutAHungDrive(t *testing.T) {
	defer func(w time.Duration) { graceWait = w }(graceWait)
	graceWait = 50 * time.Millisecond
	s, drives := driveSet(t, 4)
	ids := make([]string, 3)
	for i := range ids {
		ids[i] = writeBlob(t, s, seededData(uint64(i), 3*erasure.MinBlockSize))
	}
	release := make(chan struct{})
	var asked atomic.Int64
	set := make([]Drive, 4)
	local := make([]*LocalDrive, 4)
	for i := range set {
		local[i] = localDrive(t, drives[i])
		set[i] = local[i]
	}
	const hung = 2
	set[hung] = hungRemoveDrive{local[hung], release, &asked}
	hs, err := NewDriveSet(set, erasure.MinBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	onHung := func(id string) bool {
		t.Helper()
		r, err := local[hung].Open(id)
		if err == nil {
			r.Close()
			return true
		}
		if !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
		return false
	}
	remove := func(id string, within time.Duration) {
		t.Helper()
		start := time.Now()
		if err := hs.Remove(id); err != nil {
			t.Fatalf("remove %s: %v", id, err)
		}
		if took := time.Since(start); took > within {
			t.Fatalf("remove %s took %v, want at most %v", id, took, within)
		}
		for i, d := range local {
			if i == hung {
				continue
			}
			if r, err := d.Open(id); !errors.Is(err, ErrNotFound) {
				if err == nil {
					r.Close()
				}
				t.Fatalf("shard of %s on drive %d after its removal: %v", id, i, err)
			}
		}
	}

	remove(ids[0], 20*graceWait) // waits graceWait for the hung drive, not for its call
	remove(ids[1], 20*graceWait)
	if n := asked.Load(); n != 1 {
		t.Fatalf("the hung drive was asked %d removals, want the first only", n)
	}
	if !onHung(ids[1]) {
		t.Fatal("the skipped drive lost its shard")
	}

	close(release) // it answers the first removal
	deadline := time.Now().Add(10 * time.Second)
	for hs.stuck[hung].Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the drive that answered is still counted stuck")
		}
		time.Sleep(time.Millisecond)
	}
	if onHung(ids[0]) {
		t.Fatal("the removal given up on did not finish when its drive answered")
	}
	remove(ids[2], 10*time.Second)
	if n := asked.Load(); n != 2 || onHung(ids[2]) {
		t.Fatalf("after it answered: %d removals asked of the drive (want 2), shard there: %v", n, onHung(ids[2]))
	}
}

// hungCommitDrive creates shards whose commits wait until release is
// closed, and counts the shards created on it.
type hungCommitDrive struct {
	Drive
	release <-chan struct{}
	created *atomic.Int64
}

func (d hungCommitDrive) Create(id string) (ShardWriter, error) {
	d.created.Add(1)
	w, err := d.Drive.Create(id)
	if err != nil {
		return nil, err
	}
	return hungCommit{w, d.release}, nil
}

type hungCommit struct {
	ShardWriter
	release <-chan struct{}
}

func (c hungCommit) Commit() error {
	<-c.release
	return c.ShardWriter.Commit()
}

// TestWriteGoesOnWithoutAHungDrive: a write whose shard commit on one drive
// does not answer is acknowledged graceWait after the write quorum of
// shards is durable; the writes after it leave that drive out while the
// commit is out (their shard there is one to heal, and the store says so),
// and every blob reads back; once the drive answers, writes include it
// again, and a heal rebuilds the shards left out.
func TestWriteGoesOnWithoutAHungDrive(t *testing.T) {
	defer func(w time.Duration) { graceWait = w }(graceWait)
	graceWait = 50 * time.Millisecond
	_, drives := driveSet(t, 4)
	release := make(chan struct{})
	var created atomic.Int64
	const hung = 1
	hs := wrappedSet(t, drives, func(d Drive) Drive { return hungCommitDrive{d, release, &created} }, hung)
	hs.TakeSkipped()
	var ids []string
	var datas [][]byte
	write := func() {
		t.Helper()
		data := seededData(uint64(len(ids)), 3*erasure.MinBlockSize+7)
		start := time.Now()
		ids = append(ids, writeBlob(t, hs, data))
		datas = append(datas, data)
		if took := time.Since(start); took > 10*time.Second {
			t.Fatalf("write %d took %v", len(ids), took)
		}
	}
	write() // its commit on the hung drive is given up on
	write() // leaves the drive out
	write()
	if c := created.Load(); c != 1 {
		t.Fatalf("%d shards created on the hung drive, want the first write's only", c)
	}
	if !hs.TakeSkipped() {
		t.Fatal("writes left a drive out and the store does not say so")
	}
	for i, id := range ids {
		if got, err := readBlob(hs, id); err != nil || !bytes.Equal(got, datas[i]) {
			t.Fatalf("blob %d read back: %d bytes, %v", i, len(got), err)
		}
	}
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for hs.stuckDrive(hung) {
		if time.Now().After(deadline) {
			t.Fatal("the drive that answered is still counted stuck")
		}
		time.Sleep(time.Millisecond)
	}
	write()
	if c := created.Load(); c != 2 {
		t.Fatalf("%d shards created on the drive after it answered, want 2", c)
	}
	for _, id := range ids[1:3] {
		res, err := hs.Heal(id, false, false)
		if err != nil || res.Rebuilt != 1 {
			t.Fatalf("heal of a blob written without the drive: %+v, %v; want its shard there rebuilt", res, err)
		}
	}
}

// failingHungDrive fails its removals once release is closed, and reads
// its mark only once answer is closed: a node paused long past its calls'
// timeouts.
type failingHungDrive struct {
	Drive
	release, answer <-chan struct{}
	asked           *atomic.Int64
}

func (d failingHungDrive) Remove(id string) error {
	d.asked.Add(1)
	<-d.release
	return errors.New("timed out")
}

func (d failingHungDrive) ReadMark() ([]byte, error) {
	<-d.answer
	return d.Drive.ReadMark()
}

// TestStuckDriveWaitsForAProbe: a call given up on that then fails keeps
// its drive left out until the drive answers a probe of its mark; then it
// is called again.
func TestStuckDriveWaitsForAProbe(t *testing.T) {
	defer func(w, p time.Duration) { graceWait, probeEvery = w, p }(graceWait, probeEvery)
	graceWait, probeEvery = 50*time.Millisecond, 5*time.Millisecond
	s, drives := driveSet(t, 4)
	ids := make([]string, 3)
	for i := range ids {
		ids[i] = writeBlob(t, s, seededData(uint64(i), erasure.MinBlockSize))
	}
	release, answer := make(chan struct{}), make(chan struct{})
	var asked atomic.Int64
	const hung = 3
	hs := wrappedSet(t, drives, func(d Drive) Drive { return failingHungDrive{d, release, answer, &asked} }, hung)
	if err := hs.Remove(ids[0]); err != nil { // given up on
		t.Fatal(err)
	}
	close(release) // the call fails: the drive still does not answer its mark
	time.Sleep(20 * probeEvery)
	if err := hs.Remove(ids[1]); err != nil {
		t.Fatal(err)
	}
	if n := asked.Load(); n != 1 || !hs.stuckDrive(hung) {
		t.Fatalf("after the call given up on failed: %d removals asked of the drive, stuck %v; want 1, stuck", n, hs.stuckDrive(hung))
	}
	close(answer) // it answers the probe
	deadline := time.Now().Add(10 * time.Second)
	for hs.stuckDrive(hung) {
		if time.Now().After(deadline) {
			t.Fatal("the drive that answered its probe is still counted stuck")
		}
		time.Sleep(time.Millisecond)
	}
	hs.Remove(ids[2]) // the drive fails it, the others remove theirs
	if n := asked.Load(); n != 2 {
		t.Fatalf("after the probe: %d removals asked of the drive, want 2", n)
	}
}

// markedHungDrive leaves reads of its mark unanswered until release is
// closed (hungDrive: its node paused), refuses every shard write and
// removal, and counts those asked of it.
type markedHungDrive struct {
	hungDrive
	asked *atomic.Int64
}

var errAsked = errors.New("asked a drive known hung")

func (d markedHungDrive) Create(id string) (ShardWriter, error) {
	d.asked.Add(1)
	return nil, errAsked
}

func (d markedHungDrive) Remove(id string) error {
	d.asked.Add(1)
	return errAsked
}

// TestWritesLeaveOutADriveKnownHung: once a drive is marked hung (the
// drive watcher's read of the marks went unanswered), writes and removals
// leave it out from the start, without asking it or waiting graceWait,
// and note it for the heal; with too few other drives for the write
// quorum, drives marked hung are asked after all.
func TestWritesLeaveOutADriveKnownHung(t *testing.T) {
	defer func(w time.Duration) { markWait = w }(markWait)
	markWait = 50 * time.Millisecond
	_, drives := driveSet(t, 4)
	release := make(chan struct{})
	defer close(release)
	open := func(hung ...int) (*Store, *atomic.Int64) {
		asked := new(atomic.Int64)
		s := wrappedSet(t, drives, func(d Drive) Drive { return markedHungDrive{hungDrive{d, release}, asked} }, hung...)
		s.DriveErrors() // the watcher's read: marks the silent ones hung
		for _, i := range hung {
			if !s.isHung(i) {
				t.Fatalf("drive %d not marked hung", i)
			}
		}
		return s, asked
	}

	s, asked := open(2)
	s.TakeSkipped()
	data := seededData(7, 3*erasure.MinBlockSize)
	id := writeBlob(t, s, data)
	if n := asked.Load(); n != 0 {
		t.Errorf("the write asked the drive known hung %d times", n)
	}
	if !s.TakeSkipped() {
		t.Error("the write that left a drive out did not ask for a heal")
	}
	other := writeBlob(t, s, data)
	if err := s.Remove(other); err != nil || asked.Load() != 0 {
		t.Fatalf("removal: %v, drive known hung asked %d times", err, asked.Load())
	}
	// Last: a read may open a shard on that drive, and its answer (the
	// drive answers opens) ends the mark.
	if got, err := readBlob(s, id); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, %v; want %d", len(got), err, len(data))
	}

	// Two of four hung leave two, short of the write quorum: both are
	// asked (and here refuse), so the write fails as it must.
	s, asked = open(1, 3)
	w, err := s.Create()
	if err == nil {
		w.Write(data)
		_, err = w.Commit()
	}
	if !errors.Is(err, erasure.ErrWriteQuorum) || asked.Load() != 2 {
		t.Fatalf("write with two drives hung: %v, the hung drives asked %d times; want the quorum error after asking both", err, asked.Load())
	}
}
