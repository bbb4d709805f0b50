package scanner

import (
	"slices"
	"strings"
	"time"

	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/trace"
)

// EntryStatus is one table or view as the replica sees it.
type EntryStatus struct {
	Warehouse string   `json:"warehouse"`
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
	Kind      string   `json:"kind"`
	// Status is OK, "N versions behind", Held (multi-table transaction) or
	// Deleted.
	Status string `json:"status"`
	// Verified is the version the local catalog serves (-1 while held).
	Verified int64 `json:"verified"`
	// Latest is the newest version seen in the replicated identity records.
	Latest       int64    `json:"latest"`
	Behind       int64    `json:"behind"`
	MissingFiles []string `json:"missingFiles,omitempty"`
	Transaction  string   `json:"transaction,omitempty"`
}

// Status is the scanner's report.
type Status struct {
	State       string        `json:"state"`
	Consistency string        `json:"consistency"`
	Leader      bool          `json:"leader"`
	Promoting   bool          `json:"promoting,omitempty"`
	Cycles      int64         `json:"cycles"`
	LastCycle   time.Time     `json:"lastCycle,omitzero"`
	CycleTime   time.Duration `json:"cycleTime"`
	Window      bool          `json:"resyncWindow,omitempty"`
	Rebuild     RebuildStatus `json:"rebuild,omitzero"`
	Total       int           `json:"total"`
	Offset      int           `json:"offset"`
	Entries     []EntryStatus `json:"entries"`
	// Events are the scanner's last notable events (versions applied,
	// files missing, re-sends asked, transactions held, failover and
	// rebuild steps, errors), newest first, kept since the site started.
	Events []trace.Event `json:"events,omitempty"`
}

// Status reports the scanner state and, from offset, at most limit tables
// and views (0: all) ordered by warehouse, namespace and name.
func (s *Scanner) Status(offset, limit int) Status {
	p := s.persisted()
	role := s.Role()
	s.mu.Lock()
	out := Status{State: reportedState(s.state, role, p.Window), Consistency: s.consistency(), Leader: true, Promoting: s.failover.Load(),
		Cycles: s.cycles, LastCycle: s.lastOK, CycleTime: s.lastDur, Window: p.Window, Rebuild: p.Rebuild,
		Entries: []EntryStatus{}, Events: s.recent.newestFirst()}
	type keyed struct {
		order string // warehouse, namespace, name and kind, each ended by a byte below any in them
		es    EntryStatus
	}
	all := make([]keyed, 0, len(s.ents))
	for _, e := range s.ents {
		if e.kind == catalog.KindNamespace || e.status == "" {
			continue
		}
		es := EntryStatus{Warehouse: e.wh, Namespace: e.ns, Name: e.name, Kind: e.kind, Status: e.status,
			Verified: e.verified, Latest: e.latest, MissingFiles: append([]string(nil), e.missing...), Transaction: e.txnID}
		if !e.deleted && !e.held && e.latest > e.verified {
			es.Behind = e.latest - max(e.verified, 0)
		}
		all = append(all, keyed{order: e.wh + "\x00" + strings.Join(e.ns, "\x1f") + "\x00" + e.name + "\x00" + e.kind, es: es})
	}
	s.mu.Unlock()
	// One key per entry, built once, where the comparison joined both
	// namespaces at every step.
	slices.SortFunc(all, func(a, b keyed) int { return strings.Compare(a.order, b.order) })
	out.Total, out.Offset = len(all), offset
	if offset < len(all) {
		all = all[max(offset, 0):]
		if limit > 0 && limit < len(all) {
			all = all[:limit]
		}
		out.Entries = make([]EntryStatus, len(all))
		for i, k := range all {
			out.Entries[i] = k.es
		}
	}
	return out
}

// reportedState is the state status and metrics report: the loop's own
// state, corrected for the role and resync window the loop has not caught
// up with yet. The loop state starts disabled and changes only when a cycle
// runs, so without this a restarted replica (or one whose role was just
// turned on) would read disabled until its first cycle; it is waiting.
func reportedState(loop string, role, window bool) string {
	switch {
	case window:
		return StateRebuilding
	case !role:
		return StateDisabled
	case loop == StateDisabled || loop == StateRebuilding:
		return StateWaiting
	}
	return loop
}
