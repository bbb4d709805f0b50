package scanner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

	iceio "github.com/apache/iceberg-go/io"

	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/objects"
)

// maxMetadataBytes bounds a metadata, manifest list or manifest file read.
const maxMetadataBytes = 256 << 20

// entity is what the scanner knows of one identity record key: a
// namespace, table or view of one warehouse.
type entity struct {
	key      string // warehouse/record key
	wh       string
	recKey   string
	kind     string
	ns       []string
	name     string
	uuid     string
	latest   int64
	verified int64
	// complete is the newest version found complete (holds aside), which
	// transaction members compare against.
	complete int64
	held     bool
	txnID    string
	deleted  bool
	status   string
	missing  []string             // files (bucket/key) the latest version lacks
	since    map[string]time.Time // when each missing file was first (or last re-requested) missed
	checked  map[string]bool      // identity-record object versions verified complete
}

// txnHold is a multi-table transaction whose members are held until all
// arrive or the stale timeout passes.
type txnHold struct {
	id       string
	wh       string
	members  []catalog.TxnMember
	first    time.Time
	released bool
}

// cycle runs one scanner cycle: a full pass when needed (first cycle, after
// a reset, or final before failover), else only what changed.
func (s *Scanner) cycle(ctx context.Context, full bool) error {
	start := s.cfg.Now()
	dirty := s.takeDirty()
	s.mu.Lock()
	full = full || s.needFull
	s.mu.Unlock()
	queue := map[string]bool{}
	if full {
		for _, wh := range s.warehouses(ctx) {
			if err := s.listIdentity(ctx, wh, queue); err != nil {
				return err
			}
		}
	} else {
		s.mu.Lock()
		for wh, keys := range dirty {
			for k := range keys {
				if strings.HasPrefix(k, catalog.IdentityPrefix) {
					queue[wh+"/"+k] = true
				}
				for ek := range s.waitingOn(wh + "/" + k) {
					queue[ek] = true
				}
			}
		}
		now := s.cfg.Now()
		for ek, due := range s.timers {
			if !now.Before(due) {
				queue[ek] = true
			}
		}
		s.mu.Unlock()
	}
	evaluated := 0
	passes := map[string]int{}
	for len(queue) > 0 {
		keys := make([]string, 0, len(queue))
		for k := range queue {
			keys = append(keys, k)
		}
		sort.Strings(keys) // namespaces (".../namespaces/...") before tables and views
		queue = map[string]bool{}
		for _, ek := range keys {
			if passes[ek] >= 2 || ctx.Err() != nil {
				continue
			}
			passes[ek]++
			evaluated++
			more, err := s.evaluate(ctx, ek)
			if err != nil {
				s.log.Warn("scanner: evaluate", "entity", ek, "err", err)
				s.traceEvent("catalogScanner.error", ek, "evaluation failed", s.cfg.Now(), err)
			}
			for _, m := range more {
				queue[m] = true
			}
		}
	}
	dur := s.cfg.Now().Sub(start)
	s.mu.Lock()
	if full {
		s.needFull = false
	}
	s.lastOK, s.lastDur = s.cfg.Now(), dur
	s.cycles++
	behind, missing, held := s.countsLocked()
	s.mu.Unlock()
	s.m.cycles.Inc()
	s.m.cycleSeconds.Observe(dur.Seconds())
	kind := "incremental"
	if full {
		kind = "full"
	}
	s.traceEvent("catalogScanner.cycle", "", fmt.Sprintf("%s cycle: evaluated %d, %d behind, %d files missing, %d held", kind, evaluated, behind, missing, held), start, nil)
	return nil
}

// waitingOn returns the entities waiting on a file (caller holds mu).
func (s *Scanner) waitingOn(file string) map[string]bool { return s.waitIdx[file] }

