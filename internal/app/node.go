package app

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/cluster"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/nodeapi"
	"github.com/twinlake/twinlake/internal/trace"
)

// NodeConfig starts one node of a multi-node site.
type NodeConfig struct {
	// Config is the site's configuration as every node gives it: Address
	// is this node's, one of Nodes; Dir is this node's own directory
	// (its drive, and its etcd member's data); Drives, when set, are
	// this node's drives instead, as many on every node. Root
	// credentials and the KMS key must come from the environment, the
	// same on every node.
	Config
	// Nodes are every node of the site, host:port, 2 to 16, the same
	// list on every node.
	Nodes []string
	// NodeSecret signs the calls between the site's nodes.
	NodeSecret []byte
	// LeaseTTL is how long a dead leader holds the lead (0: default).
	LeaseTTL time.Duration
	// EtcdQuota is the backend quota of this node's etcd member, if it
	// runs one, cluster.MinQuotaBytes to cluster.MaxQuotaBytes (0:
	// cluster.DefaultQuotaBytes). An etcd run apart from the site has
	// its operator's.
	EtcdQuota int64
	// Etcd, when set, is an etcd cluster run apart from the site, which
	// its nodes keep their records in instead of running members of
	// their own.
	Etcd *ExternalEtcd
	// TLS, when set (with Config.TLS, which serves the node's port),
	// encrypts everything between the nodes: the node API, requests
	// passed to the leader and etcd, whose ports then take only
	// connections with a certificate the nodes trust. A site chooses
	// when it first starts: an etcd member made without TLS does not
	// start with it, nor the other way round.
	TLS *NodeTLS
}

// ExternalEtcd is an etcd cluster a multi-node site uses rather than
// running one on its nodes.
type ExternalEtcd struct {
	// Endpoints are its client URLs: 1 to MaxEtcdEndpoints, all http:// or
	// all https://.
	Endpoints []string
	// Username and Password, when set, authenticate the nodes. The etcd's
	// operator makes the user and turns authentication on; without it,
	// anyone who reaches its port reads and writes the site's records.
	Username, Password string
	// TLS is how https:// endpoints are reached: the roots the etcd's
	// certificate chains to.
	TLS *tls.Config
	// Site names the site's records in etcd, /twinlake/<Site>/, so that
	// several sites can share one etcd; "" is DefaultEtcdSite.
	Site string
}

// DefaultEtcdSite is the name a site's records in etcd are kept under by
// default, and always with etcd run on the nodes.
const DefaultEtcdSite = "site"

// MaxEtcdEndpoints bounds ExternalEtcd.Endpoints.
const MaxEtcdEndpoints = 16

// validate reports what is wrong with e, if anything.
func (e *ExternalEtcd) validate() error {
	if n := len(e.Endpoints); n == 0 || n > MaxEtcdEndpoints {
		return fmt.Errorf("--etcd: %d endpoints; give 1 to %d", n, MaxEtcdEndpoints)
	}
	// The coordinator's own check, so that nothing passes here that it
	// would refuse at every try.
	scheme, _, _ := strings.Cut(e.Endpoints[0], "://")
	for _, ep := range e.Endpoints {
		if cluster.CheckClientURL(ep, "http") != nil && cluster.CheckClientURL(ep, "https") != nil {
			return fmt.Errorf("--etcd: %q is not an etcd client URL (http://host:port or https://host:port)", ep)
		}
		if !strings.HasPrefix(ep, scheme+"://") {
			return errors.New("--etcd: the endpoints are all http:// or all https://")
		}
	}
	if (e.Username == "") != (e.Password == "") {
		return errors.New("--etcd: give both TWINLAKE_ETCD_USER and TWINLAKE_ETCD_PASSWORD, or neither")
	}
	if e.Site != "" {
		if err := cluster.CheckSiteName(e.Site); err != nil {
			return fmt.Errorf("--etcd-site: %w", err)
		}
	}
	return nil
}

// etcdSite is the name of the site's records in etcd.
func (n *Node) etcdSite() string {
	if n.cfg.Etcd != nil && n.cfg.Etcd.Site != "" {
		return n.cfg.Etcd.Site
	}
	return DefaultEtcdSite
}

// https reports whether the endpoints are reached over TLS.
func (e *ExternalEtcd) https() bool { return strings.HasPrefix(e.Endpoints[0], "https://") }

