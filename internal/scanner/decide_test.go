package scanner

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/config"
)

func TestReportedState(t *testing.T) {
	for _, c := range []struct {
		loop         string
		role, window bool
		want         string
	}{
		{StateDisabled, false, false, StateDisabled},
		{StateDisabled, true, false, StateWaiting}, // restarted replica, before its first cycle
		{StateWaiting, true, false, StateWaiting},
		{StateActive, true, false, StateActive},
		{StateTracking, true, false, StateTracking},
		{StateActive, false, false, StateDisabled},    // role just turned off
		{StateDisabled, false, true, StateRebuilding}, // restarted with a resync window open
		{StateRebuilding, true, true, StateRebuilding},
		{StateRebuilding, true, false, StateWaiting}, // rebuild completed, no cycle yet
	} {
		if got := reportedState(c.loop, c.role, c.window); got != c.want {
			t.Errorf("reportedState(%s, role=%t, window=%t) = %s, want %s", c.loop, c.role, c.window, got, c.want)
		}
	}
}

func TestNamespaceDiscards(t *testing.T) {
	ns := func(vid, origin string, deleted bool, props map[string]string) recordVersion {
		return recordVersion{vid: vid, origin: origin, rec: catalog.Record{Kind: catalog.KindNamespace, Properties: props, Deleted: deleted}}
	}
	primary := map[string]string{"owner": "dr"}
	for _, c := range []struct {
		name    string
		recs    []recordVersion // newest first
		primary map[string]string
		live    bool
		want    []string
	}{
		{"local change above the primary's", []recordVersion{
			ns("l2", "self", false, map[string]string{"owner": "local"}),
			ns("p1", "peer", false, primary),
			ns("l1", "self", false, map[string]string{"owner": "ops"}),
		}, primary, true, []string{"l2"}},
		{"primary never changed it: shared history kept", []recordVersion{
			ns("l2", "self", false, map[string]string{"owner": "local"}),
			ns("l1", "self", false, primary),
		}, primary, true, []string{"l2"}},
		{"local tombstone", []recordVersion{
			ns("l2", "self", true, primary),
			ns("p1", "peer", false, primary),
		}, primary, true, []string{"l2"}},
		{"nothing states the primary's properties", []recordVersion{
			ns("l1", "self", false, map[string]string{"owner": "local"}),
		}, primary, true, []string{"l1"}},
		{"no properties on either side", []recordVersion{
			ns("l1", "self", false, map[string]string{}),
		}, nil, true, nil},
		{"not on the primary", []recordVersion{
			ns("l1", "self", false, nil),
			ns("p1", "peer", false, nil),
		}, nil, false, []string{"l1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := namespaceDiscards(c.recs, "self", c.primary, c.live); !slices.Equal(got, c.want) {
				t.Errorf("discards %v, want %v", got, c.want)
			}
		})
	}
}

// TestDecide drives the decision core through the scenarios in
// testdata/decide. Commands:
//
//	set mode=strict|eventual retry=30s stale=1m      settings (defaults: strict, 30s, 1m)
//	define table|view|namespace NAME [local=N] [uuid=U]
//	                                                  a name, and the version the local catalog serves
//	record NAME vN [uuid=U] [files=a,b] [present=a] [meta=absent] [deleted] [txn=ID members=t1@3,t2@2]
//	                                                  a new identity-record version, newest; its metadata
//	                                                  file NAME.vN.json is present unless meta=absent
//	arrive FILE...                                    files replicated
//	advance DURATION                                  the clock moves on
//	decide NAME [fail]                                one evaluation (fail: its catalog action fails)
//	run loop=STATE [role=off] [window] [rebuild=STATE] [failover] [mode=eventual]
//	                                                  one turn of the scanner loop
func TestDecide(t *testing.T) {
	files, err := filepath.Glob("testdata/decide/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			w := newWorld()
			runDataDriven(t, f, w.run)
		})
	}
}

// world is the state a scenario builds: what the shell would observe.
type world struct {
	epoch, now   time.Time
	mode         string
	retry, stale time.Duration
	ents         map[string]*worldEnt // by name
	holds        map[string]txnHold
	present      map[string]bool // files here
}

type worldEnt struct {
	name, kind, key string
	ns              []string
	st              tableState
	recs            []worldRec // newest first
	local           localEntry
}

