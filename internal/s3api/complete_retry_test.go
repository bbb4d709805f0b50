package s3api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestCompleteMultipartRetried: a CompleteMultipartUpload sent again (a
// client retrying after a lost answer) gets the same answer, not
// NoSuchUpload; an upload that never existed still is NoSuchUpload.
func TestCompleteMultipartRetried(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "retry")
	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("retry"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("retry"), Key: aws.String("k"), UploadId: cu.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("one part")})
	if err != nil {
		t.Fatal(err)
	}
	in := &s3.CompleteMultipartUploadInput{Bucket: aws.String("retry"), Key: aws.String("k"), UploadId: cu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: up.ETag, PartNumber: aws.Int32(1)}}}}
	first, err := c.CompleteMultipartUpload(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.CompleteMultipartUpload(ctx, in)
	if err != nil || aws.ToString(again.ETag) != aws.ToString(first.ETag) {
		t.Fatalf("retried complete: %+v %v", again, err)
	}
	in.UploadId = aws.String("0123456789abcdef0123456789abcdef0123456789abcdef")
	if _, err := c.CompleteMultipartUpload(ctx, in); apiCode(err) != "NoSuchUpload" {
		t.Fatalf("complete of an unknown upload: %v", err)
	}
}