// NodeTLS is how the nodes of a site reach each other over TLS.
type NodeTLS struct {
	// Files are the node's certificate and key and the CA bundle a
	// peer's certificate must chain to, for etcd.
	Files cluster.TLSFiles
	// Client trusts the nodes' certificates and presents this node's.
	Client *tls.Config
}

// Node is one running node of a multi-node site: it serves its drive to
// the other nodes, takes part in the leader election on the site's etcd
// (running an etcd member itself if it is a voter), runs the site's
// server while it leads, and passes every other request to the leader.
type Node struct {
	cfg     NodeConfig
	nodes   []string
	etcd    *cluster.Embedded
	coord   *cluster.Coordinator
	ln      net.Listener
	http    *http.Server
	set     *blob.Store        // every node's drives, this one's local
	local   []*blob.LocalDrive // this node's drives, closed last
	perNode int                // drives on each node
	peers   []*nodeapi.Drive   // a drive of each other node, for their trace events
	bus     *trace.Bus         // this node's trace events, named for it

	scheme    string            // how the nodes reach each other: http or https
	transport http.RoundTripper // to the other nodes

	active atomic.Pointer[http.Handler] // the site's handler while leading
	leader atomic.Pointer[string]       // the leader's address, as last read (setLeader)
	news   leaderNews                   // wakes the requests held for a leader
	held   atomic.Int64                 // requests held for a leader (node_route.go)
	// deposed counts the leaders whose session this node ended
	// (node_gone.go).
	deposed atomic.Int64
	// runsServed and runsBytes count the GETs passed to the leader whose
	// data this node read itself, and their bytes (node_byref.go).
	runsServed, runsBytes atomic.Int64
	// offered holds the bodies this node offered the leader to write,
	// by token; writesHere and writeBytes count those it wrote, and
	// their bytes (node_write.go).
	offered                sync.Map
	writesHere, writeBytes atomic.Int64
	// offerTransport passes the PUTs whose body is offered: it waits
	// for the leader to ask for the body.
	offerTransport http.RoundTripper
	peerAt         map[string]*nodeapi.Drive // the first drive of each other node, by address
	// holdFor is how long a request waits for a leader (holdTime).
	holdFor time.Duration

	// probes is how the node probes the leader (node_gone.go).
	probes *http.Transport

	// The run loop's reads of the drives' marks while following
	// (watchDrives).
	nextDriveCheck time.Time
	checkingDrives atomic.Bool

	mu   sync.Mutex
	site *Server // while leading
	// term is the candidate key of the lead site started under: its
	// writes are fenced on that key, so a lead lost and won again is a
	// new term, with a new server (term).
	term string

	stop chan struct{}
	done chan struct{}
}

// etcdURLs are a node's etcd client and peer URLs: the ports after its
// own (port+1 for clients, port+2 for peers).
func etcdURLs(node, scheme string) (client, peer string, err error) {
	host, port, err := net.SplitHostPort(node)
	if err != nil {
		return "", "", err
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65533 {
		return "", "", fmt.Errorf("node %s: a port below 65534 is needed (etcd takes the next two)", node)
	}
	return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(p+1)), scheme + "://" + net.JoinHostPort(host, strconv.Itoa(p+2)), nil
}

// derive is HMAC-SHA256 of label under key: a secret for one use, made
// from one the nodes share.
func derive(key []byte, label string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(label))
	return m.Sum(nil)
}

// etcdPassword is the password the nodes authenticate to etcd with,
// derived from the node secret they share.
func etcdPassword(secret []byte) string {
	return hex.EncodeToString(derive(secret, "twinlake etcd root"))
}

// DeriveNodeSecret is the node secret a site uses when none is given: an
// HMAC of the root password, which every node already shares.
func DeriveNodeSecret(rootPassword string) []byte {
	return derive([]byte(rootPassword), "twinlake node api")
}

