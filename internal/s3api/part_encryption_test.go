package s3api_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestPartEncryptionHeaders: UploadPart and UploadPartCopy say how the
// part is encrypted (SSE-S3, or SSE-C with the key's MD5), and a part
// copied into an SSE-C upload needs the upload's key, not the source's.
func TestPartEncryptionHeaders(t *testing.T) {
	t.Setenv("TWINLAKE_API_SSEC_ALLOW_HTTP", "on")
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "parts")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("parts"), Key: aws.String("src"), Body: strings.NewReader("source bytes")}); err != nil {
		t.Fatal(err)
	}
	s3u, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("parts"), Key: aws.String("s3"), ServerSideEncryption: types.ServerSideEncryptionAes256})
	if err != nil {
		t.Fatal(err)
	}
	up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("parts"), Key: aws.String("s3"), UploadId: s3u.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("x"))})
	if err != nil || up.ServerSideEncryption != types.ServerSideEncryptionAes256 {
		t.Fatalf("UploadPart into an SSE-S3 upload: %+v %v", up, err)
	}
	cp, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String("parts"), Key: aws.String("s3"), UploadId: s3u.UploadId, PartNumber: aws.Int32(2), CopySource: aws.String("parts/src")})
	if err != nil || cp.ServerSideEncryption != types.ServerSideEncryptionAes256 {
		t.Fatalf("UploadPartCopy into an SSE-S3 upload: %+v %v", cp, err)
	}

	k, other := newCustomerKey(), newCustomerKey()
	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("parts"), Key: aws.String("c"),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(k.b64), SSECustomerKeyMD5: aws.String(k.md5)})
	if err != nil {
		t.Fatal(err)
	}
	copyPart := func(key *customerKey) (*s3.UploadPartCopyOutput, error) {
		in := &s3.UploadPartCopyInput{Bucket: aws.String("parts"), Key: aws.String("c"), UploadId: cu.UploadId, PartNumber: aws.Int32(1), CopySource: aws.String("parts/src")}
		if key != nil {
			in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = aws.String("AES256"), aws.String(key.b64), aws.String(key.md5)
		}
		return c.UploadPartCopy(ctx, in)
	}
	if _, err := copyPart(nil); httpStatus(err) != 400 {
		t.Fatalf("part copy into an SSE-C upload without its key: %v", err)
	}
	if _, err := copyPart(&other); httpStatus(err) != 400 {
		t.Fatalf("part copy into an SSE-C upload with another key: %v", err)
	}
	out, err := copyPart(&k)
	if err != nil || aws.ToString(out.SSECustomerAlgorithm) != "AES256" || aws.ToString(out.SSECustomerKeyMD5) != k.md5 {
		t.Fatalf("part copy with the upload's key: %+v %v", out, err)
	}
}

// TestContentEncodingWithoutAWSChunked: aws-chunked is framing, dropped
// from the stored Content-Encoding; the rest keep S3's ", " separator.
func TestContentEncodingWithoutAWSChunked(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	mustCreateBucket(t, c, "enc")
	rc := rawClient{t, site}
	for enc, want := range map[string]string{"gzip, aws-chunked": "gzip", "aws-chunked, gzip": "gzip", "deflate, aws-chunked, gzip": "deflate, gzip", "aws-chunked": ""} {
		if st, code := rc.do(rawRequest{method: "PUT", target: "/enc/k", body: []byte("x"), header: map[string]string{"Content-Encoding": enc}}); st != 200 {
			t.Fatalf("PUT with Content-Encoding %q: %d %s", enc, st, code)
		}
		h, err := c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String("enc"), Key: aws.String("k")})
		if err != nil || aws.ToString(h.ContentEncoding) != want {
			t.Fatalf("Content-Encoding %q stored as %q (%v), want %q", enc, aws.ToString(h.ContentEncoding), err, want)
		}
	}
}

// TestCompleteWithCustomerKey: completing an SSE-C upload needs no key, but
// a key sent with the complete must be the upload's.
func TestCompleteWithCustomerKey(t *testing.T) {
	t.Setenv("TWINLAKE_API_SSEC_ALLOW_HTTP", "on")
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "cplkey")
	k, other := newCustomerKey(), newCustomerKey()
	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("cplkey"), Key: aws.String("k"),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(k.b64), SSECustomerKeyMD5: aws.String(k.md5)})
	if err != nil {
		t.Fatal(err)
	}
	up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("cplkey"), Key: aws.String("k"), UploadId: cu.UploadId, PartNumber: aws.Int32(1),
		Body: strings.NewReader("part"), SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(k.b64), SSECustomerKeyMD5: aws.String(k.md5)})
	if err != nil {
		t.Fatal(err)
	}
	in := &s3.CompleteMultipartUploadInput{Bucket: aws.String("cplkey"), Key: aws.String("k"), UploadId: cu.UploadId,
		MultipartUpload:      &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: up.ETag, PartNumber: aws.Int32(1)}}},
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(other.b64), SSECustomerKeyMD5: aws.String(other.md5)}
	if _, err := c.CompleteMultipartUpload(ctx, in); apiCode(err) != "InvalidArgument" {
		t.Fatalf("complete with another key: %v", err)
	}
	in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = nil, nil, nil
	if _, err := c.CompleteMultipartUpload(ctx, in); err != nil {
		t.Fatalf("complete without a key: %v", err)
	}
}
