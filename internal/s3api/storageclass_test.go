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

// Listings show each object's storage class and its checksum's algorithm
// and type, as S3 does: ListObjectsV2, ListObjects and
// ListObjectVersions alike.
func TestListingShowsClassAndChecksum(t *testing.T) {
	site := testsite.Start(t)
	ctx := context.Background()
	sdk := sdkClient(site, site.SecretKey)
	bucket := aws.String("listed")
	if _, err := sdk.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: bucket}); err != nil {
		t.Fatal(err)
	}
	put := func(key string, class types.StorageClass, alg types.ChecksumAlgorithm) {
		t.Helper()
		if _, err := sdk.PutObject(ctx, &s3.PutObjectInput{Bucket: bucket, Key: aws.String(key), Body: bytes.NewReader([]byte("body of " + key)),
			StorageClass: class, ChecksumAlgorithm: alg}, func(o *s3.Options) {
			// Naming none, as older clients do: the server's default.
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		}); err != nil {
			t.Fatal(err)
		}
	}
	put("a-rrs-sha256", types.StorageClassReducedRedundancy, types.ChecksumAlgorithmSha256)
	put("b-default", "", "")
	// A multipart upload with CRC32 parts: a COMPOSITE checksum.
	up, err := sdk.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: bucket, Key: aws.String("c-composite"),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
	if err != nil {
		t.Fatal(err)
	}
	part, err := sdk.UploadPart(ctx, &s3.UploadPartInput{Bucket: bucket, Key: aws.String("c-composite"), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("one part")), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: bucket, Key: aws.String("c-composite"),
		UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
			{PartNumber: aws.Int32(1), ETag: part.ETag, ChecksumCRC32: part.ChecksumCRC32}}}}); err != nil {
		t.Fatal(err)
	}
	type listed struct {
		class types.StorageClass
		alg   types.ChecksumAlgorithm
		typ   types.ChecksumType
	}
	want := map[string]listed{
		"a-rrs-sha256": {types.StorageClassReducedRedundancy, types.ChecksumAlgorithmSha256, types.ChecksumTypeFullObject},
		"b-default":    {types.StorageClassStandard, types.ChecksumAlgorithmCrc64nvme, types.ChecksumTypeFullObject},
		"c-composite":  {types.StorageClassStandard, types.ChecksumAlgorithmCrc32, types.ChecksumTypeComposite},
	}
	check := func(call, key string, class types.StorageClass, algs []types.ChecksumAlgorithm, typ types.ChecksumType) {
		t.Helper()
		w := want[key]
		if class != w.class || len(algs) != 1 || algs[0] != w.alg || typ != w.typ {
			t.Errorf("%s %s: class %q, checksum %v %q; want %q, %q %q", call, key, class, algs, typ, w.class, w.alg, w.typ)
		}
	}
	v2, err := sdk.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: bucket})
	if err != nil || len(v2.Contents) != len(want) {
		t.Fatalf("ListObjectsV2: %v, %d objects", err, len(v2.Contents))
	}
	for _, o := range v2.Contents {
		check("ListObjectsV2", *o.Key, types.StorageClass(o.StorageClass), o.ChecksumAlgorithm, o.ChecksumType)
	}
	v1, err := sdk.ListObjects(ctx, &s3.ListObjectsInput{Bucket: bucket})
	if err != nil || len(v1.Contents) != len(want) {
		t.Fatalf("ListObjects: %v, %d objects", err, len(v1.Contents))
	}
	for _, o := range v1.Contents {
		check("ListObjects", *o.Key, types.StorageClass(o.StorageClass), o.ChecksumAlgorithm, o.ChecksumType)
	}
	vs, err := sdk.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: bucket})
	if err != nil || len(vs.Versions) != len(want) {
		t.Fatalf("ListObjectVersions: %v, %d versions", err, len(vs.Versions))
	}
	for _, v := range vs.Versions {
		check("ListObjectVersions", *v.Key, types.StorageClass(v.StorageClass), v.ChecksumAlgorithm, v.ChecksumType)
	}
}
