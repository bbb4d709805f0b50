package app

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"
)

// A leader killed outright (its process gone, its machine up) keeps the
// lead until its etcd lease runs out, LeaseTTL and more, and the site
// takes no request meanwhile. The other nodes see sooner that it is gone:
// its address refuses connections, where a live process's accepts them
// (even paused or overloaded, its kernel queues them or lets them time
// out; it never refuses). A node that sees the leader's address refuse
// probe after probe for goneAfter ends the leader's session, and the
// next candidate leads at once. A machine that is down or cut off times
// out instead of refusing, and its lease runs out as before.
const (
	goneAfter    = time.Second
	goneProbes   = 3
	probeTimeout = 150 * time.Millisecond
	// deposeEvery spaces the attempts to end a gone leader's session
	// (etcd may have no raft leader of its own for a while).
	deposeEvery   = 2 * time.Second
	deposeTimeout = 2 * time.Second
)

// goneLeader tells from probes of the leader's address when its process
// is gone. It is the run loop's alone.
type goneLeader struct {
	id     string
	since  time.Time // the first of the refused probes in a row
	probes int       // refused probes in a row
}

// observe records a probe of leader id's address (refused or not) at now
// and reports whether the leader's process is gone: its address refused
// goneProbes probes in a row, over goneAfter at least.
func (g *goneLeader) observe(id string, refused bool, now time.Time) bool {
	if !refused {
		*g = goneLeader{}
		return false
	}
	if id != g.id || g.probes == 0 {
		*g = goneLeader{id: id, since: now}
	}
	g.probes++
	return g.probes >= goneProbes && now.Sub(g.since) >= goneAfter
}

// refuses reports whether addr refuses a TCP connection: nothing listens
// there. A probe that connects, times out or fails otherwise is not a
// refusal.
func refuses(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, probeTimeout)
	if err == nil {
		conn.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// watchLeader probes the leader's address, unless this node leads, and
// ends its session when its process is gone (see goneLeader).
func (n *Node) watchLeader(id string, now time.Time) {
	if id == n.cfg.Address {
		n.gone = goneLeader{}
		return
	}
	if !n.gone.observe(id, refuses(id), now) || now.Before(n.nextDepose) || !n.deposing.CompareAndSwap(false, true) {
		return
	}
	n.nextDepose = now.Add(deposeEvery)
	go func() {
		defer n.deposing.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), deposeTimeout)
		defer cancel()
		ended, err := n.coord.Depose(ctx, id)
		switch {
		case err != nil:
			n.cfg.Logger.Warn("node: ending the session of a leader that is gone failed; trying again", "leader", id, "err", err)
		case ended:
			n.deposed.Add(1)
			n.cfg.Logger.Warn("node: the leader's address refuses connections (its process is gone): ended its session, so that the next candidate leads now", "leader", id)
		}
	}()
}
