package replication_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/twinlake/twinlake/internal/testsite"
)

func sdkFor(s *testsite.Site) *s3.Client {
	return s3.New(s3.Options{BaseEndpoint: aws.String(s.URL), Region: "us-east-1", UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, "")})
}

// TestSSECReplicates: an SSE-C object (single-part, multipart, empty)
// replicates as its ciphertext: the replica holds no plaintext, reads back
// with the client's key only, and refuses a missing or wrong key.
func TestSSECReplicates(t *testing.T) {
	t.Setenv("TWINLAKE_API_SSEC_ALLOW_HTTP", "on")
	m := testsite.StartMesh(t, 2, fastRetries, nil)
	src, dst := sdkFor(m.Sites[0].Site), sdkFor(m.Sites[1].Site)
	ctx := context.Background()
	if _, err := src.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("ssec")}); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	sum := md5.Sum(raw)
	key, keyMD5 := base64.StdEncoding.EncodeToString(raw), base64.StdEncoding.EncodeToString(sum[:])
	other := base64.StdEncoding.EncodeToString(make([]byte, 32))
	otherSum := md5.Sum(make([]byte, 32))
	otherMD5 := base64.StdEncoding.EncodeToString(otherSum[:])

	marker := []byte("TWINLAKE-SSEC-REPLICA-" + rand.Text())
	data := make([]byte, 300<<10)
	rand.Read(data)
	copy(data[1000:], marker)
	objects := map[string][]byte{"single": data, "empty": {}, "multipart": append(bytes.Repeat([]byte("m"), 5<<20), marker...)}
	for name, body := range objects {
		if name == "multipart" {
			cu, err := src.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("ssec"), Key: aws.String(name),
				SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(key), SSECustomerKeyMD5: aws.String(keyMD5)})
			if err != nil {
				t.Fatal(err)
			}
			var parts []types.CompletedPart
			for i, p := range [][]byte{body[:5<<20], body[5<<20:]} {
				up, err := src.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("ssec"), Key: aws.String(name), UploadId: cu.UploadId,
					PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p),
					SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(key), SSECustomerKeyMD5: aws.String(keyMD5)})
				if err != nil {
					t.Fatal(err)
				}
				parts = append(parts, types.CompletedPart{ETag: up.ETag, PartNumber: aws.Int32(int32(i + 1))})
			}
			if _, err := src.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("ssec"), Key: aws.String(name),
				UploadId: cu.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := src.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ssec"), Key: aws.String(name), Body: bytes.NewReader(body),
			SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(key), SSECustomerKeyMD5: aws.String(keyMD5)}); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range objects {
		testsite.Eventually(t, 20*time.Second, func() error {
			out, err := dst.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("ssec"), Key: aws.String(name),
				SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(key), SSECustomerKeyMD5: aws.String(keyMD5)})
			if err != nil {
				return err
			}
			defer out.Body.Close()
			got, err := io.ReadAll(out.Body)
			if err != nil || !bytes.Equal(got, body) {
				return fmt.Errorf("%s on the replica: %d bytes, %v", name, len(got), err)
			}
			return nil
		})
		if _, err := dst.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("ssec"), Key: aws.String(name)}); code(err) != "InvalidRequest" {
			t.Fatalf("%s on the replica without the key: %v", name, err)
		}
		if _, err := dst.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("ssec"), Key: aws.String(name),
			SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(other), SSECustomerKeyMD5: aws.String(otherMD5)}); code(err) != "InvalidArgument" {
			t.Fatalf("%s on the replica with another key: %v", name, err)
		}
	}
	for i, s := range m.Sites {
		for _, needle := range [][]byte{marker, raw} {
			if f := containing(t, s.Dir, needle); f != "" {
				t.Fatalf("site%d holds plaintext or the key at rest: %s", i+1, f)
			}
		}
	}
}

func code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// containing returns a file under dir holding needle, or "".
func containing(t *testing.T, dir string, needle []byte) string {
	t.Helper()
	found := ""
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || found != "" {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, needle) {
			found = p
		}
		return nil
	})
	return found
}
