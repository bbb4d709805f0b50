package cluster

import (
	"context"
	"errors"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// run is the leader loop: one function per state, each returning the event
// that ended it, and nextState deciding where to go.
func (c *Coordinator) run() {
	defer close(c.done)
	st, failures := stateFollower, 0
	for st != stateClosed {
		ev := c.turn(st, failures)
		next := nextState(st, ev, c.candidate)
		if countsAsFailure(ev) {
			failures++
		} else {
			failures = 0
		}
		if next != stateLeader {
			c.won = nil
			c.fence.Store(nil)
		} else if c.won != nil {
			c.fence.Store(&fence{key: c.won.Key()})
		}
		c.isLeader.Store(next == stateLeader)
		if next != st {
			c.log.Info("leadership state", "from", st.String(), "to", next.String(), "event", ev.String())
		}
		st = next
	}
}

// turn runs state st until an event ends it.
func (c *Coordinator) turn(st leaderState, failures int) leaderEvent {
	switch st {
	case stateFollower:
		return c.follow()
	case stateCampaigning:
		return c.runCampaign(failures)
	case stateLeader:
		return c.lead()
	case stateLost:
		return c.recover(failures)
	}
	return eventClose
}

// follow waits, holding the session, until the node becomes a candidate.
func (c *Coordinator) follow() leaderEvent {
	sess := c.session()
	select {
	case <-c.ctx.Done():
		return eventClose
	case <-sess.Done():
		return eventSessionLost
	case <-c.campaign:
		c.candidate = true
		return eventCampaign
	}
}

// runCampaign writes the node's candidate key and waits for every older one
// to go, then checks that the node's key is indeed the oldest: a key whose
// lease has just expired can see its elders go too.
func (c *Coordinator) runCampaign(failures int) leaderEvent {
	sess := c.session()
	if ev, ok := c.pause(retryDelay(failures), sess); !ok {
		return ev
	}
	el := concurrency.NewElection(sess, c.prefix+electionDir)
	// The session's context ends with the session or with Close, and takes
	// the campaign with it (the election then deletes its key).
	ctx, cancel := context.WithCancel(sess.Ctx())
	defer cancel()
	result := make(chan error, 1)
	go func() { result <- el.Campaign(ctx, c.cfg.NodeID) }()
	for {
		select {
		case <-c.ctx.Done():
			return eventClose
		case <-sess.Done():
			return eventSessionLost
		case <-c.campaign:
		case err := <-result:
			if errors.Is(err, rpctypes.ErrLeaseNotFound) {
				// Revoked or expired: etcd knows before the keep-alive does.
				return eventSessionLost
			}
			if err != nil {
				c.log.Warn("campaign failed", "err", err)
				return c.unlessEnded(sess, eventCampaignFailed)
			}
			return c.checkWin(ctx, sess, el)
		}
	}
}

// checkWin confirms that el's key, under sess, is the oldest candidate.
func (c *Coordinator) checkWin(ctx context.Context, sess *concurrency.Session, el *concurrency.Election) leaderEvent {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	resp, err := el.Leader(ctx)
	if err != nil {
		c.log.Warn("reading the leader after a campaign failed", "err", err)
		return c.unlessEnded(sess, eventCampaignFailed)
	}
	if kv := resp.Kvs[0]; string(kv.Key) != el.Key() || clientv3.LeaseID(kv.Lease) != sess.Lease() {
		return c.unlessEnded(sess, eventCampaignFailed)
	}
	c.won, c.wonRev = el, resp.Header.Revision
	return eventWon
}

// lead holds the leadership until the session ends or the leader key goes.
func (c *Coordinator) lead() leaderEvent {
	sess := c.session()
	ctx, cancel := context.WithCancel(sess.Ctx())
	defer cancel()
	watch := c.client.Watch(ctx, c.won.Key(), clientv3.WithRev(c.wonRev+1))
	for {
		select {
		case <-c.ctx.Done():
			return eventClose
		case <-sess.Done():
			return eventSessionLost
		case <-c.campaign:
		case wr, ok := <-watch:
			if !ok || wr.Err() != nil {
				return c.unlessEnded(sess, eventDeposed)
			}
			for _, ev := range wr.Events {
				if ev.Type == mvccpb.Event_DELETE {
					c.log.Warn("the leader key is gone; campaigning again")
					return c.unlessEnded(sess, eventDeposed)
				}
			}
		}
	}
}

// recover makes a new session, registering the node again under it, and
// ends the lost one's lease.
//
// A session is lost when its keep-alives went unanswered for its TTL, which
// need not mean that its lease ran out: they may have gone through a
// member that stopped answering (paused, or cut off), while etcd, its raft
// leader elsewhere, kept the lease (it even extends every lease when its
// raft leader changes). The lost session's candidate key then stays in the
// election until the lease runs out, several seconds more: if it was the
// oldest, the site has a leader key that no node serves under, and no
// other candidate can lead. The new session shows that etcd answers, so
// the old lease is revoked then: its keys go at once (the node's record
// is written again under the new lease first, and stays).
func (c *Coordinator) recover(failures int) leaderEvent {
	lost := c.session()
	lost.Orphan() // its keep-alive has ended already: this returns at once
	if ev, ok := c.pause(retryDelay(failures), nil); !ok {
		return ev
	}
	sess, err := c.newSession(c.ctx)
	if err != nil {
		if c.ctx.Err() != nil {
			return eventClose
		}
		c.log.Warn("making a new session failed", "err", err)
		return eventSessionFailed
	}
	c.setSession(sess)
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.RequestTimeout)
	defer cancel()
	if ended, err := c.revoke(ctx, lost.Lease()); err != nil {
		c.log.Warn("ending the lost session's lease failed; it runs out by itself", "err", err)
	} else if ended {
		c.log.Info("ended the lost session's lease, which etcd still held")
	}
	return eventSessionReady
}

// pause waits d, taking Campaign requests meanwhile. It returns false, with
// the event, if the coordinator closes or sess (when not nil) ends first.
func (c *Coordinator) pause(d time.Duration, sess *concurrency.Session) (leaderEvent, bool) {
	var ended <-chan struct{}
	if sess != nil {
		ended = sess.Done()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return eventClose, false
		case <-ended:
			return eventSessionLost, false
		case <-c.campaign:
			c.candidate = true
		case <-timer.C:
			return 0, true
		}
	}
}

// unlessEnded returns ev, or the end of the coordinator or of sess if that
// is what broke the call that failed.
func (c *Coordinator) unlessEnded(sess *concurrency.Session, ev leaderEvent) leaderEvent {
	select {
	case <-c.ctx.Done():
		return eventClose
	case <-sess.Done():
		return eventSessionLost
	default:
		return ev
	}
}
