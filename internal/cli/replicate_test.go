package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/objcmd"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/testsite"
)

// replEnv is n plain sites named site1..siteN, each with an alias of the
// same name, not yet joined.
type replEnv struct {
	cliEnv
	sites []*testsite.Site
}

func newReplEnv(t *testing.T, n int) replEnv {
	t.Helper()
	e := replEnv{cliEnv: newCLIEnv(t)}
	for i := range n {
		name := fmt.Sprintf("site%d", i+1)
		s := testsite.Start(t, testsite.WithName(name))
		e.sites = append(e.sites, s)
		e.must("alias", "set", name, s.URL, s.AccessKey, s.SecretKey)
	}
	return e
}

// fails runs a command that must fail with a one-line error containing
// every want.
func (e replEnv) fails(t *testing.T, args []string, want ...string) {
	t.Helper()
	out, err := e.run(args...)
	if err == nil {
		t.Fatalf("twinlake %s succeeded:\n%s", strings.Join(args, " "), out)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("twinlake %s: error is not one line: %q", strings.Join(args, " "), err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("twinlake %s: error %q lacks %q", strings.Join(args, " "), err, w)
		}
	}
}

// contains runs a command and fails unless its output has every want.
func (e replEnv) contains(t *testing.T, args []string, want ...string) string {
	t.Helper()
	out := e.must(args...)
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("twinlake %s: output lacks %q:\n%s", strings.Join(args, " "), w, out)
		}
	}
	return out
}

// decode runs a --json command and decodes its output into v.
func decode[T any](t *testing.T, e replEnv, args ...string) T {
	t.Helper()
	var v T
	out := e.must(append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("twinlake %s --json: %v\n%s", strings.Join(args, " "), err, out)
	}
	return v
}

// eventually polls cond for up to fifteen seconds.
func eventually(t *testing.T, cond func() error) {
	t.Helper()
	testsite.Eventually(t, 15*time.Second, cond)
}

// statJSON stats an object through the CLI.
func (e replEnv) statJSON(target string) (objcmd.ObjectStat, error) {
	var s objcmd.ObjectStat
	out, err := e.run("stat", "--json", target)
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal([]byte(out), &s)
}

