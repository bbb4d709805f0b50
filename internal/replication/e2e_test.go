package replication_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/sse"
	"github.com/minio/minio-go/v7/pkg/tags"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/testsite"
)

// fast retry policy so tests finish quickly.
var fastRetries = map[string]string{"retry_base_delay": "50ms", "retry_max_delay": "500ms", "max_retries": "50"}

func client(t *testing.T, s *testsite.Site) *minio.Client {
	t.Helper()
	u, _ := url.Parse(s.URL)
	c, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// versions returns "key versionID etag deleteMarker" for every version of
// bucket, sorted.
func versions(ctx context.Context, c *minio.Client, bucket string) ([]string, error) {
	var out []string
	for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{WithVersions: true, Recursive: true}) {
		if o.Err != nil {
			return nil, o.Err
		}
		out = append(out, fmt.Sprintf("%s %s %s %t latest=%t", o.Key, o.VersionID, o.ETag, o.IsDeleteMarker, o.IsLatest))
	}
	sort.Strings(out)
	return out, nil
}

// converged checks that every site holds exactly the same versions of
// bucket, with the same latest version of each key.
func converged(ctx context.Context, sites []*minio.Client, bucket string) error {
	first, err := versions(ctx, sites[0], bucket)
	if err != nil {
		return err
	}
	for i, c := range sites[1:] {
		got, err := versions(ctx, c, bucket)
		if err != nil {
			return fmt.Errorf("site %d: %w", i+2, err)
		}
		if strings.Join(got, "\n") != strings.Join(first, "\n") {
			return fmt.Errorf("site %d differs from site 1: %d vs %d versions; only on site %d: %v; only on site 1: %v",
				i+2, len(got), len(first), i+2, firstFew(missingFrom(got, first), 5), firstFew(missingFrom(first, got), 5))
		}
	}
	return nil
}

// missingFrom returns the lines of a that b lacks.
func missingFrom(a, b []string) []string {
	have := make(map[string]bool, len(b))
	for _, l := range b {
		have[l] = true
	}
	var out []string
	for _, l := range a {
		if !have[l] {
			out = append(out, l)
		}
	}
	return out
}

// firstFew returns at most n of lines.
func firstFew(lines []string, n int) []string { return lines[:min(n, len(lines))] }

func clients(t *testing.T, m *testsite.Mesh) []*minio.Client {
	var out []*minio.Client
	for _, s := range m.Sites {
		out = append(out, client(t, s.Site))
	}
	return out
}

