package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
)

// TestClusterLeaderKilledFailsOverBeforeItsLease: a leader killed with
// SIGKILL holds the lead until its etcd lease runs out, a minute here,
// unless the other nodes see that its process is gone (its address
// refuses connections) and end its session, or its next process ends
// the session its former one left when it starts. Both ways the site
// leads again well within the lease, and a read sent to another node
// right after the kill, with no retry, is held there until then and
// answered: first the leader is killed and stays down, then the new
// leader is killed and started again at once. Last, the leader is
// paused (SIGSTOP): its address takes connections and nothing answers
// them, so the others end its session once it has answered none of
// their probes for 3 s; the held read is answered and a write through
// another node acknowledged within the lease, and once resumed the node
// serves what was written meanwhile. Then the leader's machine goes down
// (its ports take no connection: they time out, nothing refuses them):
// the other nodes vote to end its session once they have reached it for
// none of 3 s, and the read is answered within the lease again.
func TestClusterLeaderKilledFailsOverBeforeItsLease(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three server processes")
	}
	const lease, within = "60s", 30 * time.Second
	bin := testsite.BuildBinary(t)
	dir := t.TempDir()
	env := clusterEnv()
	cl := testsite.StartClusterWith(t, bin, filepath.Join(dir, "site"), 3, testsite.ClusterOptions{Lease: lease}, env...)
	op := &operator{t: t, bin: bin, cfg: filepath.Join(dir, "client")}
	s3 := make([]*minio.Client, len(cl.Addrs))
	for i, a := range cl.Addrs {
		op.must("alias", "set", fmt.Sprint("n", i), "http://"+a, rootUser, rootSecret)
		c, err := minio.New(a, &minio.Options{Creds: credentials.NewStaticV4(rootUser, rootSecret, ""), Region: "us-east-1"})
		if err != nil {
			t.Fatal(err)
		}
		s3[i] = c
	}
	op.must("mb", "n0/failover")
	body := bytes.Repeat([]byte("acknowledged before the leader died\n"), 4000) // coded across the nodes
	if _, err := s3[0].PutObject(t.Context(), "failover", "obj", bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}

	// failOver reads the object through node via at once, one request
	// with no retry: the node holds it until a leader serves, which
	// must be a node other than dead (killed or paused).
	failOver := func(dead, via int) int {
		t.Helper()
		start := time.Now()
		u, err := s3[via].PresignedGetObject(t.Context(), "failover", "obj", time.Hour, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := (&http.Client{Timeout: within}).Get(u.String())
		if err != nil {
			t.Fatalf("read through node %d right after node %d was stopped: %v", via, dead, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(got, body) {
			t.Fatalf("read through node %d right after node %d was stopped: %d, %d bytes, %v; want the %d bytes written", via, dead, resp.StatusCode, len(got), err, len(body))
		}
		took := time.Since(start)
		next, err := leaderSeenBy(op, cl, via)
		if err != nil || next == dead {
			t.Fatalf("after the read, node %d sees leader %d (%v); want one other than the stopped %d", via, next, err, dead)
		}
		t.Logf("node %d leads; a read through node %d right after node %d was stopped took %v (lease %s)", next, via, dead, took.Round(10*time.Millisecond), lease)
		return next
	}

	first, err := leaderSeenBy(op, cl, 0)
	if err != nil {
		t.Fatal(err)
	}
	cl.KillNode(first)
	second := failOver(first, (first+1)%len(cl.Addrs))
	// The survivors deposed it, and say so (a node that does not answer
	// admin info's question within a second is left out of one answer).
	testsite.Eventually(t, 10*time.Second, func() error {
		out, err := op.run("admin", "info", fmt.Sprint("n", second), "--json")
		if err != nil {
			return err
		}
		var info adminclient.ServerInfo
		if err := json.Unmarshal([]byte(out), &info); err != nil {
			return err
		}
		for _, n := range info.Nodes {
			if n.LeadersDeposed > 0 {
				return nil
			}
		}
		return fmt.Errorf("admin info counts no gone leader deposed by the survivors: %+v", info.Nodes)
	})
	cl.Start() // the first leader comes back, as a follower

	cl.KillNode(second)
	cl.StartNode(second)
	third := failOver(second, (second+1)%len(cl.Addrs))

	cl.PauseNode(third)
	paused := true
	defer func() {
		if paused {
			cl.ResumeNode(third)
		}
	}()
	via := (third + 1) % len(cl.Addrs)
	failOver(third, via)
	during := bytes.Repeat([]byte("acknowledged while the leader was paused\n"), 4000)
	ctx, cancel := context.WithTimeout(t.Context(), within)
	defer cancel()
	if _, err := s3[via].PutObject(ctx, "failover", "during", bytes.NewReader(during), int64(len(during)), minio.PutObjectOptions{}); err != nil {
		t.Fatalf("write through node %d while node %d, the leader, was paused: %v", via, third, err)
	}
	cl.ResumeNode(third)
	paused = false
	testsite.Eventually(t, 30*time.Second, func() error {
		obj, err := s3[third].GetObject(t.Context(), "failover", "during", minio.GetObjectOptions{})
		if err != nil {
			return err
		}
		defer obj.Close()
		got, err := io.ReadAll(obj)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, during) {
			return fmt.Errorf("read %d bytes through the resumed node %d, want the %d written while it was paused", len(got), third, len(during))
		}
		return nil
	})

	// The resumed node's return may move the lead once more (etcd
	// revokes leases when its own raft leader changes): the leader is
	// the one two nodes name twice, a second apart.
	var fourth int
	testsite.Eventually(t, 30*time.Second, func() error {
		var seen []int
		for _, i := range []int{third, (third + 1) % len(cl.Addrs), third, (third + 1) % len(cl.Addrs)} {
			if len(seen) == 2 {
				time.Sleep(time.Second)
			}
			l, err := leaderSeenBy(op, cl, i)
			if err != nil {
				return err
			}
			seen = append(seen, l)
		}
		if slices.Min(seen) != slices.Max(seen) {
			return fmt.Errorf("the nodes name different leaders: %v", seen)
		}
		fourth = seen[0]
		return nil
	})
	via = (fourth + 1) % len(cl.Addrs)
	before := deposedBy(t, op, via, cl.Addrs[fourth])
	cl.CutOff(fourth)
	failOver(fourth, via)
	// The others ended its session by their votes (nothing refused them:
	// its ports take no connection).
	testsite.Eventually(t, 10*time.Second, func() error {
		if after := deposedBy(t, op, via, cl.Addrs[fourth]); after <= before {
			return fmt.Errorf("leaders deposed by the nodes other than the cut-off one: %d, as before the cut", after)
		}
		return nil
	})
}

// deposedBy is how many leaders the nodes other than node skip have
// deposed, as admin info through alias n<via> reports it.
func deposedBy(t *testing.T, op *operator, via int, skip string) int64 {
	t.Helper()
	out, err := op.run("admin", "info", fmt.Sprint("n", via), "--json")
	if err != nil {
		t.Fatal(err)
	}
	var info adminclient.ServerInfo
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, node := range info.Nodes {
		if node.Address != skip {
			n += node.LeadersDeposed
		}
	}
	return n
}