func (s *Scanner) countsLocked() (behind, missing, held int) {
	for _, e := range s.ents {
		if e.kind == catalog.KindNamespace {
			continue
		}
		if e.latest > e.verified && !e.deleted {
			behind++
		}
		missing += len(e.missing)
		if e.held {
			held++
		}
	}
	return
}

// listIdentity queues every identity record key of a warehouse.
func (s *Scanner) listIdentity(ctx context.Context, wh string, queue map[string]bool) error {
	opts := objects.VersionListOptions{Prefix: catalog.IdentityPrefix, MaxKeys: 1000}
	for {
		res, err := s.cfg.Objects.ListObjectVersions(ctx, wh, opts)
		if err != nil {
			return err
		}
		for _, v := range res.Versions {
			queue[wh+"/"+v.Key] = true
		}
		if !res.IsTruncated {
			return nil
		}
		opts.KeyMarker, opts.VersionIDMarker = res.NextKeyMarker, res.NextVersionIDMarker
	}
}

// recordVersion is one version of an identity record.
type recordVersion struct {
	vid    string
	origin string
	rec    catalog.Record
}

// recordVersions reads every live version of an identity record, newest
// first, skipping delete markers and versions a rebuild discarded.
func (s *Scanner) recordVersions(ctx context.Context, wh, key string) ([]recordVersion, error) {
	vs, err := s.cfg.Objects.KeyVersions(ctx, wh, key)
	if err != nil {
		return nil, err
	}
	var out []recordVersion
	for _, v := range vs {
		if v.DeleteMarker || s.discarded(wh, v.VersionID) {
			continue
		}
		data, err := s.read(ctx, wh, key, v.VersionID)
		if err != nil {
			return nil, err
		}
		rec, err := catalog.ParseRecord(data)
		if err != nil {
			s.log.Warn("scanner: bad identity record", "warehouse", wh, "key", key, "version", v.VersionID, "err", err)
			continue
		}
		out = append(out, recordVersion{vid: v.VersionID, origin: v.Origin, rec: rec})
	}
	return out, nil
}

