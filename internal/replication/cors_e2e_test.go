package replication_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/cors"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestBucketCORSReplicates: a CORS configuration set on one site arrives on
// the peer, which then answers the browser's preflight with it; a change
// of another setting on the peer meanwhile does not undo it, and its
// removal on the peer removes it at the origin.
func TestBucketCORSReplicates(t *testing.T) {
	m := testsite.StartMesh(t, 2, fastRetries, nil)
	cs := clients(t, m)
	ctx := context.Background()
	if err := cs[0].MakeBucket(ctx, "webapp", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error { _, err := cs[1].GetBucketVersioning(ctx, "webapp"); return err })

	rules := []cors.Rule{{ID: "spa", AllowedOrigin: []string{"https://*.example.com"}, AllowedMethod: []string{"GET", "PUT"},
		AllowedHeader: []string{"*"}, ExposeHeader: []string{"ETag"}, MaxAgeSeconds: 120}}
	if err := cs[0].SetBucketCors(ctx, "webapp", cors.NewConfig(rules)); err != nil {
		t.Fatal(err)
	}
	if err := cs[1].SetBucketTagging(ctx, "webapp", mustTags(t, map[string]string{"team": "web"})); err != nil {
		t.Fatal(err)
	}
	preflight := func(s *testsite.Member) (int, string) {
		req, _ := http.NewRequest(http.MethodOptions, s.URL+"/webapp/index.html", nil)
		req.Header.Set("Origin", "https://shop.example.com")
		req.Header.Set("Access-Control-Request-Method", "PUT")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin")
	}
	testsite.Eventually(t, 10*time.Second, func() error {
		for i, c := range cs {
			got, err := c.GetBucketCors(ctx, "webapp")
			if err != nil || got == nil || !reflect.DeepEqual(got.CORSRules, rules) {
				return fmt.Errorf("site%d cors %+v %v", i+1, got, err)
			}
			tags, err := c.GetBucketTagging(ctx, "webapp")
			if err != nil || tags.ToMap()["team"] != "web" {
				return fmt.Errorf("site%d tags %v %v", i+1, tags, err)
			}
		}
		return nil
	})
	if st, allow := preflight(m.Sites[1]); st != 200 || allow != "https://shop.example.com" {
		t.Fatalf("preflight on the peer: %d %q", st, allow)
	}

	if err := cs[1].SetBucketCors(ctx, "webapp", nil); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error {
		if got, err := cs[0].GetBucketCors(ctx, "webapp"); err != nil || got != nil {
			return fmt.Errorf("site1 still has cors %+v %v", got, err)
		}
		return nil
	})
	if st, _ := preflight(m.Sites[0]); st != 403 {
		t.Fatalf("preflight at the origin after the peer removed CORS: %d", st)
	}
}