type worldRec struct {
	rec   catalog.Record
	meta  string
	files []string
}

func newWorld() *world {
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return &world{epoch: epoch, now: epoch, mode: config.ConsistencyStrict, retry: 30 * time.Second, stale: time.Minute,
		ents: map[string]*worldEnt{}, holds: map[string]txnHold{}, present: map[string]bool{}}
}

const worldWH = "lake"

var worldNS = []string{"sales"}

func (w *world) run(t *testing.T, c *ddCase) string {
	switch c.cmd {
	case "set":
		w.mode = c.val("mode", w.mode)
		w.retry = mustDuration(t, c.val("retry", w.retry.String()))
		w.stale = mustDuration(t, c.val("stale", w.stale.String()))
	case "define":
		w.define(t, c)
	case "record":
		w.record(t, c)
	case "arrive":
		for _, a := range c.args {
			w.present[a.key] = true
		}
	case "remove":
		for _, a := range c.args {
			w.present[a.key] = false
		}
	case "advance":
		w.now = w.now.Add(mustDuration(t, c.args[0].key))
		return "now=" + w.at(w.now)
	case "decide":
		return w.decide(t, c)
	case "run":
		return w.runLoop(c)
	default:
		t.Fatalf("%s: unknown command %q", c.pos, c.cmd)
	}
	return ""
}

func (w *world) define(t *testing.T, c *ddCase) {
	kind, name := c.args[0].key, c.args[1].key
	e := &worldEnt{name: name, kind: kind, ns: worldNS}
	switch kind {
	case catalog.KindNamespace:
		e.ns = []string{name}
		e.key = worldWH + "/" + catalog.NamespaceRecordKey(e.ns)
	case catalog.KindTable:
		e.key = worldWH + "/" + catalog.TableRecordKey(e.ns, name)
	case catalog.KindView:
		e.key = worldWH + "/" + catalog.ViewRecordKey(e.ns, name)
	default:
		t.Fatalf("%s: unknown kind %q", c.pos, kind)
	}
	if v, ok := c.arg("local"); ok {
		e.local = localEntry{present: true, uuid: c.val("uuid", "u1"), version: mustInt(t, v[0])}
	}
	w.ents[name] = e
}

func (w *world) ent(t *testing.T, c *ddCase) *worldEnt {
	e := w.ents[c.args[0].key]
	if e == nil {
		t.Fatalf("%s: %q is not defined", c.pos, c.args[0].key)
	}
	return e
}

func (w *world) record(t *testing.T, c *ddCase) {
	e := w.ent(t, c)
	v := mustInt(t, strings.TrimPrefix(c.args[1].key, "v"))
	r := worldRec{rec: catalog.Record{Kind: e.kind, Namespace: e.ns, Name: e.name, UUID: c.val("uuid", "u1"), Version: v}}
	r.meta = fmt.Sprintf("%s.v%d.json", e.name, v)
	r.rec.MetadataLocation = "s3://" + worldWH + "/" + r.meta
	_, r.rec.Deleted = c.arg("deleted")
	r.files, _ = c.arg("files")
	if c.val("meta", "") != "absent" {
		w.present[r.meta] = true
	}
	present, _ := c.arg("present")
	for _, f := range present {
		w.present[f] = true
	}
	if id := c.val("txn", ""); id != "" {
		r.rec.Txn = &catalog.TxnInfo{ID: id}
		members, _ := c.arg("members")
		for _, m := range members {
			name, ver, _ := strings.Cut(m, "@")
			r.rec.Txn.Members = append(r.rec.Txn.Members, catalog.TxnMember{Namespace: worldNS, Name: name, Version: mustInt(t, ver)})
		}
	}
	e.recs = append([]worldRec{r}, e.recs...)
}

// observe builds what the shell would gather.
func (w *world) observe(e *worldEnt) observation {
	ob := observation{key: e.key, wh: worldWH, kind: e.kind, local: e.local, mode: w.mode, now: w.now,
		retryInterval: w.retry, staleTimeout: w.stale, txns: w}
	for _, r := range e.recs {
		v := versionObs{vid: fmt.Sprintf("v%d", r.rec.Version), rec: r.rec, meta: r.meta, metaPresent: w.present[r.meta]}
		if walksFiles(w.mode, e.kind) {
			for _, f := range r.files {
				if !w.present[f] {
					v.absent = append(v.absent, f)
				}
			}
		}
		ob.versions = append(ob.versions, v)
	}
	return ob
}