// read returns an object's bytes (a version, or the latest when vid is "").
func (s *Scanner) read(ctx context.Context, bucket, key, vid string) ([]byte, error) {
	v, err := s.cfg.Objects.HeadObject(ctx, bucket, key, vid)
	if err != nil {
		return nil, err
	}
	if v.Size > maxMetadataBytes {
		return nil, fmt.Errorf("%s/%s is larger than %d bytes", bucket, key, maxMetadataBytes)
	}
	rc, err := s.cfg.Objects.OpenRange(bucket, key, v, 0, v.Size)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// exists reports whether an s3:// location names a live object here.
func (s *Scanner) exists(ctx context.Context, loc string) (string, bool) {
	b, k, err := splitLocation(loc)
	if err != nil {
		return loc, false
	}
	_, err = s.cfg.Objects.HeadObject(ctx, b, k, "")
	return b + "/" + k, err == nil
}

// evaluate decides one entity: which version the local catalog should
// point at. It returns entities to evaluate next (transaction members).
func (s *Scanner) evaluate(ctx context.Context, ek string) ([]string, error) {
	start := s.cfg.Now()
	wh, key, _ := strings.Cut(ek, "/")
	kind, ns, name, err := catalog.ParseRecordKey(key)
	if err != nil {
		return nil, nil // not an identity record
	}
	recs, err := s.recordVersions(ctx, wh, key)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	e := s.ents[ek]
	if e == nil {
		e = &entity{key: ek, wh: wh, recKey: key, kind: kind, ns: ns, name: name, since: map[string]time.Time{}, checked: map[string]bool{}}
		s.ents[ek] = e
	}
	s.mu.Unlock()
	path := wh + "/" + strings.Join(ns, ".")
	if name != "" {
		path += "." + name
	}
	if len(recs) == 0 {
		return nil, nil
	}
	newest := recs[0].rec
	if kind == catalog.KindNamespace {
		err := s.cfg.Catalog.ApplyNamespace(ctx, wh, ns, newest.Properties, newest.UpdatedMS, newest.Deleted)
		s.mu.Lock()
		e.deleted, e.status = newest.Deleted, "OK"
		s.mu.Unlock()
		s.traceEvent("catalogScanner.namespace", path, fmt.Sprintf("namespace applied (deleted=%t)", newest.Deleted), start, err)
		return nil, err
	}
	local, haveLocal, err := s.cfg.Catalog.Local(wh, kind, catalog.Ident{Namespace: ns, Name: name})
	if err != nil {
		return nil, err
	}
	if newest.Deleted {
		if err := s.cfg.Catalog.ApplyDrop(ctx, wh, kind, catalog.Ident{Namespace: ns, Name: name}); err != nil {
			return nil, err
		}
		s.mu.Lock()
		e.uuid, e.latest, e.verified, e.complete, e.deleted, e.held, e.status = newest.UUID, newest.Version, newest.Version, newest.Version, true, false, "Deleted"
		s.setMissingLocked(e, nil)
		s.mu.Unlock()
		s.traceEvent("catalogScanner."+kind, path, fmt.Sprintf("%s dropped on the primary: removed from the local catalog (files kept)", kind), start, nil)
		return nil, nil
	}
	strict := s.consistency() == config.ConsistencyStrict
	var chosen *recordVersion
	var chosenMeta []byte
	var latestMissing []string
	for i := range recs {
		rv := &recs[i]
		if rv.rec.Deleted || rv.rec.UUID != newest.UUID {
			break // an older incarnation of the name
		}
		ok, missing, md := s.check(ctx, e, rv, strict)
		if i == 0 {
			latestMissing = missing
		}
		if ok {
			chosen, chosenMeta = rv, md
			break
		}
	}
	var next []string
	s.mu.Lock()
	e.uuid, e.latest, e.deleted = newest.UUID, newest.Version, false
	s.setMissingLocked(e, latestMissing)
	if chosen == nil {
		e.held = false
		if haveLocal && local.UUID == newest.UUID {
			e.verified = local.Version
		} else {
			e.verified = 0
		}
		e.status = behindStatus(e)
		s.mu.Unlock()
		s.retryMissing(ctx, e, path)
		s.traceEvent("catalogScanner."+kind, path, fmt.Sprintf("version %d not complete yet (%d files missing)", newest.Version, len(latestMissing)), start, nil)
		return nil, nil
	}
	e.complete = chosen.rec.Version
	if txn := chosen.rec.Txn; txn != nil && len(txn.Members) > 1 {
		h := s.txns[txn.ID]
		if h == nil {
			h = &txnHold{id: txn.ID, wh: wh, members: txn.Members, first: s.cfg.Now()}
			s.txns[txn.ID] = h
		}
		for _, m := range txn.Members {
			mk := wh + "/" + catalog.TableRecordKey(m.Namespace, m.Name)
			if mk != ek {
				next = append(next, mk)
			}
		}
		if !h.released {
			stale := s.cfg.Settings.Duration(config.SubsysTables, config.TablesReplicaCatalogTxnStaleTimeout)
			switch {
			case s.membersArrivedLocked(h):
				h.released = true
				s.mu.Unlock()
				s.traceEvent("catalogScanner.txn", path, fmt.Sprintf("transaction %s: all %d members arrived; applying", txn.ID, len(txn.Members)), start, nil)
				s.mu.Lock()
			case s.cfg.Now().Sub(h.first) >= stale:
				h.released = true
				s.mu.Unlock()
				s.traceEvent("catalogScanner.txn", path, fmt.Sprintf("transaction %s exceeded replica_catalog_txn_stale_timeout (%s): surviving members let through", txn.ID, stale), start, nil)
				s.mu.Lock()
			default:
				e.held, e.txnID, e.verified, e.status = true, txn.ID, -1, "Held"
				s.timers[ek] = h.first.Add(stale)
				s.mu.Unlock()
				s.traceEvent("catalogScanner.txn", path, fmt.Sprintf("transaction %s: held until every member arrives", txn.ID), start, nil)
				return next, nil
			}
		}
	}
	s.mu.Unlock()
	if !haveLocal || local.UUID != chosen.rec.UUID || local.Version != chosen.rec.Version {
		if chosenMeta == nil {
			b, k, err := splitLocation(chosen.rec.MetadataLocation)
			if err == nil {
				chosenMeta, err = s.read(ctx, b, k, "")
			}
			if err != nil {
				return next, err
			}
		}
		if err := s.cfg.Catalog.ApplyEntry(ctx, wh, chosen.rec, chosenMeta); err != nil {
			return next, err
		}
		s.traceEvent("catalogScanner.apply", path, fmt.Sprintf("%s version %d verified and applied (latest seen %d)", kind, chosen.rec.Version, newest.Version), start, nil)
	}
	s.mu.Lock()
	e.held, e.verified = false, chosen.rec.Version
	e.status = behindStatus(e)
	if len(e.missing) == 0 {
		delete(s.timers, ek)
	}
	s.mu.Unlock()
	s.retryMissing(ctx, e, path)
	return next, nil
}

func behindStatus(e *entity) string {
	switch {
	case e.held:
		return "Held"
	case e.verified >= e.latest:
		return "OK"
	}
	if n := e.latest - max(e.verified, 0); n != 1 {
		return fmt.Sprintf("%d versions behind", n)
	}
	return "1 version behind"
}

// membersArrivedLocked reports whether every member of a transaction has a
// complete version at least as new as the one the transaction reached.
func (s *Scanner) membersArrivedLocked(h *txnHold) bool {
	for _, m := range h.members {
		me := s.ents[h.wh+"/"+catalog.TableRecordKey(m.Namespace, m.Name)]
		if me == nil || me.complete < m.Version {
			return false
		}
	}
	return true
}

// setMissingLocked records the files e's latest version lacks and indexes
// them, so their arrival re-evaluates e.
func (s *Scanner) setMissingLocked(e *entity, missing []string) {
	for _, f := range e.missing {
		if w := s.waitIdx[f]; w != nil {
			delete(w, e.key)
			if len(w) == 0 {
				delete(s.waitIdx, f)
			}
		}
	}
	now := s.cfg.Now()
	keep := map[string]time.Time{}
	for _, f := range missing {
		if s.waitIdx[f] == nil {
			s.waitIdx[f] = map[string]bool{}
		}
		s.waitIdx[f][e.key] = true
		if t, ok := e.since[f]; ok {
			keep[f] = t
		} else {
			keep[f] = now
		}
	}
	e.missing, e.since = missing, keep
	if len(missing) == 0 && !e.held {
		delete(s.timers, e.key)
	}
}

// retryMissing asks the peers to re-send each file missing for longer than
// the retry interval, and sets the entity's timer for the next one.
func (s *Scanner) retryMissing(ctx context.Context, e *entity, path string) {
	interval := s.cfg.Settings.Duration(config.SubsysTables, config.TablesReplicaCatalogRetryInterval)
	now := s.cfg.Now()
	s.mu.Lock()
	var due []string
	next := time.Time{}
	for f, t := range e.since {
		if now.Sub(t) >= interval {
			due = append(due, f)
			e.since[f] = now
			t = now
		}
		if next.IsZero() || t.Add(interval).Before(next) {
			next = t.Add(interval)
		}
	}
	if !next.IsZero() {
		s.timers[e.key] = next
	}
	s.mu.Unlock()
	for _, f := range due {
		start := s.cfg.Now()
		b, k, _ := strings.Cut(f, "/")
		n, err := s.cfg.Replication.RequestResend(ctx, b, k)
		s.m.retryRequests.Inc()
		s.traceEvent("catalogScanner.repl-retry", path, fmt.Sprintf("file %s missing longer than %s: asked the primary to re-send it (%d version(s) queued)", f, interval, n), start, err)
	}
}

// check decides whether one version of a table or view is complete for the
// consistency mode: its metadata file, and in strict mode (tables) the
// current snapshot's manifest list, manifests, data and delete files. It
// returns the metadata bytes when it read them.
func (s *Scanner) check(ctx context.Context, e *entity, rv *recordVersion, strict bool) (bool, []string, []byte) {
	s.mu.Lock()
	done := e.checked[rv.vid]
	s.mu.Unlock()
	if done {
		return true, nil, nil
	}
	mb, mk, err := splitLocation(rv.rec.MetadataLocation)
	if err != nil {
		return false, []string{rv.rec.MetadataLocation}, nil
	}
	md, err := s.read(ctx, mb, mk, "")
	if err != nil {
		return false, []string{mb + "/" + mk}, nil
	}
	var missing []string
	if strict && rv.rec.Kind == catalog.KindTable {
		missing = s.missingFiles(ctx, md)
	}
	if len(missing) > 0 {
		return false, missing, md
	}
	s.mu.Lock()
	e.checked[rv.vid] = true
	s.mu.Unlock()
	return true, nil, md
}

// missingFiles lists the files the metadata's current snapshot references
// that are not here: manifest list, manifests, data and delete files.
func (s *Scanner) missingFiles(ctx context.Context, md []byte) []string {
	meta, err := table.ParseMetadataBytes(md)
	if err != nil {
		return []string{"(unparseable metadata: " + err.Error() + ")"}
	}
	snap := meta.CurrentSnapshot()
	if snap == nil {
		return nil
	}
	if f, ok := s.exists(ctx, snap.ManifestList); !ok {
		return []string{f}
	}
	fsys := objectIO{ctx: ctx, s: s}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		return []string{snap.ManifestList + " (" + err.Error() + ")"}
	}
	var missing []string
	for _, mf := range manifests {
		if f, ok := s.exists(ctx, mf.FilePath()); !ok {
			missing = append(missing, f)
			continue
		}
		entries, err := mf.FetchEntries(fsys, true)
		if err != nil {
			missing = append(missing, mf.FilePath()+" ("+err.Error()+")")
			continue
		}
		for _, en := range entries {
			if f, ok := s.exists(ctx, en.DataFile().FilePath()); !ok {
				missing = append(missing, f)
			}
		}
	}
	return missing
}

