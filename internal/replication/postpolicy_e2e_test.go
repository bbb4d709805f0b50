package replication_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"mime/multipart"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/twinlake/twinlake/internal/s3api/sigv4"
	"github.com/twinlake/twinlake/internal/testsite"
)

// TestPostUploadReplicates: an object uploaded on site1 by a browser POST
// form (SigV4 policy, metadata, tagging and a public-read ACL) arrives on
// site2 with its metadata, tags and ACL (anonymously readable there).
func TestPostUploadReplicates(t *testing.T) {
	m := testsite.StartMesh(t, 2, fastRetries, nil)
	ctx := context.Background()
	s1 := m.Sites[0].Site
	c1, c2 := sdkFor(s1), sdkFor(m.Sites[1].Site)
	if _, err := c1.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("forms")}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	date := now.Format("20060102T150405Z")
	cred := s1.AccessKey + "/" + date[:8] + "/us-east-1/s3/aws4_request"
	tagging := `<Tagging><TagSet><Tag><Key>src</Key><Value>form</Value></Tag></TagSet></Tagging>`
	doc := fmt.Sprintf(`{"expiration":%q,"conditions":[{"bucket":"forms"},["starts-with","$key","up/"],{"acl":"public-read"},
		["starts-with","$Content-Type","text/"],["starts-with","$x-amz-meta-note",""],{"tagging":%q},
		{"x-amz-algorithm":"AWS4-HMAC-SHA256"},{"x-amz-credential":%q},{"x-amz-date":%q}]}`,
		now.Add(time.Hour).Format(time.RFC3339), tagging, cred, date)
	b64 := base64.StdEncoding.EncodeToString([]byte(doc))
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, f := range [][2]string{
		{"key", "up/${filename}"}, {"acl", "public-read"}, {"Content-Type", "text/plain"}, {"x-amz-meta-note", "via form"},
		{"tagging", tagging}, {"x-amz-algorithm", "AWS4-HMAC-SHA256"}, {"x-amz-credential", cred}, {"x-amz-date", date},
		{"policy", b64}, {"x-amz-signature", sigv4.SignPostPolicy(s1.SecretKey, date[:8], "us-east-1", b64)},
	} {
		mw.WriteField(f[0], f[1])
	}
	fw, _ := mw.CreateFormFile("file", "hello.txt")
	fw.Write([]byte("posted on site1"))
	mw.Close()
	resp, err := s1.HTTPClient.Post(s1.URL+"/forms", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("POST on site1 = %s", resp.Status)
	}
	testsite.Eventually(t, 10*time.Second, func() error {
		_, err := c2.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("forms"), Key: aws.String("up/hello.txt")})
		return err
	})
	head, err := c2.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("forms"), Key: aws.String("up/hello.txt")})
	if err != nil || aws.ToString(head.ContentType) != "text/plain" || head.Metadata["note"] != "via form" {
		t.Fatalf("site2 object: %v %+v", err, head)
	}
	tags, err := c2.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("forms"), Key: aws.String("up/hello.txt")})
	if err != nil || len(tags.TagSet) != 1 || aws.ToString(tags.TagSet[0].Value) != "form" {
		t.Fatalf("site2 tags: %v %+v", err, tags)
	}
	testsite.Eventually(t, 10*time.Second, func() error {
		status, got, err := anonGet(m.Sites[1].Site, "/forms/up/hello.txt")
		if err != nil || status != 200 || got != "posted on site1" {
			return fmt.Errorf("anonymous GET on site2: %d %q %v", status, got, err)
		}
		return nil
	})
}