// StartNode starts a node: it listens at once (answering not ready until
// the site has a leader), then starts its etcd member if it is a voter,
// joins the election and follows or leads.
func StartNode(nc NodeConfig) (*Node, error) {
	// The site's server starts only on the node that wins the lead: a
	// setting it would refuse (the drives, the inline limit) is refused
	// now, on every node.
	if err := nc.Config.Validate(); err != nil {
		return nil, err
	}
	if nc.RootUser == "" || nc.RootPassword == "" || nc.KMSSecretKey == "" {
		return nil, errors.New("a node of a multi-node site needs TWINLAKE_ROOT_USER, TWINLAKE_ROOT_PASSWORD and TWINLAKE_KMS_SECRET_KEY, the same on every node")
	}
	if nc.Logger == nil {
		return nil, errors.New("a node needs a logger")
	}
	nodes, err := cluster.SortNodes(nc.Nodes)
	if err != nil {
		return nil, err
	}
	if len(nodes) < 2 {
		return nil, errors.New("--cluster: a multi-node site has 2 to 16 nodes; one node is a server without --cluster")
	}
	if !slices.Contains(nodes, nc.Address) {
		return nil, fmt.Errorf("--address %s is not one of --cluster %v", nc.Address, nodes)
	}
	if nc.Etcd != nil {
		if err := nc.Etcd.validate(); err != nil {
			return nil, err
		}
		if nc.EtcdQuota != 0 {
			return nil, errors.New("--etcd-quota sets the quota of the etcd members a site runs on its nodes; an etcd run apart from the site (--etcd) has its own operator's")
		}
	}
	if err := cluster.CheckQuotaBytes(nc.EtcdQuota); err != nil {
		return nil, fmt.Errorf("--etcd-quota: %w", err)
	}
	if (nc.TLS == nil) != (nc.Config.TLS == nil) {
		return nil, errors.New("a node serves TLS only with TLS between the nodes too, and the other way round")
	}
	n := &Node{cfg: nc, nodes: nodes, bus: trace.New(nc.Address), scheme: "http", stop: make(chan struct{}), done: make(chan struct{}),
		holdFor: holdTime(nc.LeaseTTL)}
	var clientTLS *tls.Config
	if nc.TLS != nil {
		n.scheme, clientTLS = "https", nc.TLS.Client
	}
	n.transport = nodeTransport(clientTLS)
	n.probes = probeTransport(nodeTransport(clientTLS))
	offerTransport := nodeTransport(clientTLS)
	offerTransport.ExpectContinueTimeout = offerContinueWait
	n.offerTransport = offerTransport
	// Each node's drives (checked with the rest of nc.Config above):
	// --drives, or its directory. Every node has as many; the set is node
	// by node, drive by drive.
	paths := nc.Drives
	if len(paths) == 0 {
		paths = []string{nc.Dir}
	}
	n.perNode = len(paths)
	if total := len(nodes) * n.perNode; total > blob.MaxDrives {
		return nil, fmt.Errorf("--cluster with --drives: %d nodes of %d drives are %d drives; a site has at most %d", len(nodes), n.perNode, total, blob.MaxDrives)
	}
	// The drives' calls are traced where they run: the leader's own
	// here, the others' on their nodes, whose events reach admin trace
	// through remoteTrace.
	started := false
	defer func() {
		if !started {
			n.closeDrives()
		}
	}()
	local := make([]blob.Drive, len(paths))
	for j, p := range paths {
		ld, err := blob.NewShardDrive(p, nc.Logger)
		if err != nil {
			return nil, err
		}
		n.local = append(n.local, ld)
		local[j] = blob.TracedDrive(ld, n.bus)
	}
	client := &http.Client{Transport: n.transport}
	n.peerAt = make(map[string]*nodeapi.Drive, len(nodes))
	var drives []blob.Drive
	for _, node := range nodes {
		if node == nc.Address {
			drives = append(drives, local...)
			continue
		}
		for j := range n.perNode {
			peer, err := nodeapi.NewDrive(n.scheme+"://"+node, j, nc.NodeSecret, client)
			if err != nil {
				return nil, err
			}
			if j == 0 {
				n.peers = append(n.peers, peer)
				n.peerAt[node] = peer
			}
			drives = append(drives, peer)
		}
	}
	if n.set, err = blob.NewDriveSet(drives, 0); err != nil {
		return nil, err
	}
	api, err := nodeapi.NewServer(local, nc.NodeSecret, n.bus, nc.Logger)
	if err != nil {
		return nil, err
	}
	api.SetRouting(n.routing)
	api.SetWrites(http.HandlerFunc(n.storeWrite))
	if n.ln, err = net.Listen("tcp", nc.Address); err != nil {
		return nil, err
	}
	if nc.Config.TLS != nil {
		n.ln = tls.NewListener(n.ln, nc.Config.TLS)
	}
	n.http = &http.Server{Handler: n.handler(api), ReadHeaderTimeout: 30 * time.Second}
	go n.http.Serve(n.ln)
	go n.run()
	started = true
	return n, nil
}

