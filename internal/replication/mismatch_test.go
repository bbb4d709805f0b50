package replication_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
)

// metricValue returns the value of the sample whose line starts with
// name (labels included), or an error if there is none.
func metricValue(body, name string) (float64, error) {
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(rest), 64)
		}
	}
	return 0, fmt.Errorf("no sample %s", name)
}

// TestDroppedWorkHealsAtRuntimeInterval: work dropped after max_retries
// is counted once per version, no gauge goes negative, and a
// mismatch_interval set at runtime with `admin config set` applies at once:
// the dropped versions arrive within about one interval, with no restart
// and no manual comparison.
func TestDroppedWorkHealsAtRuntimeInterval(t *testing.T) {
	const versions = 60
	m := testsite.StartMesh(t, 2, map[string]string{"retry_base_delay": "10ms", "retry_max_delay": "20ms", "max_retries": "2"}, nil)
	cs := clients(t, m)
	ctx := context.Background()
	if err := cs[0].MakeBucket(ctx, "dropped", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error { _, err := cs[1].GetBucketVersioning(ctx, "dropped"); return err })
	// Every bucket entry (creation, versioning) delivered first: a late one
	// would re-create the bucket removed below.
	testsite.Eventually(t, 10*time.Second, func() error { return testsite.Drained(m.Sites[0].Site) })
	// site2 loses the bucket behind replication's back: every send fails
	// (NoSuchBucket) until it is dropped. Meanwhile the link goes down and
	// comes back, as in an outage.
	if err := m.Sites[1].Server().Objects().DiscardBucket(ctx, "dropped"); err != nil {
		t.Fatal(err)
	}
	m.Sites[1].Proxy.Cut()
	for i := range versions {
		body := fmt.Sprintf("v%d", i)
		if _, err := cs[0].PutObject(ctx, "dropped", fmt.Sprintf("k%02d", i%20), strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	m.Sites[1].Proxy.Restore()
	testsite.Eventually(t, 20*time.Second, func() error { return testsite.Drained(m.Sites[0].Site) })
	body, err := scrape(m.Sites[0].Site)
	if err != nil {
		t.Fatal(err)
	}
	dropped, err := metricValue(body, `twinlake_replication_dropped_objects_total{target="site2"}`)
	if err != nil || dropped != versions {
		t.Fatalf("dropped counter %v (%v), want %d: each version is dropped once", dropped, err, versions)
	}
	for _, g := range []string{"backlog_objects", "retry_queue_entries", "backlog_bytes"} {
		if v, err := metricValue(body, `twinlake_replication_`+g+`{target="site2"}`); err != nil || v != 0 {
			t.Fatalf("%s = %v (%v), want 0", g, v, err)
		}
	}
	// The default interval (5m) is in force; set a short one at runtime.
	// The next comparison finds the bucket and its versions missing on
	// site2 and sends them again.
	adm, err := adminclient.New(m.Sites[0].URL, adminclient.Credentials{AccessKey: m.Sites[0].AccessKey, SecretKey: m.Sites[0].SecretKey}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.SetConfig(ctx, "replication", map[string]string{"mismatch_interval": "1s"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	testsite.Eventually(t, 15*time.Second, func() error { return converged(ctx, cs, "dropped") })
	t.Logf("dropped versions healed %v after mismatch_interval=1s was set", time.Since(start).Round(time.Millisecond))
}
