package cluster

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestRejoinReplacesALostMember: a voter whose data is gone takes its
// place in the running cluster again, under its name and peer URL, and
// votes: with another member closed, the cluster still commits.
func TestRejoinReplacesALostMember(t *testing.T) {
	ctx := t.Context()
	ms := startMembers(t, 3)
	cfg := ms[2].etcd.Config()
	name, peer, dir := cfg.Name, cfg.AdvertisePeerUrls[0].String(), cfg.Dir
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
	voteRejoined(t, ms, members)
}

// voteRejoined starts ms[2]'s member again, its data gone, as a member of
// the running cluster of the given members, and checks that it votes:
// with ms[0] closed, the rejoined member and ms[1] still commit.
func voteRejoined(t *testing.T, ms []*Embedded, members map[string]string) {
	t.Helper()
	cfg := ms[2].etcd.Config()
	e, err := StartEmbedded(t.Context(), EmbedConfig{Name: cfg.Name, Dir: cfg.Dir, PeerURL: cfg.AdvertisePeerUrls[0].String(),
		ClientURL: ms[2].ClientURL(), InitialCluster: members, Existing: true, ClusterToken: cfg.InitialClusterToken,
		TickMs: testTickMs, ElectionMs: testElectionMs, ReadyTimeout: 20 * time.Second, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if !HasMemberData(cfg.Dir) {
		t.Fatal("no member data after the rejoin")
	}
	ms[0].Close()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL(), ms[1].ClientURL()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
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
// running cluster no longer lists (a replacement removed it, then could
// not add it back), or lists as added but never started (the node
// stopped between the add and its start), takes its place again and
// votes, rather than starting a cluster of its own the others would
// refuse.
func TestRejoinRemovedMember(t *testing.T) {
	for _, addedBefore := range []bool{false, true} {
		t.Run(fmt.Sprintf("added=%v", addedBefore), func(t *testing.T) {
			ctx := t.Context()
			ms := startMembers(t, 3)
			cfg := ms[2].etcd.Config()
			name, peer, dir := cfg.Name, cfg.AdvertisePeerUrls[0].String(), cfg.Dir
			id := uint64(ms[2].etcd.Server.MemberID())
			if want := bootstrapMemberID(peer, cfg.InitialClusterToken); id != want {
				t.Fatalf("a bootstrapped member's ID is %x, bootstrapMemberID says %x", id, want)
			}
			ms[2].Close()
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
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
			if addedBefore {
				if _, err := addMember(rctx, c, peer); err != nil {
					t.Fatal(err)
				}
			}
			members, err := Rejoin(ctx, RejoinConfig{Name: name, PeerURL: peer, ClusterToken: cfg.InitialClusterToken,
				Endpoints: []string{ms[0].ClientURL(), ms[1].ClientURL()}, Logger: testLogger(t)})
			if err != nil || len(members) != 3 || members[name] != peer {
				t.Fatalf("rejoin of a removed member: %v, %v", members, err)
			}
			list, err := c.MemberList(rctx)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(list.Members); n != 3 {
				t.Fatalf("the cluster lists %d members after the rejoin, want 3 (one added, never two)", n)
			}
			voteRejoined(t, ms, members)
		})
	}
}

// rejoinStep tells a voter with no data what to do from the others'
// member list.
func TestRejoinStep(t *testing.T) {
	const token, self, other = "tok", "http://127.0.0.1:1", "http://127.0.0.1:2"
	boot := func(url, name string) *etcdserverpb.Member {
		return &etcdserverpb.Member{ID: bootstrapMemberID(url, token), Name: name, PeerURLs: []string{url}}
	}
	added := &etcdserverpb.Member{ID: bootstrapMemberID(self, token) ^ 1, PeerURLs: []string{self}}
	tests := []struct {
		name    string
		members []*etcdserverpb.Member
		token   string
		want    rejoinAction
	}{
		{"first start, no one started", []*etcdserverpb.Member{boot(self, ""), boot(other, "")}, token, rejoinNone},
		{"first start, the other started", []*etcdserverpb.Member{boot(self, ""), boot(other, "b")}, token, rejoinNone},
		{"lost data", []*etcdserverpb.Member{boot(self, "a"), boot(other, "b")}, token, rejoinReplace},
		{"removed", []*etcdserverpb.Member{boot(other, "b")}, token, rejoinAdd},
		{"not listed, none started", []*etcdserverpb.Member{boot(other, "")}, token, rejoinNone},
		{"added, never started", []*etcdserverpb.Member{added, boot(other, "b")}, token, rejoinJoin},
		{"added, token unknown", []*etcdserverpb.Member{added, boot(other, "b")}, "", rejoinNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rejoinStep(tt.members, self, tt.token); got.action != tt.want {
				t.Errorf("rejoinStep = %d, want %d", got.action, tt.want)
			}
		})
	}
}

// staleLister answers a serializable member list with serial and a
// linearizable one with linear (or fails it).
type staleLister struct {
	serial, linear []*etcdserverpb.Member
	linearErr      error
}

func (l staleLister) MemberList(_ context.Context, opts ...clientv3.OpOption) (*clientv3.MemberListResponse, error) {
	var op clientv3.Op
	for _, o := range opts {
		o(&op)
	}
	if op.IsSerializable() {
		return &clientv3.MemberListResponse{Members: l.serial}, nil
	}
	if l.linearErr != nil {
		return nil, l.linearErr
	}
	return &clientv3.MemberListResponse{Members: l.linear}, nil
}

// TestPlanRejoinRechecksAChange: a serializable list from a member that
// has not applied the add of this voter's member yet says to add it; the
// linearizable list says it is there, added but never started, so the
// voter joins as it instead of adding itself twice. Without a quorum for
// the linearizable list, the serializable answer stands.
func TestPlanRejoinRechecksAChange(t *testing.T) {
	const token, self, other, third = "tok", "http://127.0.0.1:1", "http://127.0.0.1:2", "http://127.0.0.1:3"
	boot := func(url, name string) *etcdserverpb.Member {
		return &etcdserverpb.Member{ID: bootstrapMemberID(url, token), Name: name, PeerURLs: []string{url}}
	}
	added := &etcdserverpb.Member{ID: bootstrapMemberID(self, token) ^ 1, PeerURLs: []string{self}}
	running := []*etcdserverpb.Member{boot(other, "b"), boot(third, "c")}
	withAdded := append([]*etcdserverpb.Member{added}, running...)
	tests := []struct {
		name string
		l    staleLister
		want rejoinAction
	}{
		{"add not yet applied where read", staleLister{serial: running, linear: withAdded}, rejoinJoin},
		{"no quorum for the recheck", staleLister{serial: running, linearErr: context.DeadlineExceeded}, rejoinAdd},
		{"removed everywhere", staleLister{serial: running, linear: running}, rejoinAdd},
		{"join read at once", staleLister{serial: withAdded, linearErr: context.DeadlineExceeded}, rejoinJoin},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, step, err := planRejoin(t.Context(), tt.l, self, token)
			if err != nil || step.action != tt.want {
				t.Fatalf("planRejoin = %d, %v; want %d", step.action, err, tt.want)
			}
			if step.action == rejoinJoin && len(list.Members) != len(withAdded) {
				t.Errorf("joining from a list of %d members, want the %d that name this voter", len(list.Members), len(withAdded))
			}
		})
	}
}
