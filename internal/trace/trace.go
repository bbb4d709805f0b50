// Package trace owns twinlake's live call tracing: typed events published by
// every part of the server and streamed to operators by `twinlake admin
// trace`. Publishing never blocks: a subscriber that falls behind loses
// events (counted), never slows the request path.
package trace

import (
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Type is a bit mask of event kinds.
type Type uint32

// Event kinds, one per traced surface.
const (
	S3 Type = 1 << iota
	Tables
	TablesScan
	Replication
	Admin
	Peer
	// TablesMaintenance: snapshot expiry and orphan removal runs, manual
	// and scheduled.
	TablesMaintenance
	// ILM: bucket lifecycle runs (what each run expired, purged, aborted).
	ILM
	// Storage: shard reads, writes and removals on a drive, on every
	// node of a site. A stream shows them only when asked for by name:
	// each object call makes several.
	Storage
	// Internal: a multi-node site's own traffic, on every node: a
	// request a node passes to the leader, and the metadata store's
	// calls to etcd. Like Storage, shown only when asked for by name.
	Internal

	// Default is what a stream that names no type shows.
	Default = S3 | Tables | TablesScan | Replication | Admin | Peer | TablesMaintenance | ILM
	All     = Default | Storage | Internal
)

// typeNames is the table of wire names for each Type, as used by --call.
var typeNames = []struct {
	t    Type
	name string
}{
	{S3, "s3"}, {Tables, "tables"}, {TablesScan, "tables-scan"},
	{Replication, "replication"}, {Admin, "admin"}, {Peer, "peer"},
	{TablesMaintenance, "tables-maintenance"}, {ILM, "ilm"}, {Storage, "storage"},
	{Internal, "internal"},
}

// String returns the wire name of a single type.
func (t Type) String() string {
	var names []string
	for _, tn := range typeNames {
		if t&tn.t != 0 {
			names = append(names, tn.name)
		}
	}
	return strings.Join(names, ",")
}

// ParseType returns the Type named by name ("s3", "tables-scan", ...).
func ParseType(name string) (Type, bool) {
	for _, tn := range typeNames {
		if tn.name == name {
			return tn.t, true
		}
	}
	return 0, false
}

// Event is one traced call or decision.
type Event struct {
	Type       Type              `json:"-"`
	TypeName   string            `json:"type"`
	Time       time.Time         `json:"time"`
	Node       string            `json:"node,omitempty"`
	FuncName   string            `json:"funcname"`
	Path       string            `json:"path,omitempty"`
	Method     string            `json:"method,omitempty"`
	StatusCode int               `json:"statusCode,omitempty"`
	Duration   time.Duration     `json:"duration"`
	RemoteAddr string            `json:"remoteAddr,omitempty"`
	BytesIn    int64             `json:"bytesIn,omitempty"`
	BytesOut   int64             `json:"bytesOut,omitempty"`
	Msg        string            `json:"msg,omitempty"`
	Error      string            `json:"error,omitempty"`
	Attrs      map[string]string `json:"attrs,omitempty"`
}

// Filter selects events for one subscriber. Zero fields match everything.
type Filter struct {
	Types      Type   // mask; 0 means Default
	FuncName   string // glob (path.Match syntax) on FuncName
	Path       string // glob on Path
	StatusCode int    // exact status code
}

// Match reports whether e passes f.
func (f Filter) Match(e *Event) bool {
	if f.Types != 0 && f.Types&e.Type == 0 {
		return false
	}
	if f.StatusCode != 0 && f.StatusCode != e.StatusCode {
		return false
	}
	if f.FuncName != "" && !globMatch(f.FuncName, e.FuncName) {
		return false
	}
	if f.Path != "" && !globMatch(f.Path, e.Path) {
		return false
	}
	return true
}

// globMatch matches a glob where '*' also crosses '/' and '.', which is
// what an operator typing 'catalogScanner.*' or '/bucket/*' expects.
func globMatch(pattern, s string) bool {
	if ok, err := path.Match(pattern, s); err == nil && ok {
		return true
	}
	if !strings.Contains(pattern, "*") {
		return false
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for i, p := range parts[1:] {
		last := i == len(parts)-2
		if last {
			return strings.HasSuffix(s, p)
		}
		j := strings.Index(s, p)
		if j < 0 {
			return false
		}
		s = s[j+len(p):]
	}
	return true
}

// Bus fans events out to subscribers. The zero value is not usable; use New.
type Bus struct {
	mu      sync.RWMutex
	subs    map[*sub]struct{}
	mask    atomic.Uint32 // union of subscribed types, read lock-free
	dropped atomic.Uint64
	node    string
}

type sub struct {
	f  Filter
	ch chan Event
}

// New returns a Bus whose events carry node as their node name.
func New(node string) *Bus { return &Bus{subs: map[*sub]struct{}{}, node: node} }

// Enabled reports whether anyone listens for t, so publishers can skip
// building events nobody will read. It is one atomic load.
func (b *Bus) Enabled(t Type) bool { return b != nil && Type(b.mask.Load())&t != 0 }

// Publish delivers e to every matching subscriber without blocking; a full
// subscriber buffer drops the event and counts it.
func (b *Bus) Publish(e Event) {
	if !b.Enabled(e.Type) {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Node = b.node
	e.TypeName = e.Type.String()
	b.mu.RLock()
	defer b.mu.RUnlock()
	for s := range b.subs {
		if !s.f.Match(&e) {
			continue
		}
		select {
		case s.ch <- e:
		default:
			b.dropped.Add(1)
		}
	}
}

// Subscribe returns a channel of events matching f, buffered to buf. Call the
// returned cancel function to unsubscribe; it closes the channel.
func (b *Bus) Subscribe(f Filter, buf int) (<-chan Event, func()) {
	if f.Types == 0 {
		f.Types = Default
	}
	s := &sub{f: f, ch: make(chan Event, buf)}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.recomputeMask()
	b.mu.Unlock()
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs, s)
			b.recomputeMask()
			b.mu.Unlock()
			close(s.ch)
		})
	}
}

// Dropped reports how many events were dropped for slow subscribers.
func (b *Bus) Dropped() uint64 { return b.dropped.Load() }

func (b *Bus) recomputeMask() {
	var m Type
	for s := range b.subs {
		m |= s.f.Types
	}
	b.mask.Store(uint32(m))
}
