package scanner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/replication"
)

// Failover promotes the replica: it signals the scanner to run a final
// full cycle that applies what has arrived, and returns at once. When that
// cycle ends the scanner turns replica_catalog off (disabling itself), so
// the site accepts client writes to warehouses and refuses any further
// inbound warehouse replication.
func (s *Scanner) Failover(ctx context.Context) error {
	if !s.Role() {
		return fmt.Errorf("%w: failover promotes the replica", ErrNotReplica)
	}
	s.failover.Store(true)
	s.traceEvent("catalogScanner.failover", "", "failover requested: final scan, then promotion", s.cfg.Now(), nil)
	s.Wake()
	return nil
}

// Promoting reports a failover requested and not yet complete.
func (s *Scanner) Promoting() bool { return s.failover.Load() }

func (s *Scanner) completeFailover(ctx context.Context) {
	start := s.cfg.Now()
	err := s.cfg.Settings.Set(ctx, config.SubsysTables, map[string]string{config.TablesReplicaCatalog: "off"})
	if err != nil {
		s.log.Error("failover: turn replica_catalog off", "err", err)
		s.traceEvent("catalogScanner.failover", "", "promotion failed", start, err)
		return
	}
	s.failover.Store(false)
	s.mu.Lock()
	s.state = StateDisabled
	s.resetMemory()
	s.mu.Unlock()
	s.log.Info("failover complete: this site is now the primary")
	s.traceEvent("catalogScanner.failover", "", "final scan applied; scanner disabled; warehouses accept client writes and refuse inbound replication", start, nil)
}

// ResyncOpen opens a catalog resync window on a site being demoted after a
// failover: inbound warehouse replication is accepted again, client writes
// to warehouses are still refused, and the catalog is left untouched.
func (s *Scanner) ResyncOpen(ctx context.Context) (RebuildStatus, error) {
	if s.Role() {
		return RebuildStatus{}, fmt.Errorf("%w: this site is already the replica", ErrRoleConflict)
	}
	err := s.savePersisted(func(p *persisted) {
		p.Window = true
		if p.Rebuild.State != RebuildInProgress && p.Rebuild.State != RebuildFailureRetry {
			p.Rebuild = RebuildStatus{State: RebuildPending}
		}
	})
	if err != nil {
		return RebuildStatus{}, err
	}
	s.setState(StateRebuilding)
	s.traceEvent("catalogScanner.resync", "", "catalog resync window opened: inbound warehouse replication accepted, client writes refused", s.cfg.Now(), nil)
	return s.persisted().Rebuild, nil
}

// ResyncRebuild starts the rebuild of the catalog from the new primary:
// refused unless a window is open and confirmed, and while the primary
// reports an object resync towards this site in progress. It backs up and
// deletes the local catalog; the next cycle rebuilds it.
func (s *Scanner) ResyncRebuild(ctx context.Context, confirmed bool) (RebuildStatus, error) {
	if !s.persisted().Window {
		return RebuildStatus{}, ErrNoResyncWindow
	}
	if !confirmed {
		return RebuildStatus{}, fmt.Errorf("%w: the rebuild deletes the local catalog (after a backup)", ErrNotConfirmed)
	}
	names := s.cfg.Replication.PeerNames()
	if len(names) == 0 {
		return RebuildStatus{}, fmt.Errorf("%w: no site replication peer to rebuild from", replication.ErrNotConfigured)
	}
	for _, n := range names {
		p, _ := s.cfg.Replication.Peer(n)
		job, err := p.ResyncTo(ctx, s.cfg.SiteID)
		switch {
		case err == nil && job.State == replication.ResyncRunning:
			return RebuildStatus{}, fmt.Errorf("%w (%s: job %s, %d queued so far); wait for 'admin replicate resync status' to report completed",
				ErrPeerResyncActive, n, job.ID, job.Queued)
		case err != nil && errors.Is(err, replication.ErrLinkDown):
			return RebuildStatus{}, fmt.Errorf("primary %s unreachable: %w", n, err)
		}
	}
	label, err := s.backupAndClear(ctx, "rebuild")
	if err != nil {
		return RebuildStatus{}, err
	}
	err = s.savePersisted(func(p *persisted) {
		p.Rebuild = RebuildStatus{State: RebuildInProgress, Started: s.cfg.Now().UTC(), BackupAt: label}
	})
	if err != nil {
		return RebuildStatus{}, err
	}
	s.mu.Lock()
	s.resetMemory()
	s.mu.Unlock()
	s.Wake()
	return s.persisted().Rebuild, nil
}

