package cluster

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Depose ends the session of the site's leader if node id still leads:
// for a leader whose process others have found gone, so that the next
// candidate takes over now rather than when the dead node's lease runs
// out (LeaseTTL, and etcd adds its election timeout when its own raft
// leader changed too). It reports whether it ended a session. Deposing
// a live leader is safe, only wasteful: its writes are fenced by the
// key that goes with the session, and it campaigns again. A node never
// deposes itself.
func (c *Coordinator) Depose(ctx context.Context, id string) (bool, error) {
	lease, leads, err := c.leadOf(ctx, id)
	if err != nil || !leads {
		return false, err
	}
	return c.revoke(ctx, lease)
}

// leadOf returns the lease of the leader's key if node id, another than
// this one, leads; leads is false when another node does (it may have
// taken over meanwhile: that one is not suspected of anything).
func (c *Coordinator) leadOf(ctx context.Context, id string) (lease clientv3.LeaseID, leads bool, err error) {
	if c.ctx.Err() != nil {
		return 0, false, ErrClosed
	}
	if id == c.cfg.NodeID {
		return 0, false, fmt.Errorf("cluster: node %s would depose itself", id)
	}
	resp, err := c.election().Leader(ctx)
	if err != nil {
		return 0, false, fmt.Errorf("cluster: read leader: %w", err)
	}
	kv := resp.Kvs[0]
	if string(kv.Value) != id {
		return 0, false, nil
	}
	return clientv3.LeaseID(kv.Lease), true, nil
}

// revoke ends the session of lease, unless it is this node's current one.
func (c *Coordinator) revoke(ctx context.Context, lease clientv3.LeaseID) (bool, error) {
	if lease == c.session().Lease() {
		return false, nil
	}
	if _, err := c.client.Revoke(ctx, lease); err != nil {
		if errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return false, nil // ended by itself, or by another node
		}
		return false, fmt.Errorf("cluster: revoke lease %x: %w", lease, err)
	}
	return true, nil
}

// clearFormerLife ends the sessions that a former process of this node
// left in the election (it was killed, its lease has not run out): a
// candidate key of its own that would otherwise lead, or stand before the
// others, until then. Only one process serves a node's address, so such
// a session cannot be live.
func (c *Coordinator) clearFormerLife(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	resp, err := c.client.Get(ctx, c.prefix+electionDir+"/", clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("cluster: read candidates: %w", err)
	}
	for _, kv := range resp.Kvs {
		if string(kv.Value) != c.cfg.NodeID {
			continue
		}
		ended, err := c.revoke(ctx, clientv3.LeaseID(kv.Lease))
		if err != nil {
			return err
		}
		if ended {
			c.log.Warn("ended the session a former process of this node left in the election", "key", string(kv.Key))
		}
	}
	return nil
}

// votesDir holds the nodes' votes to depose a leader they cannot reach:
// votes/<nodeID> names, by its key's lease (hex), the leader that node
// cannot reach, and lives under the voter's session.
const votesDir = "votes/"

// VoteDepose records that this node cannot reach node id, which it
// believes leads, and ends id's session once need nodes (this one among
// them) have voted against the same lead: for a leader whose machine is
// down or cut off, whose connections time out, which says nothing of its
// process when one node sees it (that node's own network may be at
// fault), so that the next candidate takes over before the lease runs
// out (and a leader cut off from the other nodes but not from etcd would
// never lose it). A vote names the leader's key, not the node: it counts
// for that lead only. It reports whether this call ended the session and
// how many votes the lead has. Deposing a live leader is safe, only
// wasteful (see Depose).
func (c *Coordinator) VoteDepose(ctx context.Context, id string, need int) (ended bool, votes int, err error) {
	lease, leads, err := c.leadOf(ctx, id)
	if err != nil || !leads {
		return false, 0, err
	}
	lead := fmt.Sprintf("%x", int64(lease))
	dir := c.prefix + votesDir
	txn, err := c.client.Txn(ctx).Then(
		clientv3.OpPut(dir+c.cfg.NodeID, lead, clientv3.WithLease(c.session().Lease())),
		clientv3.OpGet(dir, clientv3.WithPrefix()),
	).Commit()
	if err != nil {
		return false, 0, fmt.Errorf("cluster: vote to depose %s: %w", id, err)
	}
	for _, kv := range txn.Responses[1].GetResponseRange().Kvs {
		if string(kv.Value) == lead {
			votes++
		}
	}
	if votes < need {
		return false, votes, nil
	}
	ended, err = c.revoke(ctx, lease)
	return ended, votes, err
}

// WithdrawVote removes this node's vote to depose a leader (it reached
// it again, or another node leads).
func (c *Coordinator) WithdrawVote(ctx context.Context) error {
	if c.ctx.Err() != nil {
		return ErrClosed
	}
	if _, err := c.client.Delete(ctx, c.prefix+votesDir+c.cfg.NodeID); err != nil {
		return fmt.Errorf("cluster: withdraw vote: %w", err)
	}
	return nil
}
