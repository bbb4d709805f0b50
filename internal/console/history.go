package console

import (
	"sync"
	"time"
)

// Sample is one point of a link's history on the Sites chart.
type Sample struct {
	Time         time.Time `json:"t"`
	LagSeconds   float64   `json:"lag"`
	Backlog      int64     `json:"backlog"`
	BacklogBytes int64     `json:"backlogBytes"`
	// SentBytes is the link's sent-bytes counter (-1 when the sampling
	// user could not read metrics); throughput is its rate between samples.
	SentBytes int64 `json:"-"`
}

// history is a ring of samples per link covering window, at most one per
// step: 1 h at 2 s is 1,800 samples a link. Samples are taken only when a
// signed-in browser polls the Sites page, so the chart has gaps while
// nobody looks, and an idle console costs nothing.
type history struct {
	window, step time.Duration
	now          func() time.Time

	mu      sync.Mutex
	rings   map[string]*ring
	last    time.Time // when the last snapshot was taken
	snap    *SitesView
	lastUp  map[string]time.Time // per site: last time it answered
	pending bool                 // a snapshot is being taken
	cond    *sync.Cond
}

type ring struct {
	buf   []Sample
	start int
	n     int
}

func (r *ring) add(s Sample) {
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = s
		r.n++
		return
	}
	r.buf[r.start] = s
	r.start = (r.start + 1) % len(r.buf)
}

// since returns the samples not older than cutoff, oldest first.
func (r *ring) since(cutoff time.Time) []Sample {
	out := make([]Sample, 0, r.n)
	for i := range r.n {
		s := r.buf[(r.start+i)%len(r.buf)]
		if !s.Time.Before(cutoff) {
			out = append(out, s)
		}
	}
	return out
}

// latest returns the newest sample.
func (r *ring) latest() (Sample, bool) {
	if r.n == 0 {
		return Sample{}, false
	}
	return r.buf[(r.start+r.n-1)%len(r.buf)], true
}

func newHistory(window, step time.Duration, now func() time.Time) *history {
	h := &history{window: window, step: step, now: now, rings: map[string]*ring{}, lastUp: map[string]time.Time{}}
	h.cond = sync.NewCond(&h.mu)
	return h
}

// unseen reports whether one of the links has no ring yet, so the next
// snapshot should bring the site's own history to seed it.
func (h *history) unseen(links []string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range links {
		if h.rings[l] == nil {
			return true
		}
	}
	return false
}

// snapshot returns the current view, taking a new one with take when the
// last is older than step. Concurrent pollers wait for one snapshot
// instead of each taking their own: however many browsers look, the site
// is asked at most once per step.
func (h *history) snapshot(take func() (*SitesView, error)) (*SitesView, error) {
	h.mu.Lock()
	for h.pending {
		h.cond.Wait()
	}
	if h.snap != nil && h.now().Sub(h.last) < h.step {
		v := h.snap
		h.mu.Unlock()
		return v, nil
	}
	h.pending = true
	h.mu.Unlock()
	v, err := take()
	h.mu.Lock()
	defer func() {
		h.pending = false
		h.cond.Broadcast()
		h.mu.Unlock()
	}()
	if err != nil {
		return nil, err
	}
	h.record(v)
	h.snap, h.last = v, h.now()
	return v, nil
}

// record adds v's links to their rings, derives throughput and last
// contact, and attaches the last hour to v.
func (h *history) record(v *SitesView) {
	now := h.now()
	for i := range v.Sites {
		s := &v.Sites[i]
		if s.Online {
			h.lastUp[s.Name] = now
		}
		if t, ok := h.lastUp[s.Name]; ok && s.LastContact.IsZero() {
			s.LastContact = t
		}
	}
	v.History = map[string][]Sample{}
	for i := range v.Links {
		l := &v.Links[i]
		r := h.rings[l.Target]
		if r == nil {
			r = &ring{buf: make([]Sample, int(h.window/h.step)+1)}
			h.rings[l.Target] = r
			// The site's own record of the hour before this console
			// first looked (one sample every 10 s).
			for _, s := range v.seed[l.Target] {
				if s.Time.Before(now) && !s.Time.Before(now.Add(-h.window)) {
					r.add(s)
				}
			}
		}
		smp := Sample{Time: now, LagSeconds: l.LagSeconds, Backlog: l.Pending + l.Retrying, BacklogBytes: l.PendingBytes + l.RetryingBytes, SentBytes: l.SentBytes}
		if prev, ok := r.latest(); ok && prev.SentBytes >= 0 && smp.SentBytes >= prev.SentBytes {
			if dt := now.Sub(prev.Time).Seconds(); dt > 0 && dt < 60 {
				l.Throughput = float64(smp.SentBytes-prev.SentBytes) / dt
			}
		}
		r.add(smp)
		v.History[l.Target] = r.since(now.Add(-h.window))
	}
}
