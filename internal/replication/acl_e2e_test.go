package replication_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/twinlake/twinlake/internal/testsite"
)

// anonGet is the status and body of an unsigned GET.
func anonGet(s *testsite.Site, path string) (int, string, error) {
	resp, err := s.HTTPClient.Get(s.URL + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestACLsReplicate: a bucket's canned ACL and objects' canned ACLs (set on
// PUT and changed afterwards) set on site1 arrive on site2 and allow
// anonymous listing and reads there, while a private object stays private.
func TestACLsReplicate(t *testing.T) {
	m := testsite.StartMesh(t, 2, fastRetries, nil)
	ctx := context.Background()
	c1, c2 := sdkFor(m.Sites[0].Site), sdkFor(m.Sites[1].Site)
	for _, b := range []string{"bktacl", "objacl"} {
		if _, err := c1.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
	put := func(bucket, key string, acl types.ObjectCannedACL) {
		t.Helper()
		if _, err := c1.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
			Body: strings.NewReader(bucket + "/" + key), ACL: acl}); err != nil {
			t.Fatal(err)
		}
	}
	put("bktacl", "obj", "")
	put("objacl", "pub", types.ObjectCannedACLPublicRead)
	put("objacl", "later", "")
	put("objacl", "private", "")
	testsite.Eventually(t, 10*time.Second, func() error {
		_, err := c2.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("objacl"), Key: aws.String("private")})
		return err
	})
	if _, err := c1.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("bktacl"), ACL: types.BucketCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	if _, err := c1.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("objacl"), Key: aws.String("later"), ACL: types.ObjectCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	peer := m.Sites[1].Site
	testsite.Eventually(t, 20*time.Second, func() error {
		code, body, err := anonGet(peer, "/bktacl/")
		if err != nil {
			return err
		}
		if code != http.StatusOK || !strings.Contains(body, "<Key>obj</Key>") {
			return fmt.Errorf("site2 anonymous list of the public-read bucket = %d %q", code, body)
		}
		for _, path := range []string{"/objacl/pub", "/objacl/later"} {
			code, body, err := anonGet(peer, path)
			if err != nil {
				return err
			}
			if code != http.StatusOK || body != strings.TrimPrefix(path, "/") {
				return fmt.Errorf("site2 anonymous GET %s = %d %q", path, code, body)
			}
		}
		out, err := c2.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: aws.String("bktacl")})
		if err != nil {
			return err
		}
		if len(out.Grants) != 2 {
			return fmt.Errorf("site2 bucket ACL grants %d", len(out.Grants))
		}
		return nil
	})
	if code, _, err := anonGet(peer, "/bktacl/obj"); err != nil || code != http.StatusForbidden {
		t.Fatalf("site2 anonymous GET of a private object in a public-read bucket = %d %v", code, err)
	}
	if code, _, err := anonGet(peer, "/objacl/private"); err != nil || code != http.StatusForbidden {
		t.Fatalf("site2 anonymous GET of a private object = %d %v", code, err)
	}
	if code, _, err := anonGet(peer, "/objacl/"); err != nil || code != http.StatusForbidden {
		t.Fatalf("site2 anonymous list of a private bucket = %d %v", code, err)
	}
}
