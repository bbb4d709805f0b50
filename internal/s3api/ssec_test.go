package s3api_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
)

// customerKey is an SSE-C key as the SDK takes it: base64 and its MD5.
type customerKey struct{ raw, b64, md5 string }

func newCustomerKey() customerKey {
	k := make([]byte, 32)
	rand.Read(k)
	sum := md5.Sum(k)
	return customerKey{string(k), base64.StdEncoding.EncodeToString(k), base64.StdEncoding.EncodeToString(sum[:])}
}

func readAll(t *testing.T, out *s3.GetObjectOutput, err error) []byte {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSSECustomerKeys: SSE-C encrypts with the client's key, which is
// needed to read, head, copy and list parts' data; a missing, wrong or
// malformed key is refused with S3's errors; neither the plaintext nor the
// key is anywhere in the data directory; a restart changes nothing.
func TestSSECustomerKeys(t *testing.T) {
	t.Setenv("TWINLAKE_API_SSEC_ALLOW_HTTP", "on")
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "ssec")
	a, b := newCustomerKey(), newCustomerKey()
	data, marker := markedBody(t, "ssec", 300<<10) // a blob, not inline
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ssec"), Key: aws.String("obj"), Body: bytes.NewReader(data),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(a.b64), SSECustomerKeyMD5: aws.String(a.md5)})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(put.SSECustomerAlgorithm) != "AES256" || aws.ToString(put.SSECustomerKeyMD5) != a.md5 || put.ServerSideEncryption != "" {
		t.Fatalf("PUT answer: %+v", put)
	}
	get := func(k *customerKey, rng string) (*s3.GetObjectOutput, error) {
		in := &s3.GetObjectInput{Bucket: aws.String("ssec"), Key: aws.String("obj")}
		if k != nil {
			in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = aws.String("AES256"), aws.String(k.b64), aws.String(k.md5)
		}
		if rng != "" {
			in.Range = aws.String(rng)
		}
		return c.GetObject(ctx, in)
	}
	check := func() {
		t.Helper()
		out, err := get(&a, "")
		if got := readAll(t, out, err); !bytes.Equal(got, data) || aws.ToString(out.SSECustomerKeyMD5) != a.md5 {
			t.Fatalf("GET with the key: %d bytes, md5 header %q", len(got), aws.ToString(out.SSECustomerKeyMD5))
		}
		out, err = get(&a, "bytes=100000-100099")
		if got := readAll(t, out, err); !bytes.Equal(got, data[100000:100100]) {
			t.Fatalf("range GET with the key: %q", got)
		}
		if _, err := get(nil, ""); apiCode(err) != "InvalidRequest" {
			t.Fatalf("GET without the key: %v", err)
		}
		if _, err := get(&b, ""); apiCode(err) != "InvalidArgument" {
			t.Fatalf("GET with another key: %v", err)
		}
		if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("ssec"), Key: aws.String("obj")}); httpStatus(err) != 400 {
			t.Fatalf("HEAD without the key: %v", err)
		}
		h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("ssec"), Key: aws.String("obj"),
			SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(a.b64), SSECustomerKeyMD5: aws.String(a.md5)})
		if err != nil || aws.ToInt64(h.ContentLength) != int64(len(data)) || aws.ToString(h.SSECustomerAlgorithm) != "AES256" {
			t.Fatalf("HEAD with the key: %+v %v", h, err)
		}
	}
	check()
	for _, needle := range [][]byte{marker, []byte(a.raw), []byte(a.b64)} {
		if files := filesContaining(t, site.Dir, needle); len(files) > 0 {
			t.Fatalf("%q found at rest in %v", needle[:8], files)
		}
	}
	site.Restart()
	check()

	// Copy: the source's key is needed; the copy may take another key.
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("ssec"), Key: aws.String("copy"), CopySource: aws.String("ssec/obj")}); apiCode(err) != "InvalidRequest" {
		t.Fatalf("copy without the source key: %v", err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("ssec"), Key: aws.String("copy"), CopySource: aws.String("ssec/obj"),
		CopySourceSSECustomerAlgorithm: aws.String("AES256"), CopySourceSSECustomerKey: aws.String(a.b64), CopySourceSSECustomerKeyMD5: aws.String(a.md5),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(b.b64), SSECustomerKeyMD5: aws.String(b.md5)}); err != nil {
		t.Fatalf("copy to another key: %v", err)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("ssec"), Key: aws.String("copy"),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(b.b64), SSECustomerKeyMD5: aws.String(b.md5)})
	if got := readAll(t, out, err); !bytes.Equal(got, data) {
		t.Fatal("copy under key B does not read back")
	}

	// Multipart: every part with the upload's key.
	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("ssec"), Key: aws.String("mp"),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(a.b64), SSECustomerKeyMD5: aws.String(a.md5)})
	if err != nil {
		t.Fatal(err)
	}
	part := bytes.Repeat([]byte("p"), 5<<20)
	if _, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("ssec"), Key: aws.String("mp"), UploadId: cu.UploadId, PartNumber: aws.Int32(1),
		Body: strings.NewReader("small"), SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(b.b64), SSECustomerKeyMD5: aws.String(b.md5)}); apiCode(err) != "InvalidArgument" {
		t.Fatalf("part under another key: %v", err)
	}
	var parts []types.CompletedPart
	for i, body := range [][]byte{part, []byte("tail")} {
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("ssec"), Key: aws.String("mp"), UploadId: cu.UploadId, PartNumber: aws.Int32(int32(i + 1)),
			Body: bytes.NewReader(body), SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(a.b64), SSECustomerKeyMD5: aws.String(a.md5)})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, types.CompletedPart{ETag: up.ETag, PartNumber: aws.Int32(int32(i + 1))})
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("ssec"), Key: aws.String("mp"), UploadId: cu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
		t.Fatal(err)
	}
	out, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("ssec"), Key: aws.String("mp"), Range: aws.String("bytes=5242878-5242881"),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(a.b64), SSECustomerKeyMD5: aws.String(a.md5)})
	if got := readAll(t, out, err); string(got) != "ppta" {
		t.Fatalf("range across parts: %q", got)
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("ssec"), Key: aws.String("mp")}); apiCode(err) != "InvalidRequest" {
		t.Fatalf("multipart GET without the key: %v", err)
	}

	// A key sent for an object that has none is not silently ignored.
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ssec"), Key: aws.String("plain"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("ssec"), Key: aws.String("plain"),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(a.b64), SSECustomerKeyMD5: aws.String(a.md5)}); apiCode(err) != "InvalidRequest" {
		t.Fatalf("key for a plain object: %v", err)
	}
}

