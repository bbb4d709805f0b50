package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// rawClient is a plain etcd client of endpoint, closed when t ends.
func rawClient(t *testing.T, endpoint string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 2 * time.Second,
		Logger: newZapLogger(testLogger(t), nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// twoCandidates opens coordinators n1 and n2 of site "test" on endpoint,
// their leases lasting lease, both campaigning, and returns them with the
// one that leads and the other.
func twoCandidates(t *testing.T, lease time.Duration, endpoint string) (coords map[string]*Coordinator, leader, other string) {
	t.Helper()
	coords = map[string]*Coordinator{}
	for _, id := range []string{"n1", "n2"} {
		coords[id] = openCoordinatorWith(t, "test", id, lease, endpoint)
		if err := coords[id].Campaign(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	leader = waitForOneLeader(t, coords)
	other = "n1"
	if leader == other {
		other = "n2"
	}
	return coords, leader, other
}

// TestDepose: a node ends the session of the leader it names, and only
// of that leader: not of another node, not its own. The deposed node was
// alive (its keep-alive would have held the lead for ever): it campaigns
// again, behind the node that takes over.
func TestDepose(t *testing.T) {
	members := startMembers(t, 1)
	coords, leader, other := twoCandidates(t, testLeaseTTL, members[0].ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	if ended, err := coords[other].Depose(ctx, "n3"); ended || err != nil {
		t.Fatalf("Depose of a node that does not lead = %v, %v; want false, nil", ended, err)
	}
	if ended, err := coords[leader].Depose(ctx, other); ended || err != nil {
		t.Fatalf("Depose of a candidate that does not lead = %v, %v; want false, nil", ended, err)
	}
	if ended, err := coords[other].Depose(ctx, other); ended || err == nil {
		t.Fatalf("Depose of itself = %v, %v; want false and an error", ended, err)
	}
	if got := waitForOneLeader(t, coords); got != leader {
		t.Fatalf("after the refused calls the leader is %s, want %s still", got, leader)
	}

	if ended, err := coords[other].Depose(ctx, leader); !ended || err != nil {
		t.Fatalf("Depose of the leader = %v, %v; want true, nil", ended, err)
	}
	if got := waitForOneLeader(t, coords); got != other {
		t.Fatalf("after deposing %s the leader is %s, want %s", leader, got, other)
	}
	waitFor(t, leader+" to register again", func() (bool, string) {
		got, err := memberIDs(coords[other])
		return len(got) == 2, fmt.Sprint(got, err)
	})
}

// TestOpenEndsItsFormerLife: a node killed while it led leaves its
// candidate key behind, under a lease that outlives it. The node's next
// process ends that session when it opens, so the site gets a leader at
// once instead of when the lease runs out (a minute here, longer than
// waitFor waits).
func TestOpenEndsItsFormerLife(t *testing.T) {
	members := startMembers(t, 1)
	cli := rawClient(t, members[0].ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lease, err := cli.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	// What a process of n1 leading the site leaves: its candidate key
	// (concurrency.Election's, named after the lease) and its record.
	prefix := keyRoot + "test/"
	if _, err := cli.Put(ctx, fmt.Sprintf("%s%s/%x", prefix, electionDir, lease.ID), "n1", clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, prefix+membersDir+"n1", "{}", clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}
	n2 := openCoordinator(t, "n2", members[0].ClientURL())
	if id, err := leaderOf(n2); err != nil || id != "n1" {
		t.Fatalf("leader before n1 restarts = %q, %v; want the dead n1", id, err)
	}

	coords := map[string]*Coordinator{"n1": openCoordinator(t, "n1", members[0].ClientURL()), "n2": n2}
	ttl, err := cli.TimeToLive(ctx, lease.ID)
	if err != nil || ttl.TTL != -1 {
		t.Fatalf("the former process's lease after n1 opened: TTL %d, %v; want it ended (-1)", ttl.TTL, err)
	}
	for _, c := range coords {
		if err := c.Campaign(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	waitForOneLeader(t, coords)
}

// TestLostSessionEndsItsLease: a node's session is lost when its
// keep-alives go unanswered for the lease's TTL, which etcd may not have
// seen (they went through a member that stopped answering). The lease
// then outlives the session, and with it the node's candidate key, which
// led: no node serves, and no other candidate leads until the lease runs
// out (a minute here, longer than waitFor waits). The node ends that
// lease once it has a new session, and the next candidate leads at once.
func TestLostSessionEndsItsLease(t *testing.T) {
	members := startMembers(t, 1)
	coords, leader, other := twoCandidates(t, time.Minute, members[0].ClientURL())
	lost := coords[leader].session()
	lost.Orphan() // its keep-alive ends, and the session with it; etcd keeps the lease
	waitFor(t, other+" to lead", func() (bool, string) {
		id, err := leaderOf(coords[other])
		return id == other && coords[other].IsLeader(), fmt.Sprint(id, err)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ttl, err := rawClient(t, members[0].ClientURL()).TimeToLive(ctx, lost.Lease())
	if err != nil || ttl.TTL != -1 {
		t.Fatalf("the lost session's lease: TTL %d, %v; want it ended (-1)", ttl.TTL, err)
	}
	waitFor(t, leader+" to register again", func() (bool, string) {
		got, err := memberIDs(coords[other])
		return len(got) == 2, fmt.Sprint(got, err)
	})
}

// TestVoteDepose: the nodes that cannot reach the leader vote against its
// lead; its session ends with the vote that makes need, not before. A
// vote counts for the lead it named only: a withdrawn vote, or one
// against an earlier lead of the same node, does not count.
func TestVoteDepose(t *testing.T) {
	members := startMembers(t, 1)
	coords := map[string]*Coordinator{}
	for _, id := range []string{"n1", "n2", "n3"} {
		coords[id] = openCoordinatorWith(t, "test", id, testLeaseTTL, members[0].ClientURL())
		if err := coords[id].Campaign(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	leader := waitForOneLeader(t, coords)
	var voters []string
	for _, id := range []string{"n1", "n2", "n3"} {
		if id != leader {
			voters = append(voters, id)
		}
	}
	a, b := coords[voters[0]], coords[voters[1]]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if _, _, err := coords[leader].VoteDepose(ctx, leader, 2); err == nil {
		t.Fatal("a vote against itself was taken")
	}
	if ended, votes, err := a.VoteDepose(ctx, voters[1], 2); ended || votes != 0 || err != nil {
		t.Fatalf("vote against a node that does not lead = %v, %d, %v; want false, 0, nil", ended, votes, err)
	}
	// One vote of two needed; voting again does not count twice.
	for range 2 {
		if ended, votes, err := a.VoteDepose(ctx, leader, 2); ended || votes != 1 || err != nil {
			t.Fatalf("first vote = %v, %d, %v; want false, 1, nil", ended, votes, err)
		}
	}
	// Withdrawn (a reached the leader again): b's vote is the only one.
	if err := a.WithdrawVote(ctx); err != nil {
		t.Fatal(err)
	}
	if ended, votes, err := b.VoteDepose(ctx, leader, 2); ended || votes != 1 || err != nil {
		t.Fatalf("vote after the other was withdrawn = %v, %d, %v; want false, 1, nil", ended, votes, err)
	}
	if got := waitForOneLeader(t, coords); got != leader {
		t.Fatalf("with one vote of two the leader is %s, want %s still", got, leader)
	}
	if ended, votes, err := a.VoteDepose(ctx, leader, 2); !ended || votes != 2 || err != nil {
		t.Fatalf("the second vote = %v, %d, %v; want true, 2, nil", ended, votes, err)
	}
	next := waitForOneLeader(t, coords)
	if next == leader {
		t.Fatalf("after two votes %s still leads", leader)
	}
	// The deposed node campaigns again, behind the others. The votes
	// left name its former lead: when it leads again, they do not count.
	waitFor(t, leader+" to register again", func() (bool, string) {
		got, err := memberIDs(coords[next])
		return len(got) == 3, fmt.Sprint(got, err)
	})
	third := voters[0]
	if third == next {
		third = voters[1]
	}
	if ended, votes, err := coords[third].VoteDepose(ctx, next, 3); ended || votes != 1 || err != nil {
		t.Fatalf("a vote against the new lead = %v, %d, %v; want false, 1 (the votes against the former lead do not count), nil", ended, votes, err)
	}
}
