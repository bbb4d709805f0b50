package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestCoordinatorSingleNode(t *testing.T) {
	m := startMembers(t, 1)[0]
	a := openCoordinator(t, "a", m.ClientURL())

	if id, err := leaderOf(a); !errors.Is(err, ErrNoLeader) {
		t.Fatalf("Leader before any campaign = %q, %v; want ErrNoLeader", id, err)
	}
	if err := a.Campaign(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a to lead", func() (bool, string) {
		id, err := leaderOf(a)
		return a.IsLeader() && id == "a", fmt.Sprintf("IsLeader=%v Leader=%q %v", a.IsLeader(), id, err)
	})
	members, err := a.Members(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := Member{ID: "a", Info: NodeInfo{Address: "a.example:9000", Version: "test", Started: time.Unix(1700000000, 0).UTC()}}
	if len(members) != 1 || members[0].ID != want.ID || members[0].Info.Address != want.Info.Address ||
		members[0].Info.Version != want.Info.Version || !members[0].Info.Started.Equal(want.Info.Started) {
		t.Fatalf("Members = %+v, want [%+v]", members, want)
	}

	// A second node is a candidate behind the first, and leads once the
	// first closes (resigning, not waiting for its lease to expire).
	b := openCoordinator(t, "b", m.ClientURL())
	if err := b.Campaign(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "b registered", func() (bool, string) {
		ids, err := memberIDs(b)
		return slices.Equal(ids, []string{"a", "b"}), fmt.Sprint(ids, err)
	})
	if id, err := leaderOf(b); id != "a" || b.IsLeader() {
		t.Fatalf("b sees leader %q (%v), IsLeader %v; want a, false", id, err, b.IsLeader())
	}
	watch := b.Watch(t.Context())
	waitForWatch(t, watch, "a")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if a.IsLeader() {
		t.Fatal("a still reports leadership after Close")
	}
	select {
	case id := <-watch:
		if id != "b" {
			t.Fatalf("Watch delivered %q after a closed, want b", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Watch delivered no new leader within 5s of a resigning")
	}
	waitFor(t, "b to lead, a gone", func() (bool, string) {
		ids, err := memberIDs(b)
		return b.IsLeader() && slices.Equal(ids, []string{"b"}), fmt.Sprint(b.IsLeader(), ids, err)
	})
	if _, err := a.Members(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Members after Close: %v, want ErrClosed", err)
	}
	if err := a.Campaign(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Campaign after Close: %v, want ErrClosed", err)
	}

	// Another site on the same etcd sees none of this one.
	other := openSiteCoordinator(t, "other", "a", m.ClientURL())
	if id, err := leaderOf(other); !errors.Is(err, ErrNoLeader) {
		t.Fatalf("other site's leader = %q, %v; want ErrNoLeader", id, err)
	}
	if ids, err := memberIDs(other); err != nil || !slices.Equal(ids, []string{"a"}) {
		t.Fatalf("other site's members = %v, %v; want [a]", ids, err)
	}
}

// TestCoordinatorThreeNodes runs a site of three nodes, each with its own
// etcd member and a coordinator talking to it alone, and kills nodes.
func TestCoordinatorThreeNodes(t *testing.T) {
	members := startMembers(t, 3)
	ids := []string{"n1", "n2", "n3"}
	coords := map[string]*Coordinator{}
	for i, id := range ids {
		coords[id] = openCoordinator(t, id, members[i].ClientURL())
		if err := coords[id].Campaign(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	leader := waitForOneLeader(t, coords)
	for _, c := range coords {
		got, err := memberIDs(c)
		if err != nil || !slices.Equal(got, ids) {
			t.Fatalf("Members = %v, %v; want %v", got, err, ids)
		}
	}

	// The leader's node dies: its etcd member first, so that its
	// coordinator can neither resign nor revoke its lease, which must
	// expire instead.
	dead := coords[leader]
	members[slices.Index(ids, leader)].Close()
	delete(coords, leader)
	var watcher *Coordinator
	for _, c := range coords {
		watcher = c
	}
	watch := watcher.Watch(t.Context())
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	start := time.Now()
	_ = dead.Close(ctx) // fails: its etcd is gone
	cancel()
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("Close without etcd took %v, want it bounded by its context", took)
	}
	survivors := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == leader })
	waitFor(t, "the dead node's membership to expire", func() (bool, string) {
		got, err := memberIDs(watcher)
		return slices.Equal(got, survivors), fmt.Sprint(got, err)
	})
	next := waitForOneLeader(t, coords)
	if next == leader {
		t.Fatalf("the dead node %s still leads", leader)
	}
	waitForWatch(t, watch, next)

	// The new leader's session is revoked from outside (as when it was cut
	// off from etcd for longer than its lease): it loses the leadership
	// (its key goes with its session), a new term begins, which the other
	// survivor takes (or, when that one's campaign failed meanwhile, an
	// etcd under load timing it out, the revoked node campaigning again),
	// and it registers and campaigns again.
	other := survivors[0]
	if other == next {
		other = survivors[1]
	}
	termOf := func(c *Coordinator) (int64, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := c.election().Leader(ctx)
		if err != nil {
			return 0, err
		}
		return resp.Kvs[0].CreateRevision, nil
	}
	term, err := termOf(coords[other])
	if err != nil {
		t.Fatal(err)
	}
	revokeSession(t, members[slices.Index(ids, other)].ClientURL(), next)
	waitFor(t, "a new term after "+next+"'s session ended", func() (bool, string) {
		now, err := termOf(coords[other])
		return err == nil && now > term, fmt.Sprintf("term %d (was %d), %v", now, term, err)
	})
	if got := waitForOneLeader(t, coords); got != other {
		t.Logf("%s's campaign lost the new term to %s's, campaigning again", other, next)
	}
	waitFor(t, next+" to register again", func() (bool, string) {
		got, err := memberIDs(coords[other])
		return slices.Equal(got, survivors), fmt.Sprint(got, err)
	})
	// Its campaign shows when the leader steps down: it leads again.
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := coords[other].Close(ctx); err != nil {
		t.Fatalf("Close %s: %v", other, err)
	}
	waitFor(t, next+" to lead again", func() (bool, string) {
		id, err := leaderOf(coords[next])
		return coords[next].IsLeader() && id == next, fmt.Sprintf("IsLeader=%v Leader=%q %v", coords[next].IsLeader(), id, err)
	})
}

// waitForOneLeader waits until exactly one of coords reports leadership and
// all of them name it, and returns it.
func waitForOneLeader(t *testing.T, coords map[string]*Coordinator) string {
	t.Helper()
	var leader string
	waitFor(t, "one leader all agree on", func() (bool, string) {
		var leaders, seen []string
		for id, c := range coords {
			if c.IsLeader() {
				leaders = append(leaders, id)
			}
			l, err := leaderOf(c)
			if err != nil {
				l = err.Error()
			}
			seen = append(seen, id+"->"+l)
		}
		slices.Sort(seen)
		if len(leaders) != 1 {
			return false, fmt.Sprintf("IsLeader on %v; %v", leaders, seen)
		}
		leader = leaders[0]
		for _, s := range seen {
			if !strings.HasSuffix(s, "->"+leader) {
				return false, fmt.Sprintf("IsLeader on %v; %v", leaders, seen)
			}
		}
		return true, ""
	})
	return leader
}

// waitForWatch reads watch until it delivers want.
func waitForWatch(t *testing.T, watch <-chan string, want string) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	var got []string
	for {
		select {
		case id, ok := <-watch:
			if !ok {
				t.Fatalf("Watch closed after %v, before delivering %s", got, want)
			}
			if got = append(got, id); id == want {
				return
			}
		case <-timeout:
			t.Fatalf("Watch delivered %v, never %s", got, want)
		}
	}
}

