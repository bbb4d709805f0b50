package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/client/pkg/v3/types"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/etcdserver/api/membership"
)

// RejoinConfig finds whether a voter whose member data is gone (a node
// put back empty, its disk replaced) must take its place in a running
// cluster rather than start one.
type RejoinConfig struct {
	// Name and PeerURL are the member's, as in EmbedConfig.
	Name, PeerURL string
	// Endpoints are the other voters' client URLs.
	Endpoints []string
	// Username, Password and TLS reach them, as in Config.
	Username, Password string
	TLS                *tls.Config
	// ClusterToken is the token the cluster was bootstrapped with.
	ClusterToken string
	Logger       *slog.Logger
}

// rejoinTimeout bounds how long Rejoin waits for the other voters: a
// running cluster answers at once, and at a site's first start the
// voters starting together must not wait long for each other.
const rejoinTimeout = 2 * time.Second

// HasMemberData reports whether dir holds an etcd member's data.
func HasMemberData(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "member"))
	return err == nil
}

// Rejoin replaces a member that ran before and lost its data: when the
// other voters run a cluster in which this member's peer URL belongs to
// a member that has started (it has a name), it removes that member and
// adds a new one at the same URL, and returns the cluster's members
// (name to peer URL, this one included) for an EmbedConfig with
// Existing set. A running cluster that no longer lists this member (a
// replacement removed it, then could not add it back) gets it added; one
// that lists it as added but never started (the node stopped between the
// add and its start) is joined as it is. It returns nil when there is
// nothing to replace: no cluster answers (the site's first start, its
// voters starting together), or the member is the one the cluster was
// bootstrapped with and has never started. Call it only when
// HasMemberData is false.
func Rejoin(ctx context.Context, cfg RejoinConfig) (map[string]string, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if !anyListening(cfg.Endpoints) {
		return nil, nil // the site's voters have not started: its first start
	}
	c, err := newClient(ctx, clientv3.Config{Endpoints: cfg.Endpoints, DialTimeout: rejoinTimeout,
		Username: cfg.Username, Password: cfg.Password, TLS: cfg.TLS}, cfg.Logger, new(atomic.Bool))
	if err != nil {
		return nil, nil // no cluster to join yet
	}
	defer c.Close()
	lctx, cancel := context.WithTimeout(ctx, rejoinTimeout)
	defer cancel()
	list, step, err := planRejoin(lctx, c, cfg.PeerURL, cfg.ClusterToken)
	if err != nil {
		return nil, nil // nothing answers: no cluster to join yet
	}
	switch step.action {
	case rejoinNone:
		return nil, nil
	case rejoinJoin:
		cfg.Logger.Warn("cluster: this voter's etcd member was added but never started; joining the running cluster as it",
			"peerURL", cfg.PeerURL)
		return existingMembers(list.Members, step.member.ID, cfg.Name)
	case rejoinAdd:
		cfg.Logger.Warn("cluster: the running etcd cluster no longer lists this voter; adding it again",
			"peerURL", cfg.PeerURL)
	case rejoinReplace:
		cfg.Logger.Warn("cluster: this voter's etcd data is gone; replacing its member in the running cluster",
			"member", step.member.Name, "peerURL", cfg.PeerURL)
		rctx, rcancel := context.WithTimeout(ctx, DefaultRequestTimeout)
		defer rcancel()
		if _, err := c.MemberRemove(rctx, step.member.ID); err != nil {
			return nil, fmt.Errorf("cluster: remove the lost member %s: %w", step.member.Name, err)
		}
	}
	// Should the add fail now (another voter down, so no quorum), the
	// node's start fails and is retried: the next try finds the member
	// missing (rejoinAdd), or added but not started (rejoinJoin).
	added, err := addMember(ctx, c, cfg.PeerURL)
	if err != nil {
		return nil, fmt.Errorf("cluster: add this member again at %s: %w", cfg.PeerURL, err)
	}
	return existingMembers(added.Members, added.Member.ID, cfg.Name)
}

// memberLister is what planRejoin reads the member list with (an etcd
// client).
type memberLister interface {
	MemberList(ctx context.Context, opts ...clientv3.OpOption) (*clientv3.MemberListResponse, error)
}

