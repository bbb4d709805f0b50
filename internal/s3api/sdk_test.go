package s3api_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/twinlake/twinlake/internal/testsite"
)

func sdkClient(site *testsite.Site, secret string) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(site.URL),
		Region:       "us-east-1",
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(site.AccessKey, secret, ""),
		HTTPClient:   site.HTTPClient,
		// What config.LoadDefaultConfig gives: checksums on every upload.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenSupported,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenSupported,
	})
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func mustCreateBucket(t *testing.T, c *s3.Client, name string) {
	t.Helper()
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("CreateBucket %s: %v", name, err)
	}
}

func getBody(t *testing.T, c *s3.Client, in *s3.GetObjectInput) (string, *s3.GetObjectOutput) {
	t.Helper()
	out, err := c.GetObject(context.Background(), in)
	if err != nil {
		t.Fatalf("GetObject %s: %v", aws.ToString(in.Key), err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return string(b), out
}

func TestSDKBucketsAndObjects(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "alpha")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("alpha")}); apiCode(err) != "BucketAlreadyOwnedByYou" {
		t.Fatalf("duplicate bucket: %v", err)
	}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("Bad_Name")}); apiCode(err) != "InvalidBucketName" {
		t.Fatalf("bad bucket name: %v", err)
	}
	lb, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil || len(lb.Buckets) != 1 || aws.ToString(lb.Buckets[0].Name) != "alpha" {
		t.Fatalf("ListBuckets: %+v %v", lb, err)
	}
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("missing")}); err == nil {
		t.Fatal("HeadBucket of a missing bucket succeeded")
	}

	body := strings.Repeat("twinlake ", 1000)
	put, err := c.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String("alpha"), Key: aws.String("dir/hello.txt"), Body: strings.NewReader(body),
		ContentType: aws.String("text/plain"), Metadata: map[string]string{"color": "blue"},
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32,
	})
	if err != nil {
		t.Fatalf("PutObject: %v", err)
	}
	sum := md5.Sum([]byte(body))
	if aws.ToString(put.ETag) != `"`+hex.EncodeToString(sum[:])+`"` {
		t.Fatalf("ETag %s", aws.ToString(put.ETag))
	}
	got, out := getBody(t, c, &s3.GetObjectInput{Bucket: aws.String("alpha"), Key: aws.String("dir/hello.txt"), ChecksumMode: types.ChecksumModeEnabled})
	if got != body || aws.ToString(out.ContentType) != "text/plain" || out.Metadata["color"] != "blue" {
		t.Fatalf("GetObject: len %d type %q meta %v", len(got), aws.ToString(out.ContentType), out.Metadata)
	}
	if aws.ToString(out.ChecksumCRC32) == "" {
		t.Fatal("stored CRC32 not returned with checksum mode")
	}
	// Range read.
	got, out = getBody(t, c, &s3.GetObjectInput{Bucket: aws.String("alpha"), Key: aws.String("dir/hello.txt"), Range: aws.String("bytes=9-16")})
	if got != "twinlake" || aws.ToString(out.ContentRange) != fmt.Sprintf("bytes 9-16/%d", len(body)) {
		t.Fatalf("range: %q %s", got, aws.ToString(out.ContentRange))
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("alpha"), Key: aws.String("dir/hello.txt"), Range: aws.String(fmt.Sprintf("bytes=%d-", len(body)+5))}); apiCode(err) != "InvalidRange" {
		t.Fatalf("unsatisfiable range: %v", err)
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("alpha"), Key: aws.String("nope")}); apiCode(err) != "NoSuchKey" {
		t.Fatalf("missing key: %v", err)
	}
	// Conditional reads.
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("alpha"), Key: aws.String("dir/hello.txt"), IfMatch: aws.String(`"abc"`)}); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("If-Match mismatch: %v", err)
	}
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("alpha"), Key: aws.String("dir/hello.txt"), IfNoneMatch: put.ETag})
	var re interface{ HTTPStatusCode() int }
	if !errors.As(err, &re) || re.HTTPStatusCode() != http.StatusNotModified {
		t.Fatalf("If-None-Match: %v", err)
	}
	// Conditional writes.
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("alpha"), Key: aws.String("dir/hello.txt"), Body: strings.NewReader("x"), IfNoneMatch: aws.String("*")}); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("If-None-Match * on existing key: %v", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("alpha"), Key: aws.String("dir/hello.txt"), Body: strings.NewReader("x"), IfMatch: aws.String(`"0000"`)}); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("If-Match wrong etag: %v", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("alpha"), Key: aws.String("dir/hello.txt"), Body: strings.NewReader("v2"), IfMatch: put.ETag}); err != nil {
		t.Fatalf("If-Match right etag: %v", err)
	}
	// Copy with metadata replace.
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("alpha"), Key: aws.String("copy.txt"), CopySource: aws.String("alpha/dir/hello.txt"),
		MetadataDirective: types.MetadataDirectiveReplace, Metadata: map[string]string{"shape": "round"}}); err != nil {
		t.Fatalf("CopyObject: %v", err)
	}
	got, out = getBody(t, c, &s3.GetObjectInput{Bucket: aws.String("alpha"), Key: aws.String("copy.txt")})
	if got != "v2" || out.Metadata["shape"] != "round" || out.Metadata["color"] != "" {
		t.Fatalf("copy: %q %v", got, out.Metadata)
	}
	// Bucket not empty.
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("alpha")}); apiCode(err) != "BucketNotEmpty" {
		t.Fatalf("DeleteBucket non-empty: %v", err)
	}
	// DeleteObjects then delete the bucket.
	del, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("alpha"), Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: aws.String("dir/hello.txt")}, {Key: aws.String("copy.txt")}}}})
	if err != nil || len(del.Deleted) != 2 {
		t.Fatalf("DeleteObjects: %+v %v", del, err)
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("alpha")}); err != nil {
		t.Fatalf("DeleteBucket: %v", err)
	}
}

