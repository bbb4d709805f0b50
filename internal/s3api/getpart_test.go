package s3api_test

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/twinlake/twinlake/internal/testsite"
)

// GET and HEAD with ?partNumber read one uploaded part and say how many
// there are; an object put whole has one part; a part beyond the last is
// InvalidPart; a Range with a part number is refused.
func TestGetObjectPart(t *testing.T) {
	site := testsite.Start(t)
	ctx := context.Background()
	c := sdkClient(site, site.SecretKey)
	mustCreateBucket(t, c, "parts")
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("parts"), Key: aws.String("mp")})
	if err != nil {
		t.Fatal(err)
	}
	bodies := [][]byte{bytes.Repeat([]byte("a"), 5<<20), bytes.Repeat([]byte("b"), 3)}
	var done []types.CompletedPart
	for i, b := range bodies {
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("parts"), Key: aws.String("mp"), UploadId: up.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(b)})
		if err != nil {
			t.Fatal(err)
		}
		done = append(done, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(int32(i + 1))})
	}
	fin, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("parts"), Key: aws.String("mp"),
		UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range bodies {
		n := aws.Int32(int32(i + 1))
		head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("parts"), Key: aws.String("mp"), PartNumber: n})
		if err != nil || aws.ToInt32(head.PartsCount) != 2 || aws.ToInt64(head.ContentLength) != int64(len(want)) || aws.ToString(head.ETag) != aws.ToString(fin.ETag) {
			t.Fatalf("HEAD part %d: %+v, %v", i+1, head, err)
		}
		get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("parts"), Key: aws.String("mp"), PartNumber: n})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(get.Body)
		get.Body.Close()
		if !bytes.Equal(got, want) || aws.ToInt32(get.PartsCount) != 2 {
			t.Errorf("GET part %d: %d bytes, parts count %d", i+1, len(got), aws.ToInt32(get.PartsCount))
		}
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("parts"), Key: aws.String("mp"), PartNumber: aws.Int32(3)}); apiCode(err) != "InvalidPart" {
		t.Errorf("part 3 of 2: %v", err)
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("parts"), Key: aws.String("mp"), PartNumber: aws.Int32(1),
		Range: aws.String("bytes=0-1")}); apiCode(err) != "InvalidRequest" {
		t.Errorf("range with a part number: %v", err)
	}

	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("parts"), Key: aws.String("whole"), Body: bytes.NewReader([]byte("body"))}); err != nil {
		t.Fatal(err)
	}
	get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("parts"), Key: aws.String("whole"), PartNumber: aws.Int32(1)})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(get.Body)
	get.Body.Close()
	if string(got) != "body" {
		t.Errorf("part 1 of a whole object = %q", got)
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("parts"), Key: aws.String("whole"), PartNumber: aws.Int32(2)}); apiCode(err) != "InvalidPart" {
		t.Errorf("part 2 of a whole object: %v", err)
	}
}
