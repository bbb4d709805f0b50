// Package scanner owns the Tables replica: the replica catalog scanner that
// rebuilds the Iceberg catalog from replicated warehouse data, the roles
// (which site accepts inbound warehouse replication and which accepts client
// writes), failover, the catalog resync (open, rebuild), catalog reset and
// the identity-record backfill.
//
// The scanner follows arrivals: the object layer reports every version it
// receives from a peer, and a cycle evaluates only the identity records that
// arrived, the tables waiting on a file that arrived, and the tables whose
// retry or transaction timer is due. A full pass over every identity record
// runs once when the scanner starts (or after a reset). Its state is held in
// memory and starts empty, as on a new leader; a single-node site is always
// its own leader.
package scanner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/replication"
	"github.com/twinlake/twinlake/internal/trace"
)

// Scanner states, as table replicate status reports them.
const (
	StateDisabled   = "disabled"   // replica_catalog is off
	StateWaiting    = "waiting"    // on, but no cycle has completed yet
	StateActive     = "active"     // on, strict consistency
	StateTracking   = "tracking"   // on, eventual consistency
	StateRebuilding = "rebuilding" // a catalog resync window is open
)

// Rebuild states.
const (
	RebuildPending      = "Pending"
	RebuildInProgress   = "InProgress"
	RebuildFailureRetry = "FailureRetry"
	RebuildFailed       = "Failed"
	RebuildCompleted    = "Completed"
)

// Errors.
var (
	ErrNotReplica       = errors.New("this site is not the Tables replica")
	ErrReplicaReadOnly  = errors.New("this site is the Tables replica: warehouses accept no client writes")
	ErrRoleConflict     = errors.New("tables replica role refused")
	ErrNoResyncWindow   = errors.New("no catalog resync window is open (run 'table replicate resync open' first)")
	ErrPeerResyncActive = errors.New("the primary still reports an object resync in progress")
	ErrBackfillRunning  = errors.New("a backfill is already running")
	ErrNoBackfill       = errors.New("no backfill has run")
	ErrNotConfirmed     = errors.New("confirmation required")
)

// Config holds a Scanner's collaborators.
type Config struct {
	Meta        meta.Store          // required
	Objects     *objects.Layer      // required
	Catalog     *catalog.Catalog    // required
	Settings    *config.Store       // required
	Trace       *trace.Bus          // required
	Replication *replication.Engine // required
	SiteID      string              // required
	Logger      *slog.Logger
	Registerer  prometheus.Registerer
	Now         func() time.Time
}

// Scanner is a site's Tables replica machinery. It is safe for concurrent use.
type Scanner struct {
	cfg Config
	log *slog.Logger
	m   *scanMetrics

	recent eventRing // the last notable events, for the status
	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	dirtyMu sync.Mutex
	dirty   map[string]map[string]bool // warehouse -> keys arrived since the last cycle

	mu       sync.Mutex // guards the fields below and every entity
	state    string
	needFull bool
	ents     map[string]*entity         // entity key (warehouse/record key) -> entity
	waitIdx  map[string]map[string]bool // bucket/file key -> entities missing it
	timers   map[string]time.Time       // entity key -> when its retry or hold is due
	txns     map[string]*txnHold        // txn ID -> hold
	lastOK   time.Time
	lastDur  time.Duration
	cycles   int64
	failover atomic.Bool
	persist  persisted

	manifestMu    sync.Mutex          // guards manifests and manifestCount
	manifests     map[string][]string // manifest path -> the files it lists (manifestFiles)
	manifestCount int                 // file paths held in manifests

	backfill *backfillRun
}

