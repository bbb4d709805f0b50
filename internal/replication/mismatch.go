package replication

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/objects"
)

// mismatchLoop compares this site with each peer every mismatch_interval.
// A change of the interval takes effect at once, and a peer whose link
// comes back after work for it was dropped is compared right away.
func (e *Engine) mismatchLoop() {
	defer e.bg.Done()
	last := time.Now()
	for {
		wait := e.cfg.Settings.Duration(config.SubsysReplication, config.ReplicationMismatchInterval) - time.Since(last)
		timer := time.NewTimer(max(wait, 0))
		select {
		case <-e.ctx.Done():
			timer.Stop()
			return
		case <-e.mismatchNow:
			timer.Stop()
			if !e.takeCompareRequest() {
				continue // the settings changed: wait out the new interval
			}
		case <-timer.C:
		}
		last = time.Now()
		if _, err := e.CheckMismatches(e.ctx); err != nil && e.ctx.Err() == nil {
			e.log.Warn("mismatch detection", "err", err)
		}
	}
}

// kickMismatch wakes the mismatch loop.
func (e *Engine) kickMismatch() {
	select {
	case e.mismatchNow <- struct{}{}:
	default:
	}
}

// requestCompare asks the mismatch loop to compare with the peers now.
func (e *Engine) requestCompare() {
	e.compareRequested.Store(true)
	e.kickMismatch()
}

func (e *Engine) takeCompareRequest() bool { return e.compareRequested.Swap(false) }

// CheckMismatches compares this site's versions with every reachable peer
// whose backlog is empty and queues each version missing or stale there.
// Sites compare per-bucket digests first (256 slots of XORed version
// hashes, kept current on every write), so a cycle reads versions only in
// the slots that differ: unchanged data is never rescanned. It returns how
// many versions it queued.
func (e *Engine) CheckMismatches(ctx context.Context) (int, error) {
	total := 0
	for _, t := range *e.targets.Load() {
		if !t.online() {
			continue
		}
		if p, r := t.snapshot(); p.n+r.n > 0 {
			continue // in-flight work would show as differences
		}
		n, err := e.compareWith(ctx, t)
		total += n
		if err != nil {
			return total, err
		}
		n, err = e.compareIAM(ctx, t)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// compareIAM re-sends every IAM record to a peer whose IAM digest differs
// from this site's (work dropped, or a site that was restored): the peer
// keeps the newer of each record, so the sites converge, and once they
// agree nothing is sent. A peer that predates IAM replication reports no
// digest, or refused IAM records (its IAM gate is closed), and is left
// alone.
func (e *Engine) compareIAM(ctx context.Context, t *target) (int, error) {
	if refused, _, _ := t.iam.state(); e.iam == nil || refused {
		return 0, nil // nothing to compare, or the peer takes no IAM records: they wait in the journal
	}
	info, err := t.peer.Info(ctx)
	if err != nil {
		return 0, err
	}
	if info.IAMDigest == "" || info.IAMDigest == iamDigest(e.iam) {
		return 0, nil
	}
	n, err := e.queueIAM(t)
	if n > 0 {
		e.m.mismatches.WithLabelValues(t.site.Name).Add(float64(n))
		e.traceEvent("replication.Mismatch", t.site.Name, "", "", "IAM records differ: queued every record again", time.Now(), nil)
	}
	return n, err
}

func (e *Engine) compareWith(ctx context.Context, t *target) (int, error) {
	start := time.Now()
	theirs, err := t.peer.Digests(ctx)
	if err != nil {
		return 0, err
	}
	ours, err := e.Digests(ctx)
	if err != nil {
		return 0, err
	}
	var work []Entry
	now := time.Now().UnixNano()
	for bucket, d := range ours {
		pd, ok := theirs[bucket]
		if !ok {
			work = append(work, Entry{Op: OpBucket, Bucket: bucket, Queued: now})
			continue
		}
		var slots []int
		for slot := range objects.DigestSlots {
			if d[slot] != pd[slot] {
				slots = append(slots, slot)
			}
		}
		if len(slots) == 0 {
			continue
		}
		from := len(work)
		// One pass over the bucket on each side covers every differing slot.
		local, err := e.cfg.Objects.SlotVersions(ctx, bucket, slots)
		if err != nil {
			return 0, err
		}
		remote, err := t.peer.SlotVersions(ctx, bucket, slots)
		if err != nil {
			return 0, err
		}
		have := make(map[string]objects.VersionRef, len(remote))
		for _, r := range remote {
			have[r.Key+"\x00"+r.VersionID] = r
		}
		mine := make(map[string]bool, len(local))
		for _, l := range local {
			mine[l.Key+"\x00"+l.VersionID] = true
		}
		// Versions the peer still holds that this site purged: send the
		// purge again (it was dropped).
		for _, r := range remote {
			if mine[r.Key+"\x00"+r.VersionID] {
				continue
			}
			if t, how, ok := e.cfg.Objects.PurgedAs(bucket, r.Key, r.VersionID); ok && r.ModTime <= t {
				work = append(work, Entry{Op: OpPurge, Bucket: bucket, Key: r.Key, VersionID: r.VersionID, At: r.ModTime, Queued: now, Purge: how})
			}
		}
		for _, l := range local {
			r, ok := have[l.Key+"\x00"+l.VersionID]
			if ok && (r.ModTime > l.ModTime || r.ModTime == l.ModTime && r.MetaTime >= l.MetaTime) {
				continue
			}
			work = append(work, Entry{Op: OpVersion, Bucket: bucket, Key: l.Key, VersionID: l.VersionID, Size: l.Size, At: l.ModTime, Queued: now})
		}
		// Oldest first: a key's versions reach the peer in the order they
		// were made, as they did the first time (a delete marker after the
		// version it hides, which a peer may take only then).
		slices.SortStableFunc(work[from:], func(a, b Entry) int { return cmp.Compare(a.At, b.At) })
	}
	if len(work) == 0 {
		return 0, nil
	}
	batch := e.cfg.Meta.NewBatch()
	for _, w := range work {
		t.journal(batch, w)
	}
	if err := batch.Commit(true); err != nil {
		return 0, err
	}
	t.wakeUp()
	e.m.mismatches.WithLabelValues(t.site.Name).Add(float64(len(work)))
	e.traceEvent("replication.Mismatch", t.site.Name, "", "", "queued versions missing or stale on the peer", start, nil)
	e.log.Info("mismatch detection queued work", "target", t.site.Name, "entries", len(work))
	return len(work), nil
}
