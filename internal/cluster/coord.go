package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// Key layout under the site's prefix.
const (
	keyRoot     = "/twinlake/"
	membersDir  = "members/"
	electionDir = "leader" // concurrency.Election adds the '/'
	nodesKey    = "nodes"  // the site's node list, comma-separated
)

// Coordinator is one node's view of its site's coordination: its membership
// record and its part in the leader election, both bound to one etcd session
// (a lease kept alive while the node lives). One goroutine, the leader loop,
// owns the session and the election; the methods are safe for concurrent
// use.
type Coordinator struct {
	cfg    Config
	log    *slog.Logger
	client *clientv3.Client
	prefix string // /twinlake/<site>/
	info   string // cfg.Info as JSON

	ctx      context.Context // the loop's; cancelled by Close
	cancel   context.CancelFunc
	campaign chan struct{} // Campaign's requests; the loop's receipt is the answer
	closing  *atomic.Bool  // set by Close: the client's errors while it disconnects are expected
	done     chan struct{} // closed when the loop has ended
	isLeader atomic.Bool
	fence    atomic.Pointer[fence] // the won election's key, while leading

	mu   sync.Mutex
	sess *concurrency.Session // the current session; written by the loop, guarded by mu

	// Owned by the loop; read by Close once the loop has ended.
	candidate bool
	won       *concurrency.Election // the election this node leads, while it does
	wonRev    int64                 // the revision at which the win was checked

	closeOnce sync.Once
	closeErr  error
}

// Open connects to the site's etcd, makes the node's session with
// cfg.LeaseTTL and registers the node under members/<NodeID>, bound to the
// session's lease so that the record goes when the node dies. ctx bounds the
// opening only. The node does not campaign until Campaign is called.
func Open(ctx context.Context, cfg Config) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	info, err := json.Marshal(cfg.Info)
	if err != nil {
		return nil, fmt.Errorf("cluster: node info: %w", err)
	}
	log := cfg.Logger.With("component", "cluster", "site", cfg.Site, "node", cfg.NodeID)
	closing := new(atomic.Bool)
	endpoints := cfg.Endpoints
	if cfg.Local != "" {
		endpoints = []string{cfg.Local}
	}
	client, err := newClient(context.Background(), clientv3.Config{
		Endpoints: endpoints, DialTimeout: cfg.RequestTimeout,
		Username: cfg.Username, Password: cfg.Password, TLS: cfg.TLS,
	}, cfg.Logger.With("site", cfg.Site, "node", cfg.NodeID), closing)
	if err != nil {
		return nil, err
	}
	loopCtx, cancel := context.WithCancel(context.Background())
	c := &Coordinator{
		cfg: cfg, log: log, client: client, info: string(info),
		prefix: keyRoot + cfg.Site + "/",
		ctx:    loopCtx, cancel: cancel,
		campaign: make(chan struct{}), done: make(chan struct{}), closing: closing,
	}
	if len(cfg.Nodes) > 0 {
		err = c.claimNodes(ctx, cfg.Nodes)
	}
	var sess *concurrency.Session
	if err == nil {
		sess, err = c.newSession(ctx)
	}
	if err != nil {
		cancel()
		client.Close()
		return nil, err
	}
	c.sess = sess
	if err := c.clearFormerLife(ctx); err != nil {
		// Not fatal: its lease runs out by itself.
		log.Warn("could not look for sessions a former process of this node left", "err", err)
	}
	go c.run()
	return c, nil
}

// claimNodes records nodes as the site's node list if none is recorded,
// and fails with ErrOtherSite if another list is.
func (c *Coordinator) claimNodes(ctx context.Context, nodes []string) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	want := strings.Join(nodes, ",")
	key := c.prefix + nodesKey
	resp, err := c.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, want)).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return fmt.Errorf("cluster: record the site's nodes: %w", err)
	}
	if resp.Succeeded {
		return nil
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 1 && string(kvs[0].Value) == want {
		return nil
	}
	got := ""
	if len(kvs) == 1 {
		got = string(kvs[0].Value)
	}
	return fmt.Errorf("%w: %s holds a site of nodes %s, and this node was started with --cluster %s: give every node the list the site first started with, or this site an etcd, or a name in it (--etcd-site), of its own", ErrOtherSite, key, got, want)
}

