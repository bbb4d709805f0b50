package mixedversion_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/metrics"
	"github.com/twinlake/twinlake/internal/replication"
	"github.com/twinlake/twinlake/internal/testsite"
)

// failedSends reads site's count of failed sends to target.
func failedSends(t *testing.T, s *testsite.Site, target string) string {
	t.Helper()
	text, err := testsite.Scrape(s, "", "")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(metrics.ReplicationFailedObjectsTotal + `\{[^}]*target="` + target + `"[^}]*\} (\S+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no %s for %s", metrics.ReplicationFailedObjectsTotal, target)
	}
	return m[1]
}

func targetOf(st replication.Status, name string) replication.TargetStatus {
	for _, ts := range st.Targets {
		if ts.Name == name {
			return ts
		}
	}
	return replication.TargetStatus{}
}

// TestIAMToAVersion1Peer: a peer of the frozen version 1, which predates
// IAM replication, answers IAM records NoSuchCall. The sender reads that as
// "this peer takes no IAM records", not as a failure or a link fault: the
// records stay pending without spending a retry or counting a failed send,
// status names IAM as not replicable to that peer (through the admin API
// too), and buckets and objects keep replicating. Upgraded, the peer gets
// every record held back and the status clears.
func TestIAMToAVersion1Peer(t *testing.T) {
	var old atomic.Bool
	old.Store(true)
	settings := map[string]string{"retry_base_delay": "20ms", "retry_max_delay": "100ms", "max_retries": "3"}
	m := testsite.StartMesh(t, 2, settings, func(i int) []testsite.Option {
		if i == 1 {
			return []testsite.Option{speaksV1(&old)}
		}
		return nil
	})
	site1, site2 := m.Sites[0], m.Sites[1]
	wantAnswers(t, site2.Site, "")
	ctx := context.Background()
	adm, err := adminclient.New(site1.URL, adminclient.Credentials{AccessKey: site1.AccessKey, SecretKey: site1.SecretKey}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := adm.AddUser(ctx, "alice", "alice-secret-1"); err != nil {
		t.Fatal(err)
	}
	if err := adm.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"readwrite"}, User: "alice"}); err != nil {
		t.Fatal(err)
	}
	repl := site1.Server().Replication()
	testsite.Eventually(t, 10*time.Second, func() error {
		st, err := repl.Status(ctx)
		if err != nil {
			return err
		}
		ts := targetOf(st, "site2")
		if !ts.IAMUnsupported || ts.IAMUnsupportedSince.IsZero() || !slices.Contains(st.IAMUnsupported, "site2") {
			return fmt.Errorf("IAM not reported unsupported: %+v, %v", ts, st.IAMUnsupported)
		}
		return nil
	})
	// Ten probe intervals and a mismatch check later: nothing retried,
	// failed, dropped or queued twice; the two records (user, attachment)
	// pending, the link up.
	time.Sleep(time.Second)
	// Mismatch detection does not queue them again either.
	if _, err := repl.CheckMismatches(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := repl.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ts := targetOf(st, "site2")
	if ts.Retrying != 0 || ts.Pending != 2 || !ts.Online {
		t.Fatalf("site2 target: %+v, want 2 pending, none retrying, online", ts)
	}
	if got := failedSends(t, site1.Site, "site2"); got != "0" {
		t.Fatalf("failed sends to site2 = %s, want 0", got)
	}
	// The admin API (what `admin replicate status` prints) says so too.
	ast, err := adm.ReplicateStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ast.IAMUnsupported, "site2") || len(ast.Targets) != 1 || !ast.Targets[0].IAMUnsupported {
		t.Fatalf("admin status: %+v", ast)
	}
	// Objects still replicate to the old peer.
	c1 := s3(t, site1.Site)
	if err := c1.MakeBucket(ctx, "still", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c1.PutObject(ctx, "still", "k", strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error {
		_, err := s3(t, site2.Site).StatObject(ctx, "still", "k", minio.StatObjectOptions{})
		return err
	})

	// The upgrade: the held records arrive and alice signs on site2.
	old.Store(false)
	site2.Restart()
	wantAnswers(t, site2.Site, "2")
	testsite.Eventually(t, 20*time.Second, func() error {
		u, err := minio.New(site2.Addr, &minio.Options{Creds: credentials.NewStaticV4("alice", "alice-secret-1", ""), Region: "us-east-1"})
		if err != nil {
			return err
		}
		_, err = u.PutObject(ctx, "still", "by-alice", strings.NewReader("y"), 1, minio.PutObjectOptions{})
		return err
	})
	testsite.Eventually(t, 10*time.Second, func() error {
		st, err := repl.Status(ctx)
		if err != nil {
			return err
		}
		ts := targetOf(st, "site2")
		if ts.IAMUnsupported || len(st.IAMUnsupported) != 0 || !st.IAM["site2"] || ts.Pending != 0 || ts.Retrying != 0 {
			return fmt.Errorf("after the upgrade: %+v, unsupported %v, IAM %v", ts, st.IAMUnsupported, st.IAM)
		}
		return nil
	})
}
