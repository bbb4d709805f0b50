package app

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"sync/atomic"
	"syscall"
	"time"
)

// A leader that is gone, or frozen, keeps the lead until its etcd lease
// runs out, LeaseTTL and more, and the site takes no request meanwhile.
// The other nodes see sooner that it cannot serve, by probing it (a GET
// of /twinlake/health/live, which a node answers itself) and ending its
// session when it is:
//
//   - gone: its process died, its machine is up. Its address refuses
//     connections, where a live process's never does (paused or
//     overloaded, its kernel takes them or lets them time out). Ended
//     once goneProbes probes in a row were refused, the first goneAfter
//     ago or more.
//
//   - stalled: its process is there and answers nothing (stopped with
//     SIGSTOP, its machine frozen, the process stuck). Its kernel takes
//     the connection and no answer comes. Ended once stallProbes probes
//     in a row went unanswered for stallTimeout each, the first sent
//     stallAfter ago or more: a live process answers that probe in a
//     millisecond, however busy.
//
//   - unreachable: its machine is down or cut off from this node. The
//     connection times out (or the host is unreachable). That says
//     nothing of the process, and this node's own network may be at
//     fault, so the node votes (cluster.Coordinator.VoteDepose), once
//     unreachProbes probes in a row timed out, the first unreachAfter
//     ago or more, and the session ends once most of the other nodes
//     have voted against the same lead (otherwise its lease runs out as
//     before, or never while it reaches etcd).
//
// Ending a live leader's session is safe, only wasteful: its writes are
// fenced on its candidate key, which goes with the session, and it
// campaigns again.
const (
	goneAfter     = time.Second
	goneProbes    = 3
	stallAfter    = 3 * time.Second
	stallProbes   = 3
	stallTimeout  = time.Second
	unreachAfter  = 3 * time.Second
	unreachProbes = 3
	// probeEvery spaces the probes of an answering leader.
	probeEvery = 200 * time.Millisecond
	// probeDialTimeout bounds a probe's connection: on the site's
	// network one that takes longer goes to a machine that is down.
	probeDialTimeout = 150 * time.Millisecond
	// deposeEvery spaces the attempts to end a leader's session (etcd
	// may have no raft leader of its own for a while: the stalled node
	// may have been it).
	deposeEvery   = 2 * time.Second
	deposeTimeout = 2 * time.Second
)

// probeResult is what a probe of the leader found.
type probeResult int

const (
	probeAnswered    probeResult = iota // an HTTP answer, whatever its status
	probeRefused                        // the address refused the connection
	probeSilent                         // connected, and no answer within stallTimeout
	probeUnreachable                    // the connection timed out, or the host is unreachable
	probeFailed                         // anything else (TLS refused, a bad address, ...)
)

// verdict is what a run of probes says of the leader.
type verdict int

const (
	leaderServes      verdict = iota // nothing against it
	leaderGone                       // its address refuses connections
	leaderStalled                    // it takes connections and answers nothing
	leaderUnreachable                // its connections time out
)

func (v verdict) String() string {
	switch v {
	case leaderGone:
		return "gone"
	case leaderStalled:
		return "stalled"
	case leaderUnreachable:
		return "unreachable"
	}
	return "serves"
}

// leaderProbes tells from the probes of the leader whether it is gone,
// stalled or unreachable. It is the leader watch's alone.
type leaderProbes struct {
	id     string
	result probeResult // of the probes in a row: refused, silent or unreachable
	since  time.Time   // when the first of them was sent
	probes int
}

// observe records a probe of leader id sent at sent and ended at now, and
// says what the probes in a row say of the leader.
func (p *leaderProbes) observe(id string, result probeResult, sent, now time.Time) verdict {
	if result != probeRefused && result != probeSilent && result != probeUnreachable {
		*p = leaderProbes{}
		return leaderServes
	}
	if id != p.id || result != p.result || p.probes == 0 {
		*p = leaderProbes{id: id, result: result, since: sent}
	}
	p.probes++
	switch {
	case result == probeRefused && p.probes >= goneProbes && now.Sub(p.since) >= goneAfter:
		return leaderGone
	case result == probeSilent && p.probes >= stallProbes && now.Sub(p.since) >= stallAfter:
		return leaderStalled
	case result == probeUnreachable && p.probes >= unreachProbes && now.Sub(p.since) >= unreachAfter:
		return leaderUnreachable
	}
	return leaderServes
}

// probeTransport is how a node probes the leader: over the nodes' TLS
// when they use it, connections kept between probes, a dial given up
// after probeDialTimeout.
func probeTransport(base *http.Transport) *http.Transport {
	tr := base.Clone()
	tr.DialContext = (&net.Dialer{Timeout: probeDialTimeout}).DialContext
	tr.MaxIdleConnsPerHost = 1
	return tr
}

