package app

import (
	"bytes"
	"compress/gzip"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/trace"
)

// routeNode is a node that leads nothing and passes requests to the
// leader set with setLeader.
func routeNode(t *testing.T) *Node {
	t.Helper()
	n := &Node{scheme: "http", transport: nodeTransport(nil), bus: trace.New("self:1"), stop: make(chan struct{}),
		holdFor: 3 * time.Second}
	n.cfg.Address = "self:1"
	n.cfg.Logger = slog.New(slog.DiscardHandler)
	t.Cleanup(func() { close(n.stop) })
	return n
}

// passingTo is a routeNode whose leader is a server of h.
func passingTo(t *testing.T, h http.Handler) *Node {
	t.Helper()
	leader := httptest.NewServer(h)
	t.Cleanup(leader.Close)
	addr := strings.TrimPrefix(leader.URL, "http://")
	n := routeNode(t)
	n.setLeader(&addr)
	return n
}

// leaderServer is a leader that answers every request with what it read
// of its body, counting the requests that reached it.
func leaderServer(t *testing.T) (addr string, reached *atomic.Int64) {
	t.Helper()
	reached = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.Write(append([]byte(r.Method+" "), body...))
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), reached
}

// deadAddr is an address that refuses connections.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func serve(n *Node, method, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "/bucket/key", strings.NewReader(body))
	if body == "" {
		r = httptest.NewRequest(method, "/bucket/key", nil)
	}
	w := httptest.NewRecorder()
	n.route(w, r)
	return w
}

// rawExchange sends request, written out in full (so that its path and
// headers reach the server byte for byte), to the server at url and
// returns the answer's head and body as they came.
func rawExchange(t *testing.T, url, request string) (head, body string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, request)
	raw, _ := io.ReadAll(conn)
	head, body, _ = strings.Cut(string(raw), "\r\n\r\n")
	return head, body
}

// after runs fn after d, in the background.
func after(d time.Duration, fn func()) { time.AfterFunc(d, fn) }

// TestRouteHoldsWhileNoLeader: a request that comes while the site has
// no leader, a GET or a PUT with its body, waits and reaches the leader
// once there is one.
func TestRouteHoldsWhileNoLeader(t *testing.T) {
	for _, tc := range []struct{ method, body string }{{"GET", ""}, {"PUT", "the body, whole"}} {
		n := routeNode(t)
		live, reached := leaderServer(t)
		var heldThen atomic.Int64
		after(300*time.Millisecond, func() {
			heldThen.Store(n.held.Load())
			n.setLeader(&live)
		})
		w := serve(n, tc.method, tc.body)
		if w.Code != 200 || w.Body.String() != tc.method+" "+tc.body || reached.Load() != 1 {
			t.Fatalf("%s: %d %q, reached the leader %d times; want 200 %q once", tc.method, w.Code, w.Body, reached.Load(), tc.method+" "+tc.body)
		}
		if heldThen.Load() != 1 || n.held.Load() != 0 {
			t.Fatalf("%s: %d held while waiting, %d once passed; want 1, then 0", tc.method, heldThen.Load(), n.held.Load())
		}
	}
}

// TestRoutePassesAgainWhatNeverReachedTheLeader: the leader named is
// gone (its address refuses connections): a GET and a PUT are held and
// passed, body whole, to the next leader.
func TestRoutePassesAgainWhatNeverReachedTheLeader(t *testing.T) {
	for _, tc := range []struct{ method, body string }{{"GET", ""}, {"PUT", strings.Repeat("x", 100<<10)}, {"DELETE", ""}} {
		n := routeNode(t)
		dead := deadAddr(t)
		n.setLeader(&dead)
		live, reached := leaderServer(t)
		after(300*time.Millisecond, func() { n.setLeader(&live) })
		w := serve(n, tc.method, tc.body)
		if w.Code != 200 || w.Body.String() != tc.method+" "+tc.body || reached.Load() != 1 {
			t.Fatalf("%s: %d (%d bytes), reached the leader %d times; want 200 with the body, once", tc.method, w.Code, w.Body.Len(), reached.Load())
		}
	}
}