// run starts the etcd member and the coordinator, then follows the
// leadership until Close.
func (n *Node) run() {
	defer close(n.done)
	for {
		err := n.join()
		if err == nil {
			break
		}
		n.cfg.Logger.Error("node: cannot join the site yet; retrying in 2s", "err", err)
		select {
		case <-n.stop:
			return
		case <-time.After(2 * time.Second):
		}
	}
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		n.watchLeader(n.stop)
	}()
	defer func() { <-watched }()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var retryAt time.Time
	for {
		select {
		case <-n.stop:
			n.stepDown()
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if id, err := n.coord.Leader(ctx); err == nil {
			n.setLeader(&id)
		} else {
			n.setLeader(nil)
		}
		cancel()
		n.watchDrives(time.Now())
		switch lead := n.coord.IsLeader(); {
		case lead && n.active.Load() == nil && time.Now().After(retryAt):
			if err := n.lead(); err != nil {
				n.cfg.Logger.Error("node: starting the site as leader failed; retrying in 2s", "err", err)
				n.stepDown()
				retryAt = time.Now().Add(2 * time.Second)
			}
		case !lead && n.active.Load() != nil:
			n.cfg.Logger.Warn("node: lost the lead; stopping the site here")
			n.stepDown()
		case lead && n.active.Load() != nil && !n.sameTerm():
			n.cfg.Logger.Warn("node: lost the lead and won it again; starting the site here afresh")
			n.stepDown()
		}
	}
}

// join starts this node's etcd member if it votes (unless the site uses
// an etcd of its own), then its coordinator, and campaigns.
func (n *Node) join() error {
	if e := n.cfg.Etcd; e != nil {
		var tlsCfg *tls.Config
		if e.https() {
			tlsCfg = cmp.Or(e.TLS, &tls.Config{MinVersion: tls.VersionTLS12})
		}
		return n.campaign(e.Endpoints, "", e.Username, e.Password, tlsCfg)
	}
	voters, err := cluster.Voters(n.nodes)
	if err != nil {
		return err
	}
	initial := map[string]string{}
	var endpoints []string
	for _, v := range voters {
		client, peer, err := etcdURLs(v, n.scheme)
		if err != nil {
			return err
		}
		initial[v], endpoints = peer, append(endpoints, client)
	}
	password := etcdPassword(n.cfg.NodeSecret)
	var files *cluster.TLSFiles
	var clientTLS *tls.Config
	if n.cfg.TLS != nil {
		// No client certificate towards etcd: it would take the
		// certificate's name for the user, not the nodes' password.
		files, clientTLS = &n.cfg.TLS.Files, n.cfg.TLS.Client.Clone()
		clientTLS.Certificates = nil
	}
	if slices.Contains(voters, n.cfg.Address) && n.etcd == nil {
		dir := filepath.Join(n.cfg.Dir, "etcd")
		if err := checkEtcdScheme(dir, n.scheme); err != nil {
			return err
		}
		client, peer, _ := etcdURLs(n.cfg.Address, n.scheme)
		token := "twinlake-" + fmt.Sprint(n.nodes)
		existing := false
		if !cluster.HasMemberData(dir) {
			// Empty: the site's first start, or this node put back
			// empty, whose member the others' cluster must replace.
			others := slices.DeleteFunc(slices.Clone(endpoints), func(ep string) bool { return ep == client })
			members, err := cluster.Rejoin(context.Background(), cluster.RejoinConfig{
				Name: n.cfg.Address, PeerURL: peer, Endpoints: others,
				Username: cluster.RootUser, Password: password, TLS: clientTLS,
				ClusterToken: token, Logger: n.cfg.Logger,
			})
			if err != nil {
				return err
			}
			if members != nil {
				initial, existing = members, true
			}
		}
		n.etcd, err = cluster.StartEmbedded(context.Background(), cluster.EmbedConfig{
			Name: n.cfg.Address, Dir: dir, PeerURL: peer, ClientURL: client, TLS: files,
			InitialCluster: initial, Existing: existing, ClusterToken: token,
			QuotaBytes: n.cfg.EtcdQuota, ReadyTimeout: 5 * time.Minute, Logger: n.cfg.Logger,
		})
		if err != nil {
			return err
		}
	}
	// Authentication is on before this node's session starts, or a fresh
	// leader's keep-alives would be cut short when another node turns it
	// on (see EnableAuthAt).
	if err := cluster.EnableAuthAt(context.Background(), endpoints, password, clientTLS, n.cfg.Logger); err != nil {
		return err
	}
	local := ""
	if n.etcd != nil {
		local = n.etcd.ClientURL()
	}
	return n.campaign(endpoints, local, cluster.RootUser, password, clientTLS)
}