// newSession grants a lease of LeaseTTL, keeps it alive for as long as the
// coordinator is open, and registers the node under it. Granting and
// registering are bounded by ctx and RequestTimeout.
func (c *Coordinator) newSession(ctx context.Context) (*concurrency.Session, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	ttl := int(c.cfg.LeaseTTL / time.Second)
	lease, err := c.client.Grant(ctx, int64(ttl))
	if err != nil {
		return nil, fmt.Errorf("cluster: grant lease: %w", err)
	}
	sess, err := concurrency.NewSession(c.client, concurrency.WithLease(lease.ID),
		concurrency.WithTTL(ttl), concurrency.WithContext(c.ctx))
	if err == nil {
		_, err = c.client.Put(ctx, c.prefix+membersDir+c.cfg.NodeID, c.info, clientv3.WithLease(lease.ID))
		if err != nil {
			sess.Orphan()
		}
	}
	if err != nil {
		// Best effort: the lease expires by itself otherwise.
		_, _ = c.client.Revoke(ctx, lease.ID)
		return nil, fmt.Errorf("cluster: register node: %w", err)
	}
	return sess, nil
}

// session returns the current session; never nil once Open has returned.
func (c *Coordinator) session() *concurrency.Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess
}

func (c *Coordinator) setSession(s *concurrency.Session) {
	c.mu.Lock()
	c.sess = s
	c.mu.Unlock()
}

// election returns an Election over the site's leader keys on the current
// session, for reading who leads; only the loop campaigns.
func (c *Coordinator) election() *concurrency.Election {
	return concurrency.NewElection(c.session(), c.prefix+electionDir)
}