// backupAndClear copies the local catalog to a timestamped backup and
// deletes it; it returns the backup label.
func (s *Scanner) backupAndClear(ctx context.Context, why string) (string, error) {
	start := s.cfg.Now()
	label := why + "-" + start.UTC().Format("20060102T150405.000Z")
	n, err := s.cfg.Catalog.Backup(ctx, label)
	if err != nil {
		return "", fmt.Errorf("back up the catalog: %w", err)
	}
	if err := s.cfg.Catalog.Clear(ctx); err != nil {
		return "", fmt.Errorf("delete the catalog: %w", err)
	}
	s.traceEvent("catalogScanner."+why, "", fmt.Sprintf("local catalog backed up to cbak/%s/ (%d keys) and deleted", label, n), start, nil)
	return label, nil
}

// CatalogReset backs up and deletes the replica's catalog; the next cycle
// rebuilds it from the identity records and files.
func (s *Scanner) CatalogReset(ctx context.Context, confirmed bool) (string, error) {
	if !s.Role() {
		return "", fmt.Errorf("%w: catalog reset rebuilds a replica's catalog", ErrNotReplica)
	}
	if !confirmed {
		return "", fmt.Errorf("%w: the reset deletes the local catalog (after a backup)", ErrNotConfirmed)
	}
	label, err := s.backupAndClear(ctx, "reset")
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	s.resetMemory()
	s.state = StateWaiting
	s.mu.Unlock()
	s.Wake()
	return label, nil
}

// rebuildCycle runs one rebuild attempt against the new primary.
func (s *Scanner) rebuildCycle(ctx context.Context) {
	start := s.cfg.Now()
	s.takeDirty()
	discarded, err := s.rebuildFromPrimary(ctx)
	if err == nil {
		err = s.cfg.Settings.Set(ctx, config.SubsysTables, map[string]string{config.TablesReplicaCatalog: "on"})
	}
	if err != nil {
		var failed bool
		_ = s.savePersisted(func(p *persisted) {
			p.Rebuild.Attempts++
			p.Rebuild.LastError = err.Error()
			p.Rebuild.State = RebuildFailureRetry
			if p.Rebuild.Attempts >= maxRebuildRuns {
				p.Rebuild.State, p.Rebuild.Finished = RebuildFailed, s.cfg.Now().UTC()
				failed = true
			}
		})
		msg := "rebuild attempt failed; retrying next cycle"
		if failed {
			msg = "rebuild failed after repeated attempts; the resync window stays open"
		}
		s.log.Warn("catalog rebuild", "err", err, "failed", failed)
		s.traceEvent("catalogScanner.rebuild", "", msg, start, err)
		return
	}
	_ = s.savePersisted(func(p *persisted) {
		p.Window = false
		p.Rebuild.Attempts++
		p.Rebuild.State, p.Rebuild.LastError, p.Rebuild.Finished, p.Rebuild.Discarded = RebuildCompleted, "", s.cfg.Now().UTC(), discarded
	})
	s.mu.Lock()
	s.resetMemory()
	s.state = StateWaiting
	s.mu.Unlock()
	s.traceEvent("catalogScanner.rebuild", "", fmt.Sprintf("catalog rebuilt from the primary (%d local-only record versions discarded); this site is now the replica", discarded), start, nil)
	s.Wake()
}

// rebuildFromPrimary makes the local catalog the primary's: each
// warehouse's default encryption, namespaces and their properties, and
// every table and view at the primary's version (so local-only versions are
// discarded, local-only tables dropped with their files kept, and tables
// dropped only here restored). Identity-record versions this site wrote
// that the primary does not hold are marked discarded, so the scanner's
// cycles after the rebuild never bring them back.
func (s *Scanner) rebuildFromPrimary(ctx context.Context) (int, error) {
	names := s.cfg.Replication.PeerNames()
	if len(names) == 0 {
		return 0, errors.New("no site replication peer")
	}
	p, name := s.cfg.Replication.Peer(names[0])
	raw, err := p.CatalogExport(ctx)
	if err != nil {
		return 0, fmt.Errorf("primary %s: %w", name, err)
	}
	var ex Export
	if err := json.Unmarshal(raw, &ex); err != nil {
		return 0, fmt.Errorf("primary %s: bad catalog export: %w", name, err)
	}
	if err := s.cfg.Catalog.Clear(ctx); err != nil {
		return 0, err
	}
	discarded := 0
	onPrimary := map[string]bool{}
	for _, wh := range ex.Warehouses {
		onPrimary[wh.Name] = true
		if !s.isWarehouse(ctx, wh.Name) {
			return 0, fmt.Errorf("warehouse %s has not been replicated here yet", wh.Name)
		}
		if err := s.takeWarehouseSettings(ctx, wh); err != nil {
			return 0, err
		}
		for _, ns := range wh.Namespaces {
			if err := s.cfg.Catalog.ApplyNamespace(ctx, wh.Name, ns.Namespace, ns.Properties, ns.UpdatedMS, false); err != nil {
				return 0, err
			}
		}
		primary := map[string]catalog.Record{}
		for _, en := range wh.Entries {
			b, k, err := splitLocation(en.MetadataLocation)
			if err != nil {
				return 0, err
			}
			md, err := s.read(ctx, b, k, "")
			if err != nil {
				return 0, fmt.Errorf("%s %s: metadata file %s has not arrived (is the object resync complete?): %w", en.Kind, en.Name, en.MetadataLocation, err)
			}
			if err := s.cfg.Catalog.ApplyEntry(ctx, wh.Name, en, md); err != nil {
				return 0, err
			}
			key := catalog.TableRecordKey(en.Namespace, en.Name)
			if en.Kind == catalog.KindView {
				key = catalog.ViewRecordKey(en.Namespace, en.Name)
			}
			primary[key] = en
		}
		n, err := s.discardLocalOnly(ctx, wh, primary)
		if err != nil {
			return 0, err
		}
		discarded += n
	}
	// A warehouse the primary does not have holds nothing the primary
	// does: its catalog only ever existed here.
	for _, name := range s.warehouses(ctx) {
		if onPrimary[name] {
			continue
		}
		n, err := s.discardLocalOnly(ctx, WarehouseExport{Name: name}, nil)
		if err != nil {
			return 0, err
		}
		discarded += n
	}
	return discarded, nil
}

