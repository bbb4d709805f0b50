package scanner

import (
	"fmt"
	"maps"
	"sort"
	"time"

	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/config"
)

// The decision core: what one evaluation of a namespace, table or view
// concludes from what the shell observed. decide and its helpers do no I/O,
// read no clock and start no goroutine; evaluate (cycle.go) gathers the
// observation, calls decide under the scanner's lock and performs the
// actions. testdata/decide/*.txt drive it directly (decide_test.go).

// tableState is what the scanner tracks of one table or view between
// evaluations. decide never modifies the state it is given.
type tableState struct {
	uuid     string
	latest   int64 // newest version seen in the identity records
	verified int64 // version the local catalog serves (-1 while held)
	// complete is the newest version found complete (holds aside), which
	// transaction members compare against.
	complete int64
	held     bool
	txnID    string
	deleted  bool
	status   string
	missing  []string             // files (bucket/key) the latest version lacks
	since    map[string]time.Time // when each missing file was first (or last re-requested) missed
	due      time.Time            // when the retry or hold timer fires (zero: none)
}

// versionObs is one identity-record version as the shell observed it.
type versionObs struct {
	vid string
	rec catalog.Record
	// known is set when an earlier evaluation found this version complete;
	// the shell then reads nothing more of it.
	known bool
	// meta names the metadata file; metaPresent reports it could be read.
	meta        string
	metaPresent bool
	// absent lists the referenced files (manifest list, manifests, data and
	// delete files) found absent. The shell walks them only when
	// walksFiles says the mode needs them.
	absent []string
}

// localEntry is what the local catalog points at for the name.
type localEntry struct {
	present bool
	uuid    string
	version int64
}

// txnView is the scanner-wide state decide reads about multi-table
// transactions. The shell answers it from its maps under its lock.
type txnView interface {
	// hold returns the hold of a transaction, if one exists.
	hold(id string) (txnHold, bool)
	// complete returns the newest complete version of an entity (by key).
	complete(key string) (int64, bool)
}

// observation is everything decide needs besides the table's own state.
type observation struct {
	key, wh, kind string
	// versions are the identity record's live versions, newest first. The
	// shell checks completeness newest first within the newest incarnation
	// and stops at the first complete version; decide reads no further.
	versions      []versionObs
	local         localEntry // tables and views only
	mode          string     // config.ConsistencyStrict or ConsistencyEventual
	now           time.Time
	retryInterval time.Duration // replica_catalog_retry_interval
	staleTimeout  time.Duration // replica_catalog_txn_stale_timeout
	txns          txnView
}

// action is one thing the shell must do for a decision, in order.
type action interface{ String() string }

// Catalog actions: the first one that fails ends the evaluation.
type (
	// applyNamespace writes a namespace (or its tombstone) to the local catalog.
	applyNamespace struct {
		rec catalog.Record
	}
	// dropEntry removes a table or view from the local catalog (files kept).
	dropEntry struct{}
	// applyVersion points the local catalog at a complete version.
	applyVersion struct {
		vid    string
		rec    catalog.Record
		latest int64
	}
)

// Notices and requests, which cannot fail the evaluation.
type (
	// resendFile asks the primary to re-send a file missing for longer
	// than the retry interval.
	resendFile struct {
		file     string
		interval time.Duration
	}
	// awaitFiles reports that no version is complete yet.
	awaitFiles struct {
		version int64
		missing int
	}
	// holdTxn reports a transaction member held back.
	holdTxn struct{ id string }
	// releaseTxn reports a transaction let through: every member arrived,
	// or (stale > 0) the stale timeout passed.
	releaseTxn struct {
		id      string
		members int
		stale   time.Duration
	}
)

func (a applyNamespace) String() string { return fmt.Sprintf("namespace deleted=%t", a.rec.Deleted) }
func (dropEntry) String() string        { return "drop" }
func (a applyVersion) String() string   { return fmt.Sprintf("apply v%d", a.rec.Version) }
func (a resendFile) String() string     { return "resend " + a.file }
func (a awaitFiles) String() string {
	return fmt.Sprintf("await v%d (%d missing)", a.version, a.missing)
}
func (a holdTxn) String() string { return "hold " + a.id }
func (a releaseTxn) String() string {
	if a.stale > 0 {
		return "release " + a.id + " (stale)"
	}
	return fmt.Sprintf("release %s (all %d arrived)", a.id, a.members)
}

