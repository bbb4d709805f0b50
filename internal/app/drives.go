package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
)

// driveCountKey records how many drives the site's object data is spread
// over; it is written when the site first starts and never changes, since
// the erasure layout, and so every blob's shards, follow from it.
const driveCountKey = "sys/drive-count"

// validDrives checks a --drives list: none, or 2 to 16 distinct
// directories.
func validDrives(drives []string) error {
	if len(drives) == 0 {
		return nil
	}
	if len(drives) < 2 || len(drives) > blob.MaxDrives {
		return fmt.Errorf("--drives: %d drives: give 2 to %d (one drive is --dir alone)", len(drives), blob.MaxDrives)
	}
	seen := map[string]bool{}
	for _, d := range drives {
		if d == "" {
			return errors.New("--drives: an empty drive path")
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return fmt.Errorf("--drives: %s: %w", d, err)
		}
		if seen[abs] {
			return fmt.Errorf("--drives: %s is given twice", d)
		}
		seen[abs] = true
	}
	return nil
}

// driveCount is how many drives the configuration gives the site's object
// data.
func (s *Server) driveCount() int {
	if s.cfg.Blobs != nil {
		return s.cfg.Blobs.Drives()
	}
	return max(1, len(s.cfg.Drives))
}

// openBlobs opens the object data store on the configured drives, after
// checking that their number is the one the site was created with, and
// claims them. replaced lists the drives found empty on a site that
// already held data.
func (s *Server) openBlobs(fresh bool) (st *blob.Store, replaced []int, err error) {
	n := s.driveCount()
	recorded := 1 // sites from before drive sets kept their data in Dir
	raw, err := s.meta.Get([]byte(driveCountKey))
	switch {
	case err == nil:
		if recorded, err = strconv.Atoi(string(raw)); err != nil {
			return nil, nil, fmt.Errorf("drive count record %q: %w", raw, err)
		}
	case errors.Is(err, meta.ErrNotFound):
		if fresh {
			recorded = n
		}
		b := s.meta.NewBatch()
		b.Set([]byte(driveCountKey), []byte(strconv.Itoa(recorded)))
		if err := b.Commit(true); err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, err
	}
	if n != recorded {
		return nil, nil, fmt.Errorf("this site's object data is on %d drive(s) and cannot start on %d: the erasure layout follows from the number of drives; give the original drives", recorded, n)
	}
	switch {
	case s.cfg.Blobs != nil:
		st = s.cfg.Blobs
	case n == 1:
		st, err = blob.Open(s.cfg.Dir)
		return st, nil, err
	default:
		if st, err = blob.OpenDrives(s.cfg.Drives, 0, s.trace); err != nil {
			return nil, nil, err
		}
	}
	marked, unreachable, err := st.Claim(s.deploymentID)
	if err != nil {
		return nil, nil, err
	}
	if len(unreachable) > 0 {
		s.log.Warn("drives unreachable at startup: serving without them", "drives", unreachable)
	}
	s.downDrives = unreachable
	if !fresh && len(marked) > 0 {
		replaced = marked
	}
	s.log.Info("object data on drives", "drives", n, "layout", st.Layout().String(), "replaced", len(replaced))
	return st, replaced, nil
}

// driveWatchInterval is how often a drive set's drives are checked for
// one that came back, or was put in place empty.
const driveWatchInterval = 10 * time.Second

// skippedHealGap is the least time between heal scans the drive watcher
// starts for writes and deletes that left drives out (blob's
// TakeSkipped): a drive reachable but failing every call must not have
// the site scanning without end.
const skippedHealGap = time.Minute

// startDriveHeal watches a drive set: when drives were found empty at
// startup, when one that could not be reached answers again, when an
// empty one is put in place of another (a node of a multi-node site back
// after being down, or replaced), or when every drive answers again after
// writes or deletes left some out (a node that hung for less than a
// check could see), it rebuilds their shards in the background with a
// heal scan at the default pace (it removes the orphans too), logged as
// it starts and ends. `twinlake admin heal ALIAS --scan` does the same on
// demand.
func (s *Server) startDriveHeal() {
	if s.blobs.Drives() == 1 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.stopDriveHeal = func() { cancel(); <-done }
	go func() {
		defer close(done)
		heal, down := len(s.replacedDrives) > 0, s.downDrives
		why := "drives found empty at startup"
		tick := time.NewTicker(driveWatchInterval)
		defer tick.Stop()
		var lastHeal time.Time
		for {
			if heal {
				s.blobs.TakeSkipped() // the scan covers what was left out until now
				lastHeal = time.Now()
				s.healDrives(ctx, why)
				heal = false
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			marked, unreachable, err := s.blobs.Claim(s.deploymentID)
			if err != nil {
				s.log.Warn("checking the drives", "err", err)
				continue
			}
			back := slices.ContainsFunc(down, func(i int) bool { return !slices.Contains(unreachable, i) })
			switch {
			case len(marked) > 0:
				heal, why = true, fmt.Sprintf("drives %v put in place empty", marked)
			case back:
				heal, why = true, "unreachable drives answer again"
			case len(unreachable) == 0 && time.Since(lastHeal) >= skippedHealGap && s.blobs.TakeSkipped():
				heal, why = true, "writes or deletes left out drives that did not answer"
			}
			down = unreachable
		}
	}()
}

// healDrives runs one heal scan for the drive watcher.
func (s *Server) healDrives(ctx context.Context, why string) {
	s.log.Warn(why+": rebuilding their shards in the background", "drives", s.blobs.Drives())
	rep, err := s.objects.HealScan(ctx, objects.HealOptions{RecordsPerSecond: adminclient.HealDefaultRate})
	if err != nil {
		s.log.Warn("drive heal stopped", "err", err)
		return
	}
	s.log.Info("drive heal done", "blobs", rep.BlobFiles, "degraded", rep.Degraded, "shardsRebuilt", rep.ShardsRebuilt,
		"missing", rep.MissingCount, "elapsed", rep.Elapsed)
}
