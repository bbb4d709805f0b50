package blob

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/erasure"
)

// dialTimeout is the error a call to a node whose machine is down ends
// with: the connection timed out.
var dialTimeout = fmt.Errorf("node http://10.0.0.9:9000: %w",
	&net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded})

// unreachedDrive is a drive on a node whose machine is down: every call
// fails with dialTimeout, an open after delay (the dial's timeout).
type unreachedDrive struct {
	Drive
	delay time.Duration
	ended *atomic.Int64 // opens that have failed
}

func (d unreachedDrive) Open(id string) (ShardReader, error) {
	time.Sleep(d.delay)
	d.ended.Add(1)
	return nil, dialTimeout
}

func (d unreachedDrive) ReadMark() ([]byte, error) { return nil, dialTimeout }

func TestNotReached(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{dialTimeout, true},
		{&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", fmt.Errorf("connection refused"))}, true},
		{&net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, false},
		{ErrNotFound, false},
		{nil, false},
	} {
		if got := NotReached(tc.err); got != tc.want {
			t.Errorf("NotReached(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestReadDoesNotWaitForADriveNotReached: a read gives up on a drive whose
// node cannot be connected to after openHedge and marks it hung; the
// call's failure when the connection times out is no answer from the
// drive and leaves the mark, so the next reads do not wait for it (they
// waited openHedge each time the mark ended, every few seconds for as
// long as a node's machine was down). A read of the marks marks such a
// drive hung too, and keeps it so.
func TestReadDoesNotWaitForADriveNotReached(t *testing.T) {
	defer func(w time.Duration) { openHedge = w }(openHedge)
	s, drives := driveSet(t, 4)
	data := seededData(5, 2*erasure.MinBlockSize+77)
	id := writeBlob(t, s, data)
	down := s.driveOf(id)[0] // a data shard's
	var ended atomic.Int64
	set := make([]Drive, 4)
	for i := range set {
		set[i] = localDrive(t, drives[i])
	}
	set[down] = unreachedDrive{set[down], 100 * time.Millisecond, &ended}
	hs, err := NewDriveSet(set, erasure.MinBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	openHedge = 20 * time.Millisecond
	readWithin(t, hs, id, data, "the first read")
	for deadline := time.Now().Add(10 * time.Second); ended.Load() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the open of the drive never ended")
		}
	}
	if !hs.isHung(down) {
		t.Fatal("the drive whose open failed to connect is not marked hung")
	}
	openHedge = time.Hour // a read that waited for the drive would wait this
	readWithin(t, hs, id, data, "the next read")

	// Its mark read by admin info or the drive watcher: still hung.
	fresh, err := NewDriveSet(set, erasure.MinBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	if errs := fresh.DriveErrors(); !NotReached(errs[down]) {
		t.Fatalf("DriveErrors for the drive that cannot be reached: %v", errs[down])
	}
	if !fresh.isHung(down) {
		t.Error("a read of the marks left the drive that cannot be reached unmarked")
	}
	fresh.DriveErrors()
	if !fresh.isHung(down) {
		t.Error("a second read of the marks ended the mark of the drive that cannot be reached")
	}
}

// TestReadDoesNotWaitForAStuckDrive: a drive a write's call gave up on
// (stuck until it answers a probe) is not waited for by reads either.
func TestReadDoesNotWaitForAStuckDrive(t *testing.T) {
	defer func(w time.Duration) { openHedge = w }(openHedge)
	openHedge = time.Hour
	s, drives := driveSet(t, 4)
	data := seededData(6, erasure.MinBlockSize+5)
	id := writeBlob(t, s, data)
	stuck := s.driveOf(id)[1]
	release := make(chan struct{})
	defer close(release)
	var waited atomic.Int64
	set := make([]Drive, 4)
	for i := range set {
		set[i] = localDrive(t, drives[i])
	}
	set[stuck] = hungOpenDrive{set[stuck], release, &waited}
	hs, err := NewDriveSet(set, erasure.MinBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	hs.stuck[stuck].Add(1)
	defer hs.stuck[stuck].Add(-1)
	readWithin(t, hs, id, data, "a read with a drive stuck")
}

// readWithin reads blob id from s and checks it holds data, failing the
// test if the read takes more than 30 s (it waits for a drive it should
// not).
func readWithin(t *testing.T, s *Store, id string, data []byte, what string) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		got, err := readBlob(s, id)
		if err == nil && !bytes.Equal(got, data) {
			err = fmt.Errorf("read %d bytes, not the %d written", len(got), len(data))
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s waits for a drive it should not", what)
	}
}