// decision is decide's answer.
type decision struct {
	// before is the state to keep while the catalog action runs, and after
	// it fails; state is the state once it succeeded. Without a catalog
	// action the two are equal.
	before, state tableState
	hold          *txnHold // the transaction hold, created or updated
	actions       []action
	next          []string // entities to evaluate next: the other transaction members
}

// decide concludes one evaluation: which version the local catalog should
// point at, which files to re-request, whether a transaction holds the
// table back.
func decide(st tableState, ob observation) decision {
	if len(ob.versions) == 0 {
		return same(st)
	}
	newest := ob.versions[0].rec
	switch {
	case ob.kind == catalog.KindNamespace:
		st.deleted, st.status = newest.Deleted, "OK"
		return decision{before: st, state: st, actions: []action{applyNamespace{rec: newest}}}
	case newest.Deleted:
		return decideDrop(st, newest)
	}
	return decideEntry(st, ob)
}

func same(st tableState) decision { return decision{before: st, state: st} }

// decideDrop follows a tombstone: the name is removed from the local
// catalog, and nothing is missing or held any more.
func decideDrop(st tableState, newest catalog.Record) decision {
	next := st
	next.uuid, next.latest, next.verified, next.complete = newest.UUID, newest.Version, newest.Version, newest.Version
	next.deleted, next.held, next.status = true, false, "Deleted"
	next.missing, next.since, next.due = nil, map[string]time.Time{}, time.Time{}
	return decision{before: st, state: next, actions: []action{dropEntry{}}}
}

// decideEntry picks the newest complete version of the newest incarnation.
func decideEntry(st tableState, ob observation) decision {
	newest := ob.versions[0].rec
	chosen, latestMissing := pickVersion(ob.versions, ob.mode)
	prevHeld := st.held
	st.uuid, st.latest, st.deleted = newest.UUID, newest.Version, false
	st = withMissing(st, latestMissing, ob.now, prevHeld)
	if chosen == nil {
		return decideIncomplete(st, ob, latestMissing)
	}
	st.complete = chosen.rec.Version
	var d decision
	if txn := chosen.rec.Txn; txn != nil && len(txn.Members) > 1 {
		var held bool
		if d, held = decideTxn(st, ob, txn); held {
			return d
		}
	}
	return decideAccept(st, ob, chosen, d)
}

// pickVersion returns the first complete version of the newest incarnation
// (nil if none), and the files the newest version lacks.
func pickVersion(vs []versionObs, mode string) (*versionObs, []string) {
	var latestMissing []string
	for i := range vs {
		v := &vs[i]
		if !sameIncarnation(vs[0].rec, v.rec) {
			break
		}
		missing := v.missingFor(mode)
		if i == 0 {
			latestMissing = missing
		}
		if len(missing) == 0 {
			return v, latestMissing
		}
	}
	return nil, latestMissing
}

// sameIncarnation reports whether an older version belongs to the same
// table as the newest: not past a tombstone, and the same UUID.
func sameIncarnation(newest, older catalog.Record) bool {
	return !older.Deleted && older.UUID == newest.UUID
}

// walksFiles reports whether a version's completeness needs the files its
// current snapshot references: in strict mode, for tables.
func walksFiles(mode, kind string) bool {
	return mode == config.ConsistencyStrict && kind == catalog.KindTable
}

// missingFor lists what a version lacks for the consistency mode: its
// metadata file, and where walksFiles, its referenced files. Empty means
// complete.
func (v *versionObs) missingFor(mode string) []string {
	switch {
	case v.known:
		return nil
	case !v.metaPresent:
		return []string{v.meta}
	case walksFiles(mode, v.rec.Kind):
		return v.absent
	}
	return nil
}

// withMissing records the files the latest version lacks, keeping when
// each was first missed. The timer goes when nothing is missing and the
// table was not held.
func withMissing(st tableState, missing []string, now time.Time, prevHeld bool) tableState {
	since := make(map[string]time.Time, len(missing))
	for _, f := range missing {
		if t, ok := st.since[f]; ok {
			since[f] = t
		} else {
			since[f] = now
		}
	}
	st.missing, st.since = missing, since
	if len(missing) == 0 && !prevHeld {
		st.due = time.Time{}
	}
	return st
}

// decideIncomplete: no version is complete. The catalog keeps what it
// serves; long-missing files are re-requested.
func decideIncomplete(st tableState, ob observation, missing []string) decision {
	st.held = false
	st.verified = 0
	if ob.local.present && ob.local.uuid == st.uuid {
		st.verified = ob.local.version
	}
	st.status = behindStatus(st)
	st, acts := withRetries(st, ob)
	acts = append(acts, awaitFiles{version: st.latest, missing: len(missing)})
	return decision{before: st, state: st, actions: acts}
}

