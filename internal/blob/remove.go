package blob

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// removeWait is how long a removal waits for the drives that have not
// answered once the write quorum of drives has removed their shards (a
// variable for tests). A drive still silent then (its node paused, or its
// machine gone) is left to finish the removal in its own time, and the
// removals after it skip that drive until it answers: a node that hangs
// costs the first delete removeWait, and the next ones nothing, instead
// of its call's timeout each.
var removeWait = 2 * time.Second

// errStuckDrive is a removal's answer for a drive it skipped: a removal
// given up on is still out to it.
var errStuckDrive = errors.New("blob: a removal given up on is still out to the drive")

// removeShards removes blob id's shard from every drive it reaches. It
// succeeds once the write quorum of drives has removed theirs: no read can
// then find enough shards, and a shard left on a drive that was down, hung
// or skipped is an orphan the heal scan removes.
func (s *Store) removeShards(id string) error {
	if !validID(id) {
		return ErrInvalidID
	}
	type answer struct {
		i   int
		err error
	}
	answers := make(chan answer, len(s.set)) // buffered: a late answer is dropped
	errs := make([]error, len(s.set))
	// Under mu: which drives were asked, which answered, and which the
	// removal gave up on.
	var mu sync.Mutex
	asked := make([]bool, len(s.set))
	done := make([]bool, len(s.set))
	left := make([]bool, len(s.set))
	n := 0
	for i, d := range s.set {
		if s.stuck[i].Load() > 0 {
			errs[i] = errStuckDrive
			continue
		}
		asked[i] = true
		n++
		go func() {
			err := d.Remove(id)
			mu.Lock()
			done[i] = true
			gaveUp := left[i]
			mu.Unlock()
			if gaveUp {
				s.stuck[i].Add(-1)
			}
			answers <- answer{i, err}
		}()
	}
	quorum := s.code.Layout().WriteQuorum()
	removed := 0
	var giveUp <-chan time.Time
collect:
	for range n {
		select {
		case a := <-answers:
			errs[a.i] = a.err
			if a.err == nil {
				if removed++; removed == quorum && giveUp == nil {
					t := time.NewTimer(removeWait)
					defer t.Stop()
					giveUp = t.C
				}
			}
		case <-giveUp:
			mu.Lock()
			for i := range s.set {
				if asked[i] && !done[i] {
					left[i] = true
					s.stuck[i].Add(1)
					errs[i] = errUnanswered
				}
			}
			mu.Unlock()
			break collect
		}
	}
	if removed < quorum {
		return fmt.Errorf("blob: remove %s: %d of %d drives: %w", id, removed, len(errs), errors.Join(errs...))
	}
	return nil
}
