package scanner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
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
	// Warehouse and After are the job's cursor: the warehouse in hand
	// (those before it are done) and the key of its last record
	// handled.
	Warehouse string `json:"warehouse,omitempty"`
	After     string `json:"after,omitempty"`
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
	s.runBackfillLocked(job)
	return job, nil
}

// resumeBackfill carries on, from its cursor, a backfill that a restart
// or a change of leader interrupted: its record says it is running, and no
// run of this scanner holds it.
func (s *Scanner) resumeBackfill() {
	job, err := s.BackfillStatus(s.ctx)
	if err != nil || job.State != BackfillRunning {
		return
	}
	if s.replicaSide() {
		job.State, job.Error, job.Finished = BackfillFailed, "the site became a replica before the backfill finished", s.cfg.Now().UTC()
		if err := s.saveBackfill(job); err != nil {
			s.log.Error("save backfill", "err", err)
		}
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.backfill != nil {
		return
	}
	s.log.Info("resuming backfill", "job", job.ID, "warehouse", job.Warehouse)
	s.runBackfillLocked(job)
}

// runBackfillLocked runs job in the background. Canceled, it is saved
// canceled; when the scanner stops it is left running with its cursor, to
// resume where the next start finds it.
func (s *Scanner) runBackfillLocked(job BackfillJob) {
	bctx, cancel := context.WithCancel(s.ctx)
	r := &backfillRun{cancel: cancel, done: make(chan struct{})}
	s.backfill = r
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(r.done)
		err := s.runBackfill(bctx, &job)
		switch {
		case s.ctx.Err() != nil:
			return // stopping: the job resumes from its saved cursor
		case bctx.Err() != nil:
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
	}()
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

// backfillSaveEvery is how many records a backfill handles between saves
// of its cursor.
const backfillSaveEvery = 64

// backfillItem is one identity record of a warehouse to backfill.
type backfillItem struct {
	key string
	rec catalog.Record
}

// backfillEvent is the trace event's name for a record of kind.
func backfillEvent(kind string) string {
	switch kind {
	case catalog.KindNamespace:
		return "backfillNamespaceIdentity"
	case catalog.KindView:
		return "backfillViewIdentity"
	}
	return "backfillTableIdentity"
}

// runBackfill walks the warehouses in name order and each one's records in
// key order from the job's cursor (Warehouse, After), saving the cursor
// with the tallies every backfillSaveEvery records, so that a run that
// stops resumes after the last record saved; the few records handled
// again find their record present.
func (s *Scanner) runBackfill(ctx context.Context, job *BackfillJob) error {
	start := s.cfg.Now()
	for _, b := range s.cfg.Objects.ListBuckets(ctx) {
		if !b.Warehouse || b.Name < job.Warehouse {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if b.Name != job.Warehouse {
			job.Warehouse, job.After = b.Name, ""
			job.Warehouses++
			if err := s.saveBackfill(*job); err != nil { // progress, for status
				return err
			}
		}
		items, err := s.backfillItems(ctx, job, b.Name)
		if err != nil {
			return err
		}
		handled := 0
		for _, it := range items {
			if it.key <= job.After {
				continue
			}
			// A record written is a change queued for every peer: the
			// job holds while a peer's backlog is full.
			if err := s.cfg.Replication.WaitForRoom(ctx); err != nil {
				return err
			}
			switch it.rec.Kind {
			case catalog.KindNamespace:
				job.Namespaces++
			case catalog.KindView:
				job.Views++
			default:
				job.Tables++
			}
			if err := s.backfillOne(ctx, job, b.Name, it.key, it.rec); err != nil {
				return err
			}
			job.After = it.key
			if handled++; handled%backfillSaveEvery == 0 {
				if err := s.saveBackfill(*job); err != nil {
					return err
				}
			}
		}
	}
	s.traceEvent("backfillAllWarehouses", "", fmt.Sprintf("%d warehouses, %d namespaces, %d tables, %d views: %d records written, %d already present",
		job.Warehouses, job.Namespaces, job.Tables, job.Views, job.Written, job.Unchanged), start, nil)
	return nil
}

// backfillItems lists warehouse wh's identity records in key order. A
// record without a valid key is a warning, given once: when the job
// starts the warehouse.
func (s *Scanner) backfillItems(ctx context.Context, job *BackfillJob, wh string) ([]backfillItem, error) {
	ex, err := s.cfg.Catalog.ExportWarehouse(ctx, wh)
	if err != nil {
		return nil, err
	}
	var items []backfillItem
	add := func(rec catalog.Record) {
		key, err := rec.Key()
		if err != nil {
			if job.After == "" {
				job.Warnings = append(job.Warnings, err.Error())
			}
			return
		}
		items = append(items, backfillItem{key, rec})
	}
	for _, ns := range ex.Namespaces {
		add(catalog.Record{Kind: catalog.KindNamespace, Namespace: ns.Levels, Properties: ns.Properties, UpdatedMS: s.cfg.Now().UnixMilli()})
	}
	for _, e := range ex.Entries {
		add(s.cfg.Catalog.IdentityOf(e))
	}
	slices.SortFunc(items, func(a, b backfillItem) int { return strings.Compare(a.key, b.key) })
	return items, nil
}

// backfillOne writes rec unless the warehouse already holds an equal one.
func (s *Scanner) backfillOne(ctx context.Context, job *BackfillJob, wh, key string, rec catalog.Record) error {
	start, fn := s.cfg.Now(), backfillEvent(rec.Kind)
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
