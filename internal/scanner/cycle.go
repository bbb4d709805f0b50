package scanner

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/objects"
)

// maxMetadataBytes bounds a metadata, manifest list or manifest file read.
const maxMetadataBytes = 256 << 20

// entity is what the scanner knows of one identity record key: a
// namespace, table or view of one warehouse. Its tableState changes only
// through commitLocked, which keeps the scanner's indexes in step.
type entity struct {
	key    string // warehouse/record key
	wh     string
	recKey string
	kind   string
	ns     []string
	name   string
	tableState
	checked map[string]bool // identity-record object versions verified complete
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
	rd, err := s.recordReader(ctx, wh, key)
	if err != nil {
		return nil, err
	}
	var out []recordVersion
	for {
		rv, ok, err := rd.next(ctx)
		if err != nil || !ok {
			return out, err
		}
		out = append(out, rv)
	}
}

// recordReader reads the live versions of an identity record newest first,
// one at a time: an evaluation needs the newest down to the first complete
// one, and a table gets a version per commit, so reading them all made
// each evaluation cost the table's whole history.
type recordReader struct {
	s       *Scanner
	wh, key string
	vs      []*objects.Version // every version, newest first
}

func (s *Scanner) recordReader(ctx context.Context, wh, key string) (*recordReader, error) {
	vs, err := s.cfg.Objects.KeyVersions(ctx, wh, key)
	if err != nil {
		return nil, err
	}
	return &recordReader{s: s, wh: wh, key: key, vs: vs}, nil
}