// TestSDKDefaultChecksumsOverTLS exercises the SDK's default upload shape:
// over HTTPS it streams aws-chunked bodies with a trailing checksum
// (STREAMING-UNSIGNED-PAYLOAD-TRAILER), for small and multi-MiB objects.
func TestSDKDefaultChecksumsOverTLS(t *testing.T) {
	site := testsite.Start(t, testsite.WithTLS())
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "tls")
	for _, size := range []int{0, 1, 64 << 10, 3<<20 + 17} {
		data := bytes.Repeat([]byte{'z'}, size)
		key := fmt.Sprintf("obj-%d", size)
		// An unseekable body forces the trailer form even for tiny objects.
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("tls"), Key: aws.String(key),
			Body: io.NopCloser(bytes.NewReader(data)), ContentLength: aws.Int64(int64(size))}); err != nil {
			t.Fatalf("PutObject %d bytes: %v", size, err)
		}
		got, out := getBody(t, c, &s3.GetObjectInput{Bucket: aws.String("tls"), Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled})
		if !bytes.Equal([]byte(got), data) {
			t.Fatalf("%d bytes: read back %d bytes", size, len(got))
		}
		if size > 0 && aws.ToString(out.ChecksumCRC32) == "" {
			t.Fatalf("%d bytes: trailing CRC32 was not stored", size)
		}
	}
}

func TestSDKChecksumAlgorithms(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "sums")
	for _, alg := range []types.ChecksumAlgorithm{types.ChecksumAlgorithmCrc32, types.ChecksumAlgorithmCrc32c, types.ChecksumAlgorithmSha1, types.ChecksumAlgorithmSha256, types.ChecksumAlgorithmCrc64nvme} {
		key := "obj-" + string(alg)
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sums"), Key: aws.String(key), Body: strings.NewReader("checksummed " + key), ChecksumAlgorithm: alg}); err != nil {
			t.Fatalf("PutObject %s: %v", alg, err)
		}
		got, _ := getBody(t, c, &s3.GetObjectInput{Bucket: aws.String("sums"), Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled})
		if got != "checksummed "+key {
			t.Fatalf("%s: body %q", alg, got)
		}
	}
	// A wrong declared checksum is refused and nothing is stored.
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sums"), Key: aws.String("bad"), Body: strings.NewReader("data"), ChecksumCRC32: aws.String("AAAAAA==")})
	if apiCode(err) != "BadDigest" {
		t.Fatalf("bad checksum: %v", err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("sums"), Key: aws.String("bad")}); err == nil {
		t.Fatal("object with a bad checksum was stored")
	}
}

