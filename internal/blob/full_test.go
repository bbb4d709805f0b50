package blob

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/erasure"
)

// TestQuorumErrorTellsFullDrives: a write that misses its quorum is
// ErrWriteQuorum, and also ENOSPC when the full drives alone are enough
// to miss it: then more room, not more drives, is what it lacks.
func TestQuorumErrorTellsFullDrives(t *testing.T) {
	full := fmt.Errorf("create: %w", syscall.ENOSPC)
	down := errors.New("connection refused")
	for _, c := range []struct {
		errs       []error
		q          int
		fail, room bool
	}{
		{errs: []error{nil, nil, nil, full}, q: 3},
		{errs: []error{nil, nil, full, full}, q: 3, fail: true, room: true},
		{errs: []error{nil, nil, full, down}, q: 3, fail: true}, // one full drive alone leaves 3
		{errs: []error{full, full, full, down}, q: 3, fail: true, room: true},
		{errs: []error{down, down, nil, nil}, q: 3, fail: true},
		{errs: []error{nil, full}, q: 2, fail: true, room: true},
		{errs: []error{nil}, q: 1},
	} {
		err := quorumError(c.errs, c.q)
		if (err != nil) != c.fail || errors.Is(err, erasure.ErrWriteQuorum) != c.fail || errors.Is(err, syscall.ENOSPC) != c.room {
			t.Errorf("%v (quorum %d): %v", c.errs, c.q, err)
		}
	}
}

// fullLocal is a local drive out of room.
type fullLocal struct{ Drive }

func (fullLocal) Create(id string) (ShardWriter, error) {
	return nil, fmt.Errorf("blob: create shard %s: %w", id, syscall.ENOSPC)
}

// TestDriveSetFullDrives: with two of four drives full a write misses its
// quorum for want of room; with one it is written on the other three.
func TestDriveSetFullDrives(t *testing.T) {
	_, drives := driveSet(t, 4)
	s, err := storeOver(t, drives)
	if err != nil {
		t.Fatal(err)
	}
	s.set[0] = fullLocal{s.set[0]}
	if got, err := readBlob(s, writeBlob(t, s, []byte("three of four"))); err != nil || string(got) != "three of four" {
		t.Fatalf("read: %q %v", got, err)
	}
	s.set[2] = fullLocal{s.set[2]}
	w, err := s.Create()
	if err == nil {
		w.Write([]byte("x"))
		_, err = w.Commit()
	}
	if !errors.Is(err, erasure.ErrWriteQuorum) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write with 2 of 4 drives full: %v", err)
	}
}

// TestDriveSetFillsMidWrite: a blob whose shards fill their drives as
// they are written (each drive down to its reserve partway) fails for
// want of room, not only for want of its quorum.
func TestDriveSetFillsMidWrite(t *testing.T) {
	base := t.TempDir()
	var set []Drive
	for i := range 4 {
		d := shardDrive(t, filepath.Join(base, fmt.Sprint("d", i)))
		if i > 0 {
			d.small.reserve = &Reserve{dir: d.root, keep: 100 << 20, now: time.Now,
				free: func(string) (int64, error) { return 101 << 20, nil }}
		}
		set = append(set, d)
	}
	s, err := NewDriveSet(set, erasure.MinBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Create()
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(w, bytes.NewReader(make([]byte, 8<<20)))
	if err == nil {
		_, err = w.Commit()
	} else {
		w.Abort()
	}
	if !errors.Is(err, erasure.ErrWriteQuorum) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a write that fills 3 of 4 drives: %v", err)
	}
}
