package s3api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/twinlake/twinlake/internal/testsite"
)

// markedBody returns size random bytes with marker written into the middle,
// and the marker. Random filler keeps any compression from hiding (or
// forging) the marker.
func markedBody(t *testing.T, name string, size int) ([]byte, []byte) {
	t.Helper()
	marker := []byte("TWINLAKE-PLAINTEXT-" + name + "-" + rand.Text())
	data := make([]byte, size)
	rand.Read(data)
	copy(data[size/2:], marker)
	return data, marker
}

// filesContaining returns the files under dir (relative paths) whose bytes
// include needle.
func filesContaining(t *testing.T, dir string, needle []byte) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, needle) {
			rel, _ := filepath.Rel(dir, p)
			found = append(found, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func TestSSEEncryptsAtRest(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "enc")
	mustCreateBucket(t, c, "plain")
	if _, err := c.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: aws.String("enc"),
		ServerSideEncryptionConfiguration: &types.ServerSideEncryptionConfiguration{Rules: []types.ServerSideEncryptionRule{{
			ApplyServerSideEncryptionByDefault: &types.ServerSideEncryptionByDefault{SSEAlgorithm: types.ServerSideEncryptionAes256},
		}}}}); err != nil {
		t.Fatalf("PutBucketEncryption: %v", err)
	}
	enc, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: aws.String("enc")})
	if err != nil || enc.ServerSideEncryptionConfiguration.Rules[0].ApplyServerSideEncryptionByDefault.SSEAlgorithm != types.ServerSideEncryptionAes256 {
		t.Fatalf("GetBucketEncryption: %+v %v", enc, err)
	}

	type object struct {
		name, bucket, key string
		size              int
		requestSSE        bool // ask for SSE in the request instead of by bucket default
		multipart         bool
		wantSSE           bool
		data, marker      []byte
	}
	objects := []*object{
		{name: "bucket default empty", bucket: "enc", key: "empty", size: 0, wantSSE: true},
		{name: "bucket default inline", bucket: "enc", key: "small", size: 4 << 10, wantSSE: true},
		{name: "bucket default blob", bucket: "enc", key: "large", size: 1<<20 + 17, wantSSE: true},
		{name: "bucket default multipart", bucket: "enc", key: "multi", size: 5<<20 + 300<<10, multipart: true, wantSSE: true},
		{name: "request inline", bucket: "plain", key: "asked-small", size: 2 << 10, requestSSE: true, wantSSE: true},
		{name: "request blob", bucket: "plain", key: "asked-large", size: 600 << 10, requestSSE: true, wantSSE: true},
		{name: "unencrypted inline", bucket: "plain", key: "clear-small", size: 3 << 10},
		{name: "unencrypted blob", bucket: "plain", key: "clear-large", size: 700 << 10},
	}
	for i, o := range objects {
		o.data, o.marker = markedBody(t, fmt.Sprint(i), o.size)
		t.Run("put "+o.name, func(t *testing.T) {
			var sse types.ServerSideEncryption
			if o.multipart {
				sse = putEncryptedMultipart(t, c, o.bucket, o.key, o.data)
			} else {
				in := &s3.PutObjectInput{Bucket: aws.String(o.bucket), Key: aws.String(o.key), Body: bytes.NewReader(o.data)}
				if o.requestSSE {
					in.ServerSideEncryption = types.ServerSideEncryptionAes256
				}
				out, err := c.PutObject(ctx, in)
				if err != nil {
					t.Fatalf("PutObject: %v", err)
				}
				sse = out.ServerSideEncryption
			}
			if (sse == types.ServerSideEncryptionAes256) != o.wantSSE {
				t.Fatalf("x-amz-server-side-encryption %q, want encrypted=%v", sse, o.wantSSE)
			}
		})
	}

	readBack := func(t *testing.T) {
		for _, o := range objects {
			got, out := getBody(t, c, &s3.GetObjectInput{Bucket: aws.String(o.bucket), Key: aws.String(o.key)})
			if !bytes.Equal([]byte(got), o.data) {
				t.Errorf("%s: read back %d bytes that differ from the %d written", o.name, len(got), len(o.data))
			}
			if (out.ServerSideEncryption == types.ServerSideEncryptionAes256) != o.wantSSE {
				t.Errorf("%s: GET x-amz-server-side-encryption %q", o.name, out.ServerSideEncryption)
			}
			if o.size < 256<<10 {
				continue
			}
			// A range inside the object, and one spanning its middle
			// (across a part boundary for the multipart one).
			for _, r := range [][2]int{{o.size/2 - 70000, o.size/2 + 70000}, {5<<20 - 10, 5<<20 + 10}, {100, 200}} {
				if r[1] >= o.size {
					continue
				}
				got, out := getBody(t, c, &s3.GetObjectInput{Bucket: aws.String(o.bucket), Key: aws.String(o.key), Range: aws.String(fmt.Sprintf("bytes=%d-%d", r[0], r[1]))})
				if !bytes.Equal([]byte(got), o.data[r[0]:r[1]+1]) {
					t.Errorf("%s: range %d-%d differs", o.name, r[0], r[1])
				}
				if (out.ServerSideEncryption == types.ServerSideEncryptionAes256) != o.wantSSE {
					t.Errorf("%s: ranged GET x-amz-server-side-encryption %q", o.name, out.ServerSideEncryption)
				}
			}
		}
	}
	readBack(t)
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("enc"), Key: aws.String("large")})
	if err != nil || head.ServerSideEncryption != types.ServerSideEncryptionAes256 || aws.ToInt64(head.ContentLength) != 1<<20+17 {
		t.Fatalf("HeadObject: %v %d %v", head.ServerSideEncryption, aws.ToInt64(head.ContentLength), err)
	}

	checkAtRest := func(t *testing.T, sanity bool) {
		for _, o := range objects {
			if !bytes.Contains(o.data, o.marker) {
				continue // too small to carry a marker
			}
			found := filesContaining(t, site.Dir, o.marker)
			switch {
			case o.wantSSE && len(found) > 0:
				t.Errorf("%s: plaintext found at rest in %v", o.name, found)
			case !o.wantSSE && sanity && o.size > 128<<10 && !hasPrefixIn(found, "blobs"+string(filepath.Separator)):
				t.Errorf("%s: sanity check failed: plaintext not found in a blob file (found in %v)", o.name, found)
			case !o.wantSSE && sanity && len(found) == 0:
				t.Errorf("%s: sanity check failed: plaintext of an unencrypted object not found under %s", o.name, site.Dir)
			}
		}
	}
	checkAtRest(t, true)

	// The data keys survive a restart.
	site.Restart()
	readBack(t)
	checkAtRest(t, false)
}

func hasPrefixIn(paths []string, prefix string) bool {
	for _, p := range paths {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// putEncryptedMultipart uploads data as a 5 MiB part and a tail, and
// returns the encryption the server reported on completion.
func putEncryptedMultipart(t *testing.T, c *s3.Client, bucket, key string, data []byte) types.ServerSideEncryption {
	t.Helper()
	ctx := context.Background()
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("CreateMultipartUpload: %v", err)
	}
	if up.ServerSideEncryption != types.ServerSideEncryptionAes256 {
		t.Errorf("CreateMultipartUpload x-amz-server-side-encryption %q", up.ServerSideEncryption)
	}
	var parts []types.CompletedPart
	for i, chunk := range [][]byte{data[:5<<20], data[5<<20:]} {
		n := aws.Int32(int32(i + 1))
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: up.UploadId, PartNumber: n, Body: bytes.NewReader(chunk)})
		if err != nil {
			t.Fatalf("UploadPart %d: %v", i+1, err)
		}
		parts = append(parts, types.CompletedPart{PartNumber: n, ETag: out.ETag, ChecksumCRC32: out.ChecksumCRC32})
	}
	done, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil {
		t.Fatalf("CompleteMultipartUpload: %v", err)
	}
	return done.ServerSideEncryption
}