// Members lists the site's registered nodes, sorted by ID. A node whose
// session ended (it died, or lost etcd for LeaseTTL) is not listed.
func (c *Coordinator) Members(ctx context.Context) ([]Member, error) {
	if c.ctx.Err() != nil {
		return nil, ErrClosed
	}
	dir := c.prefix + membersDir
	resp, err := c.client.Get(ctx, dir, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("cluster: list members: %w", err)
	}
	members := make([]Member, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		m := Member{ID: strings.TrimPrefix(string(kv.Key), dir)}
		if err := json.Unmarshal(kv.Value, &m.Info); err != nil {
			c.log.Warn("member record does not decode; listed without its info", "member", m.ID, "err", err)
		}
		members = append(members, m)
	}
	slices.SortFunc(members, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
	return members, nil
}

// Campaign makes this node a candidate for the site's leadership for as long
// as the coordinator is open, across lost and re-made sessions. It returns
// once the leader loop has taken the request (ctx bounds the wait), not when
// the node wins: see IsLeader and Watch. Calling it again does nothing more.
func (c *Coordinator) Campaign(ctx context.Context) error {
	select {
	case c.campaign <- struct{}{}:
		return nil
	case <-c.done:
		return ErrClosed
	case <-c.ctx.Done():
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// IsLeader reports whether this node leads the site, as the leader loop last
// saw it. It turns false as soon as the loop sees its session end, which can
// be up to a third of LeaseTTL after etcd dropped the lease; work that must
// not run on two nodes at once needs fencing by etcd revision besides.
func (c *Coordinator) IsLeader() bool { return c.isLeader.Load() }

// fence is what a leader's writes are conditioned on: its candidate key.
type fence struct{ key string }

// Fence returns the condition that holds exactly while this node's
// candidate key still exists, and so while no other node can have been
// elected: a write carrying it fails once the node has lost the lead,
// however late the node learns it. ok is false when the node does not
// lead.
func (c *Coordinator) Fence() (cmp clientv3.Cmp, ok bool) {
	f := c.fence.Load()
	if f == nil {
		return clientv3.Cmp{}, false
	}
	return clientv3.Compare(clientv3.CreateRevision(f.key), ">", 0), true
}

// Client is the coordinator's etcd client, for the site's other records
// (the metadata store); it closes with the coordinator.
func (c *Coordinator) Client() *clientv3.Client { return c.client }

// Leader returns the NodeID of the site's leader, or ErrNoLeader while there
// is none.
func (c *Coordinator) Leader(ctx context.Context) (string, error) {
	if c.ctx.Err() != nil {
		return "", ErrClosed
	}
	resp, err := c.election().Leader(ctx)
	switch {
	case errors.Is(err, concurrency.ErrElectionNoLeader):
		return "", ErrNoLeader
	case err != nil:
		return "", fmt.Errorf("cluster: read leader: %w", err)
	}
	return string(resp.Kvs[0].Value), nil
}

// Watch delivers the site's leader's NodeID now (once there is one) and at
// every change of leader. The channel is closed when ctx ends, the
// coordinator closes, or etcd cannot be read; a period without a leader is
// not reported. Call Watch again to resume after a failure.
func (c *Coordinator) Watch(ctx context.Context) <-chan string {
	out := make(chan string)
	if c.ctx.Err() != nil {
		close(out)
		return out
	}
	observed := c.election().Observe(ctx)
	go func() {
		defer close(out)
		last := ""
		for resp := range observed {
			id := string(resp.Kvs[0].Value)
			if id == last {
				continue
			}
			last = id
			select {
			case out <- id:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// Close stops the leader loop, resigns the leadership if this node holds it
// (so the next leader is elected at once, not after LeaseTTL), revokes the
// session's lease (which removes the membership record) and disconnects.
// ctx bounds the resignation and revocation; if etcd cannot be reached the
// lease expires by itself. Later calls return the first call's result.
func (c *Coordinator) Close(ctx context.Context) error {
	c.closeOnce.Do(func() {
		c.closing.Store(true)
		c.cancel()
		<-c.done
		c.closeErr = c.shutdown(ctx)
	})
	return c.closeErr
}

// shutdown releases what the ended loop held.
func (c *Coordinator) shutdown(ctx context.Context) error {
	var errs []error
	if c.won != nil {
		if err := c.won.Resign(ctx); err != nil {
			errs = append(errs, fmt.Errorf("cluster: resign: %w", err))
		}
	}
	sess := c.session()
	sess.Orphan() // the loop's context is cancelled: this returns at once
	// A lost session's lease is gone already.
	if _, err := c.client.Revoke(ctx, sess.Lease()); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		errs = append(errs, fmt.Errorf("cluster: revoke lease: %w", err))
	}
	if err := c.client.Close(); err != nil {
		errs = append(errs, fmt.Errorf("cluster: disconnect: %w", err))
	}
	return errors.Join(errs...)
}

// MemberStatus is what one etcd endpoint reports of its storage.
type MemberStatus struct {
	Endpoint string
	// DBSize is the backend file's size; DBSizeInUse the part of it in
	// use (the rest is free pages, given back by a defragmentation).
	DBSize, DBSizeInUse int64
	// Quota is the size past which the member raises the NOSPACE alarm
	// and refuses every write.
	Quota int64
	// Errors are the member's raised alarms ("... alarm:NOSPACE") and a
	// lost raft leader.
	Errors []string
}

// storageTimeout bounds Storage.
const storageTimeout = 2 * time.Second

// Storage asks every etcd endpoint for its storage status at once. It
// returns those that answered, in endpoint order, and names the others.
func (c *Coordinator) Storage(ctx context.Context) (answered []MemberStatus, unreachable []string) {
	if c.ctx.Err() != nil {
		return nil, c.cfg.Endpoints
	}
	// An endpoint down is not waited for long: admin info and a metrics
	// scrape wait for the answers.
	ctx, cancel := context.WithTimeout(ctx, min(c.cfg.RequestTimeout, storageTimeout))
	defer cancel()
	all := make([]*MemberStatus, len(c.cfg.Endpoints))
	var wg sync.WaitGroup
	for i, ep := range c.cfg.Endpoints {
		wg.Go(func() {
			// A closed port is told at once; the client would retry it
			// until the deadline.
			if !listening(ep, storageTimeout/4) {
				return
			}
			st, err := c.client.Status(ctx, ep)
			if err != nil {
				return
			}
			all[i] = &MemberStatus{Endpoint: ep, DBSize: st.DbSize, DBSizeInUse: st.DbSizeInUse, Quota: st.DbSizeQuota, Errors: st.Errors}
		})
	}
	wg.Wait()
	for i, st := range all {
		if st == nil {
			unreachable = append(unreachable, c.cfg.Endpoints[i])
			continue
		}
		answered = append(answered, *st)
	}
	return answered, unreachable
}