func TestSDKVersioning(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "ver")
	put := func(body string) string {
		out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ver"), Key: aws.String("k"), Body: strings.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.VersionId)
	}
	if id := put("unversioned"); id != "" {
		t.Fatalf("unversioned bucket returned version %q", id)
	}
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("ver"), VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	gv, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String("ver")})
	if err != nil || gv.Status != types.BucketVersioningStatusEnabled {
		t.Fatalf("GetBucketVersioning: %v %v", gv.Status, err)
	}
	v1, v2 := put("one"), put("two")
	if v1 == "" || v2 == "" || v1 == v2 {
		t.Fatalf("version ids %q %q", v1, v2)
	}
	if got, _ := getBody(t, c, &s3.GetObjectInput{Bucket: aws.String("ver"), Key: aws.String("k"), VersionId: aws.String(v1)}); got != "one" {
		t.Fatalf("v1 = %q", got)
	}
	if got, _ := getBody(t, c, &s3.GetObjectInput{Bucket: aws.String("ver"), Key: aws.String("k"), VersionId: aws.String("null")}); got != "unversioned" {
		t.Fatalf("null version = %q", got)
	}
	del, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("ver"), Key: aws.String("k")})
	if err != nil || !aws.ToBool(del.DeleteMarker) || aws.ToString(del.VersionId) == "" {
		t.Fatalf("delete marker: %+v %v", del, err)
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("ver"), Key: aws.String("k")}); apiCode(err) != "NoSuchKey" {
		t.Fatalf("GET after delete marker: %v", err)
	}
	lv, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String("ver")})
	if err != nil || len(lv.Versions) != 3 || len(lv.DeleteMarkers) != 1 || !aws.ToBool(lv.DeleteMarkers[0].IsLatest) {
		t.Fatalf("ListObjectVersions: %d versions, %d markers, %v", len(lv.Versions), len(lv.DeleteMarkers), err)
	}
	// Removing the marker permanently brings v2 back.
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("ver"), Key: aws.String("k"), VersionId: del.VersionId}); err != nil {
		t.Fatal(err)
	}
	if got, _ := getBody(t, c, &s3.GetObjectInput{Bucket: aws.String("ver"), Key: aws.String("k")}); got != "two" {
		t.Fatalf("after removing marker = %q", got)
	}
	// Suspended: writes replace the null version.
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("ver"), VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusSuspended}}); err != nil {
		t.Fatal(err)
	}
	if id := put("suspended"); id != "" {
		t.Fatalf("suspended put answered version %q; a null version is not named (as MinIO and the conformance suite)", id)
	}
	if got, _ := getBody(t, c, &s3.GetObjectInput{Bucket: aws.String("ver"), Key: aws.String("k"), VersionId: aws.String("null")}); got != "suspended" {
		t.Fatalf("null version after suspended put = %q", got)
	}
	lv, _ = c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String("ver")})
	if len(lv.Versions) != 3 {
		t.Fatalf("suspended put should replace the null version: %d versions", len(lv.Versions))
	}
}

func TestSDKListing(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "list")
	keys := []string{"a/1", "a/2", "b/1", "c", "d/e/f", "weird//key", "dots/../x", "sp ace+plus"}
	for _, k := range keys {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("list"), Key: aws.String(k), Body: strings.NewReader(k)}); err != nil {
			t.Fatalf("put %q: %v", k, err)
		}
	}
	for _, k := range keys {
		if got, _ := getBody(t, c, &s3.GetObjectInput{Bucket: aws.String("list"), Key: aws.String(k)}); got != k {
			t.Fatalf("key %q read back %q", k, got)
		}
	}
	out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("list"), Delimiter: aws.String("/")})
	if err != nil {
		t.Fatal(err)
	}
	var cps, objs []string
	for _, p := range out.CommonPrefixes {
		cps = append(cps, aws.ToString(p.Prefix))
	}
	for _, o := range out.Contents {
		objs = append(objs, aws.ToString(o.Key))
	}
	if strings.Join(cps, ",") != "a/,b/,d/,dots/,weird/" || strings.Join(objs, ",") != "c,sp ace+plus" {
		t.Fatalf("delimiter listing: prefixes %v objects %v", cps, objs)
	}
	// Paginate one key at a time across the whole bucket.
	var all []string
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String("list"), MaxKeys: aws.Int32(2)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			all = append(all, aws.ToString(o.Key))
		}
	}
	if len(all) != len(keys) {
		t.Fatalf("paginated listing got %d keys: %v", len(all), all)
	}
	v1, err := c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: aws.String("list"), Prefix: aws.String("a/"), Marker: aws.String("a/1")})
	if err != nil || len(v1.Contents) != 1 || aws.ToString(v1.Contents[0].Key) != "a/2" {
		t.Fatalf("ListObjects v1 with marker: %+v %v", v1, err)
	}
}

