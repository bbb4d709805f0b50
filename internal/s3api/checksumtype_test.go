package s3api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/checksum"
	"github.com/twinlake/twinlake/internal/testsite"
)

// A multipart upload created with x-amz-checksum-type FULL_OBJECT gets
// the CRC of the whole object, the value a single PUT of the same bytes
// would have, and says so on create, complete, HEAD and GET; CRC64NVME,
// which has no composite form, is FULL_OBJECT when no type is named. A
// full-object checksum sent with the complete must be that CRC. A read of
// one part with checksum mode on answers that part's checksum.
func TestMultipartFullObjectChecksums(t *testing.T) {
	site := testsite.Start(t)
	ctx := context.Background()
	c := sdkClient(site, site.SecretKey)
	mustCreateBucket(t, c, "full")
	bodies := [][]byte{bytes.Repeat([]byte("a"), 5<<20), []byte("the last part")}
	whole := func(alg checksum.Algorithm) string {
		h := alg.New()
		for _, b := range bodies {
			h.Write(b)
		}
		return checksum.Encode(h.Sum(nil))
	}
	type upload struct {
		id    *string
		parts []types.CompletedPart
	}
	start := func(key string, alg types.ChecksumAlgorithm, typ types.ChecksumType) upload {
		t.Helper()
		out, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("full"), Key: aws.String(key),
			ChecksumAlgorithm: alg, ChecksumType: typ})
		if err != nil {
			t.Fatalf("%s: create: %v", key, err)
		}
		if out.ChecksumType != types.ChecksumTypeFullObject {
			t.Fatalf("%s: create answered checksum type %q, want FULL_OBJECT", key, out.ChecksumType)
		}
		u := upload{id: out.UploadId}
		for i, b := range bodies {
			p, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("full"), Key: aws.String(key), UploadId: u.id,
				PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(b), ChecksumAlgorithm: alg})
			if err != nil {
				t.Fatalf("%s: part %d: %v", key, i+1, err)
			}
			u.parts = append(u.parts, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: p.ETag,
				ChecksumCRC32: p.ChecksumCRC32, ChecksumCRC64NVME: p.ChecksumCRC64NVME})
		}
		return u
	}
	complete := func(key string, u upload, in *s3.CompleteMultipartUploadInput) (*s3.CompleteMultipartUploadOutput, error) {
		in.Bucket, in.Key, in.UploadId = aws.String("full"), aws.String(key), u.id
		in.MultipartUpload = &types.CompletedMultipartUpload{Parts: u.parts}
		return c.CompleteMultipartUpload(ctx, in)
	}

	u := start("crc32", types.ChecksumAlgorithmCrc32, types.ChecksumTypeFullObject)
	if _, err := complete("crc32", u, &s3.CompleteMultipartUploadInput{ChecksumCRC32: aws.String("AAAAAA=="),
		ChecksumType: types.ChecksumTypeFullObject}); apiCode(err) != "BadDigest" {
		t.Fatalf("complete with a wrong full-object CRC: %v, want BadDigest", err)
	}
	if _, err := complete("crc32", u, &s3.CompleteMultipartUploadInput{ChecksumType: types.ChecksumTypeComposite}); apiCode(err) != "InvalidRequest" {
		t.Fatalf("complete naming another checksum type: %v, want InvalidRequest", err)
	}
	done, err := complete("crc32", u, &s3.CompleteMultipartUploadInput{ChecksumCRC32: aws.String(whole(checksum.CRC32)),
		ChecksumType: types.ChecksumTypeFullObject})
	if err != nil {
		t.Fatal(err)
	}
	var sum [4]byte
	crc := crc32.NewIEEE()
	for _, b := range bodies {
		crc.Write(b)
	}
	if want := base64.StdEncoding.EncodeToString(crc.Sum(sum[:0])); aws.ToString(done.ChecksumCRC32) != want || done.ChecksumType != types.ChecksumTypeFullObject {
		t.Fatalf("complete answered %s %s, want the CRC32 of the whole object %s, FULL_OBJECT", aws.ToString(done.ChecksumCRC32), done.ChecksumType, want)
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("full"), Key: aws.String("crc32"), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil || aws.ToString(head.ChecksumCRC32) != whole(checksum.CRC32) || head.ChecksumType != types.ChecksumTypeFullObject {
		t.Fatalf("HEAD: %v %s %s", err, aws.ToString(head.ChecksumCRC32), head.ChecksumType)
	}
	for i, b := range bodies {
		h := checksum.CRC32.New()
		h.Write(b)
		got, out := getBody(t, c, &s3.GetObjectInput{Bucket: aws.String("full"), Key: aws.String("crc32"),
			PartNumber: aws.Int32(int32(i + 1)), ChecksumMode: types.ChecksumModeEnabled})
		if got != string(b) || aws.ToString(out.ChecksumCRC32) != checksum.Encode(h.Sum(nil)) {
			t.Fatalf("GET part %d: %d bytes, checksum %s, want the part's %s", i+1, len(got), aws.ToString(out.ChecksumCRC32), checksum.Encode(h.Sum(nil)))
		}
	}

	u = start("nvme", types.ChecksumAlgorithmCrc64nvme, "")
	done, err = complete("nvme", u, &s3.CompleteMultipartUploadInput{})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(done.ChecksumCRC64NVME) != whole(checksum.CRC64NVME) {
		t.Fatalf("CRC64NVME upload completed with %s, want %s", aws.ToString(done.ChecksumCRC64NVME), whole(checksum.CRC64NVME))
	}

	for _, tc := range []struct {
		alg types.ChecksumAlgorithm
		typ types.ChecksumType
	}{{types.ChecksumAlgorithmSha256, types.ChecksumTypeFullObject}, {types.ChecksumAlgorithmCrc64nvme, types.ChecksumTypeComposite}, {"", types.ChecksumTypeFullObject}} {
		_, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("full"), Key: aws.String("no"),
			ChecksumAlgorithm: tc.alg, ChecksumType: tc.typ})
		if apiCode(err) != "InvalidRequest" {
			t.Errorf("create with %q %s: %v, want InvalidRequest", tc.alg, tc.typ, err)
		}
	}
}

