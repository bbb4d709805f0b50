package replication

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
)

const (
	resyncBatch      = 256 // versions journalled (and the cursor saved) per batch
	resyncPollOnFull = 100 * time.Millisecond
)

// resyncRun is a running resync job.
type resyncRun struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// ResyncStart re-sends every bucket and every version this site holds to
// one peer (by name or deployment ID), in the background. The job and its
// cursor are persisted: it resumes after a restart until done or canceled.
func (e *Engine) ResyncStart(ctx context.Context, peer string) (ResyncJob, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.target(peer)
	if t == nil {
		return ResyncJob{}, fmt.Errorf("%w: no peer %q in the configuration", ErrInvalidRequest, peer)
	}
	return e.startResyncLocked(t.site.ID)
}

func (e *Engine) startResyncLocked(target string) (ResyncJob, error) {
	if r := e.resyncs[target]; r != nil {
		select {
		case <-r.done:
		default:
			if j, err := e.loadResync(target); err == nil && j.State != ResyncRunning {
				<-r.done // finished; only its last bookkeeping is left
				break
			}
			return ResyncJob{}, ErrResyncRunning
		}
	}
	job := ResyncJob{ID: randomHex(8), Target: target, State: ResyncRunning, Started: time.Now().UTC()}
	if err := e.saveResync(&job, true); err != nil {
		return ResyncJob{}, err
	}
	// IAM records are few: they are queued at once, not walked by the job.
	if t := e.target(target); t != nil {
		if _, err := e.queueIAM(t); err != nil {
			return ResyncJob{}, err
		}
	}
	e.runResyncLocked(job)
	return job, nil
}

