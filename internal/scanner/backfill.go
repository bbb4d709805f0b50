package scanner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
)

// Backfill job states.
const (
	BackfillRunning   = "running"
	BackfillCompleted = "completed"
	BackfillCanceled  = "canceled"
	BackfillFailed    = "failed"
)

// BackfillJob is a run of the identity-record backfill.
type BackfillJob struct {
	ID         string    `json:"id"`
	State      string    `json:"state"`
	Started    time.Time `json:"started"`
	Finished   time.Time `json:"finished,omitzero"`
	Warehouses int       `json:"warehouses"`
	Namespaces int       `json:"namespaces"`
	Tables     int       `json:"tables"`
	Views      int       `json:"views"`
	Written    int       `json:"written"`
	Unchanged  int       `json:"unchanged"`
	Warnings   []string  `json:"warnings,omitempty"`
	Error      string    `json:"error,omitempty"`
}

type backfillRun struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// BackfillStart writes the catalog identity records a warehouse created
// without them lacks, for every warehouse, namespace, table and view of the
// local catalog. It writes records only (never data or metadata files, and
// no existing object's versions or ETags change), skips records already
// equal to the catalog (so it is idempotent), and runs one at a time.
func (s *Scanner) BackfillStart(ctx context.Context) (BackfillJob, error) {
	if s.replicaSide() {
		return BackfillJob{}, fmt.Errorf("%w: run the backfill on the primary", ErrReplicaReadOnly)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.backfill; r != nil {
		select {
		case <-r.done:
		default:
			if j, err := s.BackfillStatus(ctx); err == nil && j.State != BackfillRunning {
				<-r.done // finished; only its bookkeeping is left
				break
			}
			return BackfillJob{}, ErrBackfillRunning
		}
	}
	job := BackfillJob{ID: randomID(), State: BackfillRunning, Started: s.cfg.Now().UTC()}
	if err := s.saveBackfill(job); err != nil {
		return BackfillJob{}, err
	}
	bctx, cancel := context.WithCancel(s.ctx)
	r := &backfillRun{cancel: cancel, done: make(chan struct{})}
	s.backfill = r
	s.wg.Add(1)
	go func(job BackfillJob) {
		defer s.wg.Done()
		defer close(r.done)
		err := s.runBackfill(bctx, &job)
		switch {
		case bctx.Err() != nil && s.ctx.Err() == nil:
			job.State = BackfillCanceled
		case err != nil:
			job.State, job.Error = BackfillFailed, err.Error()
		default:
			job.State = BackfillCompleted
		}
		job.Finished = s.cfg.Now().UTC()
		if err := s.saveBackfill(job); err != nil {
			s.log.Error("save backfill", "err", err)
		}
	}(job)
	return job, nil
}

// BackfillStatus returns the last backfill job (ErrNoBackfill if none ran).
func (s *Scanner) BackfillStatus(ctx context.Context) (BackfillJob, error) {
	raw, err := s.cfg.Meta.Get([]byte(keyBackfill))
	if errors.Is(err, meta.ErrNotFound) {
		return BackfillJob{}, ErrNoBackfill
	}
	if err != nil {
		return BackfillJob{}, err
	}
	var j BackfillJob
	return j, json.Unmarshal(raw, &j)
}

// BackfillCancel stops a running backfill.
func (s *Scanner) BackfillCancel(ctx context.Context) (BackfillJob, error) {
	s.mu.Lock()
	r := s.backfill
	s.mu.Unlock()
	if r != nil {
		r.cancel()
		<-r.done
	}
	return s.BackfillStatus(ctx)
}

func (s *Scanner) saveBackfill(j BackfillJob) error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	b := s.cfg.Meta.NewBatch()
	b.Set([]byte(keyBackfill), data)
	return b.Commit(true)
}

func (s *Scanner) runBackfill(ctx context.Context, job *BackfillJob) error {
	start := s.cfg.Now()
	for _, b := range s.cfg.Objects.ListBuckets(ctx) {
		if !b.Warehouse {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		job.Warehouses++
		if err := s.saveBackfill(*job); err != nil { // progress, for status
			return err
		}
		ex, err := s.cfg.Catalog.ExportWarehouse(ctx, b.Name)
		if err != nil {
			return err
		}
		for _, ns := range ex.Namespaces {
			rec := catalog.Record{Kind: catalog.KindNamespace, Namespace: ns.Levels, Properties: ns.Properties, UpdatedMS: s.cfg.Now().UnixMilli()}
			job.Namespaces++
			if err := s.backfillOne(ctx, job, b.Name, rec, "backfillNamespaceIdentity"); err != nil {
				return err
			}
		}
		for _, e := range ex.Entries {
			rec := s.cfg.Catalog.IdentityOf(e)
			fn := "backfillTableIdentity"
			if e.Kind == catalog.KindView {
				fn = "backfillViewIdentity"
				job.Views++
			} else {
				job.Tables++
			}
			if err := s.backfillOne(ctx, job, b.Name, rec, fn); err != nil {
				return err
			}
		}
	}
	s.traceEvent("backfillAllWarehouses", "", fmt.Sprintf("%d warehouses, %d namespaces, %d tables, %d views: %d records written, %d already present",
		job.Warehouses, job.Namespaces, job.Tables, job.Views, job.Written, job.Unchanged), start, nil)
	return nil
}

// backfillOne writes rec unless the warehouse already holds an equal one.
func (s *Scanner) backfillOne(ctx context.Context, job *BackfillJob, wh string, rec catalog.Record, fn string) error {
	start := s.cfg.Now()
	key, err := rec.Key()
	if err != nil {
		job.Warnings = append(job.Warnings, err.Error())
		return nil
	}
	path := wh + "/" + key
	cur, err := s.read(ctx, wh, key, "")
	switch {
	case err == nil:
		if have, perr := catalog.ParseRecord(cur); perr == nil && sameIdentity(have, rec) {
			job.Unchanged++
			s.traceEvent(fn, path, "identity record already present", start, nil)
			return nil
		}
	case !errors.Is(err, objects.ErrObjectNotFound):
		return err
	}
	if err := s.cfg.Catalog.WriteIdentity(ctx, wh, rec); err != nil {
		job.Warnings = append(job.Warnings, fmt.Sprintf("%s: %v", path, err))
		s.traceEvent(fn, path, "could not write the identity record", start, err)
		return nil
	}
	job.Written++
	s.traceEvent(fn, path, "identity record written", start, nil)
	return nil
}

func sameIdentity(a, b catalog.Record) bool {
	if a.Kind != b.Kind || a.Deleted != b.Deleted {
		return false
	}
	if a.Kind == catalog.KindNamespace {
		if len(a.Properties) != len(b.Properties) {
			return false
		}
		for k, v := range a.Properties {
			if b.Properties[k] != v {
				return false
			}
		}
		return true
	}
	return a.UUID == b.UUID && a.Version == b.Version && a.MetadataLocation == b.MetadataLocation
}

func randomID() string {
	return fmt.Sprintf("%x", time.Now().UnixNano())
}