// campaign opens this node's coordinator on the site's etcd and puts the
// node up for leader. A node with an etcd member of its own (local, its
// client URL) talks to it alone, and only such a node leads when the
// site runs etcd in its nodes: its member then takes etcd's raft
// leadership too (lead), and the leader's every call to etcd stays on
// its machine. Leading from a node without a member would send each
// call to another machine, and forgo no availability: while etcd has a
// quorum, a voter is up to lead.
func (n *Node) campaign(endpoints []string, local, user, password string, clientTLS *tls.Config) error {
	coord, err := cluster.Open(context.Background(), cluster.Config{
		Endpoints: endpoints, Local: local, Site: n.etcdSite(), NodeID: n.cfg.Address, LeaseTTL: n.cfg.LeaseTTL,
		Nodes:    n.nodes,
		Info:     cluster.NodeInfo{Address: n.cfg.Address, Started: time.Now()},
		Logger:   n.cfg.Logger,
		Username: user, Password: password, TLS: clientTLS,
	})
	if err != nil {
		return err
	}
	if n.cfg.Etcd == nil && local == "" {
		n.coord = coord
		return nil
	}
	if err := coord.Campaign(context.Background()); err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		coord.Close(ctx)
		return err
	}
	n.coord = coord
	return nil
}

// etcdSchemeFile records, beside a voter's etcd member, whether the
// member was made with TLS ("https") or without ("http").
const etcdSchemeFile = "twinlake-scheme"