// resumeResyncsLocked restarts the jobs a restart interrupted.
func (e *Engine) resumeResyncsLocked() error {
	var jobs []ResyncJob
	err := meta.Scan(e.cfg.Meta, []byte(pfxResync), meta.PrefixEnd([]byte(pfxResync)), func(k, v []byte) (bool, error) {
		var j ResyncJob
		if err := decode(v, &j); err != nil {
			return false, err
		}
		if j.State == ResyncRunning {
			jobs = append(jobs, j)
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if e.target(j.Target) == nil {
			continue
		}
		e.log.Info("resuming resync", "target", j.Target, "job", j.ID, "bucket", j.Bucket)
		e.runResyncLocked(j)
	}
	return nil
}

func (e *Engine) runResyncLocked(job ResyncJob) {
	ctx, cancel := context.WithCancel(e.ctx)
	r := &resyncRun{cancel: cancel, done: make(chan struct{})}
	e.resyncs[job.Target] = r
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		defer close(r.done)
		err := e.resync(ctx, &job)
		switch {
		case ctx.Err() != nil:
			return // canceled (state saved by ResyncCancel) or shutting down (resumes)
		case err != nil:
			job.State, job.LastError = ResyncFailed, err.Error()
		default:
			job.State = ResyncCompleted
		}
		job.Finished = time.Now().UTC()
		if err := e.saveResync(&job, true); err != nil {
			e.log.Error("save resync", "err", err)
		}
		e.log.Info("resync finished", "target", job.Target, "state", job.State, "queued", job.Queued)
	}()
}

// resync walks every bucket from the job's cursor and journals each bucket
// and version for the target, saving the cursor with each batch.
func (e *Engine) resync(ctx context.Context, job *ResyncJob) error {
	for _, b := range e.cfg.Objects.ListBuckets(ctx) {
		if b.Name < job.Bucket {
			continue
		}
		if b.Name != job.Bucket {
			job.Bucket, job.AfterKey, job.AfterVer = b.Name, "", ""
			t := e.target(job.Target)
			if t == nil {
				return errors.New("target left the configuration")
			}
			batch := e.cfg.Meta.NewBatch()
			t.journal(batch, Entry{Op: OpBucket, Bucket: b.Name, Queued: time.Now().UnixNano()})
			job.Buckets++
			batch.Set(resyncKey(job.Target), encode(job))
			if err := batch.Commit(false); err != nil {
				return err
			}
		}
		if err := e.resyncBucket(ctx, job); err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) resyncBucket(ctx context.Context, job *ResyncJob) error {
	for {
		t := e.target(job.Target)
		if t == nil {
			return errors.New("target left the configuration")
		}
		// The job waits while the backlog to the peer is as deep as the
		// setting allows.
		for e.full(t) {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(resyncPollOnFull):
			}
		}
		var refs []objects.VersionRef
		err := e.cfg.Objects.WalkVersions(ctx, job.Bucket, job.AfterKey, job.AfterVer, func(r objects.VersionRef) bool {
			refs = append(refs, r)
			return len(refs) < resyncBatch
		})
		if err != nil {
			if errors.Is(err, objects.ErrBucketNotFound) {
				return nil
			}
			return err
		}
		if len(refs) == 0 {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		batch := e.cfg.Meta.NewBatch()
		now := time.Now().UnixNano()
		for _, r := range refs {
			t.journal(batch, Entry{Op: OpVersion, Bucket: job.Bucket, Key: r.Key, VersionID: r.VersionID, Size: r.Size, At: r.ModTime, Queued: now})
			job.Queued++
			job.Bytes += r.Size
		}
		last := refs[len(refs)-1]
		job.AfterKey, job.AfterVer = last.Key, last.VersionID
		batch.Set(resyncKey(job.Target), encode(job))
		if err := batch.Commit(true); err != nil {
			return err
		}
		t.wakeUp()
	}
}

func (e *Engine) saveResync(job *ResyncJob, sync bool) error {
	b := e.cfg.Meta.NewBatch()
	b.Set(resyncKey(job.Target), encode(job))
	return b.Commit(sync)
}

// ResyncStatus returns the latest resync job for a peer.
func (e *Engine) ResyncStatus(ctx context.Context, peer string) (ResyncJob, error) {
	t := e.target(peer)
	if t == nil {
		return ResyncJob{}, fmt.Errorf("%w: no peer %q in the configuration", ErrInvalidRequest, peer)
	}
	return e.loadResync(t.site.ID)
}

func (e *Engine) loadResync(target string) (ResyncJob, error) {
	raw, err := e.cfg.Meta.Get(resyncKey(target))
	if errors.Is(err, meta.ErrNotFound) {
		return ResyncJob{}, ErrNoResync
	}
	if err != nil {
		return ResyncJob{}, err
	}
	var j ResyncJob
	if err := decode(raw, &j); err != nil {
		return ResyncJob{}, err
	}
	return j, nil
}

// ResyncCancel stops a running resync; what it already queued is still
// sent.
func (e *Engine) ResyncCancel(ctx context.Context, peer string) (ResyncJob, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.target(peer)
	if t == nil {
		return ResyncJob{}, fmt.Errorf("%w: no peer %q in the configuration", ErrInvalidRequest, peer)
	}
	r := e.resyncs[t.site.ID]
	if r == nil {
		return ResyncJob{}, ErrNoResync
	}
	r.cancel()
	<-r.done
	job, err := e.ResyncStatus(ctx, peer)
	if err != nil {
		return job, err
	}
	if job.State == ResyncRunning {
		job.State, job.Finished = ResyncCanceled, time.Now().UTC()
		if err := e.saveResync(&job, true); err != nil {
			return job, err
		}
	}
	return job, nil
}

// full reports whether the backlog to t is as deep as the setting
// replication resync_backlog allows.
func (e *Engine) full(t *target) bool {
	p, r := t.snapshot()
	return p.n+r.n >= int64(e.cfg.Settings.Int(config.SubsysReplication, config.ReplicationResyncBacklog))
}

// WaitForRoom returns nil once no peer's backlog is as deep as the
// setting replication resync_backlog allows, and ctx's error once ctx has
// ended (at once if it has): work that queues a change for every record
// it walks (a catalog backfill) holds while a peer is away, as a resync
// does, instead of filling the journal, and stops when canceled.
func (e *Engine) WaitForRoom(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for slices.ContainsFunc(*e.targets.Load(), e.full) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(resyncPollOnFull):
		}
	}
	return nil
}
