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
	clientv3 "go.etcd.io/etcd/client/v3"
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
	Logger             *slog.Logger
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
// Existing set. It returns nil when there is nothing to replace: no
// cluster answers (the site's first start, its voters starting together),
// or the member has never started. It fails when a running cluster does
// not list this member at all. Call it only when HasMemberData is false.
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
	// Serializable: a member that waits for the others still answers
	// from what it knows.
	list, err := c.MemberList(lctx, clientv3.WithSerializable())
	if err != nil {
		return nil, nil // nothing answers: no cluster to join yet
	}
	i := slices.IndexFunc(list.Members, func(m *etcdserverpb.Member) bool { return slices.Contains(m.PeerURLs, cfg.PeerURL) })
	started := slices.ContainsFunc(list.Members, func(m *etcdserverpb.Member) bool { return m.Name != "" })
	if i < 0 && started {
		// A running cluster without this voter: it was removed (a
		// replacement whose add failed), or the cluster is another
		// site's. Starting a cluster of its own would only be refused
		// by the others; an error is retried, and says what to do.
		return nil, fmt.Errorf("cluster: the etcd cluster of the other voters runs without this voter (%s): add it back on a running voter with `etcdctl member add %s --peer-urls=%s`, then restart this node with its etcd directory empty", cfg.PeerURL, cfg.Name, cfg.PeerURL)
	}
	if i < 0 || list.Members[i].Name == "" {
		// Never started (it joins as the cluster was bootstrapped), or
		// not known to a member still starting: nothing to replace.
		return nil, nil
	}
	old := list.Members[i]
	cfg.Logger.Warn("cluster: this voter's etcd data is gone; replacing its member in the running cluster",
		"member", old.Name, "peerURL", cfg.PeerURL)
	rctx, rcancel := context.WithTimeout(ctx, DefaultRequestTimeout)
	defer rcancel()
	if _, err := c.MemberRemove(rctx, old.ID); err != nil {
		return nil, fmt.Errorf("cluster: remove the lost member %s: %w", old.Name, err)
	}
	added, err := addMember(ctx, c, cfg.PeerURL)
	if err != nil {
		return nil, fmt.Errorf("cluster: add this member again at %s (removed: add it by hand with etcdctl member add): %w", cfg.PeerURL, err)
	}
	initial := map[string]string{}
	for _, m := range added.Members {
		name := m.Name
		if m.ID == added.Member.ID {
			name = cfg.Name
		}
		if name == "" || len(m.PeerURLs) == 0 {
			return nil, fmt.Errorf("cluster: member %x has not started; replace one member at a time", m.ID)
		}
		initial[name] = m.PeerURLs[0]
	}
	return initial, nil
}

// addMember adds a voting member at peerURL, retrying while etcd finds the
// cluster not ready for one (a member that started or left moments ago).
func addMember(ctx context.Context, c *clientv3.Client, peerURL string) (*clientv3.MemberAddResponse, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		actx, cancel := context.WithTimeout(ctx, DefaultRequestTimeout)
		added, err := c.MemberAdd(actx, []string{peerURL})
		cancel()
		if err == nil || !errors.Is(err, rpctypes.ErrUnhealthy) || time.Now().After(deadline) {
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
	for _, ep := range endpoints {
		u, err := url.Parse(ep)
		if err != nil {
			continue
		}
		if conn, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
			conn.Close()
			return true
		}
	}
	return false
}