// objectIO lets apache/iceberg-go read manifest files from the local object
// layer.
type objectIO struct {
	ctx context.Context
	s   *Scanner
}

func (o objectIO) Open(name string) (iceio.File, error) {
	b, k, err := splitLocation(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	data, err := o.s.read(o.ctx, b, k, "")
	if errors.Is(err, objects.ErrObjectNotFound) || errors.Is(err, objects.ErrBucketNotFound) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &memFile{Reader: bytes.NewReader(data), name: k, size: int64(len(data))}, nil
}

func (o objectIO) Remove(name string) error {
	return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrPermission}
}

// memFile is a file read whole into memory.
type memFile struct {
	*bytes.Reader
	name string
	size int64
}

func (f *memFile) Close() error { return nil }

func (f *memFile) Stat() (fs.FileInfo, error) { return fileInfo{f.name, f.size}, nil }

type fileInfo struct {
	name string
	size int64
}

func (fi fileInfo) Name() string       { return fi.name }
func (fi fileInfo) Size() int64        { return fi.size }
func (fi fileInfo) Mode() fs.FileMode  { return 0o444 }
func (fi fileInfo) ModTime() time.Time { return time.Time{} }
func (fi fileInfo) IsDir() bool        { return false }
func (fi fileInfo) Sys() any           { return nil }