// next returns the next live version, skipping delete markers, versions a
// rebuild discarded and records that do not parse; ok is false past the
// oldest.
func (r *recordReader) next(ctx context.Context) (rv recordVersion, ok bool, err error) {
	for len(r.vs) > 0 {
		v := r.vs[0]
		r.vs = r.vs[1:]
		if v.DeleteMarker || r.s.discarded(r.wh, v.VersionID) {
			continue
		}
		data, err := r.s.read(ctx, r.wh, r.key, v.VersionID)
		if err != nil {
			return recordVersion{}, false, err
		}
		r.s.m.recordReads.Inc()
		rec, err := catalog.ParseRecord(data)
		if err != nil {
			r.s.log.Warn("scanner: bad identity record", "warehouse", r.wh, "key", r.key, "version", v.VersionID, "err", err)
			continue
		}
		return recordVersion{vid: v.VersionID, origin: v.Origin, rec: rec}, true, nil
	}
	return recordVersion{}, false, nil
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

// exists reports whether an s3:// location names a live object here, and
// the bucket/key name it checked (live for one location).
func (s *Scanner) exists(ctx context.Context, loc string) (string, bool) {
	names, here := s.live(ctx, []string{loc})
	return names[0], here[0]
}

// evaluate decides one entity: which version the local catalog should
// point at. It gathers the observation, lets decide conclude under the
// lock, and performs the actions. It returns entities to evaluate next
// (transaction members).
func (s *Scanner) evaluate(ctx context.Context, ek string) ([]string, error) {
	start := s.cfg.Now()
	wh, key, _ := strings.Cut(ek, "/")
	kind, ns, name, err := catalog.ParseRecordKey(key)
	if err != nil {
		return nil, nil // not an identity record
	}
	rd, err := s.recordReader(ctx, wh, key)
	if err != nil {
		return nil, err
	}
	newest, ok, err := rd.next(ctx)
	if err != nil {
		return nil, err
	}
	e := s.entity(ek, wh, key, kind, ns, name)
	if !ok {
		return nil, nil
	}
	ob, metas, err := s.observe(ctx, e, newest, rd)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	ob.txns = scannerTxns{s}
	d := decide(e.tableState, ob)
	s.commitLocked(e, d.before)
	if d.hold != nil {
		s.txns[d.hold.id] = d.hold
	}
	s.mu.Unlock()
	return d.next, s.perform(ctx, e, d, metas, start)
}

// entity returns the entity of a key, created on first sight.
func (s *Scanner) entity(ek, wh, key, kind string, ns []string, name string) *entity {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.ents[ek]
	if e == nil {
		e = &entity{key: ek, wh: wh, recKey: key, kind: kind, ns: ns, name: name, checked: map[string]bool{}}
		e.since = map[string]time.Time{}
		s.ents[ek] = e
	}
	return e
}

func (e *entity) ident() catalog.Ident { return catalog.Ident{Namespace: e.ns, Name: e.name} }

// path names the entity in trace events.
func (e *entity) path() string {
	p := e.wh + "/" + strings.Join(e.ns, ".")
	if e.name != "" {
		p += "." + e.name
	}
	return p
}

// observe gathers what decide needs: the record versions, the settings and
// the time, and for a live table or view the local catalog entry and the
// completeness of its newest incarnation's versions, newest first up to the
// first complete one. Those are the versions it reads (newest, then the
// rest from rd as the walk needs them; decide looks no further: see
// pickVersion). It returns the metadata bytes it read, by version.
func (s *Scanner) observe(ctx context.Context, e *entity, newest recordVersion, rd *recordReader) (observation, map[string][]byte, error) {
	ob := observation{key: e.key, wh: e.wh, kind: e.kind, mode: s.consistency(),
		versions:      []versionObs{{vid: newest.vid, rec: newest.rec}},
		retryInterval: s.cfg.Settings.Duration(config.SubsysTables, config.TablesReplicaCatalogRetryInterval),
		staleTimeout:  s.cfg.Settings.Duration(config.SubsysTables, config.TablesReplicaCatalogTxnStaleTimeout)}
	if e.kind == catalog.KindNamespace {
		ob.now = s.cfg.Now()
		return ob, nil, nil
	}
	local, have, err := s.cfg.Catalog.Local(e.wh, e.kind, e.ident())
	if err != nil {
		return ob, nil, err
	}
	ob.local = localEntry{present: have, uuid: local.UUID, version: local.Version}
	var metas map[string][]byte
	for i := 0; !newest.rec.Deleted; i++ {
		if i == len(ob.versions) {
			rv, ok, err := rd.next(ctx)
			if err != nil {
				return ob, nil, err
			}
			if !ok {
				break
			}
			ob.versions = append(ob.versions, versionObs{vid: rv.vid, rec: rv.rec})
		}
		v := &ob.versions[i]
		if !sameIncarnation(newest.rec, v.rec) {
			break
		}
		if md := s.check(ctx, e, v, ob.mode); md != nil {
			if metas == nil {
				metas = map[string][]byte{}
			}
			metas[v.vid] = md
		}
		if len(v.missingFor(ob.mode)) == 0 {
			break
		}
	}
	ob.now = s.cfg.Now()
	return ob, metas, nil
}

// scannerTxns answers decide's txnView from the scanner's maps (its user
// holds mu).
type scannerTxns struct{ s *Scanner }

func (t scannerTxns) hold(id string) (txnHold, bool) {
	if h := t.s.txns[id]; h != nil {
		return *h, true
	}
	return txnHold{}, false
}

func (t scannerTxns) complete(key string) (int64, bool) {
	if e := t.s.ents[key]; e != nil {
		return e.complete, true
	}
	return 0, false
}

var _ txnView = scannerTxns{}

// commitLocked makes st the entity's state, and keeps the index from
// missing file to entities and the timers in step (caller holds mu).
func (s *Scanner) commitLocked(e *entity, st tableState) {
	for _, f := range e.missing {
		if w := s.waitIdx[f]; w != nil {
			delete(w, e.key)
			if len(w) == 0 {
				delete(s.waitIdx, f)
			}
		}
	}
	for _, f := range st.missing {
		if s.waitIdx[f] == nil {
			s.waitIdx[f] = map[string]bool{}
		}
		s.waitIdx[f][e.key] = true
	}
	e.tableState = st
	if st.due.IsZero() {
		delete(s.timers, e.key)
	} else {
		s.timers[e.key] = st.due
	}
}

func (s *Scanner) commit(e *entity, st tableState) {
	s.mu.Lock()
	s.commitLocked(e, st)
	s.mu.Unlock()
}

// perform carries out a decision's actions in order. A catalog action that
// fails ends it, and the entity keeps d.before; once one succeeds the
// entity takes d.state.
func (s *Scanner) perform(ctx context.Context, e *entity, d decision, metas map[string][]byte, start time.Time) error {
	path := e.path()
	for _, a := range d.actions {
		var err error
		switch a := a.(type) {
		case applyNamespace:
			err = s.cfg.Catalog.ApplyNamespace(ctx, e.wh, e.ns, a.rec.Properties, a.rec.UpdatedMS, a.rec.Deleted)
			s.traceEvent("catalogScanner.namespace", path, fmt.Sprintf("namespace applied (deleted=%t)", a.rec.Deleted), start, err)
		case dropEntry:
			if err = s.cfg.Catalog.ApplyDrop(ctx, e.wh, e.kind, e.ident()); err == nil {
				s.commit(e, d.state)
				s.traceEvent("catalogScanner."+e.kind, path, fmt.Sprintf("%s dropped on the primary: removed from the local catalog (files kept)", e.kind), start, nil)
			}
		case applyVersion:
			if err = s.applyVersion(ctx, e, a, metas[a.vid]); err == nil {
				s.commit(e, d.state)
				s.traceEvent("catalogScanner.apply", path, fmt.Sprintf("%s version %d verified and applied (latest seen %d)", e.kind, a.rec.Version, a.latest), start, nil)
			}
		case resendFile:
			s.resend(ctx, a, path)
		default:
			s.notice(a, e, path, start)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// applyVersion points the local catalog at a version, reading its
// metadata unless the observation already did.
func (s *Scanner) applyVersion(ctx context.Context, e *entity, a applyVersion, md []byte) error {
	if md == nil {
		b, k, err := splitLocation(a.rec.MetadataLocation)
		if err == nil {
			md, err = s.read(ctx, b, k, "")
		}
		if err != nil {
			return err
		}
	}
	return s.cfg.Catalog.ApplyEntry(ctx, e.wh, a.rec, md)
}

// resend asks the peers to re-send a file.
func (s *Scanner) resend(ctx context.Context, a resendFile, path string) {
	start := s.cfg.Now()
	b, k, _ := strings.Cut(a.file, "/")
	n, err := s.cfg.Replication.RequestResend(ctx, b, k)
	s.m.retryRequests.Inc()
	s.traceEvent("catalogScanner.repl-retry", path, fmt.Sprintf("file %s missing longer than %s: asked the primary to re-send it (%d version(s) queued)", a.file, a.interval, n), start, err)
}

// notice traces the actions that only report.
func (s *Scanner) notice(a action, e *entity, path string, start time.Time) {
	switch a := a.(type) {
	case awaitFiles:
		s.traceEvent("catalogScanner."+e.kind, path, fmt.Sprintf("version %d not complete yet (%d files missing)", a.version, a.missing), start, nil)
	case holdTxn:
		s.traceEvent("catalogScanner.txn", path, fmt.Sprintf("transaction %s: held until every member arrives", a.id), start, nil)
	case releaseTxn:
		msg := fmt.Sprintf("transaction %s: all %d members arrived; applying", a.id, a.members)
		if a.stale > 0 {
			msg = fmt.Sprintf("transaction %s exceeded replica_catalog_txn_stale_timeout (%s): surviving members let through", a.id, a.stale)
		}
		s.traceEvent("catalogScanner.txn", path, msg, start, nil)
	}
}

// check observes whether one version is complete: its metadata file, and
// where walksFiles says the mode needs them (strict, tables) the current
// snapshot's manifest list, manifests, data and delete files. It returns
// the metadata bytes when it read them. A version found complete is
// remembered and not read again.
func (s *Scanner) check(ctx context.Context, e *entity, v *versionObs, mode string) []byte {
	s.mu.Lock()
	v.known = e.checked[v.vid]
	s.mu.Unlock()
	if v.known {
		return nil
	}
	mb, mk, err := splitLocation(v.rec.MetadataLocation)
	if err != nil {
		v.meta = v.rec.MetadataLocation
		return nil
	}
	v.meta = mb + "/" + mk
	md, err := s.read(ctx, mb, mk, "")
	if err != nil {
		return nil
	}
	v.metaPresent = true
	if walksFiles(mode, v.rec.Kind) {
		v.absent = s.missingFiles(ctx, md)
	}
	if len(v.absent) == 0 {
		s.mu.Lock()
		e.checked[v.vid] = true
		s.mu.Unlock()
	}
	return md
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
	fsys := catalog.ObjectIO{Ctx: ctx, Read: s.readLocation}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		return []string{snap.ManifestList + " (" + err.Error() + ")"}
	}
	// The manifests' presence in one check, then their data and delete
	// files' in another (on a multi-node site one etcd round trip per 128
	// files, where each file cost three); a manifest's file list is read
	// once (manifests are immutable), not again for every version.
	paths := make([]string, len(manifests))
	for i, mf := range manifests {
		paths[i] = mf.FilePath()
	}
	mNames, mHere := s.live(ctx, paths)
	files := make([][]string, len(manifests))
	errs := make([]error, len(manifests))
	var all []string
	for i, mf := range manifests {
		if mHere[i] {
			files[i], errs[i] = s.manifestFiles(fsys, mf)
			all = append(all, files[i]...)
		}
	}
	fNames, fHere := s.live(ctx, all)
	var missing []string
	n := 0
	for i, mf := range manifests {
		switch {
		case !mHere[i]:
			missing = append(missing, mNames[i])
		case errs[i] != nil:
			missing = append(missing, mf.FilePath()+" ("+errs[i].Error()+")")
		default:
			for range files[i] {
				if !fHere[n] {
					missing = append(missing, fNames[n])
				}
				n++
			}
		}
	}
	return missing
}

// live reports for each s3:// location whether it names a live object
// here (its latest version an object, as HeadObject finds it), with the
// bucket/key name it checked (the location itself when it is not one);
// each bucket's keys are checked in one call (objects.Layer.LiveKeys).
func (s *Scanner) live(ctx context.Context, locs []string) (names []string, here []bool) {
	names, here = make([]string, len(locs)), make([]bool, len(locs))
	byBucket := map[string][]int{}
	keys := make([]string, len(locs))
	for i, loc := range locs {
		b, k, err := splitLocation(loc)
		if err != nil {
			names[i] = loc
			continue
		}
		names[i], keys[i] = b+"/"+k, k
		byBucket[b] = append(byBucket[b], i)
	}
	for b, at := range byBucket {
		ks := make([]string, len(at))
		for n, i := range at {
			ks[n] = keys[i]
		}
		ok, err := s.cfg.Objects.LiveKeys(ctx, b, ks)
		if err != nil {
			continue // none counts as here
		}
		for n, i := range at {
			here[i] = ok[n]
		}
	}
	return names, here
}

// manifestCacheFiles bounds the file paths the scanner keeps of the
// manifests it read; past it the cache starts again empty.
const manifestCacheFiles = 200_000

// manifestFiles returns the data and delete files a manifest lists, read
// once and then kept: a manifest's content never changes under its path.
func (s *Scanner) manifestFiles(fsys catalog.ObjectIO, mf iceberg.ManifestFile) ([]string, error) {
	s.manifestMu.Lock()
	files, ok := s.manifests[mf.FilePath()]
	s.manifestMu.Unlock()
	if ok {
		return files, nil
	}
	entries, err := mf.FetchEntries(fsys, true)
	if err != nil {
		return nil, err
	}
	files = make([]string, len(entries))
	for i, en := range entries {
		files[i] = en.DataFile().FilePath()
	}
	s.manifestMu.Lock()
	if s.manifests == nil || s.manifestCount+len(files) > manifestCacheFiles {
		s.manifests, s.manifestCount = map[string][]string{}, 0
	}
	s.manifests[mf.FilePath()] = files
	s.manifestCount += len(files)
	s.manifestMu.Unlock()
	return files, nil
}

// readLocation reads the object a location names, for catalog.ObjectIO.
func (s *Scanner) readLocation(ctx context.Context, location string) ([]byte, error) {
	b, k, err := splitLocation(location)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", catalog.ErrNotLocation, err)
	}
	return s.read(ctx, b, k, "")
}