func (w *world) hold(id string) (txnHold, bool) {
	h, ok := w.holds[id]
	return h, ok
}

func (w *world) complete(key string) (int64, bool) {
	for _, e := range w.ents {
		if e.key == key {
			return e.st.complete, true
		}
	}
	return 0, false
}

var _ txnView = (*world)(nil)

// decide runs one evaluation and commits it as the shell would.
func (w *world) decide(t *testing.T, c *ddCase) string {
	e := w.ent(t, c)
	d := decide(e.st, w.observe(e))
	_, fail := c.arg("fail")
	if d.hold != nil {
		w.holds[d.hold.id] = *d.hold
	}
	var done []string
	e.st = d.before
	for _, a := range d.actions {
		switch a := a.(type) {
		case dropEntry, applyVersion, applyNamespace:
			if fail {
				done = append(done, a.String()+" FAILED")
				return w.render(e, done, d.next)
			}
			if av, ok := a.(applyVersion); ok {
				e.local = localEntry{present: true, uuid: av.rec.UUID, version: av.rec.Version}
			}
			if _, ok := a.(dropEntry); ok {
				e.local = localEntry{}
			}
			e.st = d.state
		}
		done = append(done, a.String())
	}
	return w.render(e, done, d.next)
}

func (w *world) render(e *worldEnt, actions, next []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "actions: [%s]\n", strings.Join(actions, ", "))
	st := e.st
	fmt.Fprintf(&b, "state: %q latest=%d verified=%d complete=%d", st.status, st.latest, st.verified, st.complete)
	if st.txnID != "" {
		fmt.Fprintf(&b, " txn=%s", st.txnID)
	}
	if st.deleted {
		b.WriteString(" deleted")
	}
	var missing []string
	for _, f := range st.missing {
		missing = append(missing, f+"@"+w.at(st.since[f]))
	}
	fmt.Fprintf(&b, " missing=[%s]", strings.Join(missing, ","))
	if !st.due.IsZero() {
		fmt.Fprintf(&b, " due=%s", w.at(st.due))
	}
	b.WriteString("\ncatalog: ")
	if e.local.present {
		fmt.Fprintf(&b, "v%d (%s)", e.local.version, e.local.uuid)
	} else {
		b.WriteString("none")
	}
	if len(next) > 0 {
		fmt.Fprintf(&b, "\nnext: %s", strings.Join(next, " "))
	}
	return b.String()
}

// at renders a time as the offset from the scenario's start.
func (w *world) at(tm time.Time) string { return tm.Sub(w.epoch).String() }

func (w *world) runLoop(c *ddCase) string {
	p := persisted{}
	_, p.Window = c.arg("window")
	p.Rebuild.State = c.val("rebuild", "")
	_, failover := c.arg("failover")
	step := planRun(c.val("loop", StateDisabled), p, c.val("role", "on") == "on", failover)
	out := fmt.Sprintf("%s state=%s", step.kind, step.state)
	if step.reset {
		out += " reset"
	}
	switch {
	case step.kind != stepCycle:
	case step.final:
		out += " full then=promote"
	default:
		out += " then=" + settledState(c.val("mode", config.ConsistencyStrict))
	}
	return out
}

func mustDuration(t *testing.T, s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mustInt(t *testing.T, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// BenchmarkDecide measures the decision core alone on a typical
// evaluation: the newest version lacks a file, the one before is applied.
func BenchmarkDecide(b *testing.B) {
	w := newWorld()
	e := &worldEnt{name: "t", kind: catalog.KindTable, ns: worldNS, key: worldWH + "/" + catalog.TableRecordKey(worldNS, "t")}
	w.ents["t"] = e
	for v := int64(1); v <= 3; v++ {
		files := []string{"a", fmt.Sprintf("f%d", v)}
		e.recs = append([]worldRec{{rec: catalog.Record{Kind: catalog.KindTable, UUID: "u1", Version: v}, meta: fmt.Sprintf("m%d", v), files: files}}, e.recs...)
		w.present[fmt.Sprintf("m%d", v)] = true
	}
	w.present["a"], w.present["f1"], w.present["f2"] = true, true, true
	ob := w.observe(e)
	b.ReportAllocs()
	for b.Loop() {
		_ = decide(e.st, ob)
	}
}