// revokeSession revokes node id's session lease through its membership
// record, with a client of its own.
func revokeSession(t *testing.T, endpoint, id string) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 2 * time.Second,
		Logger: newZapLogger(testLogger(t), nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, keyRoot+"test/"+membersDir+id)
	if err != nil || len(resp.Kvs) != 1 || resp.Kvs[0].Lease == 0 {
		t.Fatalf("membership record of %s: %v, %v", id, resp, err)
	}
	if _, err := cli.Revoke(ctx, clientv3.LeaseID(resp.Kvs[0].Lease)); err != nil {
		t.Fatalf("revoke %s's lease: %v", id, err)
	}
}

// TestFenceOfALostLeadNeverHoldsAgain: a node that loses the lead (its
// session revoked) and wins it again leads under a new fence; a write
// fenced on the lost lead fails for good, one on the new lead commits. A
// node's site server keeps the fence of the lead it started under, so a
// lead lost and won again starts a new server.
func TestFenceOfALostLeadNeverHoldsAgain(t *testing.T) {
	m := startMembers(t, 1)[0]
	a := openCoordinator(t, "a", m.ClientURL())
	if err := a.Campaign(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a to lead", func() (bool, string) { return a.IsLeader(), "" })
	first, ok := a.Fence()
	if !ok {
		t.Fatal("no fence while leading")
	}
	revokeSession(t, m.ClientURL(), "a")
	var again clientv3.Cmp
	waitFor(t, "a to lead again under a new fence", func() (bool, string) {
		f, ok := a.Fence()
		again = f
		return ok && a.IsLeader() && string(f.KeyBytes()) != string(first.KeyBytes()), fmt.Sprintf("%v %q", ok, f.KeyBytes())
	})
	write := func(fence clientv3.Cmp) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := a.Client().Txn(ctx).If(fence).Then(clientv3.OpPut("/fenced-write", "x")).Commit()
		if err != nil {
			t.Fatal(err)
		}
		return resp.Succeeded
	}
	if write(first) {
		t.Fatal("a write fenced on the lost lead committed")
	}
	if !write(again) {
		t.Fatal("a write fenced on the new lead failed")
	}
}