// TestSSECMalformedHeaders: every malformed or contradictory SSE-C or
// SSE-KMS header is refused with S3's error, and nothing is stored.
func TestSSECMalformedHeaders(t *testing.T) {
	t.Setenv("TWINLAKE_API_SSEC_ALLOW_HTTP", "on")
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	mustCreateBucket(t, c, "ssec")
	rc := rawClient{t, site}
	k := newCustomerKey()
	short := base64.StdEncoding.EncodeToString([]byte("sixteen byte key"))
	for _, tc := range []struct {
		name   string
		header map[string]string
		code   string
	}{
		{"no algorithm", map[string]string{"x-amz-server-side-encryption-customer-key": k.b64, "x-amz-server-side-encryption-customer-key-md5": k.md5}, "InvalidArgument"},
		{"no key", map[string]string{"x-amz-server-side-encryption-customer-algorithm": "AES256"}, "InvalidArgument"},
		{"no md5", map[string]string{"x-amz-server-side-encryption-customer-algorithm": "AES256", "x-amz-server-side-encryption-customer-key": k.b64}, "InvalidArgument"},
		{"wrong md5", map[string]string{"x-amz-server-side-encryption-customer-algorithm": "AES256", "x-amz-server-side-encryption-customer-key": k.b64,
			"x-amz-server-side-encryption-customer-key-md5": "AAAAAAAAAAAAAAAAAAAAAA=="}, "InvalidArgument"},
		{"short key", map[string]string{"x-amz-server-side-encryption-customer-algorithm": "AES256", "x-amz-server-side-encryption-customer-key": short,
			"x-amz-server-side-encryption-customer-key-md5": k.md5}, "InvalidArgument"},
		{"other algorithm", map[string]string{"x-amz-server-side-encryption-customer-algorithm": "AES128", "x-amz-server-side-encryption-customer-key": k.b64,
			"x-amz-server-side-encryption-customer-key-md5": k.md5}, "InvalidEncryptionAlgorithmError"},
		{"SSE-C and SSE-S3", map[string]string{"x-amz-server-side-encryption": "AES256", "x-amz-server-side-encryption-customer-algorithm": "AES256",
			"x-amz-server-side-encryption-customer-key": k.b64, "x-amz-server-side-encryption-customer-key-md5": k.md5}, "InvalidArgument"},
		{"SSE-KMS", map[string]string{"x-amz-server-side-encryption": "aws:kms"}, "InvalidArgument"},
		{"KMS key without KMS", map[string]string{"x-amz-server-side-encryption-aws-kms-key-id": "arn:aws:kms:us-east-1:1:key/x"}, "InvalidArgument"},
		{"KMS context", map[string]string{"x-amz-server-side-encryption-context": "e30="}, "InvalidArgument"},
	} {
		if st, code := rc.do(rawRequest{method: http.MethodPut, target: "/ssec/bad", body: []byte("x"), header: tc.header}); st != 400 || code != tc.code {
			t.Errorf("%s: %d %s, want 400 %s", tc.name, st, code, tc.code)
		}
	}
	if _, err := c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String("ssec"), Key: aws.String("bad")}); httpStatus(err) != 404 {
		t.Fatalf("a refused write stored something: %v", err)
	}
}