func TestAdminReplicateAddInfoStatusRm(t *testing.T) {
	e := newReplEnv(t, 3)
	e.contains(t, []string{"admin", "replicate", "info", "site1"}, "SiteReplication is not enabled")
	e.contains(t, []string{"admin", "replicate", "status", "site1"}, "SiteReplication is not enabled")

	out := e.contains(t, []string{"admin", "replicate", "add", "site1", "site2", "site3"},
		"Requested sites were configured for replication successfully.", "Site  ", "Deployment ID", e.sites[2].URL)
	for _, n := range []string{"site1", "site2", "site3"} {
		if !strings.Contains(out, "\n"+n+" ") {
			t.Errorf("add does not list %s:\n%s", n, out)
		}
	}
	e.fails(t, []string{"admin", "replicate", "add", "site1", "site2"}, "admin replicate add site1 site2", "already in a site replication configuration")

	info := decode[adminclient.ReplicationInfo](t, e, "admin", "replicate", "info", "site2")
	ids := map[string]string{}
	for i, s := range info.Sites {
		if s.Name != fmt.Sprintf("site%d", i+1) || s.Endpoint != e.sites[i].URL || s.DeploymentID == "" {
			t.Errorf("site %d = %+v", i+1, s)
		}
		ids[s.Name] = s.DeploymentID
	}
	if !info.Enabled || len(info.Sites) != 3 || !strings.HasPrefix(info.ServiceAccount, "site-replicator-") {
		t.Fatalf("info --json = %+v", info)
	}
	e.contains(t, []string{"admin", "replicate", "info", "site1"}, "SiteReplication enabled for:", ids["site1"], ids["site3"],
		"Service account: "+info.ServiceAccount)

	// An object written on site1 reaches the peers as a REPLICA.
	src := writeFile(t, filepath.Join(t.TempDir(), "cat.txt"), "meow")
	e.must("mb", "site1/photos")
	e.must("cp", src, "site1/photos/cat.txt")
	eventually(t, func() error {
		s, err := e.statJSON("site2/photos/cat.txt")
		if err != nil {
			return err
		}
		if s.ReplicationStatus != "REPLICA" || s.Origin != ids["site1"] || s.ModTime == 0 {
			return fmt.Errorf("site2 stat = %+v", s)
		}
		return nil
	})
	e.contains(t, []string{"stat", "site2/photos/cat.txt"}, "Replication Status : REPLICA", "Origin Site : "+ids["site1"], "HLC Mod Time : ")
	eventually(t, func() error {
		s, err := e.statJSON("site1/photos/cat.txt")
		if err != nil {
			return err
		}
		want := map[string]string{ids["site2"]: "COMPLETED", ids["site3"]: "COMPLETED"}
		if s.ReplicationStatus != "COMPLETED" || !maps.Equal(s.ReplicationTargets, want) ||
			s.ReplicaTimestamp.IsZero() || s.ReplicationActivity.IsZero() {
			return fmt.Errorf("site1 stat = %+v", s)
		}
		return nil
	})
	e.contains(t, []string{"stat", "site1/photos/cat.txt"}, "Replication Status : COMPLETED",
		"Replication Targets :\n", "  "+ids["site2"]+": COMPLETED\n", "  "+ids["site3"]+": COMPLETED\n", "Replica Timestamp : ", "Replication Activity : ")

	eventually(t, func() error {
		st := decode[adminclient.ReplicationStatus](t, e, "admin", "replicate", "status", "site1")
		if !st.Enabled || st.Site != "site1" || len(st.Targets) != 2 || len(st.Buckets) != 1 || len(st.Unreachable) != 0 {
			return fmt.Errorf("status --json = %+v", st)
		}
		if b := st.Buckets[0]; b.Bucket != "photos" || !maps.Equal(b.Sites, map[string]bool{"site1": true, "site2": true, "site3": true}) {
			return fmt.Errorf("bucket sync = %+v", b)
		}
		for _, tg := range st.Targets {
			if !tg.Online || tg.Pending != 0 || tg.Retrying != 0 {
				return fmt.Errorf("target = %+v", tg)
			}
		}
		return nil
	})
	out = e.contains(t, []string{"admin", "replicate", "status", "site1"}, "seen from site1", "1/1 buckets in sync",
		"IAM: in sync on 3/3 sites", "Bucket  site1  site2  site3", "Peer   Link    Latency", "Retry queue", "0 (0B)")
	if !strings.Contains(out, "photos  ✔      ✔      ✔") || strings.Count(out, "online") != 2 {
		t.Errorf("status:\n%s", out)
	}

	bs := decode[adminclient.BucketReplicationStatus](t, e, "replicate", "status", "site1/photos")
	if bs.Bucket != "photos" || len(bs.Targets) != 2 || bs.Targets[0].Name == bs.Targets[1].Name {
		t.Errorf("replicate status --json = %+v", bs)
	}
	e.contains(t, []string{"replicate", "status", "site1/photos"}, "Replication of site1/photos:", "site2", "site3", "online")
	e.contains(t, []string{"replicate", "backlog", "site1/photos"}, "No entries")
	if out := e.must("replicate", "backlog", "site1/photos", "--json"); out != "" {
		t.Errorf("backlog --json of an empty queue = %q", out)
	}
	e.fails(t, []string{"replicate", "status", "site1/photos/cat.txt"}, "want ALIAS/BUCKET")
	e.fails(t, []string{"replicate", "backlog", "site1/nosuch"}, "NoSuchBucket")
	e.fails(t, []string{"replicate", "backlog", "site1"}, "want ALIAS/BUCKET")

	e.fails(t, []string{"admin", "replicate", "rm", "site1"}, "name the sites")
	e.fails(t, []string{"admin", "replicate", "rm", "site1", "--all"}, "--force")
	e.fails(t, []string{"admin", "replicate", "rm", "site1", "site2", "--all", "--force"}, "not both")
	e.fails(t, []string{"admin", "replicate", "rm", "site1", "nosuch"}, `no site "nosuch"`)
	out = e.contains(t, []string{"admin", "replicate", "rm", "site1", "site3"}, "Removed site3 from site replication.", "site1", "site2")
	if strings.Contains(out, e.sites[2].URL) {
		t.Errorf("rm site3 still lists it:\n%s", out)
	}
	e.contains(t, []string{"admin", "replicate", "info", "site3"}, "SiteReplication is not enabled")
	e.contains(t, []string{"admin", "replicate", "rm", "site1", "--all", "--force"}, "All sites were removed")
	for _, n := range []string{"site1", "site2"} {
		e.contains(t, []string{"admin", "replicate", "info", n}, "SiteReplication is not enabled")
		if info := decode[adminclient.ReplicationInfo](t, e, "admin", "replicate", "info", n); info.Enabled || len(info.Sites) != 0 {
			t.Errorf("info %s after rm --all = %+v", n, info)
		}
	}
	e.fails(t, []string{"admin", "replicate", "rm", "site1", "--all", "--force"}, "ReplicationNotConfigured", "admin replicate add")
}

