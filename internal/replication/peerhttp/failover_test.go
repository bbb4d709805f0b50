package peerhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/replication"
	"github.com/twinlake/twinlake/internal/replication/peerwire"
)

// nodePeer is one node of a multi-node peer site: its health answer names
// the site's nodes; it counts the calls it took and the bytes of their
// bodies.
type nodePeer struct {
	nodes       *[]string
	calls, body atomic.Int64
	// instead, when set, serves its calls instead (swapped while its
	// server runs).
	instead atomic.Pointer[http.HandlerFunc]
}

func (p *nodePeer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h := p.instead.Load(); h != nil {
		(*h)(w, r)
		return
	}
	p.calls.Add(1)
	n, _ := io.Copy(io.Discard, r.Body)
	p.body.Add(n)
	w.Header().Set(peerwire.Header, "2")
	if r.URL.Path == pathHealth {
		_ = json.NewEncoder(w).Encode(healthAnswer{Nodes: *p.nodes})
		return
	}
	_ = json.NewEncoder(w).Encode(peerwire.Outcome{Outcome: "applied"})
}

// TestClientCallsAnotherNode: a client of a multi-node peer learns its
// nodes from the health answer; when the node it joined through refuses
// connections, each call, a version's data included, goes whole to
// another node, which calls then keep to; a call that reached a node and
// failed there is not sent again elsewhere, but a node that fails a
// health call, even one that takes it and answers nothing, gives way to
// the next that answers one; a peer that named no nodes (a single node)
// gets no other.
func TestClientCallsAnotherNode(t *testing.T) {
	var nodes []string
	peers := make([]*nodePeer, 3)
	srvs := make([]*httptest.Server, 3)
	for i := range peers {
		peers[i] = &nodePeer{nodes: &nodes}
		srvs[i] = httptest.NewServer(peers[i])
		t.Cleanup(srvs[i].Close)
		nodes = append(nodes, strings.TrimPrefix(srvs[i].URL, "http://"))
	}
	ctx := context.Background()
	c, err := New(srvs[0].URL, replication.Credentials{AccessKey: "ak", SecretKey: "sk"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
	srvs[0].Close()
	data := bytes.Repeat([]byte("x"), 100<<10)
	v := &objects.Version{VersionID: "v", Size: int64(len(data)), Segments: []objects.Segment{{Size: int64(len(data))}}}
	if _, err := c.SendVersion(ctx, "b", "k", v, bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatalf("a version with node 0 down: %v", err)
	}
	if err := c.Health(ctx); err != nil {
		t.Fatalf("health with node 0 down: %v", err)
	}
	if got := peers[1].body.Load(); got != int64(len(data)) || peers[1].calls.Load() != 2 || peers[2].calls.Load() != 0 {
		t.Fatalf("node 1 took %d calls, %d bytes; node 2 %d calls", peers[1].calls.Load(), got, peers[2].calls.Load())
	}

	// A call that reached a node and failed there stays failed.
	cut := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic(http.ErrAbortHandler) // the connection cut mid-call
	})
	peers[1].instead.Store(&cut)
	if err := purge(c); !errors.Is(err, replication.ErrLinkDown) || peers[2].calls.Load() != 0 {
		t.Fatalf("a call cut at node 1: %v; node 2 took %d calls", err, peers[2].calls.Load())
	}

	// A node that takes calls and answers nothing (paused) gives way, at
	// the next health call, to one that answers, which calls then go to;
	// a call already out to it ends then, to be sent again, rather than
	// at its own deadline.
	taken := make(chan struct{}, 1)
	hung := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		taken <- struct{}{}
		<-r.Context().Done()
	})
	peers[1].instead.Store(&hung)
	out := make(chan error, 1)
	go func() {
		octx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		_, err := c.SendPurge(octx, "b", "k", "v1", 0, objects.PurgeVersion)
		out <- err
	}()
	<-taken
	hctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := c.Health(hctx); err != nil {
		t.Fatalf("health with node 1 hung: %v", err)
	}
	select {
	case err := <-out:
		if !errors.Is(err, replication.ErrLinkDown) || !errors.Is(err, errMovedOff) {
			t.Fatalf("the call out to node 1 when calls moved off it ended with %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the call out to node 1 still waits after calls moved off it")
	}
	if err := purge(c); err != nil || peers[2].calls.Load() != 2 {
		t.Fatalf("a call after node 1 hung: %v; node 2 took %d calls, want the health call and it", err, peers[2].calls.Load())
	}

	// A single node names no others.
	single := &fakePeer{answer: "2"}
	sc := fakeClient(t, single)
	if err := sc.Health(ctx); err != nil {
		t.Fatal(err)
	}
	if hosts := sc.otherHosts(sc.base.Host); len(hosts) != 0 {
		t.Fatalf("a single node's client would call %v", hosts)
	}
}
