// Package config owns a site's runtime settings: the subsystems and keys
// behind `twinlake admin config get|set`, their defaults, validation,
// environment overrides and persistence in the metadata store. Changes apply
// without restart: parts read settings through cheap typed accessors and
// subscribe to be told when a subsystem changes.
//
// A setting's effective value is, in order of precedence, its environment
// override TWINLAKE_<SUBSYS>_<KEY> (read once, at New), the value stored by
// Set, or its default.
package config

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twinlake/twinlake/internal/meta"
)

// keyPrefix is the reserved metadata prefix; each subsystem's stored values
// are one JSON object under keyPrefix+subsys, so a Set is one atomic write.
const keyPrefix = "cfg/"

// Source says where a setting's effective value comes from.
type Source string

// Sources, in increasing precedence.
const (
	SourceDefault Source = "default"
	SourceStored  Source = "stored"
	SourceEnv     Source = "env"
)

// KV is one setting as Get reports it.
type KV struct {
	Key    string
	Value  string // effective value, canonical text
	Source Source
	Help   string
}

// SetGuard may refuse a proposed change before it is persisted, for rules
// that span more than one key or more than one site (for example, only one
// site may be the Tables replica). proposed holds the canonical values of the
// keys being set, "" for a key being reset; guards must not modify it. A
// guard runs with Set's lock held: it must not call Set or AddGuard.
type SetGuard func(ctx context.Context, subsys string, proposed map[string]string) error

