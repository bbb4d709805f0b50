package cluster

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestRejoinReplacesALostMember: a voter whose data is gone takes its
// place in the running cluster again, under its name and peer URL, and
// votes: with another member closed, the cluster still commits.
func TestRejoinReplacesALostMember(t *testing.T) {
	ctx := t.Context()
	ms := startMembers(t, 3)
	cfg := ms[2].etcd.Config()
	name, peer, client, dir := cfg.Name, cfg.AdvertisePeerUrls[0].String(), ms[2].ClientURL(), cfg.Dir
	ms[2].Close()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if HasMemberData(dir) {
		t.Fatal("member data still there")
	}
	members, err := Rejoin(ctx, RejoinConfig{Name: name, PeerURL: peer, Endpoints: []string{ms[0].ClientURL(), ms[1].ClientURL()}, Logger: testLogger(t)})
	if err != nil || len(members) != 3 || members[name] != peer {
		t.Fatalf("rejoin: %v, %v", members, err)
	}
	e, err := StartEmbedded(ctx, EmbedConfig{Name: name, Dir: dir, PeerURL: peer, ClientURL: client,
		InitialCluster: members, Existing: true, ClusterToken: cfg.InitialClusterToken,
		TickMs: testTickMs, ElectionMs: testElectionMs, ReadyTimeout: 20 * time.Second, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if !HasMemberData(dir) {
		t.Fatal("no member data after the rejoin")
	}
	ms[0].Close()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{client, ms[1].ClientURL()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := c.Put(pctx, "after-rejoin", "x"); err != nil {
		t.Fatalf("a write with the rejoined member and one other: %v", err)
	}
}

// TestRejoinWithoutACluster: when no other voter listens (a site's first
// start), there is nothing to rejoin.
func TestRejoinWithoutACluster(t *testing.T) {
	ports := freePorts(t, 2)
	members, err := Rejoin(t.Context(), RejoinConfig{Name: "n1", PeerURL: "http://127.0.0.1:1",
		Endpoints: []string{fmt.Sprintf("http://127.0.0.1:%d", ports[0]), fmt.Sprintf("http://127.0.0.1:%d", ports[1])}})
	if members != nil || err != nil {
		t.Fatalf("rejoin: %v, %v", members, err)
	}
}

// TestRejoinRemovedMember: a voter put back empty whose member the
// running cluster no longer lists (removed, say by a replacement whose
// add failed) is told how to add it back, rather than starting a cluster
// of its own the others would refuse.
func TestRejoinRemovedMember(t *testing.T) {
	ctx := t.Context()
	ms := startMembers(t, 3)
	cfg := ms[2].etcd.Config()
	name, peer := cfg.Name, cfg.AdvertisePeerUrls[0].String()
	id := uint64(ms[2].etcd.Server.MemberID())
	ms[2].Close()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{ms[0].ClientURL(), ms[1].ClientURL()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := c.MemberRemove(rctx, id); err != nil {
		t.Fatal(err)
	}
	members, err := Rejoin(ctx, RejoinConfig{Name: name, PeerURL: peer, Endpoints: []string{ms[0].ClientURL(), ms[1].ClientURL()}, Logger: testLogger(t)})
	if members != nil || err == nil || !strings.Contains(err.Error(), "etcdctl member add "+name+" --peer-urls="+peer) {
		t.Fatalf("rejoin of a removed member: %v, %v", members, err)
	}
}
