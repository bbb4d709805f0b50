package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/nodeapi"
	"github.com/twinlake/twinlake/internal/objects"
)

var testNodeSecret = []byte("0123456789abcdef-node-secret")

// byRefSite is a leader and another node over one blob store, the
// leader's site handler answering every GET with the range [off, off+n)
// of blob as runs when its writer takes them and as bytes otherwise.
type byRefSite struct {
	data    []byte
	blob    string
	leader  *Node
	node    *Node
	nodeURL string
	// asRuns and asBytes count the leader's answers each way.
	asRuns, asBytes atomic.Int64
	// runBlob, when set, is the blob the leader names in its runs in
	// place of the real one.
	runBlob string
}

func newByRefSite(t *testing.T, nodeSecret []byte) *byRefSite {
	t.Helper()
	set, err := blob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &byRefSite{data: make([]byte, 3<<20)}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range s.data {
		s.data[i] = byte(rng.Uint32())
	}
	w, err := set.Create()
	if err != nil {
		t.Fatal(err)
	}
	w.Write(s.data)
	if s.blob, err = w.Commit(); err != nil {
		t.Fatal(err)
	}
	site := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		off, _ := strconv.ParseInt(r.URL.Query().Get("off"), 10, 64)
		n, _ := strconv.ParseInt(r.URL.Query().Get("n"), 10, 64)
		w.Header().Set("ETag", `"e"`)
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		w.WriteHeader(http.StatusPartialContent)
		if rw, ok := w.(objects.RunWriter); ok {
			id := s.blob
			if s.runBlob != "" {
				id = s.runBlob
			}
			if took, _ := rw.WriteRuns([]objects.Run{{Blob: id, Off: off, Len: n}}); took {
				s.asRuns.Add(1)
				return
			}
		}
		s.asBytes.Add(1)
		w.Write(s.data[off : off+n])
	}))
	s.leader = routeNode(t)
	s.leader.cfg.NodeSecret = testNodeSecret
	s.leader.active.Store(&site)
	leaderSrv := httptest.NewServer(http.HandlerFunc(s.leader.route))
	t.Cleanup(leaderSrv.Close)
	addr := strings.TrimPrefix(leaderSrv.URL, "http://")

	s.node = routeNode(t)
	s.node.cfg.NodeSecret = nodeSecret
	s.node.set = set
	s.node.setLeader(&addr)
	nodeSrv := httptest.NewServer(http.HandlerFunc(s.node.route))
	t.Cleanup(nodeSrv.Close)
	s.nodeURL = nodeSrv.URL
	return s
}

// get reads [off, off+n) through url, sending hdr.
func (s *byRefSite) get(t *testing.T, url string, off, n int, hdr http.Header) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"/bucket/key?off="+strconv.Itoa(off)+"&n="+strconv.Itoa(n), nil)
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusPartialContent || resp.ContentLength != int64(n) || resp.Header.Get("ETag") != `"e"` ||
		resp.Header.Get(headerRuns) != "" {
		t.Fatalf("status %d, length %d, header %v", resp.StatusCode, resp.ContentLength, resp.Header)
	}
	if !bytes.Equal(body, s.data[off:off+n]) {
		t.Fatalf("read %d bytes, not the %d of the range", len(body), n)
	}
	return body
}

// TestReadHere: a GET passed to the leader with the node's offer gets the
// leader's headers and the runs of blobs of its body, which the node reads
// itself and sends as the body; the node counts it.
func TestReadHere(t *testing.T) {
	s := newByRefSite(t, testNodeSecret)
	s.get(t, s.nodeURL, 12345, 2<<20, nil)
	if s.asRuns.Load() != 1 || s.asBytes.Load() != 0 {
		t.Fatalf("the leader answered %d as runs, %d as bytes", s.asRuns.Load(), s.asBytes.Load())
	}
	if got := s.node.routing(); got.ReadsHere != 1 || got.ReadBytesHere != 2<<20 {
		t.Fatalf("the node tells %+v", got)
	}
}

// TestReadOfferNeedsTheNodeSecret: an offer signed under another secret,
// or sent by a client straight to the leader, is ignored: the leader
// sends the bytes.
func TestReadOfferNeedsTheNodeSecret(t *testing.T) {
	s := newByRefSite(t, []byte("another-secret-of-16-bytes"))
	s.get(t, s.nodeURL, 0, 1<<20, nil)
	forged := http.Header{nodeapi.HeaderReadOffer: {"1700000000:00ff"}}
	leader := "http://" + *s.node.leader.Load()
	s.get(t, leader, 0, 1<<20, forged)
	// A signature made for another path.
	r := httptest.NewRequest(http.MethodGet, "/bucket/other", nil)
	nodeapi.SignReadOffer(testNodeSecret, r, time.Now())
	s.get(t, leader, 0, 1<<20, http.Header{nodeapi.HeaderReadOffer: {r.Header.Get(nodeapi.HeaderReadOffer)}})
	if s.asRuns.Load() != 0 || s.asBytes.Load() != 3 {
		t.Fatalf("the leader answered %d as runs, %d as bytes", s.asRuns.Load(), s.asBytes.Load())
	}
}