// checkEtcdScheme refuses to start a voter's etcd member with TLS when it
// was made without, or the other way round: its peers know it, and it
// knows them, by URLs of the first scheme. A new member records its
// scheme.
func checkEtcdScheme(dir, scheme string) error {
	p := filepath.Join(dir, etcdSchemeFile)
	raw, err := os.ReadFile(p)
	switch {
	case err == nil:
		if got := strings.TrimSpace(string(raw)); got != scheme {
			return fmt.Errorf("this node's etcd member was made with %s between the nodes and cannot start with %s: start every node of the site as it first started (with or without --certs-dir)", got, scheme)
		}
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	if cluster.HasMemberData(dir) && scheme != "http" {
		// A member from before the record was kept: made without TLS.
		return fmt.Errorf("this node's etcd member was made without TLS between the nodes and cannot start with it: start every node of the site without --certs-dir")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(scheme+"\n"), 0o600)
}

// takeLeadTimeout bounds how long a new leader waits for etcd's raft
// leadership to move to its member (a few heartbeats when the member is
// up to date).
const takeLeadTimeout = 5 * time.Second

// lead starts the site's server over the metadata in etcd, fenced by this
// node's current lead, and the drive set of every node's drive. The fence
// is this lead's alone: lost, every write of the server fails, even if the
// node wins the lead again meanwhile (another node may have led and
// written in between, and the server's memory would not know it), and the
// node starts a new server for the new lead (run). The node's etcd member
// takes etcd's raft leadership first.
func (n *Node) lead() error {
	fence, ok := n.coord.Fence()
	if !ok {
		return errors.New("node: not leading")
	}
	var kv clientv3.KV = n.coord.Client()
	if n.etcd != nil {
		// Its member leads raft (or another voter does, and the member
		// passes each call on): call it in process, not over gRPC.
		kv = n.etcd.LocalKV(cluster.RootUser, etcdPassword(n.cfg.NodeSecret))
	}
	store, err := meta.NewEtcd(kv, meta.EtcdOptions{
		Prefix: "/twinlake/" + n.etcdSite() + "/meta/",
		Trace:  n.bus,
		Fence:  func() []clientv3.Cmp { return []clientv3.Cmp{fence} },
	})
	if err != nil {
		return err
	}
	if n.etcd != nil {
		// Before serving: the transfer drops the proposals under way.
		ctx, cancel := context.WithTimeout(context.Background(), takeLeadTimeout)
		err := n.etcd.TakeLead(ctx)
		cancel()
		if err != nil {
			n.cfg.Logger.Warn("node: etcd's raft leadership stays on another node; every call to etcd goes there", "err", err)
		}
	}
	cfg := n.cfg.Config
	cfg.Meta, cfg.Blobs, cfg.Nodes, cfg.Etcd, cfg.Drives = store, n.set, n.nodeInfo, n.etcdInfo, nil
	cfg.NodeAddrs = n.nodes
	cfg.Trace, cfg.RemoteTrace = n.bus, n.remoteTrace
	site, err := New(cfg)
	if err != nil {
		return err
	}
	h, err := site.StartHandler()
	if err != nil {
		site.Close(context.Background())
		return err
	}
	n.mu.Lock()
	n.site, n.term = site, string(fence.KeyBytes())
	n.mu.Unlock()
	n.active.Store(&h)
	n.news.changed()
	n.cfg.Logger.Info("node: leading the site", "node", n.cfg.Address, "nodes", len(n.nodes))
	return nil
}

// nodeInfo reports every node: leader, online (registered in etcd) or
// offline, and whether this node reaches its drive.
func (n *Node) nodeInfo(ctx context.Context) []adminclient.NodeInfo {
	// The drives' marks are read while etcd and the nodes are asked: each
	// of the three may wait for a node that does not answer.
	driveErrs := make(chan []error, 1)
	go func() { driveErrs <- n.set.DriveErrors() }()
	online := map[string]bool{}
	if ms, err := n.coord.Members(ctx); err == nil {
		for _, m := range ms {
			online[m.ID] = true
		}
	}
	var voters []string
	etcdLeader := ""
	if n.etcd != nil {
		etcdLeader = n.etcd.LeaderName() // a member's name is its node's
	}
	if n.cfg.Etcd == nil {
		voters, _ = cluster.Voters(n.nodes) // the list was checked at start
	}
	procs := n.nodesProcess(ctx, online)
	drives := <-driveErrs
	out := make([]adminclient.NodeInfo, len(n.nodes))
	for i, node := range n.nodes {
		state := "offline"
		switch {
		case node == n.cfg.Address:
			state = "leader"
		case online[node]:
			state = "online"
		}
		out[i] = adminclient.NodeInfo{Address: node, State: state, Drive: drivesState(drives[i*n.perNode : (i+1)*n.perNode]),
			Voter: slices.Contains(voters, node), EtcdLeader: node == etcdLeader,
			CPUSeconds: procs[i].CPUSeconds, PeakRSSBytes: procs[i].PeakRSSBytes,
			HeldRequests: procs[i].HeldRequests, LeadersDeposed: procs[i].LeadersDeposed,
			ReadsHere: procs[i].ReadsHere, ReadBytesHere: procs[i].ReadBytesHere,
			WritesHere: procs[i].WritesHere, WriteBytesHere: procs[i].WriteBytesHere}
	}
	return out
}

// nodeCPUTimeout bounds how long admin info and a metrics scrape wait for
// a node to tell its CPU time and memory.
const nodeCPUTimeout = time.Second

// nodesProcess asks every online node, all at once, for the CPU time and
// memory its process has used; zero for a node offline or that did not
// answer in time.
func (n *Node) nodesProcess(ctx context.Context, online map[string]bool) []nodeapi.Process {
	ctx, cancel := context.WithTimeout(ctx, nodeCPUTimeout)
	defer cancel()
	out := make([]nodeapi.Process, len(n.nodes))
	var wg sync.WaitGroup
	k := 0 // n.peers holds the other nodes in order
	for i, node := range n.nodes {
		if node == n.cfg.Address {
			out[i] = nodeapi.LocalProcess()
			out[i].Routing = n.routing()
			continue
		}
		p := n.peers[k]
		k++
		if !online[node] {
			continue
		}
		wg.Go(func() {
			if pr, err := p.Process(ctx); err == nil {
				out[i] = pr
			}
		})
	}
	wg.Wait()
	return out
}

// etcdInfo sums up the storage the site's etcd endpoints report.
func (n *Node) etcdInfo(ctx context.Context) *adminclient.EtcdInfo {
	answered, unreachable := n.coord.Storage(ctx)
	info := &adminclient.EtcdInfo{Endpoints: len(answered) + len(unreachable), Unreachable: unreachable}
	for _, m := range answered {
		info.DBSize = max(info.DBSize, m.DBSize)
		info.DBSizeInUse = max(info.DBSizeInUse, m.DBSizeInUse)
		if info.Quota == 0 || m.Quota < info.Quota {
			info.Quota = m.Quota
		}
		for _, e := range m.Errors {
			info.Alarms = append(info.Alarms, m.Endpoint+": "+e)
		}
	}
	return info
}

// remoteTrace streams the other nodes' events that match f until ctx
// ends, following each node through its restarts.
func (n *Node) remoteTrace(ctx context.Context, f trace.Filter) <-chan trace.Event {
	out := make(chan trace.Event, 1024)
	var wg sync.WaitGroup
	for _, p := range n.peers {
		wg.Go(func() {
			for ctx.Err() == nil {
				if events, err := p.Trace(ctx, f); err == nil {
					for ev := range events {
						select {
						case out <- ev:
						case <-ctx.Done():
						}
					}
				}
				select { // the node is down or went away: try again
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
		})
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	return out
}

// drivesState sums up a node's drives for admin info: "ok", or what is
// wrong with the first that cannot be reached.
func drivesState(errs []error) string {
	bad := 0
	var first error
	for _, err := range errs {
		if err != nil {
			bad++
			first = cmp.Or(first, err)
		}
	}
	switch {
	case bad == 0:
		return "ok"
	case len(errs) == 1:
		return first.Error()
	}
	return fmt.Sprintf("%d of %d drives unreachable: %v", bad, len(errs), first)
}

// sameTerm reports whether the site's server here started under the
// node's current lead.
func (n *Node) sameTerm() bool {
	fence, ok := n.coord.Fence()
	n.mu.Lock()
	defer n.mu.Unlock()
	return ok && string(fence.KeyBytes()) == n.term
}

// stepDown stops serving the site here.
func (n *Node) stepDown() {
	n.active.Store(nil)
	n.news.changed()
	n.mu.Lock()
	site := n.site
	n.site = nil
	n.mu.Unlock()
	if site != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		site.Close(ctx)
	}
}

// Addr is the node's listening address.
func (n *Node) Addr() string { return n.ln.Addr().String() }

// watchDrives reads every drive's mark each driveWatchInterval while the
// node follows (a leader's drive watcher does as much): a drive that does
// not answer is marked hung in the node's drive set, which the site's
// server shares once this node leads. So the node's own reads of large
// bodies, and the claim of the drives a new leader starts with, do not
// wait for a node paused meanwhile: a leader elected while the old one
// was paused started 5 s later, the claim's wait for its drive.
func (n *Node) watchDrives(now time.Time) {
	if n.active.Load() != nil || now.Before(n.nextDriveCheck) || !n.checkingDrives.CompareAndSwap(false, true) {
		return
	}
	n.nextDriveCheck = now.Add(driveWatchInterval)
	go func() {
		defer n.checkingDrives.Store(false)
		n.set.DriveErrors()
	}()
}

// Close stops the node: the site's server if it leads, its coordinator
// (resigning the lead), its etcd member and its listener.
func (n *Node) Close(ctx context.Context) error {
	close(n.stop)
	<-n.done
	var errs []error
	if n.coord != nil {
		errs = append(errs, n.coord.Close(ctx))
	}
	if n.etcd != nil {
		n.etcd.Close()
	}
	n.probes.CloseIdleConnections()
	errs = append(errs, n.http.Shutdown(ctx), n.closeDrives())
	return errors.Join(errs...)
}

// closeDrives closes the node's own drives.
func (n *Node) closeDrives() error {
	var errs []error
	for _, d := range n.local {
		errs = append(errs, d.Close())
	}
	n.local = nil
	return errors.Join(errs...)
}
