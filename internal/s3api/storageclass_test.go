package s3api_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/testsite"
)

// A write may name STANDARD or REDUCED_REDUNDANCY, MinIO's two storage
// classes: REDUCED_REDUNDANCY is kept and answered on HEAD, GET,
// GetObjectAttributes and through a copy, STANDARD is the default S3
// leaves unsaid, and any other class is InvalidStorageClass.
func TestStorageClasses(t *testing.T) {
	site := testsite.Start(t)
	ctx := context.Background()
	c, _ := minioClient(t, site)
	if err := c.MakeBucket(ctx, "classes", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	body := []byte("some bytes")
	put := func(key, class string) error {
		_, err := c.PutObject(ctx, "classes", key, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{StorageClass: class})
		return err
	}
	class := func(key string) string {
		t.Helper()
		st, err := c.StatObject(ctx, "classes", key, minio.StatObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return st.Metadata.Get("X-Amz-Storage-Class")
	}
	if err := put("rrs", "REDUCED_REDUNDANCY"); err != nil {
		t.Fatal(err)
	}
	if err := put("std", "STANDARD"); err != nil {
		t.Fatal(err)
	}
	if got := class("rrs"); got != "REDUCED_REDUNDANCY" {
		t.Fatalf("REDUCED_REDUNDANCY object's class %q", got)
	}
	if got := class("std"); got != "" {
		t.Fatalf("STANDARD object answered x-amz-storage-class %q; S3 leaves the default unsaid", got)
	}
	if _, err := c.CopyObject(ctx, minio.CopyDestOptions{Bucket: "classes", Object: "copy"}, minio.CopySrcOptions{Bucket: "classes", Object: "rrs"}); err != nil {
		t.Fatal(err)
	}
	if got := class("copy"); got != "REDUCED_REDUNDANCY" {
		t.Fatalf("copy's class %q", got)
	}
	if err := put("cold", "GLACIER"); minioCode(err) != "InvalidStorageClass" {
		t.Fatalf("PUT naming GLACIER: %v, want InvalidStorageClass", err)
	}

	sdk := sdkClient(site, site.SecretKey)
	attrs, err := sdk.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String("classes"), Key: aws.String("rrs"),
		ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesStorageClass}})
	if err != nil || attrs.StorageClass != types.StorageClassReducedRedundancy {
		t.Fatalf("GetObjectAttributes: %v %v", attrs.StorageClass, err)
	}
}