// TestRouteNeverPassesTwiceWhatReachedTheLeader: a leader that takes a
// PUT and dies before it answers may have applied it: the client gets
// 503, and the request is not passed again. A GET is.
func TestRouteNeverPassesTwiceWhatReachedTheLeader(t *testing.T) {
	var reached atomic.Int64
	dying := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		io.ReadAll(r.Body)
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	t.Cleanup(dying.Close)
	addr := strings.TrimPrefix(dying.URL, "http://")

	n := routeNode(t)
	n.setLeader(&addr)
	if w := serve(n, "PUT", "applied, maybe"); w.Code != http.StatusServiceUnavailable || reached.Load() != 1 {
		t.Fatalf("PUT: %d, reached the leader %d times; want 503 after reaching it once", w.Code, reached.Load())
	}

	reached.Store(0)
	live, liveReached := leaderServer(t)
	after(300*time.Millisecond, func() { n.setLeader(&live) })
	if w := serve(n, "GET", ""); w.Code != 200 || reached.Load() == 0 || liveReached.Load() != 1 {
		t.Fatalf("GET: %d, reached the dying leader %d and the next %d times; want 200 from the next", w.Code, reached.Load(), liveReached.Load())
	}
}

// TestRouteHoldsBounded: a request waits holdFor at most, and no more
// than maxHeld wait at once.
func TestRouteHoldsBounded(t *testing.T) {
	n := routeNode(t)
	n.holdFor = 200 * time.Millisecond
	start := time.Now()
	w := serve(n, "GET", "")
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Fatalf("no leader after the hold: %d, Retry-After %q; want 503 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
	if !bytes.Contains(w.Body.Bytes(), []byte("ServiceUnavailable")) {
		t.Fatalf("503 body %q is not S3's ServiceUnavailable", w.Body)
	}
	if waited := time.Since(start); waited < n.holdFor {
		t.Fatalf("answered after %v, before the hold of %v ended", waited, n.holdFor)
	}
	n.holdFor = time.Hour
	n.held.Store(maxHeld)
	if w := serve(n, "GET", ""); w.Code != http.StatusServiceUnavailable {
		t.Fatalf("with %d requests held already: %d, want 503 at once", maxHeld, w.Code)
	}
	if got := n.held.Load(); got != maxHeld {
		t.Fatalf("held = %d after a refused hold, want %d", got, maxHeld)
	}
}

func TestHoldTime(t *testing.T) {
	for _, tc := range []struct{ lease, want time.Duration }{
		{0, 15 * time.Second}, // the default 10 s lease
		{2 * time.Second, 10 * time.Second},
		{10 * time.Second, 15 * time.Second},
		{time.Minute, 65 * time.Second},
	} {
		if got := holdTime(tc.lease); got != tc.want {
			t.Errorf("holdTime(%v) = %v, want %v", tc.lease, got, tc.want)
		}
	}
}

// stuckServer is a leader that takes requests and answers none until
// release is closed (a paused process), counting them.
func stuckServer(t *testing.T, release <-chan struct{}) (addr string, reached *atomic.Int64) {
	t.Helper()
	reached = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		io.ReadAll(r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Write([]byte("late " + r.Method))
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), reached
}

// TestRouteGivesUpAReadWhenTheLeaderIsReplaced: a leader that took a GET
// and answers nothing (paused) is replaced: the GET is passed to the new
// leader and answered. A PUT is never given up: the old leader may
// apply it, so its answer, late, is the client's.
func TestRouteGivesUpAReadWhenTheLeaderIsReplaced(t *testing.T) {
	release := make(chan struct{})
	after(3*time.Second, func() { close(release) }) // a GET never given up gets "late GET" then
	stuck, stuckReached := stuckServer(t, release)
	live, liveReached := leaderServer(t)
	n := routeNode(t)
	n.setLeader(&stuck)
	after(300*time.Millisecond, func() { n.setLeader(&live) })
	if w := serve(n, "GET", ""); w.Code != 200 || w.Body.String() != "GET " || stuckReached.Load() != 1 || liveReached.Load() != 1 {
		t.Fatalf("GET: %d %q, reached the stuck leader %d and the next %d times; want 200 from the next, each once",
			w.Code, w.Body, stuckReached.Load(), liveReached.Load())
	}

	slow := make(chan struct{})
	stuck2, _ := stuckServer(t, slow)
	live2, live2Reached := leaderServer(t)
	n2 := routeNode(t)
	n2.setLeader(&stuck2)
	after(200*time.Millisecond, func() { n2.setLeader(&live2) })
	after(500*time.Millisecond, func() { close(slow) })
	if w := serve(n2, "PUT", "body"); w.Code != 200 || w.Body.String() != "late PUT" || live2Reached.Load() != 0 {
		t.Fatalf("PUT: %d %q, reached the next leader %d times; want the first leader's late answer, the next not reached",
			w.Code, w.Body, live2Reached.Load())
	}
}

// TestRouteKeepsUserMetadataNamesLowerCase: the x-amz-meta-* headers the
// leader writes in lower case reach the client in lower case through a
// node that passes the request on (SDKs take a metadata name as they
// read it), on a GET, a HEAD and a PUT alike; other headers pass as they
// are.
func TestRouteKeepsUserMetadataNamesLowerCase(t *testing.T) {
	n := passingTo(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header()["x-amz-meta-foo"] = []string{"bar"}
		w.Header()["x-amz-meta-empty"] = []string{""}
		w.Header().Set("ETag", `"e"`)
		w.Write([]byte("body"))
	}))
	node := httptest.NewServer(http.HandlerFunc(n.route))
	t.Cleanup(node.Close)
	for _, method := range []string{"GET", "HEAD", "PUT"} {
		head, _ := rawExchange(t, node.URL, method+" /bucket/key HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx")
		for _, want := range []string{"\r\nx-amz-meta-foo: bar\r\n", "\r\nx-amz-meta-empty: \r\n", "\r\nEtag: \"e\"\r\n"} {
			if !strings.Contains(head+"\r\n", want) {
				t.Errorf("%s: the header lacks %q:\n%s", method, want, head)
			}
		}
	}
}