// TestReadHereFallsBack: runs the node cannot open (their blob removed
// since the leader answered) are given up before the client gets
// anything, and the GET is passed again without the offer.
func TestReadHereFallsBack(t *testing.T) {
	s := newByRefSite(t, testNodeSecret)
	s.runBlob = blob.NewID() // no such blob
	s.get(t, s.nodeURL, 5, 1<<20, nil)
	if s.asRuns.Load() != 1 || s.asBytes.Load() != 1 || s.node.routing().ReadsHere != 0 {
		t.Fatalf("the leader answered %d as runs, %d as bytes; the node read %d", s.asRuns.Load(), s.asBytes.Load(), s.node.routing().ReadsHere)
	}
}

// TestRunsWriterHoldsTheStatus: the leader's writer for an offered
// request passes its held status down at the first byte, flush or end, and
// takes no runs once the body has started.
func TestRunsWriterHoldsTheStatus(t *testing.T) {
	rec := httptest.NewRecorder()
	w := &runsWriter{ResponseWriter: rec}
	w.WriteHeader(http.StatusNotFound)
	if rec.Code != http.StatusOK || rec.Flushed {
		t.Fatalf("passed before the body: %d", rec.Code)
	}
	w.Write([]byte("x"))
	if took, _ := w.WriteRuns([]objects.Run{{Blob: "b", Len: 1}}); took || rec.Code != http.StatusNotFound {
		t.Fatalf("took runs after bytes: %t, status %d", took, rec.Code)
	}
	rec = httptest.NewRecorder()
	w = &runsWriter{ResponseWriter: rec}
	w.WriteHeader(http.StatusNoContent)
	w.Flush()
	if rec.Code != http.StatusNoContent || !rec.Flushed {
		t.Fatalf("flush: %d %t", rec.Code, rec.Flushed)
	}
	rec = httptest.NewRecorder()
	w = &runsWriter{ResponseWriter: rec}
	w.WriteHeader(http.StatusNotModified)
	w.pass() // the handler's end
	if rec.Code != http.StatusNotModified {
		t.Fatalf("end: %d", rec.Code)
	}
}

// TestRunsWriterSealsKeys: runs of an encrypted blob go to a node whose
// offer says it decrypts them with their data keys sealed under the node
// secret, never in the clear; a node of an older build (an offer of level
// 1) gets the bytes instead.
func TestRunsWriterSealsKeys(t *testing.T) {
	key := bytes.Repeat([]byte{0xa5}, 32)
	runs := []objects.Run{{Blob: "b1", Len: 10}, {Blob: "b2", Len: 5, Key: key}}
	rec := httptest.NewRecorder()
	w := &runsWriter{ResponseWriter: rec, secret: testNodeSecret}
	if took, _ := w.WriteRuns(runs); took || rec.Body.Len() != 0 {
		t.Fatalf("runs with a key taken for a node of level 1: %t, %q", took, rec.Body.String())
	}
	rec = httptest.NewRecorder()
	w = &runsWriter{ResponseWriter: rec, secret: testNodeSecret, keys: true}
	if took, err := w.WriteRuns(runs); !took || err != nil {
		t.Fatalf("runs with a key refused: %v", err)
	}
	var ans runsAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &ans); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(rec.Body.Bytes(), []byte(base64.StdEncoding.EncodeToString(key)[:16])) || ans.Runs[0].Key != nil {
		t.Fatalf("the answer holds the key in the clear: %s", rec.Body.String())
	}
	if got, err := nodeapi.Open(testNodeSecret, runKeyAAD("b2"), ans.Runs[1].Key); err != nil || !bytes.Equal(got, key) {
		t.Fatalf("the sealed key opens as %x, %v", got, err)
	}
	if _, err := nodeapi.Open(testNodeSecret, runKeyAAD("b1"), ans.Runs[1].Key); err == nil {
		t.Fatal("the key of one blob opens for another")
	}
	if runs[1].Key[0] != 0xa5 {
		t.Fatal("the caller's runs were changed")
	}
}

// TestRouteServesAsFromTheClient: the leader serves a request another
// node passed on as from the client that node took it from (its address
// for aws:SourceIp, traces and logs), and a client's own claim to another
// address, sent to either node, counts for nothing.
func TestRouteServesAsFromTheClient(t *testing.T) {
	site := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.RemoteAddr)
	}))
	leader := routeNode(t)
	leader.cfg.NodeSecret = testNodeSecret
	leader.active.Store(&site)
	leaderSrv := httptest.NewServer(http.HandlerFunc(leader.route))
	t.Cleanup(leaderSrv.Close)
	addr := strings.TrimPrefix(leaderSrv.URL, "http://")
	node := routeNode(t)
	node.cfg.NodeSecret = testNodeSecret
	node.setLeader(&addr)
	nodeSrv := httptest.NewServer(http.HandlerFunc(node.route))
	t.Cleanup(nodeSrv.Close)

	forged := "1700000000;203.0.113.9:443;00ff"
	for _, tc := range []struct {
		name, url string
		claim     string
	}{
		{"through the node", nodeSrv.URL, ""},
		{"through the node, claiming another address", nodeSrv.URL, forged},
		{"to the leader, claiming another address", leaderSrv.URL, forged},
	} {
		var local string // the client's address, as its dialer made it
		client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, a)
			if err == nil {
				local = c.LocalAddr().String()
			}
			return c, err
		}}}
		req, _ := http.NewRequest(http.MethodGet, tc.url+"/bucket/key", nil)
		if tc.claim != "" {
			req.Header.Set(nodeapi.HeaderClientAddr, tc.claim)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(got) != local {
			t.Errorf("%s: served as from %q, want the client's %q", tc.name, got, local)
		}
	}
}
