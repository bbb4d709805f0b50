package replication

import (
	"sync"
	"time"
)

// iamGate holds back IAM records for a peer that takes none: a build that
// predates IAM replication answers their call NoSuchCall
// (ErrUnsupported). That is no failure to retry: the records stay in the
// journal (or retry queue) as they are, spending no retry and counting no
// failed send, skipped by the pump while the rest of replication to the
// peer goes on, and Status reports IAM as not replicable to the peer. One
// record is offered again every retry_max_delay, and one at once when the
// link comes back up (the peer restarted, perhaps upgraded); the first one
// the peer takes reopens the gate for all of them.
type iamGate struct {
	mu      sync.Mutex
	refused bool
	since   time.Time // first refusal
	lastTry time.Time // last record let through while refused
	rescan  time.Time // last journal re-read for a probe
	reason  string
}

// admit reports whether an IAM record may be sent now: always while the
// gate is open; while it is closed, one record once every every.
func (g *iamGate) admit(now time.Time, every time.Duration) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.refused {
		return true
	}
	if now.Sub(g.lastTry) >= every {
		g.lastTry = now
		return true
	}
	return false
}

// probeDue reports whether a closed gate would let a record through now,
// so the pump reads the journal again from its start (once per every:
// the held records lie behind the cursor).
func (g *iamGate) probeDue(now time.Time, every time.Duration) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.refused || now.Sub(g.lastTry) < every || now.Sub(g.rescan) < every {
		return false
	}
	g.rescan = now
	return true
}

// refuse closes the gate after a NoSuchCall; first reports that it was open.
func (g *iamGate) refuse(now time.Time, reason string) (first bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	first = !g.refused
	if first {
		g.refused, g.since = true, now
	}
	g.lastTry, g.reason = now, reason
	return first
}

// reopen opens the gate (a record was taken, or the link came back up);
// it reports whether it was closed.
func (g *iamGate) reopen() (was bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	was = g.refused
	g.refused, g.since, g.lastTry, g.rescan, g.reason = false, time.Time{}, time.Time{}, time.Time{}, ""
	return was
}

// probeNow lets the next record through at once (the link came back up:
// the peer restarted, perhaps upgraded).
func (g *iamGate) probeNow() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lastTry, g.rescan = time.Time{}, time.Time{}
}

// state is the gate as Status reports it.
func (g *iamGate) state() (refused bool, since time.Time, reason string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refused, g.since, g.reason
}