// TestRoutePassesAnEncodedBodyAsItIs: an object stored with
// Content-Encoding: gzip reaches, through a node that passes the GET on,
// a client that sent no Accept-Encoding as the bytes stored, with its
// Content-Encoding, not unpacked on the way.
func TestRoutePassesAnEncodedBodyAsItIs(t *testing.T) {
	var packed bytes.Buffer
	zw := gzip.NewWriter(&packed)
	zw.Write(bytes.Repeat([]byte("twinlake "), 1000))
	zw.Close()
	n := passingTo(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", strconv.Itoa(packed.Len()))
		w.Write(packed.Bytes())
	}))
	node := httptest.NewServer(http.HandlerFunc(n.route))
	t.Cleanup(node.Close)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}} // as minio-go's
	resp, err := client.Get(node.URL + "/bucket/key.gz")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(got, packed.Bytes()) || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("%d bytes (%d stored), Content-Encoding %q, %v", len(got), packed.Len(), resp.Header.Get("Content-Encoding"), err)
	}
}

// TestNodePassesEveryPathAsItIs: a node passes a request whose path is not
// clean (an object key with "//", "./" or "../" in it, which S3 allows)
// to the leader as it came, where http.ServeMux would have redirected it
// to another key; the node API and liveness keep their paths.
func TestNodePassesEveryPathAsItIs(t *testing.T) {
	n := passingTo(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.URL.EscapedPath())
	}))
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "node api") })
	node := httptest.NewServer(n.handler(api))
	t.Cleanup(node.Close)
	for path, want := range map[string]string{
		"/bucket/a//b":              "/bucket/a//b",
		"/bucket/./x":               "/bucket/./x",
		"/bucket/a/../b":            "/bucket/a/../b",
		"/bucket//":                 "/bucket//",
		"/bucket/a%2Fb":             "/bucket/a%2Fb",
		"/twinlake/node/v1/process": "node api",
		"/twinlake/health/live":     "",
	} {
		head, body := rawExchange(t, node.URL, "GET "+path+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		if !strings.HasPrefix(head, "HTTP/1.1 200 ") || body != want {
			t.Errorf("%s: %q %q, want 200 %q", path, strings.SplitN(head, "\r\n", 2)[0], body, want)
		}
	}
}
