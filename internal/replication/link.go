package replication

import (
	"context"
	"errors"
	"time"
)

// linkState is what a target knows of its link to the peer. Sends run only
// while it is linkOnline.
type linkState int32

const (
	linkProbing linkState = iota // not probed yet since the target started
	linkOnline                   // the last probe answered
	linkOffline                  // a probe failed, or a send found the peer unreachable
)

func (s linkState) String() string {
	return [...]string{"probing", "online", "offline"}[s]
}

// linkEvent is what the prober or a sender observed.
type linkEvent int

const (
	probeOK      linkEvent = iota // the health probe answered
	probeFailed                   // the health probe did not answer
	sendLinkDown                  // a send could not reach the peer
)

// linkChange is what a transition means to the rest of the target.
type linkChange int

const (
	linkSame     linkChange = iota
	linkCameUp              // resume sending: rewind the journal cursor, wake the pump
	linkWentDown            // stop sending; work stays where it is
)

// next is the link's state machine: pure, so every transition is tested
// without a network.
func (s linkState) next(ev linkEvent) (linkState, linkChange) {
	switch {
	case ev == probeOK && s == linkOnline:
		return linkOnline, linkSame
	case ev == probeOK:
		return linkOnline, linkCameUp
	case s == linkOnline:
		return linkOffline, linkWentDown
	default:
		return linkOffline, linkSame // never up, or already down
	}
}

// probeWait is how long the prober waits after a probe: the health
// interval while the link is up, at most 200ms while it is not.
func probeWait(s linkState, interval time.Duration) time.Duration {
	if s == linkOnline {
		return interval
	}
	return min(interval, 200*time.Millisecond)
}

// incompatible logs, once per link-down, a send refused because the two
// sites speak incompatible protocol versions: the work waits in the
// journal like work for an unreachable peer, and the prober (whose health
// calls the peer refuses the same way) keeps the link down until one site
// is upgraded.
func (t *target) incompatible(err error) {
	if errors.Is(err, ErrIncompatible) && t.online() {
		t.e.log.Error("peer speaks an incompatible protocol version: sends wait until one site is upgraded",
			"target", t.site.Name, "err", err)
	}
}

// online reports whether sends may run.
func (t *target) online() bool { return linkState(t.link.Load()) == linkOnline }

// observe applies ev, which cause explains (nil for a probe that
// answered), to the link state and acts on the change.
func (t *target) observe(ev linkEvent, cause error) {
	var ch linkChange
	for {
		cur := linkState(t.link.Load())
		nxt, c := cur.next(ev)
		if t.link.CompareAndSwap(int32(cur), int32(nxt)) {
			ch = c
			break
		}
	}
	switch ch {
	case linkCameUp:
		t.e.log.Info("peer link up", "target", t.site.Name)
		if t.needCompare.Load() {
			t.cameBack.Store(true) // back after work for it was dropped
		}
		t.iam.probeNow() // the peer may have been upgraded meanwhile
		t.rewindCursors()
		t.wakeUp()
		t.e.traceEvent("replication.Link", t.site.Name, "", "", "link up", time.Now(), nil)
	case linkWentDown:
		t.e.log.Warn("peer link down", "target", t.site.Name, "err", cause)
		t.e.traceEvent("replication.Link", t.site.Name, "", "", "link down", time.Now(), cause)
	}
}

// prober checks the link: often while it is down, less so while up.
func (t *target) prober() {
	defer t.wg.Done()
	for {
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.ctx, 2*time.Second)
		err := t.peer.Health(ctx)
		cancel()
		if t.ctx.Err() != nil {
			return
		}
		ev := probeFailed
		if err == nil {
			ev = probeOK
			t.latency.Store(int64(time.Since(start)))
			t.lastOK.Store(time.Now().UnixNano())
			t.e.m.linkLatency.WithLabelValues(t.site.Name).Observe(time.Since(start).Seconds())
		}
		t.observe(ev, err)
		select {
		case <-t.ctx.Done():
			return
		case <-time.After(probeWait(linkState(t.link.Load()), t.e.cfg.HealthInterval)):
		}
	}
}