// TestSSECNeedsTLS: SSE-C keys over plain HTTP are refused unless the
// operator allowed it; over HTTPS they need nothing.
func TestSSECNeedsTLS(t *testing.T) {
	k := newCustomerKey()
	putKeyed := func(site *testsite.Site) error {
		_, err := sdkClient(site, site.SecretKey).PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("ssec"), Key: aws.String("k"),
			Body: strings.NewReader("x"), SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(k.b64), SSECustomerKeyMD5: aws.String(k.md5)})
		return err
	}
	plain := testsite.Start(t)
	mustCreateBucket(t, sdkClient(plain, plain.SecretKey), "ssec")
	if err := putKeyed(plain); apiCode(err) != "InvalidRequest" {
		t.Fatalf("SSE-C over plain HTTP: %v", err)
	}
	tls := testsite.Start(t, testsite.WithTLS())
	mustCreateBucket(t, sdkClient(tls, tls.SecretKey), "ssec")
	if err := putKeyed(tls); err != nil {
		t.Fatalf("SSE-C over HTTPS: %v", err)
	}
}

// TestSSECBucketPolicy: a bucket policy can demand SSE-C on writes through
// s3:x-amz-server-side-encryption-customer-algorithm.
func TestSSECBucketPolicy(t *testing.T) {
	t.Setenv("TWINLAKE_API_SSEC_ALLOW_HTTP", "on")
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "ssecpol")
	user := createUser(t, site, "writer", "writer-secret-key", "readwrite")
	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::ssecpol/*",
		"Condition":{"Null":{"s3:x-amz-server-side-encryption-customer-algorithm":"true"}}}]}`
	if _, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("ssecpol"), Policy: aws.String(doc)}); err != nil {
		t.Fatal(err)
	}
	if _, err := user.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ssecpol"), Key: aws.String("k"), Body: strings.NewReader("x")}); apiCode(err) != "AccessDenied" {
		t.Fatalf("unencrypted write under a policy demanding SSE-C: %v", err)
	}
	k := newCustomerKey()
	if _, err := user.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ssecpol"), Key: aws.String("k"), Body: strings.NewReader("x"),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(k.b64), SSECustomerKeyMD5: aws.String(k.md5)}); err != nil {
		t.Fatalf("SSE-C write under that policy: %v", err)
	}
}

// createUser adds a user with a built-in policy and returns its client.
func createUser(t *testing.T, site *testsite.Site, name, secret, pol string) *s3.Client {
	t.Helper()
	ctx := context.Background()
	adm := rootAdmin(t, site)
	if err := adm.AddUser(ctx, name, secret); err != nil {
		t.Fatal(err)
	}
	if err := adm.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{pol}, User: name}); err != nil {
		t.Fatal(err)
	}
	return userSDK(site, name, secret)
}

// TestSSEHeaderOnRead: x-amz-server-side-encryption on a GET or HEAD asks
// for something a read cannot do and is refused, not ignored.
func TestSSEHeaderOnRead(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	mustCreateBucket(t, c, "sseread")
	if _, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("sseread"), Key: aws.String("k"), Body: strings.NewReader("x"),
		ServerSideEncryption: types.ServerSideEncryptionAes256}); err != nil {
		t.Fatal(err)
	}
	rc := rawClient{t, site}
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		st, code := rc.do(rawRequest{method: m, target: "/sseread/k", header: map[string]string{"x-amz-server-side-encryption": "AES256"}})
		if st != 400 || (m == http.MethodGet && code != "InvalidArgument") {
			t.Errorf("%s with x-amz-server-side-encryption: %d %s", m, st, code)
		}
	}
}

// TestSSECOpaqueETag: an object or part written under a customer key has an
// ETag that is not the MD5 of its plaintext (S3's is opaque for SSE-C:
// the MD5 would confirm a guess of the content to anyone who can list),
// and that ETag is the object's everywhere: PUT answer, HEAD, listing,
// If-Match, a multipart's parts and the completed object's HEAD. The same
// data under the same key has the same ETag (a re-sent part still matches
// the ETag the client kept), under another key another. A wrong
// Content-MD5 is still refused (BadDigest); unencrypted objects keep the
// MD5.
func TestSSECOpaqueETag(t *testing.T) {
	t.Setenv("TWINLAKE_API_SSEC_ALLOW_HTTP", "on")
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "opaque")
	k := newCustomerKey()
	body := []byte("a guessable secret")
	sum := md5.Sum(body)
	plainMD5 := `"` + hex.EncodeToString(sum[:]) + `"`
	withKey := func(in *s3.PutObjectInput) *s3.PutObjectInput {
		in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = aws.String("AES256"), aws.String(k.b64), aws.String(k.md5)
		return in
	}
	put, err := c.PutObject(ctx, withKey(&s3.PutObjectInput{Bucket: aws.String("opaque"), Key: aws.String("k"), Body: bytes.NewReader(body)}))
	if err != nil {
		t.Fatal(err)
	}
	etag := aws.ToString(put.ETag)
	if etag == plainMD5 || len(etag) != 34 {
		t.Fatalf("SSE-C PUT ETag %s: want 32 hex digits that are not the plaintext's MD5 %s", etag, plainMD5)
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("opaque"), Key: aws.String("k"),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(k.b64), SSECustomerKeyMD5: aws.String(k.md5)})
	if err != nil || aws.ToString(head.ETag) != etag {
		t.Fatalf("HEAD ETag %v, %v; want %s", head, err, etag)
	}
	list, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("opaque"), Prefix: aws.String("k")})
	if err != nil || len(list.Contents) != 1 || aws.ToString(list.Contents[0].ETag) != etag {
		t.Fatalf("listing: %+v, %v; want ETag %s", list, err, etag)
	}
	gout, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("opaque"), Key: aws.String("k"), IfMatch: aws.String(etag),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(k.b64), SSECustomerKeyMD5: aws.String(k.md5)})
	got := readAll(t, gout, err)
	if !bytes.Equal(got, body) {
		t.Fatalf("GET If-Match: %q", got)
	}
	again, err := c.PutObject(ctx, withKey(&s3.PutObjectInput{Bucket: aws.String("opaque"), Key: aws.String("k2"), Body: bytes.NewReader(body)}))
	if err != nil || aws.ToString(again.ETag) != etag {
		t.Fatalf("the same body under the same key: ETag %s (first %s), %v", aws.ToString(again.ETag), etag, err)
	}
	k2 := newCustomerKey()
	other, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("opaque"), Key: aws.String("k3"), Body: bytes.NewReader(body),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(k2.b64), SSECustomerKeyMD5: aws.String(k2.md5)})
	if err != nil || aws.ToString(other.ETag) == etag || aws.ToString(other.ETag) == plainMD5 {
		t.Fatalf("the same body under another key: ETag %s (first key's %s), %v", aws.ToString(other.ETag), etag, err)
	}
	wrong := md5.Sum([]byte("other"))
	_, err = c.PutObject(ctx, withKey(&s3.PutObjectInput{Bucket: aws.String("opaque"), Key: aws.String("bad"), Body: bytes.NewReader(body),
		ContentMD5: aws.String(base64.StdEncoding.EncodeToString(wrong[:]))}))
	if apiCode(err) != "BadDigest" {
		t.Fatalf("SSE-C PUT with a wrong Content-MD5: %v, want BadDigest", err)
	}
	plain, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("opaque"), Key: aws.String("plain"), Body: bytes.NewReader(body)})
	if err != nil || aws.ToString(plain.ETag) != plainMD5 {
		t.Fatalf("unencrypted PUT ETag %s, %v; want the MD5 %s", aws.ToString(plain.ETag), err, plainMD5)
	}

	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("opaque"), Key: aws.String("mp"),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(k.b64), SSECustomerKeyMD5: aws.String(k.md5)})
	if err != nil {
		t.Fatal(err)
	}
	up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("opaque"), Key: aws.String("mp"), UploadId: cu.UploadId, PartNumber: aws.Int32(1),
		Body: bytes.NewReader(body), SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(k.b64), SSECustomerKeyMD5: aws.String(k.md5)})
	if err != nil || aws.ToString(up.ETag) == plainMD5 {
		t.Fatalf("SSE-C part ETag %v, %v: must not be the part's MD5", up, err)
	}
	resent, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("opaque"), Key: aws.String("mp"), UploadId: cu.UploadId, PartNumber: aws.Int32(1),
		Body: bytes.NewReader(body), SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(k.b64), SSECustomerKeyMD5: aws.String(k.md5)})
	if err != nil || aws.ToString(resent.ETag) != aws.ToString(up.ETag) {
		t.Fatalf("part 1 re-sent: ETag %v (first %s), %v", resent, aws.ToString(up.ETag), err)
	}
	done, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("opaque"), Key: aws.String("mp"), UploadId: cu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: up.ETag, PartNumber: aws.Int32(1)}}}})
	if err != nil {
		t.Fatal(err)
	}
	mh, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("opaque"), Key: aws.String("mp"), PartNumber: aws.Int32(1),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(k.b64), SSECustomerKeyMD5: aws.String(k.md5)})
	if err != nil || aws.ToString(mh.ETag) != aws.ToString(done.ETag) || aws.ToInt32(mh.PartsCount) != 1 {
		t.Fatalf("HEAD part 1 of the SSE-C multipart: %+v, %v; want ETag %s", mh, err, aws.ToString(done.ETag))
	}
}