func TestAdminReplicateAddRefusesSiteWithData(t *testing.T) {
	e := newReplEnv(t, 2)
	e.must("mb", "site2/old")
	e.fails(t, []string{"admin", "replicate", "add", "site1", "site2"},
		"admin replicate add site1 site2: ", "SiteHasData", "site site2 holds 1 bucket(s) (old)", "only the first alias may hold buckets")
	for _, n := range []string{"site1", "site2"} {
		e.contains(t, []string{"admin", "replicate", "info", n}, "SiteReplication is not enabled")
	}
	e.fails(t, []string{"admin", "replicate", "add", "site1", "nosuch"}, "no such alias")
	e.fails(t, []string{"admin", "replicate", "add", "site1"}, "requires at least 2 arg")
	// The site holding the data may join others when it comes first.
	e.contains(t, []string{"admin", "replicate", "add", "site2", "site1"}, "configured for replication successfully")
	eventually(t, func() error { _, err := e.run("stat", "site1/old"); return err })
}

func TestReplicateBacklogListsRetries(t *testing.T) {
	e := newReplEnv(t, 2)
	e.must("admin", "config", "set", "site1", "replication", "max_retries=50", "retry_base_delay=1h", "retry_max_delay=1h")
	e.must("admin", "replicate", "add", "site1", "site2")
	e.must("mb", "site1/retry")
	eventually(t, func() error { _, err := e.run("stat", "site2/retry"); return err })

	// Remove the bucket on site2 behind replication's back (with a deletion
	// time ahead, so nothing re-creates it): sends into it now fail.
	if _, err := e.sites[1].Server().Replication().ReceiveBucket(t.Context(), objects.Bucket{Name: "retry"}, true,
		time.Now().Add(time.Hour).UnixNano()); err != nil {
		t.Fatal(err)
	}
	e.must("cp", writeFile(t, filepath.Join(t.TempDir(), "k"), "0123456789"), "site1/retry/k")
	var entry adminclient.BacklogEntry
	eventually(t, func() error {
		out, err := e.run("replicate", "backlog", "site1/retry", "--json")
		if err != nil {
			return err
		}
		lines := jsonLines(t, out)
		if len(lines) != 1 {
			return fmt.Errorf("backlog = %q", out)
		}
		if err := json.Unmarshal([]byte(out), &entry); err != nil {
			return err
		}
		if entry.RetryCount < 1 || !strings.Contains(entry.Error, "NoSuchBucket") {
			return fmt.Errorf("entry = %+v", entry)
		}
		return nil
	})
	if entry.Target != "site2" || entry.Op != "version" || entry.Bucket != "retry" || entry.Key != "k" || entry.VersionID == "" ||
		entry.Size != 10 || time.Since(entry.FailedAt) > time.Minute || time.Until(entry.NextRetry) < 50*time.Minute {
		t.Errorf("entry = %+v", entry)
	}
	out := e.contains(t, []string{"replicate", "backlog", "site1/retry"}, "Peer   Op       Key  Version", "site2  version  k    "+entry.VersionID,
		"NoSuchBucket", "\n1 entry")
	if !strings.Contains(out, " in 59m") && !strings.Contains(out, " in 1h0m0s ") {
		t.Errorf("backlog does not show the next retry an hour ahead:\n%s", out)
	}
	e.contains(t, []string{"replicate", "backlog", "site1/retry", "--limit", "1"}, "1 entry")
	e.fails(t, []string{"replicate", "backlog", "site1/retry", "--limit", "-1"}, "--limit")

	bs := decode[adminclient.BucketReplicationStatus](t, e, "replicate", "status", "site1/retry")
	if len(bs.Targets) != 1 || bs.Targets[0].Retrying != 1 || bs.Targets[0].RetryingBytes != 10 || bs.Targets[0].Lag <= 0 {
		t.Errorf("replicate status --json = %+v", bs)
	}
	e.contains(t, []string{"replicate", "status", "site1/retry"}, "site2  online", "1 (10B)")
	e.contains(t, []string{"admin", "replicate", "status", "site1"}, "0/1 buckets in sync", "retry   ✔      ✘", "1 (10B)")
	e.contains(t, []string{"stat", "site1/retry/k"}, "Replication Status : FAILED")
}

