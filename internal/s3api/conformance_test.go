package s3api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestListBucketsPaged: ListBuckets with max-buckets answers a page and a
// continuation token the SDK's paginator follows to the end; prefix and
// bucket-region narrow the list; a bad max-buckets or token is refused.
func TestListBucketsPaged(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	var want []string
	for i := range 5 {
		name := fmt.Sprintf("page-%d", i)
		mustCreateBucket(t, c, name)
		want = append(want, name)
	}
	mustCreateBucket(t, c, "other")

	all, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil || len(all.Buckets) != 6 || all.ContinuationToken != nil {
		t.Fatalf("unpaged: %+v %v", all, err)
	}
	if r := aws.ToString(all.Buckets[0].BucketRegion); r != "us-east-1" {
		t.Errorf("bucket region %q, want us-east-1", r)
	}

	var got []string
	pages := 0
	p := s3.NewListBucketsPaginator(c, &s3.ListBucketsInput{MaxBuckets: aws.Int32(2), Prefix: aws.String("page-")})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Buckets) > 2 || aws.ToString(page.Prefix) != "page-" {
			t.Fatalf("page %d: %d buckets, prefix %q", pages, len(page.Buckets), aws.ToString(page.Prefix))
		}
		for _, b := range page.Buckets {
			got = append(got, aws.ToString(b.Name))
		}
		pages++
	}
	if strings.Join(got, ",") != strings.Join(want, ",") || pages != 3 {
		t.Fatalf("paged: %v in %d pages, want %v in 3", got, pages, want)
	}

	// A page that ends exactly at the last bucket has no token.
	last, err := c.ListBuckets(ctx, &s3.ListBucketsInput{MaxBuckets: aws.Int32(6)})
	if err != nil || len(last.Buckets) != 6 || last.ContinuationToken != nil {
		t.Fatalf("exact page: %+v %v", last, err)
	}
	elsewhere, err := c.ListBuckets(ctx, &s3.ListBucketsInput{BucketRegion: aws.String("eu-west-3")})
	if err != nil || len(elsewhere.Buckets) != 0 {
		t.Fatalf("other region: %+v %v", elsewhere, err)
	}
	rc := rawClient{t, site}
	for _, q := range []string{"max-buckets=0", "max-buckets=10001", "max-buckets=x", "continuation-token=%25%25"} {
		if st, body := rawGet(t, rc, "/?"+q); st != http.StatusBadRequest || !strings.Contains(body, "InvalidArgument") {
			t.Errorf("%s: %d %s", q, st, body)
		}
	}
}

// TestMissingBucketIsNoSuchBucket: a request that is not allowed, on a
// bucket that does not exist, is told NoSuchBucket (404), anonymous or
// signed, as S3 answers; on a bucket that exists it stays AccessDenied.
func TestMissingBucketIsNoSuchBucket(t *testing.T) {
	site := testsite.Start(t)
	root := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, root, "present")
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/absent/key", 404},
		{http.MethodDelete, "/absent/key", 404},
		{http.MethodGet, "/absent", 404},
		{http.MethodGet, "/present/key", 403},
		{http.MethodPut, "/present/key", 403},
	} {
		if got := anon(t, site, tc.method, tc.path, nil); got != tc.want {
			t.Errorf("anonymous %s %s = %d, want %d", tc.method, tc.path, got, tc.want)
		}
	}
	adm := rootAdmin(t, site)
	if err := adm.AddUser(ctx, "nobody", "nobody-secret-key"); err != nil {
		t.Fatal(err)
	}
	u := userSDK(site, "nobody", "nobody-secret-key")
	if _, err := u.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("absent"), Key: aws.String("k")}); apiCode(err) != "NoSuchBucket" {
		t.Errorf("user without policy, absent bucket: %v", err)
	}
	if _, err := u.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("present"), Key: aws.String("k")}); apiCode(err) != "AccessDenied" {
		t.Errorf("user without policy, present bucket: %v", err)
	}
	if _, err := u.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("absent")}); apiCode(err) != "AccessDenied" {
		t.Errorf("user without policy, create: %v", err)
	}
}

// TestKeyNotUTF8IsInvalidURI: a key that is not UTF-8 names no object
// that can exist, so every request for one is 400 InvalidURI, as S3
// answers, not a lookup's 404.
func TestKeyNotUTF8IsInvalidURI(t *testing.T) {
	site := testsite.Start(t)
	mustCreateBucket(t, sdkClient(site, site.SecretKey), "keys")
	rc := rawClient{t, site}
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		resp, err := http.DefaultClient.Do(rc.sign(rawRequest{method: m, target: "/keys/%AE%8A-"}))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s of a key not UTF-8: %d, want 400", m, resp.StatusCode)
		}
	}
	if st, body := rawGet(t, rc, "/keys/%AE%8A-"); !strings.Contains(body, "<Code>InvalidURI</Code>") {
		t.Errorf("GET: %d %s", st, body)
	}
}