// Config holds the optional settings of a Store.
type Config struct {
	// Logger receives warnings about stored values that no longer parse.
	// Default: discard.
	Logger *slog.Logger
	// LookupEnv reads environment overrides. Default: os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

type keyID struct{ subsys, name string }

// entry is the effective value of one key.
type entry struct {
	value
	source Source
}

// Store holds a site's settings. It is safe for concurrent use; the typed
// accessors read an immutable snapshot with one atomic load.
type Store struct {
	db         meta.Store
	log        *slog.Logger
	keys       map[keyID]*Key
	subsystems map[string][]*Key // display order
	env        map[keyID]value

	snap atomic.Pointer[map[keyID]entry]

	setMu  sync.Mutex                   // serializes Set
	stored map[string]map[string]string // canonical stored values, under setMu

	hookMu sync.RWMutex
	guards []SetGuard
	subs   []subscriber
	nextID int
}

type subscriber struct {
	id int
	fn func(subsys string)
}

// New loads the stored settings from db and reads the environment overrides.
// It fails if an override does not parse (wrapping ErrInvalidValue), so a
// mistyped variable stops the server instead of being ignored. A stored value
// that no longer parses is logged and replaced by the default.
func New(db meta.Store, cfg Config) (*Store, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.LookupEnv == nil {
		cfg.LookupEnv = os.LookupEnv
	}
	s := &Store{
		db:         db,
		log:        cfg.Logger.With("component", "config"),
		keys:       map[keyID]*Key{},
		subsystems: map[string][]*Key{},
		env:        map[keyID]value{},
		stored:     map[string]map[string]string{},
	}
	var problems []error
	for i := range keyTable {
		k := &keyTable[i]
		id := keyID{k.Subsys, k.Name}
		s.keys[id] = k
		s.subsystems[k.Subsys] = append(s.subsystems[k.Subsys], k)
		if k.NoEnv {
			continue
		}
		name := EnvName(k.Subsys, k.Name)
		if raw, ok := cfg.LookupEnv(name); ok && raw != "" { // set but empty reads as unset
			v, err := k.parse(raw)
			if err != nil {
				problems = append(problems, fmt.Errorf("%s: %w", name, err))
				continue
			}
			s.env[id] = v
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("config: environment overrides: %w", errors.Join(problems...))
	}
	if err := s.load(); err != nil {
		return nil, err
	}
	s.publish()
	return s, nil
}

// load reads every stored subsystem record into s.stored.
func (s *Store) load() error {
	prefix := []byte(keyPrefix)
	return meta.Scan(s.db, prefix, meta.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		subsys := string(k[len(prefix):])
		var raw map[string]string
		if err := json.Unmarshal(v, &raw); err != nil {
			return false, fmt.Errorf("config: decode stored %s: %w", subsys, err)
		}
		kept := map[string]string{}
		for name, text := range raw {
			key, ok := s.keys[keyID{subsys, name}]
			if !ok {
				s.log.Warn("ignoring stored setting that no longer exists", "subsys", subsys, "key", name)
				continue
			}
			val, err := key.parse(text)
			if err != nil {
				s.log.Warn("ignoring stored setting that no longer parses", "subsys", subsys, "key", name, "err", err)
				continue
			}
			kept[name] = val.text
		}
		s.stored[subsys] = kept
		return true, nil
	})
}

// publish rebuilds the snapshot the accessors read. Callers hold setMu or
// are New.
func (s *Store) publish() {
	snap := make(map[keyID]entry, len(s.keys))
	for id, k := range s.keys {
		e := entry{source: SourceDefault}
		e.value, _ = k.parse(k.Default)
		if text, ok := s.stored[id.subsys][id.name]; ok {
			e.value, _ = k.parse(text) // stored values are canonical: parse cannot fail
			e.source = SourceStored
		}
		if v, ok := s.env[id]; ok {
			e.value, e.source = v, SourceEnv
		}
		snap[id] = e
	}
	s.snap.Store(&snap)
}

// Subsystems returns the subsystem names, sorted.
func (s *Store) Subsystems() []string {
	names := make([]string, 0, len(s.subsystems))
	for n := range s.subsystems {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Get returns every key of subsys, in table order, with its effective value
// and where that value comes from. It returns ErrUnknownSubsystem for a
// subsystem not in the table.
func (s *Store) Get(subsys string) ([]KV, error) {
	keys, ok := s.subsystems[subsys]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownSubsystem, subsys)
	}
	snap := *s.snap.Load()
	out := make([]KV, len(keys))
	for i, k := range keys {
		e := snap[keyID{subsys, k.Name}]
		out[i] = KV{Key: k.Name, Value: e.text, Source: e.source, Help: k.Help}
	}
	return out, nil
}

// Set validates every key of kv against subsys, reporting all problems at
// once in a *ValidationError; runs the guards, any of which may refuse the
// change (ErrRefused); then persists the change in one synced batch and
// applies it. An empty value resets a key to its default. Subscribers are
// called after the new values are visible to the accessors. A key overridden
// by the environment is stored but stays overridden.
func (s *Store) Set(ctx context.Context, subsys string, kv map[string]string) error {
	proposed, err := s.validate(subsys, kv)
	if err != nil || len(proposed) == 0 {
		return err
	}
	if err := s.apply(ctx, subsys, proposed); err != nil {
		return err
	}
	s.hookMu.RLock()
	subs := slices.Clone(s.subs)
	s.hookMu.RUnlock()
	for _, sub := range subs {
		sub.fn(subsys)
	}
	return nil
}

// validate returns kv in canonical form, or every problem with it.
func (s *Store) validate(subsys string, kv map[string]string) (map[string]string, error) {
	if _, ok := s.subsystems[subsys]; !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownSubsystem, subsys)
	}
	names := make([]string, 0, len(kv))
	for n := range kv {
		names = append(names, n)
	}
	sort.Strings(names)
	proposed := make(map[string]string, len(kv))
	var problems []error
	for _, name := range names {
		k, ok := s.keys[keyID{subsys, name}]
		if !ok {
			problems = append(problems, fmt.Errorf("%w %q", ErrUnknownKey, name))
			continue
		}
		if kv[name] == "" {
			proposed[name] = ""
			continue
		}
		v, err := k.parse(kv[name])
		if err != nil {
			problems = append(problems, err)
			continue
		}
		proposed[name] = v.text
	}
	if len(problems) > 0 {
		return nil, &ValidationError{Subsys: subsys, Problems: problems}
	}
	return proposed, nil
}

