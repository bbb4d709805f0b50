package app

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twinlake/twinlake/internal/cluster"
	"github.com/twinlake/twinlake/internal/httprec"
	"github.com/twinlake/twinlake/internal/nodeapi"
	"github.com/twinlake/twinlake/internal/trace"
)

// While the site changes leader (a few seconds when the leader's process
// dies, its lease when its machine does) a node has nowhere to pass a
// request. It holds the request instead, up to holdTime, and passes it on
// once a leader serves: the client sees a slower answer, not an error.
// A request whose pass to the leader failed before the leader answered
// is held and passed again too, when that cannot do it twice: it never
// reached the leader (the connection was refused or timed out, and
// nothing of its body was read), or it only reads (GET, HEAD without a
// body). At most maxHeld requests wait at once on a node;
// more get 503 with Retry-After at once.
const (
	// minHold is the least a request is held; holdTime says how long.
	minHold   = 10 * time.Second
	holdPast  = 5 * time.Second // how much longer than the lease
	maxHeld   = 1024
	holdRetry = 250 * time.Millisecond // a hold looks again this often, news or not
	// nodeDialTimeout bounds a connection to another node of the site.
	nodeDialTimeout = 3 * time.Second
)

// nodeDialer makes the connections between a site's nodes. They share a
// network: a connection that takes longer than nodeDialTimeout goes to a
// machine that is down, and a request held for a leader is better passed
// to the next one. A connection whose peer stops answering TCP's
// keep-alive probes (its machine died; a live process's kernel answers
// them, however busy or paused the process) fails after 5+3×2 s of
// silence, rather than the minutes the kernel's defaults take: a request
// passed to a leader whose machine died, on a connection already open,
// fails then, and a GET or HEAD is passed to the next leader.
func nodeDialer() *net.Dialer {
	return &net.Dialer{Timeout: nodeDialTimeout,
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 5 * time.Second, Interval: 2 * time.Second, Count: 3}}
}

// nodeTransport is how a node reaches the other nodes of its site (over
// TLS with clientTLS, when set). It never asks for a compressed answer:
// it would then unpack one, and an object stored with Content-Encoding:
// gzip, passed on by a node for a client that sent no Accept-Encoding,
// reached the client unpacked, its bytes no longer the object's.
func nodeTransport(clientTLS *tls.Config) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	tr.DialContext = nodeDialer().DialContext
	tr.DisableCompression = true
	tr.TLSClientConfig = clientTLS
	return tr
}

// holdTime is how long a request is held for a leader on a site whose
// leases last lease (0: cluster.DefaultLeaseTTL): past the longest a
// change of leader takes, a dead machine's lease and etcd's election
// after it, and 10 s at least.
func holdTime(lease time.Duration) time.Duration {
	return max(minHold, cmp.Or(lease, cluster.DefaultLeaseTTL)+holdPast)
}

// leaderNews wakes the requests held for a leader when the node's view
// of the leader changes.
type leaderNews struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait returns a channel closed at the next change.
func (l *leaderNews) wait() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ch == nil {
		l.ch = make(chan struct{})
	}
	return l.ch
}

// changed wakes every waiter.
func (l *leaderNews) changed() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ch != nil {
		close(l.ch)
		l.ch = nil
	}
}

// setLeader records the leader as the run loop read it (nil: none, or
// unknown) and wakes the held requests if that is news.
func (n *Node) setLeader(id *string) {
	old := n.leader.Swap(id)
	if (old == nil) != (id == nil) || (old != nil && *old != *id) {
		n.news.changed()
	}
}

// routing is what the node tells of its passing of requests.
func (n *Node) routing() nodeapi.Routing {
	return nodeapi.Routing{HeldRequests: n.held.Load(), LeadersDeposed: n.deposed.Load(),
		ReadsHere: n.runsServed.Load(), ReadBytesHere: n.runsBytes.Load(),
		WritesHere: n.writesHere.Load(), WriteBytesHere: n.writeBytes.Load()}
}

// handler is the node's whole HTTP surface: the node API (api) under
// nodeapi.Prefix, its liveness, and route for everything else. It routes
// by prefix itself: http.ServeMux answers a path that is not clean with a
// redirect to the clean one, and an object key may hold "//" (or "./",
// "../"): a key "a//b" was redirected to "a/b", another object.
func (n *Node) handler(api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case strings.HasPrefix(p, nodeapi.Prefix):
			api.ServeHTTP(w, r)
		case p == "/twinlake/health/live":
			w.WriteHeader(http.StatusOK)
		default:
			n.route(w, r)
		}
	})
}

