package replication_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/lifecycle"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestLifecycleReplicatesAndConverges: a lifecycle configuration set on
// one site arrives on the peer; both sites run it, and their expiries
// converge to the same versions: the expired objects get one delete marker
// (not one per site), then their versions and the marker left alone go,
// while objects no rule selects stay on both sites.
func TestLifecycleReplicatesAndConverges(t *testing.T) {
	m := testsite.StartMesh(t, 2, fastRetries, nil)
	ctx := context.Background()
	for _, s := range m.Sites {
		if err := s.Server().Settings().Set(ctx, "ilm", map[string]string{"interval": "200ms", "day_length": "2s"}); err != nil {
			t.Fatal(err)
		}
	}
	cs := clients(t, m)
	if err := cs[0].MakeBucket(ctx, "logs", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error { _, err := cs[1].GetBucketVersioning(ctx, "logs"); return err })
	for i := range 3 {
		for _, p := range []string{"tmp/", "keep/"} {
			key := fmt.Sprintf("%s%d", p, i)
			if _, err := cs[i%2].PutObject(ctx, "logs", key, strings.NewReader("data"), 4, minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg := lifecycle.NewConfiguration()
	cfg.Rules = []lifecycle.Rule{{
		ID: "tmp", Status: "Enabled", RuleFilter: lifecycle.Filter{Prefix: "tmp/"},
		Expiration:                  lifecycle.Expiration{Days: 1},
		NoncurrentVersionExpiration: lifecycle.NoncurrentVersionExpiration{NoncurrentDays: 1},
	}}
	if err := cs[0].SetBucketLifecycle(ctx, "logs", cfg); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error {
		got, err := cs[1].GetBucketLifecycle(ctx, "logs")
		if err != nil || len(got.Rules) != 1 || got.Rules[0].ID != "tmp" || got.Rules[0].Expiration.Days != 1 {
			return fmt.Errorf("peer lifecycle %+v %v", got, err)
		}
		return nil
	})
	// Within a few lifecycle days: markers on the tmp/ objects, the same
	// on both sites.
	testsite.Eventually(t, 30*time.Second, func() error {
		a, err := versions(ctx, cs[0], "logs")
		if err != nil {
			return err
		}
		b, err := versions(ctx, cs[1], "logs")
		if err != nil {
			return err
		}
		if !slices.Equal(a, b) {
			return fmt.Errorf("sites differ:\n%v\n%v", a, b)
		}
		markers := 0
		for _, v := range a {
			if strings.Contains(v, " true latest=") { // a delete marker
				markers++
			}
		}
		if markers != 3 {
			return fmt.Errorf("%d delete markers, want 3 (one per expired object): %v", markers, a)
		}
		return nil
	})
	// Then everything of tmp/ goes on both sites, keep/ stays.
	testsite.Eventually(t, 40*time.Second, func() error {
		for i, c := range cs {
			vs, err := versions(ctx, c, "logs")
			if err != nil {
				return err
			}
			if len(vs) != 3 || !strings.HasPrefix(vs[0], "keep/") || !strings.HasPrefix(vs[2], "keep/") { // sorted
				return fmt.Errorf("site%d: %v", i+1, vs)
			}
		}
		return nil
	})
	for i, c := range cs {
		for o := range c.ListObjects(ctx, "logs", minio.ListObjectsOptions{Recursive: true}) {
			if o.Err != nil || !strings.HasPrefix(o.Key, "keep/") {
				t.Fatalf("site%d lists %q %v", i+1, o.Key, o.Err)
			}
		}
	}
}