func TestThreeSitesActiveActiveConverge(t *testing.T) {
	m := testsite.StartMesh(t, 3, fastRetries, nil)
	cs := clients(t, m)
	ctx := context.Background()
	if err := cs[0].MakeBucket(ctx, "shared", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error {
		for i, c := range cs {
			v, err := c.GetBucketVersioning(ctx, "shared")
			if err != nil {
				return fmt.Errorf("site %d: %w", i+1, err)
			}
			if v.Status != "Enabled" {
				return fmt.Errorf("site %d: versioning %q", i+1, v.Status)
			}
		}
		return nil
	})
	// Every site writes the same 10 keys concurrently, several times.
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 3 {
				for k := range 10 {
					body := fmt.Sprintf("site%d round%d key%d", i+1, round, k)
					if _, err := c.PutObject(ctx, "shared", fmt.Sprintf("k%02d", k), strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
						errs <- err
						return
					}
				}
			}
			if err := c.RemoveObject(ctx, "shared", fmt.Sprintf("k%02d", 9-i), minio.RemoveObjectOptions{}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	testsite.Eventually(t, 30*time.Second, func() error { return converged(ctx, cs, "shared") })
	// And the data of every latest version reads the same everywhere.
	for k := range 10 {
		key := fmt.Sprintf("k%02d", k)
		var want string
		for i, c := range cs {
			got := readOrMissing(ctx, c, "shared", key)
			if i == 0 {
				want = got
			} else if got != want {
				t.Fatalf("%s: site %d reads %q, site 1 %q", key, i+1, got, want)
			}
		}
	}
	// A received copy says REPLICA; the writer's copy says COMPLETED once sent.
	st, err := cs[1].StatObject(ctx, "shared", "k00", minio.StatObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := st.ReplicationStatus; s != "REPLICA" && s != "COMPLETED" {
		t.Fatalf("replication status %q", s)
	}
}

func readOrMissing(ctx context.Context, c *minio.Client, bucket, key string) string {
	o, err := c.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return "error: " + err.Error()
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	if err != nil {
		return "missing"
	}
	return string(b)
}

func TestPeerDownThenBackDrains(t *testing.T) {
	m := testsite.StartMesh(t, 2, fastRetries, nil)
	cs := clients(t, m)
	ctx := context.Background()
	if err := cs[0].MakeBucket(ctx, "bkt", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error { _, err := cs[1].GetBucketVersioning(ctx, "bkt"); return err })
	eng := m.Sites[0].Server().Replication()
	lastContact := func() time.Time {
		st, err := eng.Status(ctx)
		if err != nil || len(st.Targets) != 1 {
			t.Fatalf("status: %+v, %v", st, err)
		}
		return st.Targets[0].LastContact
	}
	testsite.Eventually(t, 10*time.Second, func() error {
		if lastContact().IsZero() {
			return errors.New("no contact with the peer recorded")
		}
		return nil
	})
	// Cut site2 off: site1 reaches it only through its proxy.
	m.Sites[1].Proxy.Cut()
	big := make([]byte, 300<<10)
	rand.Read(big)
	for i := range 50 {
		body := []byte(fmt.Sprintf("object %d", i))
		if i%10 == 0 {
			body = big
		}
		if _, err := cs[0].PutObject(ctx, "bkt", fmt.Sprintf("o%03d", i), bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Delete markers written while the peer is down arrive too.
	for i := range 5 {
		if err := cs[0].RemoveObject(ctx, "bkt", fmt.Sprintf("o%03d", i), minio.RemoveObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The link's history has its state (and, sampled every 10 s, the hour
	// before) for a dashboard opened now.
	if h := eng.LinkHistory()["site2"]; len(h) == 0 {
		t.Errorf("no history for the link: %v", eng.LinkHistory())
	}
	// While down, the work waits in the journal: no retries burnt.
	testsite.Eventually(t, 5*time.Second, func() error {
		st, err := eng.Status(ctx)
		if err != nil {
			return err
		}
		if len(st.Targets) != 1 || st.Targets[0].Online {
			return errors.New("link still reported up")
		}
		if st.Targets[0].Pending == 0 {
			return errors.New("no backlog")
		}
		if st.Targets[0].Retrying != 0 {
			return fmt.Errorf("%d entries burnt retries while the link was down", st.Targets[0].Retrying)
		}
		return nil
	})
	// The last contact stays where the link went down, while the probes
	// go on failing.
	down := lastContact()
	time.Sleep(300 * time.Millisecond)
	if again := lastContact(); down.IsZero() || !again.Equal(down) {
		t.Fatalf("last contact while down moved from %v to %v", down, again)
	}
	m.Sites[1].Proxy.Restore()
	testsite.Eventually(t, 30*time.Second, func() error { return converged(ctx, cs, "bkt") })
	if !lastContact().After(down) {
		t.Errorf("last contact %v did not move after the link came back (was %v)", lastContact(), down)
	}
	if got := readOrMissing(ctx, cs[1], "bkt", "o010"); got != string(big) {
		t.Fatalf("o010 on site2: %d bytes", len(got))
	}
	testsite.Eventually(t, 10*time.Second, func() error { return testsite.Drained(m.Sites[0].Site) })
}

func TestClockSkewKeepsCausalOrder(t *testing.T) {
	// site2's wall clock is an hour behind site1's.
	skew := func(i int) []testsite.Option {
		if i == 1 {
			return []testsite.Option{testsite.WithClock(func() time.Time { return time.Now().Add(-time.Hour) })}
		}
		return nil
	}
	m := testsite.StartMesh(t, 2, fastRetries, skew)
	cs := clients(t, m)
	ctx := context.Background()
	if err := cs[0].MakeBucket(ctx, "causal", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	put := func(c *minio.Client, body string) minio.UploadInfo {
		info, err := c.PutObject(ctx, "causal", "doc", strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	first := put(cs[0], "written first on site1")
	// site2 sees site1's write, then overwrites it: the overwrite is
	// causally after, so it must win everywhere despite site2's clock.
	testsite.Eventually(t, 10*time.Second, func() error {
		if got := readOrMissing(ctx, cs[1], "causal", "doc"); got != "written first on site1" {
			return fmt.Errorf("site2 reads %q", got)
		}
		return nil
	})
	second := put(cs[1], "written second on site2")
	if second.VersionID == first.VersionID {
		t.Fatal("same version")
	}
	testsite.Eventually(t, 10*time.Second, func() error {
		for i, c := range cs {
			if got := readOrMissing(ctx, c, "causal", "doc"); got != "written second on site2" {
				return fmt.Errorf("site%d reads %q", i+1, got)
			}
		}
		return nil
	})
}

func TestResyncAfterPeerLostData(t *testing.T) {
	m := testsite.StartMesh(t, 2, fastRetries, nil)
	cs := clients(t, m)
	ctx := context.Background()
	if err := cs[0].MakeBucket(ctx, "resync", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		body := fmt.Sprintf("v%d", i)
		if _, err := cs[0].PutObject(ctx, "resync", fmt.Sprintf("k%d", i), strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	testsite.Eventually(t, 20*time.Second, func() error { return converged(ctx, cs, "resync") })
	// site2 loses versions behind replication's back: remove them locally,
	// neither replicated nor remembered as purges.
	for i := range 20 {
		key := fmt.Sprintf("k%d", i)
		for o := range cs[1].ListObjects(ctx, "resync", minio.ListObjectsOptions{Prefix: key, WithVersions: true}) {
			if o.Key != key {
				continue
			}
			if err := m.Sites[1].Server().Objects().DiscardVersion(ctx, "resync", key, o.VersionID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := converged(ctx, cs, "resync"); err == nil {
		t.Fatal("site2 still holds the data")
	}
	eng := m.Sites[0].Server().Replication()
	if _, err := eng.ResyncStart(ctx, "site2"); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 20*time.Second, func() error { return converged(ctx, cs, "resync") })
	job, err := eng.ResyncStatus(ctx, "site2")
	if err != nil {
		t.Fatal(err)
	}
	if job.State != "completed" || job.Queued < 20 {
		t.Fatalf("resync job %+v", job)
	}
}

func TestMismatchDetectionHealsDroppedWork(t *testing.T) {
	// max_retries 0: the first failed retry drops the entry.
	m := testsite.StartMesh(t, 2, map[string]string{"retry_base_delay": "20ms", "retry_max_delay": "50ms", "max_retries": "1"}, nil)
	cs := clients(t, m)
	ctx := context.Background()
	if err := cs[0].MakeBucket(ctx, "mismatch", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error { _, err := cs[1].GetBucketVersioning(ctx, "mismatch"); return err })
	// Every bucket entry delivered first: a late one would re-create the
	// bucket lost below.
	testsite.Eventually(t, 10*time.Second, func() error { return testsite.Drained(m.Sites[0].Site) })
	// site2 loses the bucket behind replication's back, so sends fail
	// (NoSuchBucket) until they are dropped.
	if err := m.Sites[1].Server().Objects().DiscardBucket(ctx, "mismatch"); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		body := fmt.Sprintf("x%d", i)
		if _, err := cs[0].PutObject(ctx, "mismatch", fmt.Sprintf("d%d", i), strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eng := m.Sites[0].Server().Replication()
	testsite.Eventually(t, 10*time.Second, func() error { return testsite.Drained(m.Sites[0].Site) })
	// The work is gone (dropped). Mismatch detection finds the bucket and
	// versions missing on site2 and queues them again.
	testsite.Eventually(t, 20*time.Second, func() error {
		if _, err := eng.CheckMismatches(ctx); err != nil {
			return err
		}
		return converged(ctx, cs, "mismatch")
	})
	// Once converged, a comparison finds nothing: digests are equal.
	n, err := eng.CheckMismatches(ctx)
	if err != nil || n != 0 {
		t.Fatalf("after convergence: %d queued, %v", n, err)
	}
}

// TestBucketSettingsMultipartAndTagsReplicate: bucket tags, policy,
// default encryption and quota set on any site reach every site; a multipart object
// keeps its part layout and ETag on the peer; a tag change of a version
// merges into the peer's copy; a bucket deletion replicates.
func TestBucketSettingsMultipartAndTagsReplicate(t *testing.T) {
	m := testsite.StartMesh(t, 2, fastRetries, nil)
	cs := clients(t, m)
	ctx := context.Background()
	if err := cs[0].MakeBucket(ctx, "settings", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error { _, err := cs[1].GetBucketVersioning(ctx, "settings"); return err })
	// Settings from site2 reach site1, and the other way.
	if err := cs[1].SetBucketTagging(ctx, "settings", mustTags(t, map[string]string{"team": "data"})); err != nil {
		t.Fatal(err)
	}
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["*"]},"Action":["s3:GetObject"],"Resource":["arn:aws:s3:::settings/public/*"]}]}`
	if err := cs[0].SetBucketPolicy(ctx, "settings", policy); err != nil {
		t.Fatal(err)
	}
	if err := cs[0].SetBucketEncryption(ctx, "settings", sseS3Config()); err != nil {
		t.Fatal(err)
	}
	if err := m.Sites[0].Server().Objects().SetBucketQuota(ctx, "settings", 1<<30); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error {
		if b, err := m.Sites[1].Server().Objects().Bucket(ctx, "settings"); err != nil || b.Quota != 1<<30 {
			return fmt.Errorf("site2 quota %d %v", b.Quota, err)
		}
		for i, c := range cs {
			tags, err := c.GetBucketTagging(ctx, "settings")
			if err != nil || tags.ToMap()["team"] != "data" {
				return fmt.Errorf("site%d tags %v %v", i+1, tags, err)
			}
			if p, err := c.GetBucketPolicy(ctx, "settings"); err != nil || p != policy {
				return fmt.Errorf("site%d policy %q %v", i+1, p, err)
			}
			if _, err := c.GetBucketEncryption(ctx, "settings"); err != nil {
				return fmt.Errorf("site%d encryption: %v", i+1, err)
			}
		}
		return nil
	})
	// Multipart: 2 parts of 5 MiB + 1 byte.
	body := bytes.Repeat([]byte("0123456789abcdef"), (10<<20)/16+1)
	info, err := cs[0].PutObject(ctx, "settings", "big", bytes.NewReader(body), int64(len(body)),
		minio.PutObjectOptions{PartSize: 5 << 20, ContentType: "application/x-test"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(info.ETag, "-3") {
		t.Fatalf("multipart ETag %q", info.ETag)
	}
	if err := cs[0].PutObjectTagging(ctx, "settings", "big", mustTags(t, map[string]string{"stage": "raw"}), minio.PutObjectTaggingOptions{}); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 20*time.Second, func() error {
		st, err := cs[1].StatObject(ctx, "settings", "big", minio.StatObjectOptions{})
		if err != nil {
			return err
		}
		if st.ETag != info.ETag || st.VersionID != info.VersionID || st.ContentType != "application/x-test" {
			return fmt.Errorf("peer copy %s %s %s", st.ETag, st.VersionID, st.ContentType)
		}
		tags, err := cs[1].GetObjectTagging(ctx, "settings", "big", minio.GetObjectTaggingOptions{})
		if err != nil || tags.ToMap()["stage"] != "raw" {
			return fmt.Errorf("peer tags %v %v", tags, err)
		}
		return nil
	})
	if got := readOrMissing(ctx, cs[1], "settings", "big"); got != string(body) {
		t.Fatalf("peer data differs (%d bytes)", len(got))
	}
	// Permanent deletes replicate, and then the bucket deletion.
	for o := range cs[0].ListObjects(ctx, "settings", minio.ListObjectsOptions{WithVersions: true, Recursive: true}) {
		if err := cs[0].RemoveObject(ctx, "settings", o.Key, minio.RemoveObjectOptions{VersionID: o.VersionID}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cs[0].RemoveBucket(ctx, "settings"); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 20*time.Second, func() error {
		ok, err := cs[1].BucketExists(ctx, "settings")
		if err != nil || ok {
			return fmt.Errorf("bucket still on site2 (%v)", err)
		}
		return nil
	})
}

// TestReplicationMetrics: the replication metrics are exposed.
func TestReplicationMetrics(t *testing.T) {
	m := testsite.StartMesh(t, 2, fastRetries, nil)
	cs := clients(t, m)
	ctx := context.Background()
	if err := cs[0].MakeBucket(ctx, "metrics", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs[0].PutObject(ctx, "metrics", "k", strings.NewReader("v"), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error { return converged(ctx, cs, "metrics") })
	s := m.Sites[0]
	testsite.Eventually(t, 10*time.Second, func() error {
		body, err := scrape(s.Site)
		if err != nil {
			return err
		}
		for _, name := range []string{
			`twinlake_replication_sent_objects_total{target="site2"}`,
			`twinlake_replication_link_up{target="site2"} 1`,
			`twinlake_replication_backlog_objects{target="site2"} 0`,
			`twinlake_replication_oldest_pending_age_seconds{target="site2"}`,
			`twinlake_replication_retry_queue_entries{target="site2"} 0`,
			`twinlake_replication_link_latency_seconds_bucket`,
			// Counters exist before their first event (a send may have
			// failed and been retried, so only drops are known to be 0).
			`twinlake_replication_dropped_objects_total{target="site2"} 0`,
			`twinlake_replication_failed_objects_total{target="site2"} `,
			`twinlake_replication_mismatches_total{target="site2"} `,
		} {
			if !strings.Contains(body, name) {
				return fmt.Errorf("metrics lack %s", name)
			}
		}
		// The object went in a combined request: one at least, carrying
		// at least as many versions as there were requests.
		reqs, err := metricValue(body, `twinlake_replication_batch_requests_total{target="site2"}`)
		if err != nil {
			return err
		}
		vers, err := metricValue(body, `twinlake_replication_batch_versions_total{target="site2"}`)
		if err != nil {
			return err
		}
		if reqs < 1 || vers < reqs {
			return fmt.Errorf("combined requests %v carrying %v versions", reqs, vers)
		}
		return nil
	})
	body, err := scrape(m.Sites[1].Site)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, "twinlake_replication_received_objects_total") {
		t.Fatal("receiver metrics missing")
	}
}

// scrape reads a site's metrics as the credential the site value holds.
func scrape(s *testsite.Site) (string, error) { return testsite.Scrape(s, s.AccessKey, s.SecretKey) }

func mustTags(t *testing.T, m map[string]string) *tags.Tags {
	t.Helper()
	tg, err := tags.NewTags(m, false)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func sseS3Config() *sse.Configuration { return sse.NewConfigurationSSES3() }

// TestServiceCredentialIsPeerOnly: the site-replication service credential
// exists on every site but opens neither the S3 API, the metrics nor the
// admin API.
func TestServiceCredentialIsPeerOnly(t *testing.T) {
	m := testsite.StartMesh(t, 2, fastRetries, nil)
	st := m.Sites[1].Server().Replication().State()
	if st.ServiceAccessKey == "" {
		t.Fatal("no service credential")
	}
	svc := *m.Sites[1].Site
	svc.AccessKey, svc.SecretKey = st.ServiceAccessKey, st.ServiceSecretKey
	_, err := client(t, &svc).ListBuckets(context.Background())
	if minio.ToErrorResponse(err).Code != "AccessDenied" {
		t.Fatalf("S3 with the service credential: %v", err)
	}
	if _, err := scrape(&svc); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("metrics with the service credential: %v", err)
	}
	adm, err := adminclient.New(svc.URL, adminclient.Credentials{AccessKey: svc.AccessKey, SecretKey: svc.SecretKey}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var ae *adminclient.Error
	if _, err := adm.ReplicateInfo(context.Background()); !errors.As(err, &ae) || ae.StatusCode != http.StatusForbidden {
		t.Fatalf("admin with the service credential: %v", err)
	}
}

// TestDroppedPurgeDoesNotResurrect: a permanent delete that never reached
// a peer (dropped after max_retries) is not undone by that peer's copy:
// the purging site refuses the copy, and mismatch detection sends the
// purge again.
func TestDroppedPurgeDoesNotResurrect(t *testing.T) {
	m := testsite.StartMesh(t, 2, map[string]string{"retry_base_delay": "20ms", "retry_max_delay": "50ms", "max_retries": "1"}, nil)
	cs := clients(t, m)
	ctx := context.Background()
	if err := cs[0].MakeBucket(ctx, "purge", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	info, err := cs[0].PutObject(ctx, "purge", "x", strings.NewReader("doomed"), 6, minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error { return converged(ctx, cs, "purge") })
	// Make site2 refuse what site1 sends for this bucket: flag it a
	// warehouse (site2 is not the Tables replica, so it refuses inbound
	// warehouse objects and purges).
	l1, l2 := m.Sites[0].Server().Objects(), m.Sites[1].Server().Objects()
	setWarehouse := func(on bool) {
		t.Helper()
		if !on {
			// A site that is not the replica takes no warehouse settings
			// from a peer either: unflag site2's copy first.
			if err := l2.UpdateBucket(ctx, "purge", func(b *objects.Bucket) error { b.Warehouse = false; return nil }); err != nil {
				t.Fatal(err)
			}
		}
		if err := l1.UpdateBucket(ctx, "purge", func(b *objects.Bucket) error { b.Warehouse = on; return nil }); err != nil {
			t.Fatal(err)
		}
		testsite.Eventually(t, 10*time.Second, func() error {
			b, err := m.Sites[1].Server().Objects().Bucket(ctx, "purge")
			if err != nil || b.Warehouse != on {
				return fmt.Errorf("site2 warehouse flag %v %v", b.Warehouse, err)
			}
			return nil
		})
	}
	setWarehouse(true)
	if err := cs[0].RemoveObject(ctx, "purge", "x", minio.RemoveObjectOptions{VersionID: info.VersionID}); err != nil {
		t.Fatal(err)
	}
	eng1, eng2 := m.Sites[0].Server().Replication(), m.Sites[1].Server().Replication()
	testsite.Eventually(t, 10*time.Second, func() error { return testsite.Drained(m.Sites[0].Site) })
	setWarehouse(false)
	if _, err := cs[1].StatObject(ctx, "purge", "x", minio.StatObjectOptions{VersionID: info.VersionID}); err != nil {
		t.Fatalf("site2 should still hold the version: %v", err)
	}
	// site2's detector offers its copy back: site1 refuses it.
	if _, err := eng2.CheckMismatches(ctx); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error { return testsite.Drained(m.Sites[1].Site) })
	if _, err := cs[0].StatObject(ctx, "purge", "x", minio.StatObjectOptions{VersionID: info.VersionID}); err == nil {
		t.Fatal("the purged version came back to site1")
	}
	// site1's detector sends the purge again: both converge without it.
	testsite.Eventually(t, 10*time.Second, func() error {
		if _, err := eng1.CheckMismatches(ctx); err != nil {
			return err
		}
		return converged(ctx, cs, "purge")
	})
}