// route hands a request to the site's server while this node leads, to
// the leader otherwise, holding it while there is none to pass it to.
func (n *Node) route(w http.ResponseWriter, r *http.Request) {
	var deadline time.Time // of the hold, from its first wait
	failed := ""           // the leader the last pass failed at
	offer := offersRead(r) // to read the data here (node_byref.go)
	for {
		if h := n.active.Load(); h != nil {
			if addr, ok := nodeapi.VerifiedClientAddr(n.cfg.NodeSecret, r); ok {
				// Passed on by another node: served as from its client.
				r.RemoteAddr = addr
			}
			r = n.withOfferedBody(r)
			if level, ok := n.verifiedOffer(r); ok {
				rw := &runsWriter{ResponseWriter: w, secret: n.cfg.NodeSecret, keys: level >= 2}
				(*h).ServeHTTP(rw, r)
				rw.pass()
				return
			}
			(*h).ServeHTTP(w, r)
			return
		}
		leader := n.leader.Load()
		if leader != nil && *leader != n.cfg.Address && *leader != failed {
			switch n.forward(w, r, *leader, offer) {
			case passAnswered:
				return
			case passWithoutOffer:
				offer = false
				continue // to the same leader, to read the data itself
			}
			failed = *leader
			continue // to the next leader at once, if there is one
		}
		// Nowhere to pass it now: hold it.
		if deadline.IsZero() {
			deadline = time.Now().Add(n.holdFor)
		}
		if n.held.Add(1) > maxHeld {
			n.held.Add(-1)
			unavailable(w, r, "The site's leader is changing; retry shortly.")
			return
		}
		wait := n.awaitLeader(r.Context(), deadline)
		n.held.Add(-1)
		if !wait {
			unavailable(w, r, "The site has no leader to serve this request yet; retry shortly.")
			return
		}
		failed = "" // look again at whoever leads now, the same node too
	}
}

// awaitLeader waits for news of the leader, or holdRetry, and reports
// whether the request may still wait (neither deadline nor the client's
// end reached).
func (n *Node) awaitLeader(ctx context.Context, deadline time.Time) bool {
	left := time.Until(deadline)
	if left <= 0 {
		return false
	}
	t := time.NewTimer(min(left, holdRetry))
	defer t.Stop()
	select {
	case <-n.news.wait():
	case <-t.C:
	case <-ctx.Done():
		return false
	case <-n.stop:
		return false
	}
	return true
}

// The outcomes of a pass to the leader (forward).
type passResult int

const (
	passAnswered     passResult = iota // the client has its answer
	passRetry                          // failed before an answer: pass r again (see holdTime)
	passWithoutOffer                   // the runs answered cannot be read here: pass r again without the offer
)

// forward passes r to leader, with the node's offer to read the data of
// its answer when offer is set, and reports what came of it; the client
// got nothing unless it is passAnswered.
func (n *Node) forward(w http.ResponseWriter, r *http.Request, leader string, offer bool) passResult {
	target := &url.URL{Scheme: n.scheme, Host: leader}
	var failed error
	again, unread := false, false
	byRef := false // the body read here
	var body *passBody
	in := r
	if r.ContentLength != 0 {
		// The proxy closes the body it sends, and so would the
		// failed pass a body it never read.
		body = &passBody{body: r.Body}
		in = r.WithContext(r.Context())
		in.Body = body
	}
	transport, token := n.transport, ""
	var write *offeredWrite // the body offered to the leader
	if body != nil && offersWrite(r) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		token, transport = newToken(), n.offerTransport
		write = &offeredWrite{body: body, client: w, ctx: ctx, done: make(chan struct{})}
		n.offered.Store(token, write)
		defer n.offered.Delete(token)
		defer write.settle()
		in = r.WithContext(ctx)
		in.Body = write
	}
	w = &metaCaseWriter{ResponseWriter: w}
	// The request keeps its Host header: its signature covers it.
	proxy := &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
			// Only this node's own offers.
			pr.Out.Header.Del(nodeapi.HeaderReadOffer)
			pr.Out.Header.Del(nodeapi.HeaderWriteOffer)
			now := time.Now()
			nodeapi.SignClientAddr(n.cfg.NodeSecret, pr.Out, r.RemoteAddr, now)
			if offer {
				nodeapi.SignReadOffer(n.cfg.NodeSecret, pr.Out, now)
			}
			if write != nil {
				nodeapi.SignWriteOffer(n.cfg.NodeSecret, pr.Out, n.cfg.Address, token, now)
				pr.Out.Header.Set("Expect", "100-continue")
			}
		},
		// The leader went away (a change of leader under way).
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			failed = err
			if errors.Is(err, errRunsUnread) {
				n.cfg.Logger.Debug("node: reading the leader's runs failed; passing the read again without the offer", "leader", leader, "err", err)
				unread = true
				return
			}
			n.cfg.Logger.Debug("node: forwarding to the leader failed", "leader", leader, "err", err)
			if passAgain(r, err, body) {
				again = true
				return
			}
			unavailable(w, r, "The site's leader is changing; retry shortly.")
		},
	}
	if isRead(r) {
		// A read the leader has not answered when another takes over
		// (the leader paused, or cut off) is given up and passed to
		// the new one.
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		var state atomic.Int32
		in = r.WithContext(ctx)
		go n.abandonIfReplaced(ctx, leader, &state, cancel)
		proxy.ModifyResponse = func(resp *http.Response) error {
			if !state.CompareAndSwap(readWaiting, readAnswered) {
				return errReplaced
			}
			if offer && resp.Header.Get(headerRuns) != "" {
				if err := n.readRuns(resp); err != nil {
					return err
				}
				byRef = true
			}
			return nil
		}
	}
	result := func() passResult {
		switch {
		case unread:
			return passWithoutOffer
		case again:
			return passRetry
		}
		return passAnswered
	}
	if !n.bus.Enabled(trace.Internal) {
		proxy.ServeHTTP(w, in)
		return result()
	}
	start := time.Now()
	rec := &httprec.Recorder{ResponseWriter: w}
	proxy.ServeHTTP(rec, in)
	ev := trace.Event{Type: trace.Internal, Time: start, FuncName: "node.Forward", Path: r.URL.Path, Method: r.Method,
		StatusCode: rec.Status, Duration: time.Since(start), RemoteAddr: r.RemoteAddr, BytesIn: max(r.ContentLength, 0),
		BytesOut: rec.Bytes, Msg: "passed to the leader", Attrs: map[string]string{"leader": leader}}
	switch {
	case unread:
		ev.Msg = "the leader's runs could not be read here; passed again without the offer"
	case again:
		ev.Msg = "passing to the leader failed; held to pass again"
	case byRef:
		ev.Msg = "passed to the leader; its data read from the drives here"
	case write != nil && write.state.Load() == offerTaken:
		ev.Msg = "passed to the leader; its data written to the drives from here"
	}
	if failed != nil {
		ev.Error = failed.Error()
	}
	n.bus.Publish(ev)
	return result()
}