// New builds the scanner; Start runs it.
func New(cfg Config) (*Scanner, error) {
	if cfg.Meta == nil || cfg.Objects == nil || cfg.Catalog == nil || cfg.Settings == nil || cfg.Trace == nil ||
		cfg.Replication == nil || cfg.SiteID == "" {
		return nil, errors.New("scanner: Meta, Objects, Catalog, Settings, Trace, Replication and SiteID are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Scanner{cfg: cfg, log: cfg.Logger.With("component", "scanner"), wake: make(chan struct{}, 1),
		dirty: map[string]map[string]bool{}, state: StateDisabled}
	s.resetMemory()
	var err error
	if s.persist, err = loadPersisted(cfg.Meta); err != nil {
		return nil, err
	}
	if s.m, err = newScanMetrics(s, cfg.Registerer); err != nil {
		return nil, err
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	cfg.Settings.AddGuard(s.roleGuard)
	cfg.Settings.Subscribe(func(subsys string) {
		if subsys == config.SubsysTables {
			s.Wake()
		}
	})
	cfg.Objects.SetArrivalObserver(s.arrived)
	return s, nil
}

func (s *Scanner) resetMemory() {
	s.ents = map[string]*entity{}
	s.waitIdx = map[string]map[string]bool{}
	s.timers = map[string]time.Time{}
	s.txns = map[string]*txnHold{}
	s.needFull = true
}

// Start runs the scanner loop, and resumes a backfill that a restart or a
// change of leader interrupted.
func (s *Scanner) Start() {
	s.wg.Add(1)
	go s.loop()
	s.resumeBackfill()
}

// Close stops the loop and any backfill.
func (s *Scanner) Close() {
	s.cancel()
	s.wg.Wait()
}

// Wake asks for a cycle now.
func (s *Scanner) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// arrived is the object layer's arrival observer.
func (s *Scanner) arrived(bucket, key string) {
	b, err := s.cfg.Objects.Bucket(context.Background(), bucket)
	if err != nil || !b.Warehouse {
		return
	}
	s.dirtyMu.Lock()
	if s.dirty[bucket] == nil {
		s.dirty[bucket] = map[string]bool{}
	}
	s.dirty[bucket][key] = true
	s.dirtyMu.Unlock()
	s.Wake()
}

func (s *Scanner) takeDirty() map[string]map[string]bool {
	s.dirtyMu.Lock()
	defer s.dirtyMu.Unlock()
	d := s.dirty
	s.dirty = map[string]map[string]bool{}
	return d
}

// Role reports whether replica_catalog is on.
func (s *Scanner) Role() bool {
	return s.cfg.Settings.Bool(config.SubsysTables, config.TablesReplicaCatalog)
}

func (s *Scanner) consistency() string {
	return s.cfg.Settings.String(config.SubsysTables, config.TablesReplicaCatalogConsistency)
}

// State returns the scanner state, as table replicate status reports it.
func (s *Scanner) State() string {
	window, role := s.persisted().Window, s.Role()
	s.mu.Lock()
	defer s.mu.Unlock()
	return reportedState(s.state, role, window)
}

func (s *Scanner) setState(st string) {
	s.mu.Lock()
	s.state = st
	s.mu.Unlock()
}

// loop runs cycles: on a wake-up (arrivals, settings, commands) after a
// short debounce, or every scan interval.
func (s *Scanner) loop() {
	defer s.wg.Done()
	for {
		interval := s.cfg.Settings.Duration(config.SubsysTables, config.TablesReplicaCatalogScanInterval)
		select {
		case <-s.ctx.Done():
			return
		case <-s.wake:
			select { // let a burst of arrivals gather
			case <-s.ctx.Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		case <-time.After(interval):
		}
		s.runOnce(s.ctx)
	}
}

// runOnce runs one turn of the loop: a rebuild, a scan, or nothing, as
// planRun decides.
func (s *Scanner) runOnce(ctx context.Context) {
	p, role := s.persisted(), s.Role()
	s.mu.Lock()
	step := planRun(s.state, p, role, s.failover.Load())
	s.state = step.state
	if step.reset {
		s.resetMemory()
	}
	s.mu.Unlock()
	switch step.kind {
	case stepRebuild:
		s.rebuildCycle(ctx)
		return
	case stepIdle:
		s.takeDirty()
		return
	}
	if err := s.cycle(ctx, step.final); err != nil {
		s.log.Warn("scanner cycle", "err", err)
		return
	}
	if step.final {
		s.completeFailover(ctx)
		return
	}
	s.setState(settledState(s.consistency()))
}

// Kinds of loop turn.
const (
	stepIdle    = "idle"    // nothing to do but drop the arrivals
	stepRebuild = "rebuild" // a rebuild attempt in the resync window
	stepCycle   = "cycle"   // a scan cycle
)

// runStep is one turn of the loop.
type runStep struct {
	kind  string
	state string // the loop state while it runs
	reset bool   // drop the in-memory state: the role was just turned off
	// final marks a failover's final full cycle; promotion follows it.
	final bool
}

// planRun decides a turn of the loop from the loop state, the persisted
// window and rebuild, the role and a requested failover. It is pure.
func planRun(loop string, p persisted, role, failover bool) runStep {
	switch {
	case p.Window && (p.Rebuild.State == RebuildInProgress || p.Rebuild.State == RebuildFailureRetry):
		return runStep{kind: stepRebuild, state: StateRebuilding}
	case p.Window:
		return runStep{kind: stepIdle, state: StateRebuilding}
	case !role:
		return runStep{kind: stepIdle, state: StateDisabled, reset: loop != StateDisabled}
	}
	st := runStep{kind: stepCycle, state: loop, final: failover}
	if loop == StateDisabled || loop == StateRebuilding {
		st.state = StateWaiting
	}
	return st
}

// settledState is the loop state after a successful cycle.
func settledState(consistency string) string {
	if consistency == config.ConsistencyEventual {
		return StateTracking
	}
	return StateActive
}

// traceEvent publishes one of the scanner's events on the trace bus (when
// someone follows it) and keeps it among the recent ones the status
// reports, unless it is a cycle's summary.
func (s *Scanner) traceEvent(fn, path, msg string, start time.Time, err error) {
	traced := s.cfg.Trace.Enabled(trace.TablesScan)
	if !traced && fn == "catalogScanner.cycle" {
		return
	}
	ev := trace.Event{Type: trace.TablesScan, TypeName: trace.TablesScan.String(), Time: start, FuncName: fn, Path: path,
		Duration: time.Since(start), Msg: msg}
	if err != nil {
		ev.Error = err.Error()
	}
	if fn != "catalogScanner.cycle" {
		s.recent.add(ev)
	}
	if traced {
		s.cfg.Trace.Publish(ev)
	}
}

// recentEventCount bounds the events the status keeps.
const recentEventCount = 50

// eventRing keeps the scanner's last notable events: a fixed ring, so
// recording one (every cycle, for each table still waiting for files)
// moves nothing.
type eventRing struct {
	mu   sync.Mutex
	evs  [recentEventCount]trace.Event
	next int // where the next event goes
	n    int // how many are kept
}

func (r *eventRing) add(ev trace.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs[r.next] = ev
	r.next = (r.next + 1) % recentEventCount
	r.n = min(r.n+1, recentEventCount)
}

// newestFirst returns a copy of the events, newest first.
func (r *eventRing) newestFirst() []trace.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]trace.Event, r.n)
	for i := range out {
		out[i] = r.evs[(r.next-1-i+recentEventCount)%recentEventCount]
	}
	return out
}

// warehouses returns the names of the warehouse buckets.
func (s *Scanner) warehouses(ctx context.Context) []string {
	var out []string
	for _, b := range s.cfg.Objects.ListBuckets(ctx) {
		if b.Warehouse {
			out = append(out, b.Name)
		}
	}
	return out
}

// splitLocation splits s3://bucket/key (also s3a://, s3n://).
func splitLocation(loc string) (bucket, key string, err error) {
	rest := ""
	for _, p := range []string{"s3://", "s3a://", "s3n://"} {
		if strings.HasPrefix(loc, p) {
			rest = loc[len(p):]
			break
		}
	}
	bucket, key, ok := strings.Cut(rest, "/")
	if rest == "" || !ok || bucket == "" || key == "" {
		return "", "", fmt.Errorf("not an s3:// location: %q", loc)
	}
	return bucket, key, nil
}