// takeWarehouseSettings gives a warehouse the primary's warehouse-level
// settings: its default encryption. That is a bucket setting site
// replication merges by last writer, so a change made here after the
// primary's outlives the object resync unless the rebuild overrides it.
func (s *Scanner) takeWarehouseSettings(ctx context.Context, wh WarehouseExport) error {
	local, err := s.cfg.Catalog.Warehouse(ctx, wh.Name)
	if err != nil {
		return err
	}
	if local.Encryption == wh.Encryption {
		return nil
	}
	start := s.cfg.Now()
	if _, err := s.cfg.Catalog.SetWarehouseEncryption(ctx, wh.Name, wh.Encryption); err != nil {
		return fmt.Errorf("warehouse %s: take the primary's default encryption %q: %w", wh.Name, wh.Encryption, err)
	}
	s.traceEvent("catalogScanner.rebuild", wh.Name, fmt.Sprintf("default encryption %q replaced by the primary's %q", local.Encryption, wh.Encryption), start, nil)
	return nil
}

// discardLocalOnly marks the identity-record versions this site wrote that
// the primary does not hold.
func (s *Scanner) discardLocalOnly(ctx context.Context, wh WarehouseExport, primary map[string]catalog.Record) (int, error) {
	queue := map[string]bool{}
	if err := s.listIdentity(ctx, wh.Name, queue); err != nil {
		return 0, err
	}
	liveNS := map[string]map[string]string{}
	for _, ns := range wh.Namespaces {
		liveNS[catalog.NamespaceRecordKey(ns.Namespace)] = ns.Properties
	}
	b := s.cfg.Meta.NewBatch()
	n := 0
	for ek := range queue {
		key := ek[len(wh.Name)+1:]
		recs, err := s.recordVersions(ctx, wh.Name, key)
		if err != nil {
			return 0, err
		}
		var drop []string
		if kind, _, _, err := catalog.ParseRecordKey(key); err == nil && kind == catalog.KindNamespace {
			props, live := liveNS[key]
			drop = namespaceDiscards(recs, s.cfg.SiteID, props, live)
		} else {
			p, onPrimary := primary[key]
			drop = entryDiscards(recs, s.cfg.SiteID, p, onPrimary)
		}
		for _, vid := range drop {
			b.Set(discardKey(wh.Name, vid), []byte(key))
		}
		n += len(drop)
	}
	return n, b.Commit(true)
}

// namespaceDiscards picks the versions of a namespace record (newest first)
// that this site (self) wrote and the rebuild must discard. Of a namespace
// the primary does not have (!live), every one. Of a live one, the
// tombstones and every version newer than the newest that states the
// primary's properties: a namespace record has no version number to compare,
// and the scanner applies the newest version, so what remains must state
// the primary's properties.
func namespaceDiscards(recs []recordVersion, self string, primary map[string]string, live bool) []string {
	var out []string
	found := false // this version or a newer one states the primary's properties
	for _, rv := range recs {
		if live && !found && !rv.rec.Deleted && maps.Equal(rv.rec.Properties, primary) {
			found = true
		}
		if rv.origin == self && (!live || rv.rec.Deleted || !found) {
			out = append(out, rv.vid)
		}
	}
	return out
}

// entryDiscards picks the versions of a table or view record that this
// site (self) wrote and the primary does not hold: of an entry the primary
// does not have, of another incarnation (UUID), newer than the primary's
// version, and tombstones.
func entryDiscards(recs []recordVersion, self string, primary catalog.Record, onPrimary bool) []string {
	var out []string
	for _, rv := range recs {
		if rv.origin != self {
			continue
		}
		if !onPrimary || rv.rec.UUID != primary.UUID || rv.rec.Version > primary.Version || rv.rec.Deleted {
			out = append(out, rv.vid)
		}
	}
	return out
}