func TestAdminReplicateResync(t *testing.T) {
	e := newReplEnv(t, 2)
	e.must("mb", "site1/docs")
	src := writeFile(t, filepath.Join(t.TempDir(), "f"), "data")
	for _, k := range []string{"a", "b", "c"} {
		e.must("cp", src, "site1/docs/"+k)
	}
	e.must("admin", "replicate", "add", "site1", "site2")
	// Adding sites resyncs every new peer; wait for that job to finish.
	waitResync := func() adminclient.ResyncStatus {
		var job adminclient.ResyncStatus
		eventually(t, func() error {
			job = decode[adminclient.ResyncStatus](t, e, "admin", "replicate", "resync", "status", "site1", "site2")
			if job.State != "completed" {
				return fmt.Errorf("resync = %+v", job)
			}
			return nil
		})
		return job
	}
	first := waitResync()

	// The job reports completed a moment before its worker lets go of the
	// peer, so start may still find it running just then.
	var out string
	eventually(t, func() error {
		var err error
		out, err = e.run("admin", "replicate", "resync", "start", "site1", "site2")
		return err
	})
	for _, w := range []string{"Resync of site1 to site2 started.", "State:      running"} {
		if !strings.Contains(out, w) {
			t.Errorf("resync start output lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, first.ID) {
		t.Errorf("resync start reused job %s:\n%s", first.ID, out)
	}
	job := waitResync()
	if job.ID == first.ID || job.Buckets != 1 || job.Queued != 3 || job.Bytes != 12 || job.Finished.Before(job.Started) || job.LastError != "" {
		t.Errorf("resync job = %+v", job)
	}
	e.contains(t, []string{"admin", "replicate", "resync", "status", "site1", "site2"}, "Resync of site1 to site2:", "ID:         "+job.ID,
		"State:      completed", "Buckets:    1", "Queued:     3 objects, 12B", "Peer:       site2 (")
	e.contains(t, []string{"admin", "replicate", "resync", "cancel", "site1", "site2"}, "was not running (completed): nothing to cancel")

	// --wait follows a new resync to its end and prints it as status does.
	var waited adminclient.ResyncStatus
	eventually(t, func() error {
		out, err := e.run("admin", "replicate", "resync", "start", "site1", "site2", "--wait", "--json")
		if err == nil {
			err = json.Unmarshal([]byte(out), &waited)
		}
		return err
	})
	if waited.State != "completed" || waited.ID == job.ID || waited.Queued != 3 {
		t.Errorf("resync start --wait ended with %+v", waited)
	}
	e.fails(t, []string{"admin", "replicate", "resync", "start", "site1", "nosuch"}, `no peer "nosuch"`)
	e.fails(t, []string{"admin", "replicate", "resync", "status", "site1", "site1"}, "no peer")
	e.fails(t, []string{"admin", "replicate", "resync", "stop", "site1", "site2"}, `unknown command "stop"`)
	e.fails(t, []string{"replicate", "bogus", "site1/docs"}, `unknown command "bogus"`)
	eventually(t, func() error {
		_, err := e.statJSON("site2/docs/c")
		return err
	})
}

// TestReplicateStatusShowsWhyRetrying: while a peer refuses work (a
// warehouse sent to a site that is not the Tables replica), replicate
// status names the refusal beside the retry queue; once the peer takes
// the work, the queue and the error are gone.
func TestReplicateStatusShowsWhyRetrying(t *testing.T) {
	e := newReplEnv(t, 2)
	// Retried often, and never dropped while the test looks (10 retries
	// by default would drop the refused work within about 2 s).
	e.must("admin", "config", "set", "site1", "replication", "retry_base_delay=50ms", "retry_max_delay=200ms", "max_retries=1000")
	// The warehouse exists before the join, so the peer sees it flagged
	// from its first copy.
	e.must("table", "warehouse", "create", "site1", "lake")
	e.must("admin", "replicate", "add", "site1", "site2")
	var refused adminclient.ReplicationTarget
	eventually(t, func() error {
		st := decode[adminclient.ReplicationStatus](t, e, "admin", "replicate", "status", "site1")
		if len(st.Targets) != 1 || st.Targets[0].Retrying == 0 || st.Targets[0].LastError == "" {
			return fmt.Errorf("targets = %+v", st.Targets)
		}
		refused = st.Targets[0]
		return nil
	})
	if !strings.Contains(refused.LastError, "not the Tables replica") || refused.LastErrorTime.IsZero() {
		t.Fatalf("the retry queue's reason: %+v", refused)
	}
	e.contains(t, []string{"admin", "replicate", "status", "site1"}, "Last error to site2 (", "not the Tables replica")

	e.must("admin", "config", "set", "site2", "tables", "replica_catalog=on")
	eventually(t, func() error {
		st := decode[adminclient.ReplicationStatus](t, e, "admin", "replicate", "status", "site1")
		if tg := st.Targets[0]; tg.Retrying != 0 || tg.Pending != 0 || tg.LastError != "" {
			return fmt.Errorf("target = %+v", tg)
		}
		return nil
	})
	if out := e.must("admin", "replicate", "status", "site1"); strings.Contains(out, "Last error") {
		t.Fatalf("status after the peer took the work:\n%s", out)
	}
}
