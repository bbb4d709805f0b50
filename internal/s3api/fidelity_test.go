package s3api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestSubresourcesNeverList: a sub-resource twinlake does not serve, or one
// asked for with a method or on a scope it has no API for, is answered
// NotImplemented, never as the plain request (a listing or an object read).
func TestSubresourcesNeverList(t *testing.T) {
	site := testsite.Start(t)
	rc := rawClient{t, site}
	c := sdkClient(site, site.SecretKey)
	mustCreateBucket(t, c, "sub")
	if _, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("sub"), Key: aws.String("k"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{
		"/sub?publicAccessBlock", "/sub?metadataTable", "/sub?session", "/sub?delete", "/sub?uploadId=x",
		"/sub/k?versions", "/sub/k?location", "/sub/k?policyStatus",
	} {
		if st, code := rc.do(rawRequest{method: http.MethodGet, target: target}); st != http.StatusNotImplemented || code != "NotImplemented" {
			t.Errorf("GET %s: %d %s, want 501 NotImplemented", target, st, code)
		}
	}
}

func TestBucketPolicyStatus(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "pol")
	if _, err := c.GetBucketPolicyStatus(ctx, &s3.GetBucketPolicyStatusInput{Bucket: aws.String("pol")}); apiCode(err) != "NoSuchBucketPolicy" {
		t.Fatalf("status without a policy: %v", err)
	}
	for _, tc := range []struct {
		principal string
		public    bool
	}{{`"*"`, true}, {`{"AWS":["someone"]}`, false}} {
		doc := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":%s,"Action":"s3:GetObject","Resource":"arn:aws:s3:::pol/*"}]}`, tc.principal)
		if _, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("pol"), Policy: aws.String(doc)}); err != nil {
			t.Fatal(err)
		}
		out, err := c.GetBucketPolicyStatus(ctx, &s3.GetBucketPolicyStatusInput{Bucket: aws.String("pol")})
		if err != nil || aws.ToBool(out.PolicyStatus.IsPublic) != tc.public {
			t.Fatalf("principal %s: %+v %v, want public=%v", tc.principal, out, err, tc.public)
		}
	}
}

func TestGetObjectAttributes(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "attrs")
	all := []types.ObjectAttributes{types.ObjectAttributesEtag, types.ObjectAttributesChecksum, types.ObjectAttributesObjectParts, types.ObjectAttributesStorageClass, types.ObjectAttributesObjectSize}
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("attrs"), Key: aws.String("one"), Body: strings.NewReader("hello"), ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String("attrs"), Key: aws.String("one"), ObjectAttributes: all})
	if err != nil {
		t.Fatal(err)
	}
	if `"`+aws.ToString(out.ETag)+`"` != aws.ToString(put.ETag) || aws.ToInt64(out.ObjectSize) != 5 || out.StorageClass != types.StorageClassStandard ||
		out.Checksum == nil || aws.ToString(out.Checksum.ChecksumSHA256) != aws.ToString(put.ChecksumSHA256) || out.ObjectParts != nil || out.VersionId != nil {
		t.Fatalf("single-part attributes: %+v", out)
	}
	only, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String("attrs"), Key: aws.String("one"), ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesObjectSize}})
	if err != nil || only.ETag != nil || aws.ToInt64(only.ObjectSize) != 5 {
		t.Fatalf("only ObjectSize: %+v %v", only, err)
	}

	// A multipart object lists its parts, paged.
	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("attrs"), Key: aws.String("mp")})
	if err != nil {
		t.Fatal(err)
	}
	var parts []types.CompletedPart
	sizes := []int{5 << 20, 5 << 20, 7}
	for i, n := range sizes {
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("attrs"), Key: aws.String("mp"), UploadId: cu.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: strings.NewReader(strings.Repeat("p", n))})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, types.CompletedPart{ETag: up.ETag, PartNumber: aws.Int32(int32(i + 1))})
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("attrs"), Key: aws.String("mp"), UploadId: cu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
		t.Fatal(err)
	}
	mp, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String("attrs"), Key: aws.String("mp"), ObjectAttributes: all,
		MaxParts: aws.Int32(1), PartNumberMarker: aws.String("1")})
	if err != nil {
		t.Fatal(err)
	}
	op := mp.ObjectParts
	if op == nil || aws.ToInt32(op.TotalPartsCount) != 3 || !aws.ToBool(op.IsTruncated) || len(op.Parts) != 1 ||
		aws.ToInt32(op.Parts[0].PartNumber) != 2 || aws.ToInt64(op.Parts[0].Size) != 5<<20 || aws.ToString(op.NextPartNumberMarker) != "2" {
		t.Fatalf("parts page: %+v", op)
	}
	if _, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String("attrs"), Key: aws.String("nope"), ObjectAttributes: all}); apiCode(err) != "NoSuchKey" {
		t.Fatalf("missing key: %v", err)
	}
	rc := rawClient{t, site}
	if st, code := rc.do(rawRequest{method: http.MethodGet, target: "/attrs/one?attributes", header: map[string]string{"x-amz-object-attributes": "Colour"}}); st != 400 || code != "InvalidArgument" {
		t.Fatalf("unknown attribute: %d %s", st, code)
	}
}
