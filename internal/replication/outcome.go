package replication

import (
	"errors"
	"fmt"
	"time"

	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/trace"
)

// Outcomes of a send: each completes its claimed entry exactly once,
// removing it from the journal or retry queue in the same batch that
// records what happened, then releasing the claim.

func (t *target) succeeded(j job, sentVersion *objects.Version, out objects.ApplyOutcome, sent int64, start time.Time) {
	drop := func(b meta.Batch) { b.Delete(j.key) }
	var err error
	if j.e.Op == OpVersion {
		// The status and the journal entry's removal commit together.
		err = t.e.cfg.Objects.SetTargetStatuses(t.site.ID, objects.StatusCompleted,
			[]objects.TargetStatusUpdate{{Bucket: j.e.Bucket, Key: j.e.Key, VersionID: j.e.VersionID, Sent: sentVersion, Extra: drop}})
	} else {
		b := t.e.cfg.Meta.NewBatch()
		drop(b)
		err = b.Commit(false)
	}
	if err != nil && !errors.Is(err, objects.ErrBucketNotFound) {
		t.e.log.Error("complete journal entry", "err", err)
	}
	t.done(j, out, sent, start)
}

// delivered is one version of a batch the peer took.
type delivered struct {
	j    job
	v    *objects.Version // as sent
	out  objects.ApplyOutcome
	sent int64
}

// succeededAll is succeeded for the versions of one batch, with one commit
// for all their statuses and journal entries.
func (t *target) succeededAll(ds []delivered, start time.Time) {
	ups := make([]objects.TargetStatusUpdate, len(ds))
	for i, d := range ds {
		key := d.j.key
		ups[i] = objects.TargetStatusUpdate{Bucket: d.j.e.Bucket, Key: d.j.e.Key, VersionID: d.j.e.VersionID, Sent: d.v,
			Extra: func(b meta.Batch) { b.Delete(key) }}
	}
	if err := t.e.cfg.Objects.SetTargetStatuses(t.site.ID, objects.StatusCompleted, ups); err != nil {
		t.e.log.Error("complete journal entries", "err", err)
	}
	for _, d := range ds {
		t.done(d.j, d.out, d.sent, start)
	}
}

// done is the bookkeeping of a completed send, once its journal or retry
// queue entry is removed.
func (t *target) done(j job, out objects.ApplyOutcome, sent int64, start time.Time) {
	which := 0
	if j.mrf != nil {
		which = 1
	}
	t.tally(j.e, which, -1)
	t.unclaim(j.key, j.e)
	t.e.m.sentObjects.WithLabelValues(t.site.Name).Inc()
	t.e.m.sentBytes.WithLabelValues(t.site.Name).Add(float64(sent))
	if t.e.cfg.Trace.Enabled(trace.Replication) {
		t.e.traceEvent("replication.Send", t.site.Name, j.e.Bucket, j.e.Key, j.e.Op+" "+j.e.VersionID+": "+out.String(), start, nil)
	}
}

// sendFailure is a failed send's error and time.
type sendFailure struct {
	err string
	at  time.Time
}

// failed moves a journal entry to the retry queue, or reschedules a retry
// with exponential backoff, or drops it after max_retries.
func (t *target) failed(j job, cause error, start time.Time) {
	now := t.openRetry()
	defer t.closeRetry(now)
	m := j.mrf
	which, retries := 0, -1 // from the journal: never retried
	if m == nil {
		m = &MRFEntry{Entry: j.e, Target: t.site.ID, Seq: seqOf(j.key)}
	} else {
		which, retries = 1, m.RetryCount
	}
	t.lastFail.Store(&sendFailure{err: cause.Error(), at: now})
	pol := currentRetryPolicy(t.e.cfg.Settings)
	d := pol.next(retries, now)
	if d.drop && errors.Is(cause, ErrUnsupported) {
		// An older peer lacks the call: the work waits for its upgrade,
		// retried at the longest delay, and is never dropped.
		d = retryDecision{retries: d.retries - 1, due: now.Add(pol.maxDelay)}
	}
	m.RetryCount, m.FailedAt, m.Err = d.retries, now.UnixNano(), cause.Error()
	b := t.e.cfg.Meta.NewBatch()
	b.Delete(j.key)
	dropped := d.drop
	if !dropped {
		m.Due = d.due.UnixNano()
		b.Set(mrfKey(t.site.ID, m.Due, m.Seq), encode(m))
	}
	if err := b.Commit(false); err != nil {
		t.e.log.Error("queue retry", "err", err)
	}
	t.tally(j.e, which, -1)
	if !dropped {
		t.tally(j.e, 1, 1)
	}
	t.unclaim(j.key, j.e)
	t.e.m.failedObjects.WithLabelValues(t.site.Name).Inc()
	if j.e.Op == OpVersion {
		if err := t.e.cfg.Objects.SetTargetStatus(j.e.Bucket, j.e.Key, j.e.VersionID, t.site.ID, objects.StatusFailed); err != nil &&
			!errors.Is(err, objects.ErrVersionNotFound) {
			t.e.log.Warn("record replication status", "err", err)
		}
	}
	if dropped {
		t.needCompare.Store(true)
		t.e.m.dropped.WithLabelValues(t.site.Name).Inc()
		t.e.log.Error("replication dropped after max retries", "target", t.site.Name, "bucket", j.e.Bucket,
			"key", j.e.Key, "versionID", j.e.VersionID, "op", j.e.Op, "retries", m.RetryCount, "err", cause)
		t.e.traceEvent("replication.Drop", t.site.Name, j.e.Bucket, j.e.Key,
			fmt.Sprintf("%s %s (entry %d): dropped after %d retries", j.e.Op, j.e.VersionID, m.Seq, m.RetryCount), start, cause)
		return
	}
	fn := "replication.Retry"
	if j.mrf == nil {
		fn = "replication.Fail"
	}
	t.e.traceEvent(fn, t.site.Name, j.e.Bucket, j.e.Key, j.e.Op+" "+j.e.VersionID+": queued for retry", start, cause)
}