// withRetries re-requests each file missing for at least the retry
// interval, restarting its clock, and sets the timer for the next one.
func withRetries(st tableState, ob observation) (tableState, []action) {
	if len(st.since) == 0 {
		return st, nil
	}
	since := maps.Clone(st.since)
	var due []string
	var next time.Time
	for f, t := range since {
		if ob.now.Sub(t) >= ob.retryInterval {
			due = append(due, f)
			since[f], t = ob.now, ob.now
		}
		if next.IsZero() || t.Add(ob.retryInterval).Before(next) {
			next = t.Add(ob.retryInterval)
		}
	}
	sort.Strings(due)
	acts := make([]action, 0, len(due))
	for _, f := range due {
		acts = append(acts, resendFile{file: f, interval: ob.retryInterval})
	}
	st.since, st.due = since, next
	return st, acts
}

// decideTxn follows a multi-table transaction: the chosen version is held
// until every member has a complete version at least as new as the
// transaction reached, or the stale timeout passes since the first member
// was seen. It reports whether the table is held; if not, the decision
// carries the hold, the release notice and the members to evaluate next.
func decideTxn(st tableState, ob observation, txn *catalog.TxnInfo) (decision, bool) {
	h, ok := ob.txns.hold(txn.ID)
	if !ok {
		h = txnHold{id: txn.ID, wh: ob.wh, members: txn.Members, first: ob.now}
	}
	d := decision{hold: &h}
	for _, m := range txn.Members {
		if mk := ob.wh + "/" + catalog.TableRecordKey(m.Namespace, m.Name); mk != ob.key {
			d.next = append(d.next, mk)
		}
	}
	switch {
	case h.released:
	case membersArrived(h, ob, st.complete):
		h.released = true
		d.actions = append(d.actions, releaseTxn{id: txn.ID, members: len(txn.Members)})
	case ob.now.Sub(h.first) >= ob.staleTimeout:
		h.released = true
		d.actions = append(d.actions, releaseTxn{id: txn.ID, members: len(txn.Members), stale: ob.staleTimeout})
	default:
		st.held, st.txnID, st.verified, st.status = true, txn.ID, -1, "Held"
		st.due = h.first.Add(ob.staleTimeout)
		d.before, d.state = st, st
		d.actions = append(d.actions, holdTxn{id: txn.ID})
		return d, true
	}
	return d, false
}

// membersArrived reports whether every member of a transaction has a
// complete version at least as new as the one the transaction reached;
// self is the evaluated table's own, just decided.
func membersArrived(h txnHold, ob observation, self int64) bool {
	for _, m := range h.members {
		mk := h.wh + "/" + catalog.TableRecordKey(m.Namespace, m.Name)
		c, ok := ob.txns.complete(mk)
		if mk == ob.key {
			c, ok = self, true
		}
		if !ok || c < m.Version {
			return false
		}
	}
	return true
}

// decideAccept serves the chosen version: it is applied unless the local
// catalog already points at it, then long-missing files of the latest
// version are re-requested. d carries a released transaction, if any.
func decideAccept(st tableState, ob observation, chosen *versionObs, d decision) decision {
	d.before = st
	l := ob.local
	if !l.present || l.uuid != chosen.rec.UUID || l.version != chosen.rec.Version {
		d.actions = append(d.actions, applyVersion{vid: chosen.vid, rec: chosen.rec, latest: st.latest})
	}
	st.held, st.verified = false, chosen.rec.Version
	st.status = behindStatus(st)
	if len(st.missing) == 0 {
		st.due = time.Time{}
	}
	st, acts := withRetries(st, ob)
	d.actions = append(d.actions, acts...)
	d.state = st
	if !hasCatalogAction(d.actions) {
		d.before = st
	}
	return d
}

func hasCatalogAction(acts []action) bool {
	for _, a := range acts {
		switch a.(type) {
		case applyNamespace, dropEntry, applyVersion:
			return true
		}
	}
	return false
}

// behindStatus is the status table replicate status shows for a table.
func behindStatus(st tableState) string {
	switch {
	case st.held:
		return "Held"
	case st.verified >= st.latest:
		return "OK"
	}
	if n := st.latest - max(st.verified, 0); n != 1 {
		return fmt.Sprintf("%d versions behind", n)
	}
	return "1 version behind"
}
