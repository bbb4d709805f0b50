// Package replication owns site replication: the site registry and join,
// the per-version target status, the durable outbound journal and its
// workers, the retry queue (MRF) with exponential backoff, the inbound
// receiver (timestamp resolution, REPLICA marking), resync and version
// mismatch detection.
//
// Every local change reaches the engine through objects.Replicator inside
// the batch that commits it: the change and one journal entry per peer are
// durable together, so a crash loses no outbound work. Per target, a pump
// reads the journal and hands entries to workers chosen by a hash of the
// object key, so one key's changes are sent in order and different keys in
// parallel. A send that fails while the peer answers moves to the retry
// queue; a send that fails because the peer is unreachable stays in the
// journal and waits for the link, spending no retry.
package replication

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/trace"
)

// Config holds an Engine's collaborators.
type Config struct {
	Meta     meta.Store     // required
	Objects  *objects.Layer // required
	Settings *config.Store  // required
	Trace    *trace.Bus     // required
	Dial     Dialer         // required
	SiteID   string         // required: this site's deployment ID
	SiteName string
	Logger   *slog.Logger
	// Registerer receives the replication metrics; nil registers none.
	Registerer prometheus.Registerer
	// OnService installs the site-replication service credential (empty to
	// remove it) in the site's identity store.
	OnService func(accessKey, secretKey string)
	// ReplicaCatalog reports whether this site is the Tables replica (for
	// the peers' role checks); nil means never.
	ReplicaCatalog func() bool
	// HealthInterval is how often each link is probed. Default 1s.
	HealthInterval time.Duration
	// Secrets, when set, keeps the service credential's secret sealed at
	// rest (*iam.Store: under the IAM data key); nil stores it with the
	// state as it is (tests).
	Secrets SecretStore
}

// SecretStore seals a secret at rest under a purpose (*iam.Store).
type SecretStore interface {
	// SealedValue returns the key and value to write, in the caller's
	// batch, for secret sealed under purpose.
	SealedValue(purpose, secret string) (key, value []byte)
	// OpenValue returns the secret stored for purpose, if any.
	OpenValue(purpose string) (secret string, ok bool, err error)
}

// servicePurpose names the service credential's secret in the SecretStore.
const servicePurpose = "replication/service-secret-key"

// Validate reports every missing collaborator at once.
func (c *Config) Validate() error {
	var errs []error
	for _, r := range []struct {
		missing bool
		name    string
	}{{c.Meta == nil, "Meta"}, {c.Objects == nil, "Objects"}, {c.Settings == nil, "Settings"},
		{c.Trace == nil, "Trace"}, {c.Dial == nil, "Dial"}, {c.SiteID == "", "SiteID"}} {
		if r.missing {
			errs = append(errs, fmt.Errorf("replication: %s is required", r.name))
		}
	}
	return errors.Join(errs...)
}

// Engine is a site's replication engine. It is safe for concurrent use.
type Engine struct {
	cfg Config
	log *slog.Logger
	m   *engineMetrics

	state   atomic.Pointer[State]
	targets atomic.Pointer[[]*target]

	mu       sync.Mutex // serialises configuration changes and target restarts
	resyncs  map[string]*resyncRun
	backlogs map[string]*backlog // per peer site ID; guarded by mu
	workers  int                 // the workers setting the targets run with; guarded by mu
	// mismatchNow asks the mismatch loop for a comparison now (a link came
	// back after work for it was dropped, or the settings changed).
	mismatchNow      chan struct{}
	compareRequested atomic.Bool
	iam              IAMStore // nil until AttachIAM
	ctx              context.Context
	cancel           context.CancelFunc
	bg               sync.WaitGroup
	unsub            func()
	history          linkHistory // the last hour of every link (history.go)
}

var _ objects.Replicator = (*Engine)(nil)

// New builds the engine and loads its configuration; Start runs it.
func New(cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.HealthInterval == 0 {
		cfg.HealthInterval = time.Second
	}
	e := &Engine{cfg: cfg, log: cfg.Logger.With("component", "replication"), resyncs: map[string]*resyncRun{},
		backlogs: map[string]*backlog{}, mismatchNow: make(chan struct{}, 1)}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	e.targets.Store(&[]*target{})
	st := &State{}
	raw, err := cfg.Meta.Get([]byte(keyState))
	switch {
	case err == nil:
		if err := decode(raw, st); err != nil {
			return nil, fmt.Errorf("replication: decode state: %w", err)
		}
	case !errors.Is(err, meta.ErrNotFound):
		return nil, err
	}
	if err := e.openServiceSecret(st); err != nil {
		return nil, err
	}
	e.state.Store(st)
	if e.m, err = newEngineMetrics(e, cfg.Registerer); err != nil {
		return nil, err
	}
	return e, nil
}

