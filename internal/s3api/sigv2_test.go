package s3api_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestSigV2: minio-go signing with Signature Version 2 (as older tools and
// s3cmd do) reads and writes, and its presigned V2 URLs work for GET and
// PUT; a V2 signature made with the wrong secret is refused.
func TestSigV2(t *testing.T) {
	site := testsite.Start(t)
	u, _ := url.Parse(site.URL)
	v2 := func(secret string) *minio.Client {
		c, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV2(site.AccessKey, secret, ""), BucketLookup: minio.BucketLookupPath})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := v2(site.SecretKey)
	ctx := context.Background()
	if err := c.MakeBucket(ctx, "vtwo", minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("MakeBucket over SigV2: %v", err)
	}
	body := []byte("signed the old way")
	if _, err := c.PutObject(ctx, "vtwo", "dir/obj one", bytes.NewReader(body), int64(len(body)),
		minio.PutObjectOptions{ContentType: "text/plain", UserMetadata: map[string]string{"colour": "blue"}}); err != nil {
		t.Fatalf("PutObject over SigV2: %v", err)
	}
	if got := minioRead(t, c, "vtwo", "dir/obj one", minio.GetObjectOptions{}); !bytes.Equal(got, body) {
		t.Fatalf("GetObject over SigV2: %q", got)
	}
	if keys := listKeys(t, c, "vtwo", minio.ListObjectsOptions{Recursive: true}); len(keys) != 1 || keys[0] != "dir/obj one" {
		t.Fatalf("listing over SigV2: %q", keys)
	}
	if _, err := c.StatObject(ctx, "vtwo", "dir/obj one", minio.StatObjectOptions{}); err != nil {
		t.Fatalf("HEAD over SigV2: %v", err)
	}

	get, err := c.PresignedGetObject(ctx, "vtwo", "dir/obj one", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !get.Query().Has("AWSAccessKeyId") || !get.Query().Has("Signature") {
		t.Fatalf("not a SigV2 presigned URL: %s", get)
	}
	resp, err := http.Get(get.String())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(got, body) {
		t.Fatalf("presigned V2 GET: %d %q", resp.StatusCode, got)
	}
	put, err := c.PresignedPutObject(ctx, "vtwo", "uploaded", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPut, put.String(), strings.NewReader("via presigned V2 PUT"))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("presigned V2 PUT: %d", resp.StatusCode)
	}
	if got := minioRead(t, c, "vtwo", "uploaded", minio.GetObjectOptions{}); string(got) != "via presigned V2 PUT" {
		t.Fatalf("after presigned V2 PUT: %q", got)
	}
	// Tampering with the presigned URL, or the wrong secret, is refused.
	tampered := strings.Replace(get.String(), "obj%20one", "obj%20two", 1)
	if resp, err := http.Get(tampered); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("tampered presigned V2 URL: %v %v", resp, err)
	}
	if _, err := v2("wrong-secret").StatObject(ctx, "vtwo", "uploaded", minio.StatObjectOptions{}); minio.ToErrorResponse(err).StatusCode != http.StatusForbidden {
		t.Fatalf("SigV2 with the wrong secret: %v", err)
	}
}