func TestSDKMultipart(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "mpu")
	create, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("mpu"), Key: aws.String("big"), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
	if err != nil {
		t.Fatal(err)
	}
	part1 := bytes.Repeat([]byte("a"), 5<<20)
	part2 := []byte("tail")
	var parts []types.CompletedPart
	var md5s []byte
	for i, data := range [][]byte{part1, part2} {
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("mpu"), Key: aws.String("big"), UploadId: create.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(data), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
		if err != nil {
			t.Fatalf("UploadPart %d: %v", i+1, err)
		}
		parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: up.ETag, ChecksumCRC32: up.ChecksumCRC32})
		s := md5.Sum(data)
		md5s = append(md5s, s[:]...)
	}
	lp, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("mpu"), Key: aws.String("big"), UploadId: create.UploadId})
	if err != nil || len(lp.Parts) != 2 {
		t.Fatalf("ListParts: %v %v", lp, err)
	}
	lu, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("mpu")})
	if err != nil || len(lu.Uploads) != 1 {
		t.Fatalf("ListMultipartUploads: %v %v", lu, err)
	}
	done, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("mpu"), Key: aws.String("big"), UploadId: create.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	whole := md5.Sum(md5s)
	if want := `"` + hex.EncodeToString(whole[:]) + `-2"`; aws.ToString(done.ETag) != want {
		t.Fatalf("multipart ETag %s, want %s", aws.ToString(done.ETag), want)
	}
	got, _ := getBody(t, c, &s3.GetObjectInput{Bucket: aws.String("mpu"), Key: aws.String("big"), Range: aws.String(fmt.Sprintf("bytes=%d-", len(part1)-2))})
	if got != "aatail" {
		t.Fatalf("range across parts = %q", got)
	}
	// Part copy from the assembled object, and abort.
	up2, _ := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("mpu"), Key: aws.String("copy")})
	cp, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String("mpu"), Key: aws.String("copy"), UploadId: up2.UploadId, PartNumber: aws.Int32(1),
		CopySource: aws.String("mpu/big"), CopySourceRange: aws.String(fmt.Sprintf("bytes=%d-%d", len(part1), len(part1)+3))})
	if err != nil {
		t.Fatalf("UploadPartCopy: %v", err)
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("mpu"), Key: aws.String("copy"), UploadId: up2.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: cp.CopyPartResult.ETag}}}}); err != nil {
		t.Fatalf("complete copy: %v", err)
	}
	if got, _ := getBody(t, c, &s3.GetObjectInput{Bucket: aws.String("mpu"), Key: aws.String("copy")}); got != "tail" {
		t.Fatalf("part copy = %q", got)
	}
	up3, _ := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("mpu"), Key: aws.String("aborted")})
	if _, err := c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String("mpu"), Key: aws.String("aborted"), UploadId: up3.UploadId}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("mpu"), Key: aws.String("aborted"), UploadId: up3.UploadId}); apiCode(err) != "NoSuchUpload" {
		t.Fatalf("ListParts after abort: %v", err)
	}
}