// probe asks url (a node's /twinlake/health/live) for an answer within
// stallTimeout, and says what came of it.
func probe(client *http.Client, url string) probeResult {
	ctx, cancel := context.WithTimeout(context.Background(), stallTimeout)
	defer cancel()
	// Connected: a connection made (TCP; the TLS handshake needs the
	// process) or one kept from an earlier probe taken.
	var connected atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		ConnectDone: func(_, _ string, err error) {
			if err == nil {
				connected.Store(true)
			}
		},
		GotConn: func(httptrace.GotConnInfo) { connected.Store(true) },
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return probeFailed
	}
	resp, err := client.Do(req)
	var op *net.OpError
	switch {
	case err == nil:
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return probeAnswered
	case errors.Is(err, syscall.ECONNREFUSED):
		return probeRefused
	case errors.As(err, &op) && op.Op == "dial" &&
		(op.Timeout() || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH)):
		return probeUnreachable
	case connected.Load() && ctx.Err() != nil:
		return probeSilent
	}
	return probeFailed
}

// watchLeader probes the leader, unless this node leads, until stop is
// closed, and ends the leader's session when it is gone or stalled, or
// votes to when it is unreachable (see leaderProbes).
func (n *Node) watchLeader(stop <-chan struct{}) {
	client := &http.Client{Transport: n.probes}
	var probes leaderProbes
	var nextDepose time.Time
	id := ""    // the leader watched
	voted := "" // the leader this node voted to depose, if any
	for {
		select {
		case <-stop:
			return
		case <-time.After(probeEvery):
		}
		// While the leader cannot be read (etcd's own raft leader may be
		// the node that stalled), the last one read is watched still.
		if l := n.leader.Load(); l != nil {
			id = *l
		}
		if id == "" || id == n.cfg.Address {
			probes = leaderProbes{}
			voted = n.withdrawVote(voted)
			continue
		}
		sent := time.Now()
		result := probe(client, n.scheme+"://"+id+"/twinlake/health/live")
		v := probes.observe(id, result, sent, time.Now())
		if voted != "" && (voted != id || result == probeAnswered) {
			voted = n.withdrawVote(voted)
		}
		if v == leaderServes || time.Now().Before(nextDepose) {
			continue
		}
		nextDepose = time.Now().Add(deposeEvery)
		if v != leaderGone {
			// The node that leads next, maybe this one, claims the drives
			// first: it does not wait for these.
			n.set.MarkHung(n.drivesOf(id)...)
		}
		if v == leaderUnreachable {
			if n.voteDepose(id, voted != id) {
				voted = id
			}
			continue
		}
		n.depose(id, v)
	}
}

// withdrawVote withdraws this node's vote against leader voted, if any,
// and returns what the watch's record of it becomes: "" once withdrawn.
func (n *Node) withdrawVote(voted string) string {
	if voted == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), deposeTimeout)
	defer cancel()
	if err := n.coord.WithdrawVote(ctx); err != nil {
		n.cfg.Logger.Warn("node: withdrawing the vote to depose a leader failed; trying again", "leader", voted, "err", err)
		return voted
	}
	return ""
}

// votesToDepose is how many nodes must find the leader unreachable to
// end its session: most of the others.
func votesToDepose(nodes int) int { return (nodes-1)/2 + 1 }

// voteDepose votes to end the session of leader id, found unreachable,
// saying so in the log when first, and reports whether the vote was
// recorded.
func (n *Node) voteDepose(id string, first bool) bool {
	ctx, cancel := context.WithTimeout(context.Background(), deposeTimeout)
	defer cancel()
	need := votesToDepose(len(n.nodes))
	ended, votes, err := n.coord.VoteDepose(ctx, id, need)
	switch {
	case err != nil:
		n.cfg.Logger.Warn("node: voting to end the session of a leader this node cannot reach failed; trying again", "leader", id, "err", err)
		return false
	case ended:
		n.deposed.Add(1)
		n.cfg.Logger.Warn("node: the leader's connections have timed out for "+unreachAfter.String()+" here and at enough other nodes (its machine is down or cut off): ended its session, so that the next candidate leads now", "leader", id, "votes", votes)
	case votes > 0 && first:
		n.cfg.Logger.Info("node: the leader's connections time out (its machine may be down or cut off): voted to end its session", "leader", id, "votes", votes, "needed", need)
	}
	return votes > 0
}

// drivesOf lists the drives of node addr (indexes into the site's drive
// set, which is node by node).
func (n *Node) drivesOf(addr string) []int {
	i := slices.Index(n.nodes, addr)
	if i < 0 {
		return nil
	}
	out := make([]int, n.perNode)
	for k := range out {
		out[k] = i*n.perNode + k
	}
	return out
}

// depose ends the session of leader id, found gone or stalled.
func (n *Node) depose(id string, v verdict) {
	ctx, cancel := context.WithTimeout(context.Background(), deposeTimeout)
	defer cancel()
	ended, err := n.coord.Depose(ctx, id)
	switch {
	case err != nil:
		n.cfg.Logger.Warn("node: ending the session of a leader that cannot serve failed; trying again", "leader", id, "leaderIs", v.String(), "err", err)
	case ended && v == leaderGone:
		n.deposed.Add(1)
		n.cfg.Logger.Warn("node: the leader's address refuses connections (its process is gone): ended its session, so that the next candidate leads now", "leader", id)
	case ended:
		n.deposed.Add(1)
		n.cfg.Logger.Warn("node: the leader takes connections and has answered nothing for "+stallAfter.String()+" (its process is stopped or stuck): ended its session, so that the next candidate leads now", "leader", id)
	}
}