// The first node to open records the site's node list; a node of the same
// list opens, one of another list is refused before it registers, and
// the record stays the first list's.
func TestOpenClaimsTheSitesNodes(t *testing.T) {
	m := startMembers(t, 1)[0]
	open := func(id string, nodes ...string) (*Coordinator, error) {
		return Open(t.Context(), Config{Endpoints: []string{m.ClientURL()}, Site: "s", NodeID: id, Nodes: nodes,
			LeaseTTL: testLeaseTTL, Logger: testLogger(t)})
	}
	for _, id := range []string{"a:1", "b:1"} {
		c, err := open(id, "a:1", "b:1")
		if err != nil {
			t.Fatalf("node %s of the site: %v", id, err)
		}
		defer c.Close(context.Background())
	}
	if c, err := open("c:1", "a:1", "c:1"); !errors.Is(err, ErrOtherSite) {
		if c != nil {
			c.Close(context.Background())
		}
		t.Fatalf("a node of another list opened: %v, want ErrOtherSite", err)
	}
	cl, err := clientv3.New(clientv3.Config{Endpoints: []string{m.ClientURL()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := cl.Get(t.Context(), keyRoot+"s/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		switch k := string(kv.Key); {
		case k == keyRoot+"s/"+nodesKey && string(kv.Value) != "a:1,b:1":
			t.Errorf("the node list is %q, want the first nodes'", kv.Value)
		case strings.Contains(k, "c:1"):
			t.Errorf("the refused node left %s", k)
		}
	}
	if _, err := open("d:1", "a:1", "d,1"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("a node list with a comma in a name: %v, want ErrInvalidConfig", err)
	}
}

// Storage reports each endpoint's database, use and quota, names those
// that do not answer, and shows a raised NOSPACE alarm.
func TestCoordinatorStorage(t *testing.T) {
	m := startMembers(t, 1)[0]
	down := fmt.Sprintf("http://127.0.0.1:%d", freePorts(t, 1)[0])
	c := openCoordinator(t, "a", m.ClientURL(), down)
	answered, unreachable := c.Storage(t.Context())
	if len(answered) != 1 || !slices.Equal(unreachable, []string{down}) {
		t.Fatalf("Storage = %+v, unreachable %v; want the member, and %s unreachable", answered, unreachable, down)
	}
	st := answered[0]
	if st.Endpoint != m.ClientURL() || st.DBSize <= 0 || st.DBSizeInUse <= 0 || st.DBSizeInUse > st.DBSize || st.Quota != 2<<30 || len(st.Errors) != 0 {
		t.Fatalf("status %+v: want a database in use within its file, etcd's 2 GiB default quota, no errors", st)
	}
	// The alarm etcd raises when the quota is reached.
	id := uint64(m.etcd.Server.MemberID())
	_, err := etcdserverpb.NewMaintenanceClient(c.Client().ActiveConnection()).Alarm(t.Context(),
		&etcdserverpb.AlarmRequest{Action: etcdserverpb.AlarmRequest_ACTIVATE, MemberID: id, Alarm: etcdserverpb.AlarmType_NOSPACE})
	if err != nil {
		t.Fatal(err)
	}
	answered, _ = c.Storage(t.Context())
	if len(answered) != 1 || !slices.ContainsFunc(answered[0].Errors, func(e string) bool { return strings.Contains(e, "NOSPACE") }) {
		t.Fatalf("Storage after NOSPACE = %+v, want the alarm among the errors", answered)
	}
}