// The states of a read passed to a leader (forward).
const (
	readWaiting  = iota // for the leader's answer
	readAnswered        // its headers came: the read is the client's
	readReplaced        // another leader took over first: given up
)

var errReplaced = errors.New("node: another node took the lead before this one answered")

// abandonIfReplaced gives up a read passed to leader, calling cancel, if
// another node leads (or this one) before leader answers; it returns
// when ctx ends.
func (n *Node) abandonIfReplaced(ctx context.Context, leader string, state *atomic.Int32, cancel context.CancelFunc) {
	for {
		news := n.news.wait() // before the look, so that no change is missed
		now := n.leader.Load()
		if n.active.Load() != nil || (now != nil && *now != leader) {
			if state.CompareAndSwap(readWaiting, readReplaced) {
				cancel()
			}
			return
		}
		select {
		case <-news:
		case <-ctx.Done():
			return
		}
	}
}

// passAgain reports whether r, whose pass to the leader failed with err
// before any answer, can be passed again without doing it twice; body
// is r's body as the pass read it (nil: r has none).
func passAgain(r *http.Request, err error, body *passBody) bool {
	if r.Context().Err() != nil {
		return false // the client is gone
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" && (body == nil || body.read.Load() == 0) {
		return true
	}
	return isRead(r)
}

// isRead reports whether r only reads: a GET or HEAD without a body, which
// can be passed to a leader again whatever became of an earlier pass.
func isRead(r *http.Request) bool {
	return r.ContentLength == 0 && (r.Method == http.MethodGet || r.Method == http.MethodHead)
}

// passBody is a request's body as a pass to the leader reads it: it
// counts what was read, and leaves closing it to the server, so that a
// pass that failed before reading any leaves it whole for the next.
type passBody struct {
	body io.ReadCloser
	read atomic.Int64
}

func (b *passBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	b.read.Add(int64(n))
	return n, err
}

func (b *passBody) Close() error { return nil }

// userMetaPrefix is how a user metadata header's name reads once
// canonicalised.
const userMetaPrefix = "X-Amz-Meta-"

// metaCaseWriter gives an object's user metadata headers back the
// lower-case names the leader wrote, as the response's header is
// written: S3 keeps metadata names lower-case and SDKs take a name as
// they read it (boto3 would answer Foo for foo), but the proxy's parsing
// and copying of the leader's response canonicalised them.
type metaCaseWriter struct {
	http.ResponseWriter
	sent bool // the final header is written
}

func (m *metaCaseWriter) WriteHeader(code int) {
	if !m.sent {
		lowerUserMetadata(m.Header())
		m.sent = code >= 200 // not an informational 1xx
	}
	m.ResponseWriter.WriteHeader(code)
}

func (m *metaCaseWriter) Write(b []byte) (int, error) {
	if !m.sent {
		lowerUserMetadata(m.Header())
		m.sent = true
	}
	return m.ResponseWriter.Write(b)
}

// Unwrap lets the proxy flush the writer underneath.
func (m *metaCaseWriter) Unwrap() http.ResponseWriter { return m.ResponseWriter }

// lowerUserMetadata renames the canonicalised user metadata headers of h
// to lower case.
func lowerUserMetadata(h http.Header) {
	for k, v := range h {
		if strings.HasPrefix(k, userMetaPrefix) {
			delete(h, k)
			h[strings.ToLower(k)] = v
		}
	}
}
