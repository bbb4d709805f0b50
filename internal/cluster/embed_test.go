package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestEmbeddedSingleMember(t *testing.T) {
	m := startMembers(t, 1)[0]
	fi, err := os.Stat(m.etcd.Config().Dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		t.Fatalf("data dir mode %v, want 0700", perm)
	}
	if m.ClientURL() == "" {
		t.Fatal("no client URL")
	}
	m.Close()
	m.Close() // idempotent
}

func TestEmbeddedNotReadyWithoutQuorum(t *testing.T) {
	ports := freePorts(t, 2)
	peer := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	cfg := EmbedConfig{
		Name: "n1", Dir: filepath.Join(t.TempDir(), "n1"), ClusterToken: "alone",
		PeerURL: peer, ClientURL: fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
		// Two voters that never start: no quorum, never ready.
		InitialCluster: map[string]string{"n1": peer, "n2": "http://127.0.0.1:1", "n3": "http://127.0.0.1:2"},
		TickMs:         testTickMs, ElectionMs: testElectionMs,
		ReadyTimeout: MinReadyTimeout,
		Logger:       testLogger(t),
	}
	start := time.Now()
	m, err := StartEmbedded(context.Background(), cfg)
	if !errors.Is(err, ErrNotReady) {
		if m != nil {
			m.Close()
		}
		t.Fatalf("StartEmbedded without quorum: %v, want ErrNotReady", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("gave up after %v, want about %v", took, MinReadyTimeout)
	}
}

// A member started with a quota of its own raises its alarm there: its
// status tells that quota, not etcd's default.
func TestEmbeddedQuota(t *testing.T) {
	ports := freePorts(t, 2)
	peer := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	const quota = 3 << 30
	m, err := StartEmbedded(context.Background(), EmbedConfig{
		Name: "n1", Dir: filepath.Join(t.TempDir(), "n1"), ClusterToken: "quota",
		PeerURL: peer, ClientURL: fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
		InitialCluster: map[string]string{"n1": peer},
		TickMs:         testTickMs, ElectionMs: testElectionMs,
		QuotaBytes: quota, Logger: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	answered, unreachable := openCoordinator(t, "a", m.ClientURL()).Storage(t.Context())
	if len(answered) != 1 || len(unreachable) != 0 || answered[0].Quota != quota {
		t.Fatalf("Storage = %+v, unreachable %v; want the member with a %d-byte quota", answered, unreachable, quota)
	}
}

func TestStartEmbeddedRefusesBadConfig(t *testing.T) {
	_, err := StartEmbedded(context.Background(), EmbedConfig{Name: "n1"})
	if !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("StartEmbedded with a bad config: %v, want ErrInvalidConfig", err)
	}
}

// TestEmbeddedTakeLead: a follower member takes etcd's raft leadership,
// every member then names it, and a leader taking it again changes
// nothing.
func TestEmbeddedTakeLead(t *testing.T) {
	members := startMembers(t, 3)
	leaders := func() (string, bool) {
		first := members[0].LeaderName()
		for _, m := range members[1:] {
			if m.LeaderName() != first {
				return "", false
			}
		}
		return first, first != ""
	}
	var lead string
	waitFor(t, "a raft leader every member names", func() (bool, string) {
		var ok bool
		lead, ok = leaders()
		return ok, "members disagree or know no leader"
	})
	var taker *Embedded
	for _, m := range members {
		if m.etcd.Config().Name != lead {
			taker = m
			break
		}
	}
	name := taker.etcd.Config().Name
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := taker.TakeLead(ctx); err != nil {
		t.Fatalf("%s takes the lead from %s: %v", name, lead, err)
	}
	waitFor(t, "every member naming the new leader", func() (bool, string) {
		got, ok := leaders()
		return ok && got == name, fmt.Sprintf("leader %q, want %s", got, name)
	})
	if err := taker.TakeLead(ctx); err != nil {
		t.Fatalf("the leader takes the lead again: %v", err)
	}
	if got, _ := leaders(); got != name {
		t.Fatalf("after the leader took the lead again, %q leads, want %s", got, name)
	}
}

// TestLocalKV: the in-process key-value API works with etcd's
// authentication off, then on (a token), and gets a new token when the
// member refuses the one it holds, for single calls and streamed ranges.
func TestLocalKV(t *testing.T) {
	m := startMembers(t, 1)[0]
	const password = "local-kv-password"
	kv := m.LocalKV(RootUser, password)
	ctx := t.Context()
	if _, err := kv.Put(ctx, "/a", "1"); err != nil {
		t.Fatalf("put without authentication: %v", err)
	}
	root, err := clientv3.New(clientv3.Config{Endpoints: []string{m.ClientURL()}, DialTimeout: 5 * time.Second,
		Username: RootUser, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := EnableAuth(ctx, root, password); err != nil {
		t.Fatal(err)
	}
	l := m.localKV(RootUser, password)
	fresh := clientv3.NewKVFromKVClient(l, nil)
	if resp, err := fresh.Get(ctx, "/a"); err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("get with authentication on: %v, %v", resp, err)
	}
	// The one made before authentication was on learns it needs a token.
	if _, err := kv.Put(ctx, "/b", "2"); err != nil {
		t.Fatalf("put once authentication is on: %v", err)
	}
	// A token the member no longer knows (expired) is renewed.
	l.mu.Lock()
	l.token = "expired.token"
	l.mu.Unlock()
	if resp, err := fresh.Txn(ctx).Then(clientv3.OpPut("/c", "3")).Commit(); err != nil || !resp.Succeeded {
		t.Fatalf("txn with an expired token: %v", err)
	}
	if resp, err := root.Get(ctx, "/", clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil || resp.Count != 3 {
		t.Fatalf("the client port sees %v keys, %v; want 3", resp, err)
	}
	// A streamed range, with a token the member no longer knows.
	l.mu.Lock()
	l.token = "expired.token"
	l.mu.Unlock()
	stream, err := fresh.GetStream(ctx, "/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := clientv3.GetStreamToGetResponse(stream); err != nil || len(resp.Kvs) != 3 || string(resp.Kvs[2].Key) != "/c" {
		t.Fatalf("a streamed range read %v, %v; want /a /b /c", resp, err)
	}
	if stream, err := m.LocalKV(RootUser, "wrong").GetStream(ctx, "/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	} else if _, err := clientv3.GetStreamToGetResponse(stream); err == nil {
		t.Fatal("a wrong password streamed a range")
	}
	if _, err := m.LocalKV(RootUser, "wrong").Get(ctx, "/a"); err == nil {
		t.Fatal("a wrong password read")
	}
}