// Start installs the service credential, starts a sender for every peer,
// resumes interrupted resyncs and follows replication setting changes.
func (e *Engine) Start() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.state.Load()
	if st.Enabled() && e.cfg.OnService != nil {
		e.cfg.OnService(st.ServiceAccessKey, st.ServiceSecretKey)
	}
	if err := e.restartTargetsLocked(); err != nil {
		return err
	}
	e.unsub = e.cfg.Settings.Subscribe(func(subsys string) {
		if subsys != config.SubsysReplication {
			return
		}
		e.kickMismatch()
		e.mu.Lock()
		defer e.mu.Unlock()
		// Delays and limits are read where they are used; only a new
		// number of workers needs the senders restarted.
		if e.cfg.Settings.Int(config.SubsysReplication, config.ReplicationWorkers) == e.workers {
			return
		}
		if err := e.restartTargetsLocked(); err != nil {
			e.log.Error("restart replication targets", "err", err)
		}
	})
	e.bg.Add(2)
	go e.mismatchLoop()
	go e.historyLoop()
	return e.resumeResyncsLocked()
}

// Close stops every sender and background job; work left in the journal
// is sent after the next start.
func (e *Engine) Close() {
	if e.unsub != nil {
		e.unsub()
	}
	e.cancel()
	e.mu.Lock()
	for _, t := range *e.targets.Load() {
		t.stop()
	}
	e.targets.Store(&[]*target{})
	e.mu.Unlock()
	e.bg.Wait()
}

// State returns the current site replication configuration.
func (e *Engine) State() State { return *e.state.Load() }

// SiteID returns this site's deployment ID.
func (e *Engine) SiteID() string { return e.cfg.SiteID }

// peers returns the configuration's sites other than this one.
func (e *Engine) peers(st *State) []Site {
	var out []Site
	if !st.Enabled() {
		return nil
	}
	for _, s := range st.Sites {
		if s.ID != e.cfg.SiteID {
			out = append(out, s)
		}
	}
	return out
}

// restartTargetsLocked stops the current senders and starts one per peer
// of the current configuration, with the current settings.
func (e *Engine) restartTargetsLocked() error {
	for _, t := range *e.targets.Load() {
		t.stop()
	}
	st := e.state.Load()
	e.workers = e.cfg.Settings.Int(config.SubsysReplication, config.ReplicationWorkers)
	var ts []*target
	live := map[string]bool{}
	for _, s := range e.peers(st) {
		peer, err := e.cfg.Dial(s.Endpoint, Credentials{AccessKey: st.ServiceAccessKey, SecretKey: st.ServiceSecretKey})
		if err != nil {
			return fmt.Errorf("replication: peer %s: %w", s.Name, err)
		}
		bl := e.backlogs[s.ID]
		if bl == nil {
			if bl, err = loadBacklog(e.cfg.Meta, s.ID, e.log.With("target", s.Name)); err != nil {
				return err
			}
			e.backlogs[s.ID] = bl
		}
		live[s.ID] = true
		ts = append(ts, newTarget(e, s, peer, bl))
	}
	for id := range e.backlogs {
		if !live[id] { // the site left: its journal and retry queue are gone
			delete(e.backlogs, id)
		}
	}
	e.targets.Store(&ts)
	for _, t := range ts {
		t.start()
	}
	return nil
}

func (e *Engine) target(nameOrID string) *target {
	for _, t := range *e.targets.Load() {
		if t.site.ID == nameOrID || t.site.Name == nameOrID {
			return t
		}
	}
	return nil
}

// sealServiceSecret returns st as stored: with a SecretStore, without the
// service secret, which goes sealed into b beside it.
func (e *Engine) sealServiceSecret(b meta.Batch, st *State) *State {
	if e.cfg.Secrets == nil || st.ServiceSecretKey == "" {
		return st
	}
	k, v := e.cfg.Secrets.SealedValue(servicePurpose, st.ServiceSecretKey)
	b.Set(k, v)
	stored := *st
	stored.ServiceSecretKey = ""
	return &stored
}

