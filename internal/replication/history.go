package replication

import (
	"sync"
	"time"
)

// Link history: every historyStep the engine samples each link's backlog
// and lag into a ring covering the last hour, so a dashboard opened at any
// time draws the hour before it (the console's Sites chart). A sample reads
// counters the targets keep anyway: the cost is fixed, whatever the site
// holds and whoever looks.
const (
	historyStep = 10 * time.Second
	historyLen  = int(time.Hour / historyStep)
)

// LinkSample is one point of a link's history.
type LinkSample struct {
	Time          time.Time     `json:"t"`
	Online        bool          `json:"online"`
	Pending       int64         `json:"pending"`
	PendingBytes  int64         `json:"pendingBytes"`
	Retrying      int64         `json:"retrying"`
	RetryingBytes int64         `json:"retryingBytes"`
	Lag           time.Duration `json:"lag"`
}

// linkHistory holds a ring of samples per peer site name.
type linkHistory struct {
	mu    sync.Mutex
	rings map[string][]LinkSample // oldest first, at most historyLen
}

func (h *linkHistory) add(name string, s LinkSample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rings == nil {
		h.rings = map[string][]LinkSample{}
	}
	r := h.rings[name]
	if len(r) == historyLen {
		copy(r, r[1:])
		r = r[:historyLen-1]
	}
	h.rings[name] = append(r, s)
}

// since returns copies of the samples not older than cutoff, per link.
func (h *linkHistory) since(cutoff time.Time) map[string][]LinkSample {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string][]LinkSample{}
	for name, r := range h.rings {
		i := 0
		for i < len(r) && r[i].Time.Before(cutoff) {
			i++
		}
		out[name] = append([]LinkSample(nil), r[i:]...)
	}
	return out
}

// LinkHistory returns each peer link's samples of the last hour, oldest
// first, one every historyStep since the site started; a link not sampled
// yet (just joined) gets its current state as its one sample.
func (e *Engine) LinkHistory() map[string][]LinkSample {
	now := time.Now()
	out := e.history.since(now.Add(-time.Hour))
	for _, t := range *e.targets.Load() {
		if len(out[t.site.Name]) == 0 {
			out[t.site.Name] = []LinkSample{t.sample(now)}
		}
	}
	return out
}

// historyLoop samples every link until the engine closes.
func (e *Engine) historyLoop() {
	defer e.bg.Done()
	t := time.NewTicker(historyStep)
	defer t.Stop()
	for {
		e.sampleLinks(time.Now())
		select {
		case <-e.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sampleLinks records every link's counters and the age of its oldest
// journaled change (one record read; the retry queue, which status scans
// for its oldest entry, is left out so a sample stays cheap during a long
// outage).
func (e *Engine) sampleLinks(now time.Time) {
	for _, t := range *e.targets.Load() {
		e.history.add(t.site.Name, t.sample(now))
	}
}

// sample is the link's state now.
func (t *target) sample(now time.Time) LinkSample {
	p, r := t.snapshot()
	s := LinkSample{Time: now.UTC(), Online: t.online(), Pending: p.n, PendingBytes: p.bytes, Retrying: r.n, RetryingBytes: r.bytes}
	if q := t.oldestJournaled(); q > 0 {
		s.Lag = now.Sub(time.Unix(0, q))
	}
	return s
}
