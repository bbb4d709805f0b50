package s3api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestListV2EmptyContinuationToken: an empty continuation-token lists from
// the start and is echoed; a malformed one is still refused.
func TestListV2EmptyContinuationToken(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "tokens")
	for _, k := range []string{"a", "b"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("tokens"), Key: aws.String(k), Body: strings.NewReader("x")}); err != nil {
			t.Fatal(err)
		}
	}
	rc := rawClient{t, site}
	st, body := rawGet(t, rc, "/tokens?list-type=2&continuation-token=")
	if st != 200 || !strings.Contains(body, "<ContinuationToken></ContinuationToken>") || !strings.Contains(body, "<Key>a</Key>") || !strings.Contains(body, "<Key>b</Key>") {
		t.Fatalf("empty token: %d %s", st, body)
	}
	if st, body := rawGet(t, rc, "/tokens?list-type=2"); st != 200 || strings.Contains(body, "ContinuationToken") {
		t.Fatalf("no token: %d %s", st, body)
	}
	if st, _ := rawGet(t, rc, "/tokens?list-type=2&continuation-token=%25%25"); st != 400 {
		t.Fatalf("malformed token: %d", st)
	}
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String("tokens"), MaxKeys: aws.Int32(1)})
	n := 0
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Contents)
	}
	if n != 2 {
		t.Fatalf("paged listing saw %d keys", n)
	}
}