// apply runs the guards, then persists and publishes proposed.
func (s *Store) apply(ctx context.Context, subsys string, proposed map[string]string) error {
	s.setMu.Lock()
	defer s.setMu.Unlock()
	s.hookMu.RLock()
	guards := slices.Clone(s.guards)
	s.hookMu.RUnlock()
	for _, g := range guards {
		if err := g(ctx, subsys, proposed); err != nil {
			return fmt.Errorf("config %s: %w: %w", subsys, ErrRefused, err)
		}
	}
	next := maps.Clone(s.stored[subsys])
	if next == nil {
		next = map[string]string{}
	}
	for name, text := range proposed {
		if text == "" {
			delete(next, name)
		} else {
			next[name] = text
		}
	}
	b := s.db.NewBatch()
	key := []byte(keyPrefix + subsys)
	if len(next) == 0 {
		b.Delete(key)
	} else {
		data, err := json.Marshal(next)
		if err != nil {
			return fmt.Errorf("config: encode %s: %w", subsys, err)
		}
		b.Set(key, data)
	}
	if err := b.Commit(true); err != nil {
		return fmt.Errorf("config: persist %s: %w", subsys, err)
	}
	s.stored[subsys] = next
	s.publish()
	s.log.Info("settings changed", "subsys", subsys, "keys", len(proposed))
	return nil
}

// AddGuard registers g to vet every later Set. Guards run in registration
// order; the first refusal wins.
func (s *Store) AddGuard(g SetGuard) {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	s.guards = append(s.guards, g)
}

// Subscribe registers fn to be called, in the goroutine of Set and in
// registration order, after every successful Set with the subsystem that changed; fn reads the new values
// through the accessors and must not block for long. The returned function
// unsubscribes.
func (s *Store) Subscribe(fn func(subsys string)) (cancel func()) {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	id := s.nextID
	s.nextID++
	s.subs = append(s.subs, subscriber{id, fn})
	return func() {
		s.hookMu.Lock()
		defer s.hookMu.Unlock()
		s.subs = slices.DeleteFunc(s.subs, func(sub subscriber) bool { return sub.id == id })
	}
}

// lookup returns the effective value of subsys key, which must be of kind.
// An unknown key or a kind mismatch is a programming error, caught by the
// first test that reads the setting, so it panics rather than hand back a
// zero value that would, say, make a worker spin.
func (s *Store) lookup(subsys, key string, kind Kind) entry {
	id := keyID{subsys, key}
	k, ok := s.keys[id]
	if !ok {
		panic(fmt.Sprintf("config: no key %s %s", subsys, key))
	}
	if kind != 0 && k.Kind != kind {
		panic(fmt.Sprintf("config: key %s %s is not of the kind read", subsys, key))
	}
	return (*s.snap.Load())[id]
}

// Duration returns the effective value of a KindDuration key. It panics if
// the key is not in the table or of another kind.
func (s *Store) Duration(subsys, key string) time.Duration {
	return s.lookup(subsys, key, KindDuration).dur
}

// Int returns the effective value of a KindInt key. It panics if the key is
// not in the table or of another kind.
func (s *Store) Int(subsys, key string) int {
	return int(s.lookup(subsys, key, KindInt).n)
}

// Bool returns the effective value of a KindBool key (true for "on"). It
// panics if the key is not in the table or of another kind.
func (s *Store) Bool(subsys, key string) bool {
	return s.lookup(subsys, key, KindBool).on
}

// String returns the canonical text of any key's effective value. It panics
// if the key is not in the table.
func (s *Store) String(subsys, key string) string {
	return s.lookup(subsys, key, 0).text
}