// GetObjectAttributes answers a COMPOSITE checksum without the -N part
// count that HEAD and GET carry, as S3 does.
func TestAttributesCompositeChecksum(t *testing.T) {
	site := testsite.Start(t)
	ctx := context.Background()
	c := sdkClient(site, site.SecretKey)
	mustCreateBucket(t, c, "comp")
	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("comp"), Key: aws.String("k"),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c})
	if err != nil {
		t.Fatal(err)
	}
	var parts []types.CompletedPart
	for i, b := range [][]byte{bytes.Repeat([]byte("c"), 5<<20), []byte("end")} {
		p, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("comp"), Key: aws.String("k"), UploadId: cu.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(b), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: p.ETag, ChecksumCRC32C: p.ChecksumCRC32C})
	}
	done, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("comp"), Key: aws.String("k"),
		UploadId: cu.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil {
		t.Fatal(err)
	}
	digest, count, _ := strings.Cut(aws.ToString(done.ChecksumCRC32C), "-")
	if count != "2" || done.ChecksumType != types.ChecksumTypeComposite {
		t.Fatalf("complete answered %s %s, want a COMPOSITE of 2 parts", aws.ToString(done.ChecksumCRC32C), done.ChecksumType)
	}
	attrs, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String("comp"), Key: aws.String("k"),
		ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesChecksum}})
	if err != nil || attrs.Checksum == nil {
		t.Fatalf("GetObjectAttributes: %v %+v", err, attrs)
	}
	if aws.ToString(attrs.Checksum.ChecksumCRC32C) != digest || attrs.Checksum.ChecksumType != types.ChecksumTypeComposite {
		t.Fatalf("attributes checksum %s %s, want %s COMPOSITE", aws.ToString(attrs.Checksum.ChecksumCRC32C), attrs.Checksum.ChecksumType, digest)
	}
}

// An object written whole without a checksum gets S3's default, a
// CRC64NVME, which a read with checksum mode answers and aws-sdk-go-v2
// verifies while reading; a copy of it keeps it.
func TestDefaultChecksum(t *testing.T) {
	site := testsite.Start(t)
	ctx := context.Background()
	mc, _ := minioClient(t, site)
	if err := mc.MakeBucket(ctx, "dflt", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("no checksum named "), 1000)
	if _, err := mc.PutObject(ctx, "dflt", "plain", bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{DisableMultipart: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := mc.CopyObject(ctx, minio.CopyDestOptions{Bucket: "dflt", Object: "copy"}, minio.CopySrcOptions{Bucket: "dflt", Object: "plain"}); err != nil {
		t.Fatal(err)
	}
	want := checksum.CRC64NVME.Sum(body)
	c := sdkClient(site, site.SecretKey)
	for _, key := range []string{"plain", "copy"} {
		got, out := getBody(t, c, &s3.GetObjectInput{Bucket: aws.String("dflt"), Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled})
		if got != string(body) || aws.ToString(out.ChecksumCRC64NVME) != want || out.ChecksumType != types.ChecksumTypeFullObject {
			t.Fatalf("%s: %d bytes, CRC64NVME %q %s, want %q FULL_OBJECT", key, len(got), aws.ToString(out.ChecksumCRC64NVME), out.ChecksumType, want)
		}
	}
}
