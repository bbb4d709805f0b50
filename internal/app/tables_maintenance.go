package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/twinlake/twinlake/internal/admin"
	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/metrics"
	"github.com/twinlake/twinlake/internal/trace"
)

var _ admin.TablesMaintenance = tablesAdmin{}

// MaintainTable runs table maintenance for the admin API, on the primary
// only: a Tables replica answers ReplicaReadOnly, because its primary's
// maintenance replicates to it. Progress and the summary are traced as
// tables-maintenance events.
func (t tablesAdmin) MaintainTable(ctx context.Context, wh string, req adminclient.MaintenanceRequest,
	progress func(adminclient.MaintenanceEvent)) (adminclient.MaintenanceSummary, error) {
	if err := t.sc.CatalogWriteGuard(ctx, wh); err != nil {
		return adminclient.MaintenanceSummary{}, err
	}
	opts := catalog.MaintenanceOptions{ExpireSnapshots: req.ExpireSnapshots, RetainLast: req.RetainLast,
		RemoveOrphans: req.RemoveOrphans, DryRun: req.DryRun}
	var err error
	if req.OlderThan != "" {
		if opts.OlderThan, err = catalog.ParseAge("older-than", req.OlderThan); err != nil {
			return adminclient.MaintenanceSummary{}, err
		}
	}
	if req.OrphansOlderThan != "" {
		if opts.OrphansOlderThan, err = catalog.ParseAge("orphans-older-than", req.OrphansOlderThan); err != nil {
			return adminclient.MaintenanceSummary{}, err
		}
	}
	if req.RetainLast < 0 || req.RetainLast > catalog.MaxRetainLast {
		return adminclient.MaintenanceSummary{}, fmt.Errorf("%w: retain-last %d is outside 1..%d", catalog.ErrInvalidRequest, req.RetainLast, catalog.MaxRetainLast)
	}
	id := catalog.Ident{Namespace: req.Namespace, Name: req.Name}
	path := wh + "/" + strings.Join(req.Namespace, ".") + "." + req.Name
	opts.Progress = func(p catalog.MaintenanceProgress) {
		traceMaintenance(t.tr, "tableMaintenance."+p.Step, path, p.Msg, time.Now(), nil)
		if progress != nil {
			progress(adminclient.MaintenanceEvent{Step: p.Step, Msg: p.Msg, Done: p.Done})
		}
	}
	start := time.Now()
	res, err := t.c.MaintainTable(ctx, wh, id, opts)
	traceMaintenance(t.tr, "tableMaintenance.run", path, summaryMsg(res, "manual"), start, err)
	t.mm.observe("manual", res, err)
	if err != nil {
		return adminclient.MaintenanceSummary{}, err
	}
	return wireMaintenance(res), nil
}

func wireMaintenance(r catalog.MaintenanceResult) adminclient.MaintenanceSummary {
	return adminclient.MaintenanceSummary{Warehouse: r.Warehouse, Namespace: r.Ident.Namespace, Name: r.Ident.Name,
		DryRun: r.DryRun, Skipped: r.Skipped, SnapshotsBefore: r.SnapshotsBefore, SnapshotsExpired: r.SnapshotsExpired,
		ExpiredIDs: r.ExpiredIDs, CommitAttempts: r.CommitAttempts, MetadataLocation: r.MetadataLocation, Version: r.Version,
		FilesRemoved: r.FilesRemoved, BytesRemoved: r.BytesRemoved, OrphansFound: r.OrphansFound,
		OrphansTooYoung: r.OrphansTooYoung, Files: r.Files, Duration: r.Duration}
}

// summaryMsg is the msg of a run's trace event.
func summaryMsg(r catalog.MaintenanceResult, how string) string {
	if r.Skipped != "" {
		return how + " maintenance skipped: " + r.Skipped
	}
	dry := ""
	if r.DryRun {
		dry = " (dry run)"
	}
	return fmt.Sprintf("%s maintenance%s: %d of %d snapshots expired, %d files (%d bytes) removed, %d orphans younger than the window kept",
		how, dry, r.SnapshotsExpired, r.SnapshotsBefore, r.FilesRemoved, r.BytesRemoved, r.OrphansTooYoung)
}

func traceMaintenance(tr *trace.Bus, fn, path, msg string, start time.Time, err error) {
	if !tr.Enabled(trace.TablesMaintenance) {
		return
	}
	ev := trace.Event{Type: trace.TablesMaintenance, Time: start, FuncName: fn, Path: path, Duration: time.Since(start), Msg: msg}
	if err != nil {
		ev.Error = err.Error()
	}
	tr.Publish(ev)
}

// runMaintenance runs scheduled table maintenance until ctx ends, on the
// warehouses this site may change (a Tables replica's are not: its
// primary's maintenance replicates to it), every tables
// maintenance_interval per table.
func (s *Server) runMaintenance(ctx context.Context) {
	s.catalog.RunMaintenance(ctx, catalog.MaintenanceSchedule{
		Interval: func() time.Duration {
			return s.settings.Duration(config.SubsysTables, config.TablesMaintenanceInterval)
		},
		Owns: func(ctx context.Context, wh string) bool { return s.scanner.CatalogWriteGuard(ctx, wh) == nil },
		Report: func(r catalog.MaintenanceResult, err error) {
			path := r.Warehouse + "/" + strings.Join(r.Ident.Namespace, ".") + "." + r.Ident.Name
			traceMaintenance(s.trace, "tableMaintenance.scheduled", path, summaryMsg(r, "scheduled"), time.Now().Add(-r.Duration), err)
			s.maint.observe("scheduled", r, err)
		},
	})
}

// maintenanceMetrics counts maintenance runs and what they removed.
type maintenanceMetrics struct {
	runs                    *prometheus.CounterVec
	snapshots, files, bytes prometheus.Counter
}

func newMaintenanceMetrics(reg prometheus.Registerer) (*maintenanceMetrics, error) {
	m := &maintenanceMetrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metrics.MaintenanceRunsTotal,
			Help: "Table maintenance runs, by trigger (manual, scheduled) and result (ok, error, dry_run, skipped)."},
			[]string{"trigger", "result"}),
		snapshots: prometheus.NewCounter(prometheus.CounterOpts{Name: metrics.MaintenanceSnapshotsExpiredTotal,
			Help: "Snapshots table maintenance expired."}),
		files: prometheus.NewCounter(prometheus.CounterOpts{Name: metrics.MaintenanceFilesRemovedTotal,
			Help: "Files table maintenance deleted (expired snapshots' files and orphans)."}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Name: metrics.MaintenanceBytesRemovedTotal,
			Help: "Bytes of the files table maintenance deleted."}),
	}
	for _, c := range []prometheus.Collector{m.runs, m.snapshots, m.files, m.bytes} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// observe counts one run; a dry run removes nothing and counts only as a run.
func (m *maintenanceMetrics) observe(trigger string, r catalog.MaintenanceResult, err error) {
	if m == nil {
		return
	}
	result := "ok"
	switch {
	case err != nil:
		result = "error"
	case r.DryRun:
		result = "dry_run"
	case r.Skipped != "":
		result = "skipped"
	}
	m.runs.WithLabelValues(trigger, result).Inc()
	if err != nil || r.DryRun {
		return
	}
	m.snapshots.Add(float64(r.SnapshotsExpired))
	m.files.Add(float64(r.FilesRemoved))
	m.bytes.Add(float64(r.BytesRemoved))
}
