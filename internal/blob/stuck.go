package blob

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// A drive that hangs rather than fails (its node paused, or its machine
// gone without a reset) must not hold every write and delete of the site
// for its calls' timeouts. A write's shard commits and a removal's shard
// removals therefore wait for the drives still silent at most graceWait
// once the write quorum of drives has answered them; a call still out then
// is left to end in its own time, and its drive counts as stuck until it
// does, or, when it fails, until the drive answers a probe: the writes and removals after it leave that drive out (a shard it
// misses is one to heal, a shard it keeps an orphan; the drive watcher
// heals both once every drive answers again, Store.TakeSkipped).

// graceWait is how long a commit or removal waits for the drives that
// have not answered once the write quorum has (a variable for tests).
var graceWait = 2 * time.Second

// errStuckDrive is the answer for a drive a write or removal left out: a
// call given up on is still out to it.
var errStuckDrive = errors.New("blob: a call given up on is still out to the drive")

// stuckDrive reports whether drive i has a call given up on still out.
func (s *Store) stuckDrive(i int) bool { return s.stuck[i].Load() > 0 }

// errHungDrive is the answer for a drive a write or removal left out for
// being marked hung.
var errHungDrive = errors.New("blob: the drive left a read unanswered and has not answered since")

// leftOut tells, for each of the drives idx, why a write or removal
// leaves it out, or nil: a drive with a call given up on still out
// (stuck), and one marked hung (it left a read's open or a read of its
// mark unanswered: its node paused, say) while the others are enough for
// the write quorum. Without that, the first write to a drive the watcher
// already found silent waited graceWait for it. Too few others, and a
// hung drive is tried after all: it may answer.
func (s *Store) leftOut(idx []int) []error {
	errs := make([]error, len(idx))
	out := 0
	s.mu.Lock()
	for k, d := range idx {
		switch {
		case s.stuckDrive(d):
			errs[k] = errStuckDrive
		case s.hung[d]:
			errs[k] = errHungDrive
		default:
			continue
		}
		out++
	}
	s.mu.Unlock()
	if len(idx)-out < s.code.Layout().WriteQuorum() {
		for k := range errs {
			if errs[k] == errHungDrive {
				errs[k] = nil
			}
		}
	}
	return errs
}

// eachQuorum calls fn(k) for each k in 0..len(idx)-1 that skip(k) gives no
// error for (idx[k] is the drive index: it counts as stuck when its call
// is given up on), in parallel, and returns every k's error, skip's where
// it gave one. It returns once every call has answered, or once quorum
// have succeeded and graceWait has passed since: a call still out then is
// errUnanswered.
func (s *Store) eachQuorum(idx []int, quorum int, skip func(k int) error, fn func(k int) error) []error {
	type answer struct {
		k   int
		err error
	}
	answers := make(chan answer, len(idx)) // buffered: a late answer is dropped
	errs := make([]error, len(idx))
	// Under mu: which calls answered, and which were given up on.
	var mu sync.Mutex
	asked := make([]bool, len(idx))
	done := make([]bool, len(idx))
	left := make([]bool, len(idx))
	n := 0
	for k := range idx {
		if errs[k] = skip(k); errs[k] != nil {
			continue
		}
		asked[k] = true
		n++
		go func() {
			err := fn(k)
			mu.Lock()
			done[k] = true
			gaveUp := left[k]
			mu.Unlock()
			if gaveUp {
				s.unstick(idx[k], err)
			}
			answers <- answer{k, err}
		}()
	}
	// waiting counts the answers still to read: a call given up on has
	// none to wait for, and its late answer is dropped.
	ok, waiting := 0, n
	var giveUp <-chan time.Time
	for waiting > 0 {
		select {
		case a := <-answers:
			if left[a.k] {
				continue
			}
			errs[a.k] = a.err
			waiting--
			if a.err == nil {
				if ok++; ok == quorum {
					t := time.NewTimer(graceWait)
					defer t.Stop()
					giveUp = t.C
				}
			}
		case <-giveUp:
			giveUp = nil
			mu.Lock()
			for k := range idx {
				if asked[k] && !done[k] {
					left[k] = true
					s.stuck[idx[k]].Add(1)
					errs[k] = errUnanswered
					waiting--
				}
			}
			mu.Unlock()
		}
	}
	if slices.ContainsFunc(errs, func(err error) bool {
		return errors.Is(err, errUnanswered) || errors.Is(err, errStuckDrive) || errors.Is(err, errHungDrive)
	}) {
		s.skipped.Store(true)
	}
	return errs
}

// probeEvery is how often a stuck drive whose call given up on failed is
// asked for its mark (a variable for tests).
var probeEvery = time.Second

// unstick ends the hold of a call given up on, which ended with err, on
// drive i. A call that failed (its upload stalled, or its timeout came)
// says nothing of the drive's return: the drive stays stuck until it
// answers a probe (its mark read), so that a long pause costs the writes
// the grace once, not once each time a call given up on ends.
func (s *Store) unstick(i int, err error) {
	if err == nil {
		s.stuck[i].Add(-1)
		return
	}
	go func() {
		defer s.stuck[i].Add(-1)
		for {
			if _, err := s.set[i].ReadMark(); err == nil || errors.Is(err, ErrNotFound) {
				return
			}
			time.Sleep(probeEvery)
		}
	}()
}

// TakeSkipped reports whether a write left a drive that was silent without
// its shard, or a removal left one with its shard, since the last call: the
// drives then need a heal scan once they all answer. (A drive that fails at
// once, down or full, is not counted: the drive watcher heals one that was
// down when it answers again, and a full one would fail the heal too.)
func (s *Store) TakeSkipped() bool { return s.skipped.Swap(false) }

// NoteSkipped records that a write elsewhere (another node's, on the same
// drives) left a drive out, for TakeSkipped.
func (s *Store) NoteSkipped() { s.skipped.Store(true) }

// removeShards removes blob id's shard from every drive it reaches. It
// succeeds once the write quorum of drives has removed theirs: no read can
// then find enough shards, and a shard left on a drive that was down, hung
// or skipped is an orphan the heal scan removes.
func (s *Store) removeShards(id string) error {
	if !validID(id) {
		return ErrInvalidID
	}
	idx := make([]int, len(s.set))
	for i := range idx {
		idx[i] = i
	}
	quorum := s.code.Layout().WriteQuorum()
	out := s.leftOut(idx)
	errs := s.eachQuorum(idx, quorum,
		func(i int) error { return out[i] },
		func(i int) error { return s.set[i].Remove(id) })
	removed := 0
	for _, err := range errs {
		if err == nil {
			removed++
		}
	}
	if removed < quorum {
		return fmt.Errorf("blob: remove %s: %d of %d drives: %w", id, removed, len(errs), errors.Join(errs...))
	}
	return nil
}