func TestSDKAuthFailures(t *testing.T) {
	site := testsite.Start(t)
	ctx := context.Background()
	good := sdkClient(site, site.SecretKey)
	mustCreateBucket(t, good, "auth")
	bad := sdkClient(site, "wrong-secret")
	if _, err := bad.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("auth"), Key: aws.String("x"), Body: strings.NewReader("x")}); apiCode(err) != "SignatureDoesNotMatch" {
		t.Fatalf("wrong secret: %v", err)
	}
	unknown := s3.New(s3.Options{BaseEndpoint: aws.String(site.URL), Region: "us-east-1", UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("nobody", "whatever-secret", "")})
	if _, err := unknown.ListBuckets(ctx, &s3.ListBucketsInput{}); apiCode(err) != "InvalidAccessKeyId" {
		t.Fatalf("unknown key: %v", err)
	}
	resp, err := http.Get(site.URL + "/auth/x")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(b), "<Code>AccessDenied</Code>") {
		t.Fatalf("anonymous: %d %s", resp.StatusCode, b)
	}
	if _, err := good.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("auth"), Key: aws.String("x")}); err == nil {
		t.Fatal("a refused write was stored")
	}
	// Presigned GET works, and an expired one is refused.
	if _, err := good.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("auth"), Key: aws.String("p"), Body: strings.NewReader("presigned")}); err != nil {
		t.Fatal(err)
	}
	ps := s3.NewPresignClient(good)
	req, err := ps.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("auth"), Key: aws.String("p")}, s3.WithPresignExpires(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	resp, err = http.Get(req.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "presigned" {
		t.Fatalf("presigned GET: %d %s", resp.StatusCode, b)
	}
	old := s3.NewPresignClient(good, func(o *s3.PresignOptions) {
		o.Presigner = backdated{v4.NewSigner(), -2 * time.Hour}
	})
	req, err = old.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("auth"), Key: aws.String("p")}, s3.WithPresignExpires(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	resp, err = http.Get(req.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(b), "expired") {
		t.Fatalf("expired presign: %d %s", resp.StatusCode, b)
	}
}

// backdated presigns as if the clock read shift earlier.
type backdated struct {
	s     *v4.Signer
	shift time.Duration
}

func (b backdated) PresignHTTP(ctx context.Context, cred aws.Credentials, r *http.Request, payloadHash, service, region string, t time.Time, opts ...func(*v4.SignerOptions)) (string, http.Header, error) {
	return b.s.PresignHTTP(ctx, cred, r, payloadHash, service, region, t.Add(b.shift), opts...)
}

// expiresAt presigns with X-Amz-Expires set to secs (which the SDK's own
// options cannot: it refuses zero and negative).
type expiresAt struct {
	s    *v4.Signer
	secs string
}

func (e expiresAt) PresignHTTP(ctx context.Context, cred aws.Credentials, r *http.Request, payloadHash, service, region string, t time.Time, opts ...func(*v4.SignerOptions)) (string, http.Header, error) {
	q := r.URL.Query()
	q.Set("X-Amz-Expires", e.secs)
	r.URL.RawQuery = q.Encode()
	return e.s.PresignHTTP(ctx, cred, r, payloadHash, service, region, t, opts...)
}

// TestPresignExpiresZero: a URL presigned for zero seconds is well formed
// and already expired (403 AccessDenied, as S3 and MinIO answer), while a
// negative or over-a-week X-Amz-Expires is a malformed query (400).
func TestPresignExpiresZero(t *testing.T) {
	site := testsite.Start(t)
	ctx := context.Background()
	c := sdkClient(site, site.SecretKey)
	mustCreateBucket(t, c, "zero")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("zero"), Key: aws.String("k"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		secs, code string
		status     int
	}{{"0", "AccessDenied", 403}, {"-7", "AuthorizationQueryParametersError", 400}, {"604801", "AuthorizationQueryParametersError", 400}, {"60", "", 200}} {
		ps := s3.NewPresignClient(c, func(o *s3.PresignOptions) { o.Presigner = expiresAt{v4.NewSigner(), tc.secs} })
		req, err := ps.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("zero"), Key: aws.String("k")})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(req.URL, "X-Amz-Expires="+tc.secs+"&") {
			t.Fatalf("presigned URL %s does not carry X-Amz-Expires=%s", req.URL, tc.secs)
		}
		resp, err := http.Get(req.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || (tc.code != "" && !strings.Contains(string(b), "<Code>"+tc.code+"</Code>")) {
			t.Fatalf("X-Amz-Expires=%s: %d %s; want %d %s", tc.secs, resp.StatusCode, b, tc.status, tc.code)
		}
	}
}