// openServiceSecret fills in the service secret of a loaded state from
// the SecretStore. A state stored before secrets were sealed still holds
// it: it is sealed now, and removed from the state.
func (e *Engine) openServiceSecret(st *State) error {
	if e.cfg.Secrets == nil || st.ServiceAccessKey == "" {
		return nil
	}
	if st.ServiceSecretKey != "" {
		b := e.cfg.Meta.NewBatch()
		b.Set([]byte(keyState), encode(e.sealServiceSecret(b, st)))
		if err := b.Commit(true); err != nil {
			return fmt.Errorf("replication: seal the service credential: %w", err)
		}
		return nil
	}
	secret, ok, err := e.cfg.Secrets.OpenValue(servicePurpose)
	switch {
	case err != nil:
		return fmt.Errorf("replication: the service credential's secret does not open: %w", err)
	case !ok:
		return errors.New("replication: the service credential's secret is missing")
	}
	st.ServiceSecretKey = secret
	return nil
}

// saveStateLocked persists st durably and makes it current. The journal,
// retry queue and resync job of a site leaving the configuration go too.
func (e *Engine) saveStateLocked(st *State) error {
	b := e.cfg.Meta.NewBatch()
	for _, old := range e.state.Load().Sites {
		if slices.ContainsFunc(st.Sites, func(s Site) bool { return s.ID == old.ID }) {
			continue
		}
		for _, p := range [][]byte{journalPrefix(old.ID), mrfPrefix(old.ID)} {
			b.DeleteRange(p, meta.PrefixEnd(p))
		}
		b.Delete(resyncKey(old.ID))
	}
	if st.Enabled() {
		b.Set([]byte(keyState), encode(e.sealServiceSecret(b, st)))
	} else {
		b.Delete([]byte(keyState))
		if e.cfg.Secrets != nil {
			k, _ := e.cfg.Secrets.SealedValue(servicePurpose, "")
			b.Delete(k)
		}
	}
	if err := b.Commit(true); err != nil {
		return err
	}
	e.state.Store(st)
	if e.cfg.OnService != nil {
		if st.Enabled() {
			e.cfg.OnService(st.ServiceAccessKey, st.ServiceSecretKey)
		} else {
			e.cfg.OnService("", "")
		}
	}
	return nil
}

// Version implements objects.Replicator: it marks every peer PENDING and
// journals the version for each.
func (e *Engine) Version(b meta.Batch, bucket, key string, v *objects.Version) {
	ts := *e.targets.Load()
	if len(ts) == 0 {
		return
	}
	v.Targets = make(map[string]string, len(ts))
	now := time.Now().UnixNano()
	v.ActivityTimestamp = now
	for _, t := range ts {
		v.Targets[t.site.ID] = objects.StatusPending
		t.journalVersion(b, Entry{Op: OpVersion, Bucket: bucket, Key: key, VersionID: v.VersionID, Size: v.Size, At: v.ModTime, Queued: now}, v)
	}
}

// Purge implements objects.Replicator.
func (e *Engine) Purge(b meta.Batch, bucket, key string, v *objects.Version, how objects.PurgeKind) {
	now := time.Now().UnixNano()
	for _, t := range *e.targets.Load() {
		t.journal(b, Entry{Op: OpPurge, Bucket: bucket, Key: key, VersionID: v.VersionID, At: v.ModTime, Queued: now, Purge: how})
	}
}

// Bucket implements objects.Replicator.
func (e *Engine) Bucket(b meta.Batch, bk *objects.Bucket, deleted bool, at int64) {
	ts := *e.targets.Load()
	if len(ts) == 0 {
		return
	}
	op := OpBucket
	if deleted {
		op = OpBucketDelete
	} else {
		bk.Versioning = objects.VersioningEnabled
	}
	now := time.Now().UnixNano()
	for _, t := range ts {
		t.journal(b, Entry{Op: op, Bucket: bk.Name, At: at, Queued: now})
	}
}

// RequiresVersioning implements objects.Replicator: with site replication
// on, every bucket stays versioned.
func (e *Engine) RequiresVersioning() bool { return e.state.Load().Enabled() }

// Committed implements objects.Replicator: it wakes the senders.
func (e *Engine) Committed() {
	for _, t := range *e.targets.Load() {
		t.wakeUp()
	}
}

func (e *Engine) traceEvent(fn, target, bucket, key, msg string, start time.Time, err error) {
	if !e.cfg.Trace.Enabled(trace.Replication) {
		return
	}
	ev := trace.Event{Type: trace.Replication, Time: start, FuncName: fn, Path: bucket + "/" + key,
		Duration: time.Since(start), Msg: msg, Attrs: map[string]string{}}
	if target != "" {
		ev.Attrs["target"] = target
	}
	if err != nil {
		ev.Error = err.Error()
	}
	e.cfg.Trace.Publish(ev)
}
