package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Fast raft timing for tests on loopback.
const (
	testTickMs     = 50
	testElectionMs = 500
	testLeaseTTL   = 2 * time.Second
)

// testLogger returns a logger writing to t's log while t runs (etcd and
// the client can log from their goroutines a little after a test ends).
func testLogger(t testing.TB) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

// freePorts returns n distinct loopback ports that were free a moment ago;
// another process can still take one before it is used, hence the retries
// in startMembers.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// startMembers starts an etcd cluster of n members n1..nN on 127.0.0.1,
// all at once (each waits for a quorum), retrying with new ports when one
// was taken. The members are closed when t ends.
func startMembers(t testing.TB, n int) []*Embedded {
	t.Helper()
	dir := t.TempDir()
	for attempt := 1; ; attempt++ {
		members, err := tryStartMembers(t, filepath.Join(dir, fmt.Sprint(attempt)), n)
		if err == nil {
			t.Cleanup(func() {
				for _, m := range members {
					m.Close()
				}
			})
			return members
		}
		if !errors.Is(err, syscall.EADDRINUSE) || attempt == 3 {
			t.Fatalf("start %d etcd members: %v", n, err)
		}
	}
}

func tryStartMembers(t testing.TB, dir string, n int) ([]*Embedded, error) {
	ports := freePorts(t, 2*n)
	cfgs := make([]EmbedConfig, n)
	initial := map[string]string{}
	for i := range cfgs {
		cfgs[i] = EmbedConfig{
			Name:         fmt.Sprintf("n%d", i+1),
			Dir:          filepath.Join(dir, fmt.Sprintf("n%d", i+1)),
			PeerURL:      fmt.Sprintf("http://127.0.0.1:%d", ports[2*i]),
			ClientURL:    fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1]),
			ClusterToken: "test-" + t.Name(),
			TickMs:       testTickMs,
			ElectionMs:   testElectionMs,
			ReadyTimeout: 20 * time.Second,
			Logger:       testLogger(t),
		}
		initial[cfgs[i].Name] = cfgs[i].PeerURL
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	members := make([]*Embedded, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range cfgs {
		cfgs[i].InitialCluster = initial
		wg.Go(func() {
			members[i], errs[i] = StartEmbedded(ctx, cfgs[i])
			if errs[i] != nil {
				cancel() // the others would wait for a quorum in vain
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, m := range members {
			if m != nil {
				m.Close()
			}
		}
		return nil, err
	}
	return members, nil
}

// openCoordinator opens a coordinator for node id of site "test" on
// endpoints, closed when t ends.
func openCoordinator(t testing.TB, id string, endpoints ...string) *Coordinator {
	t.Helper()
	return openSiteCoordinator(t, "test", id, endpoints...)
}

func openSiteCoordinator(t testing.TB, site, id string, endpoints ...string) *Coordinator {
	t.Helper()
	return openCoordinatorWith(t, site, id, testLeaseTTL, endpoints...)
}

// openCoordinatorWith opens a coordinator for node id of site on
// endpoints, its sessions' leases lasting lease, closed when t ends.
func openCoordinatorWith(t testing.TB, site, id string, lease time.Duration, endpoints ...string) *Coordinator {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Open(ctx, Config{
		Endpoints: endpoints, Site: site, NodeID: id,
		Info:           NodeInfo{Address: id + ".example:9000", Version: "test", Started: time.Unix(1700000000, 0).UTC()},
		LeaseTTL:       lease,
		RequestTimeout: 2 * time.Second,
		Logger:         testLogger(t),
	})
	if err != nil {
		t.Fatalf("open coordinator %s: %v", id, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = c.Close(ctx)
	})
	return c
}

// waitFor polls cond until it holds, failing t after a generous deadline.
// cond returns a description of what it saw, for the failure message.
func waitFor(t testing.TB, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, saw := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last saw: %s", what, saw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// memberIDs lists c's view of the site's members' IDs.
func memberIDs(c *Coordinator) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	members, err := c.Members(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.ID
	}
	return ids, nil
}

// leaderOf returns c's view of the site's leader.
func leaderOf(c *Coordinator) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return c.Leader(ctx)
}