// planRejoin reads the running cluster's member list and decides what a
// voter with no member data does (rejoinStep). The list is read
// serializably, so that a member waiting for the others still answers
// from what it knows. A plan to add or replace this voter's member (a
// change of the membership, which takes the cluster's quorum) is decided
// again from a linearizable list: the member that answered may not have
// applied a change made just before (this voter's member added, so it is
// to be joined, not added twice, which etcd refuses while the first add
// has not started). Without a quorum the change would fail anyway, and
// the first answer stands.
func planRejoin(ctx context.Context, c memberLister, peerURL, token string) (*clientv3.MemberListResponse, rejoinPlan, error) {
	list, err := c.MemberList(ctx, clientv3.WithSerializable())
	if err != nil {
		return nil, rejoinPlan{}, err
	}
	step := rejoinStep(list.Members, peerURL, token)
	if step.action == rejoinAdd || step.action == rejoinReplace {
		if fresh, err := c.MemberList(ctx); err == nil {
			list, step = fresh, rejoinStep(fresh.Members, peerURL, token)
		}
	}
	return list, step, nil
}

type rejoinAction int

const (
	rejoinNone    rejoinAction = iota // start as configured
	rejoinReplace                     // remove the lost member, add a new one
	rejoinAdd                         // add a member: the cluster lists none here
	rejoinJoin                        // start the member added but never started
)

type rejoinPlan struct {
	action rejoinAction
	member *etcdserverpb.Member // the member at this peer URL, if any
}

// rejoinStep decides what a voter with no member data does, from the
// member list of the running cluster of the others. token is the cluster
// token: with it a member added later is told from one the cluster was
// bootstrapped with, whose ID derives from its peer URL and the token
// alone; without it every unstarted member counts as bootstrapped.
func rejoinStep(members []*etcdserverpb.Member, peerURL, token string) rejoinPlan {
	i := slices.IndexFunc(members, func(m *etcdserverpb.Member) bool { return slices.Contains(m.PeerURLs, peerURL) })
	started := slices.ContainsFunc(members, func(m *etcdserverpb.Member) bool { return m.Name != "" })
	switch {
	case i < 0 && started:
		// A running cluster without this voter: a replacement removed
		// it and could not add it back (a voter died in between). The
		// others are this site's voters, reached with its credentials.
		return rejoinPlan{action: rejoinAdd}
	case i < 0:
		return rejoinPlan{action: rejoinNone} // a cluster still forming
	case members[i].Name != "":
		return rejoinPlan{action: rejoinReplace, member: members[i]}
	case token != "" && members[i].ID != bootstrapMemberID(peerURL, token):
		return rejoinPlan{action: rejoinJoin, member: members[i]}
	}
	// Never started, as the cluster was bootstrapped: the site's voters
	// are starting together.
	return rejoinPlan{action: rejoinNone}
}

// bootstrapMemberID is the ID etcd gives the member at peerURL of a
// cluster bootstrapped with token.
func bootstrapMemberID(peerURL, token string) uint64 {
	urls, err := types.NewURLs([]string{peerURL})
	if err != nil {
		return 0
	}
	return uint64(membership.NewMember("", urls, token, nil).ID)
}

// existingMembers maps every member's name to its peer URL for a member
// joining the cluster as self (which has no name yet) under name.
func existingMembers(members []*etcdserverpb.Member, self uint64, name string) (map[string]string, error) {
	initial := map[string]string{}
	for _, m := range members {
		n := m.Name
		if m.ID == self {
			n = name
		}
		if n == "" || len(m.PeerURLs) == 0 {
			return nil, fmt.Errorf("cluster: member %x has not started; replace one member at a time", m.ID)
		}
		initial[n] = m.PeerURLs[0]
	}
	return initial, nil
}

// addMember adds a voting member at peerURL, retrying while etcd finds the
// cluster not ready for one: a member that started or left moments ago
// (ErrUnhealthy), or the removal of a never-started member not yet
// applied where the add is checked, which still counts it among the
// voters that have not started (ErrMemberNotEnoughStarted).
func addMember(ctx context.Context, c *clientv3.Client, peerURL string) (*clientv3.MemberAddResponse, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		actx, cancel := context.WithTimeout(ctx, DefaultRequestTimeout)
		added, err := c.MemberAdd(actx, []string{peerURL})
		cancel()
		notReady := errors.Is(err, rpctypes.ErrUnhealthy) || errors.Is(err, rpctypes.ErrMemberNotEnoughStarted)
		if err == nil || !notReady || time.Now().After(deadline) {
			return added, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// anyListening reports whether any of the client URLs takes a connection.
func anyListening(endpoints []string) bool {
	return slices.ContainsFunc(endpoints, func(ep string) bool { return listening(ep, time.Second) })
}

// listening reports whether the client URL's port takes a connection
// within timeout.
func listening(endpoint string, timeout time.Duration) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	conn, err := net.DialTimeout("tcp", u.Host, timeout)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}
