package s3api_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

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
		"/sub/k?ownershipControls", "/sub?metadataTable", "/sub/k?publicAccessBlock", "/sub/k?website", "/sub?session", "/sub?delete", "/sub?uploadId=x",
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
	if out, err := c.GetBucketPolicyStatus(ctx, &s3.GetBucketPolicyStatusInput{Bucket: aws.String("pol")}); err != nil || aws.ToBool(out.PolicyStatus.IsPublic) {
		t.Fatalf("status without a policy: %+v %v", out, err)
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

// rawHeaderBlock sends a signed request over a bare connection and returns
// the response's header block as the server wrote it (Go's client would
// canonicalise the names).
func rawHeaderBlock(t *testing.T, rc rawClient, rr rawRequest) string {
	t.Helper()
	req := rc.sign(rr)
	conn, err := net.Dial("tcp", rc.site.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	req.Header.Set("Connection", "close")
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(conn)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(all), "\r\n\r\n")
	return head
}

// TestProtocolDetails covers what the conformance suite found: metadata
// keys come back as sent (lower case), encoding-type=url leaves '/' alone,
// a chunked PUT signed with SigV4 verifies, an unversioned bucket's writes
// carry no version ID, and tag sets keep S3's order and limits.
func TestProtocolDetails(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	rc := rawClient{t, site}
	ctx := context.Background()
	mustCreateBucket(t, c, "proto")

	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("proto"), Key: aws.String("dir/a b+c"), Body: strings.NewReader("x"),
		Metadata: map[string]string{"foo": "bar", "Mixed-Case": "v"}}); err != nil {
		t.Fatal(err)
	}
	head := rawHeaderBlock(t, rc, rawRequest{method: http.MethodHead, target: "/proto/dir/a%20b%2Bc"})
	for _, want := range []string{"\r\nx-amz-meta-foo: bar", "\r\nx-amz-meta-mixed-case: v"} {
		if !strings.Contains(head, want) {
			t.Errorf("HEAD lacks %q:\n%s", want, head)
		}
	}
	if strings.Contains(head, "x-amz-version-id") || strings.Contains(head, "X-Amz-Version-Id") {
		t.Errorf("unversioned object answered with a version ID:\n%s", head)
	}

	// encoding-type=url escapes everything but unreserved bytes and '/'.
	st, body := rawGet(t, rc, "/proto?list-type=2&encoding-type=url&delimiter=/&prefix=dir/")
	for _, want := range []string{"<Prefix>dir/</Prefix>", "<Delimiter>/</Delimiter>", "<Key>dir/a%20b%2Bc</Key>"} {
		if st != 200 || !strings.Contains(body, want) {
			t.Errorf("listing lacks %s: %d %s", want, st, body)
		}
	}

	// And so it does for uploads in progress, saying so in EncodingType.
	if _, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("proto"), Key: aws.String("dir/up load")}); err != nil {
		t.Fatal(err)
	}
	st, body = rawGet(t, rc, "/proto?uploads&encoding-type=url&prefix=dir/")
	for _, want := range []string{"<EncodingType>url</EncodingType>", "<Key>dir/up%20load</Key>"} {
		if st != 200 || !strings.Contains(body, want) {
			t.Errorf("upload listing lacks %s: %d %s", want, st, body)
		}
	}

	// Transfer-Encoding: chunked, no Content-Length, signed by SigV4
	// (transfer-encoding among the signed headers, as botocore does).
	chunked := signTransferEncoding(t, site, "/proto/chunked", "bar")
	resp, err := http.DefaultClient.Do(chunked)
	if err != nil {
		t.Fatal(err)
	}
	if st, code := readAPIError(t, resp); st != 200 || code != "" {
		t.Fatalf("chunked signed PUT: %d %s", st, code)
	}
	if got, _ := getBody(t, c, &s3.GetObjectInput{Bucket: aws.String("proto"), Key: aws.String("chunked")}); got != "bar" {
		t.Fatalf("chunked PUT stored %q", got)
	}

	// x-amz-tagging with several tags; tag sets come back sorted by key.
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("proto"), Key: aws.String("tagged"), Body: strings.NewReader("x"),
		Tagging: aws.String("foo=bar&bar&z%20z=1%2B1")}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		tg, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("proto"), Key: aws.String("tagged")})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range tg.TagSet {
			got = append(got, aws.ToString(x.Key)+"="+aws.ToString(x.Value))
		}
		if strings.Join(got, "&") != "bar=&foo=bar&z z=1+1" {
			t.Fatalf("tag set %q", got)
		}
	}
	many := func(n, keyLen, valLen int) []types.Tag {
		var ts []types.Tag
		for i := range n {
			k := fmt.Sprintf("%0*d", max(keyLen, 2), i)
			ts = append(ts, types.Tag{Key: aws.String(k), Value: aws.String(strings.Repeat("v", valLen))})
		}
		return ts
	}
	for _, tc := range []struct {
		name string
		tags []types.Tag
		code string
	}{
		{"10 tags", many(10, 2, 1), ""},
		{"11 tags", many(11, 2, 1), "InvalidTag"},
		{"128-character key, 256-character value", many(1, 128, 256), ""},
		{"129-character key", many(1, 129, 1), "InvalidTag"},
		{"257-character value", many(1, 2, 257), "InvalidTag"},
		{"aws: prefix", []types.Tag{{Key: aws.String("aws:x"), Value: aws.String("v")}}, "InvalidTag"},
		{"duplicate key", []types.Tag{{Key: aws.String("k"), Value: aws.String("1")}, {Key: aws.String("k"), Value: aws.String("2")}}, "InvalidTag"},
	} {
		_, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("proto"), Key: aws.String("tagged"), Tagging: &types.Tagging{TagSet: tc.tags}})
		if apiCode(err) != tc.code {
			t.Errorf("object tags, %s: %v, want %q", tc.name, err, tc.code)
		}
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("proto"), Key: aws.String("t11"), Body: strings.NewReader("x"),
		Tagging: aws.String("a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9&j=10&k=11")}); apiCode(err) != "InvalidTag" {
		t.Errorf("11 tags in x-amz-tagging: %v", err)
	}
	if _, err := c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String("proto"), Tagging: &types.Tagging{TagSet: many(50, 2, 1)}}); err != nil {
		t.Errorf("50 bucket tags: %v", err)
	}
	if _, err := c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String("proto"), Tagging: &types.Tagging{TagSet: many(51, 2, 1)}}); apiCode(err) != "InvalidTag" {
		t.Errorf("51 bucket tags: %v", err)
	}
	bt, err := c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String("proto")})
	if err != nil || len(bt.TagSet) != 50 || aws.ToString(bt.TagSet[0].Key) != "00" || aws.ToString(bt.TagSet[49].Key) != "49" {
		t.Errorf("bucket tags: %+v %v", bt, err)
	}
}

func rawGet(t *testing.T, rc rawClient, target string) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(rc.sign(rawRequest{method: http.MethodGet, target: target}))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// signTransferEncoding builds a chunked PUT of body signed with SigV4 over
// host, transfer-encoding, x-amz-content-sha256 and x-amz-date, as botocore
// signs one (the Go SDK's signer never signs transfer-encoding).
func signTransferEncoding(t *testing.T, site *testsite.Site, path, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, site.URL+path, io.MultiReader(strings.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1
	req.TransferEncoding = []string{"chunked"}
	now := time.Now().UTC()
	amzDate, day := now.Format("20060102T150405Z"), now.Format("20060102")
	sum := sha256.Sum256([]byte(body))
	payload := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Date", amzDate)
	req.Header.Set("X-Amz-Content-Sha256", payload)
	signed := "host;transfer-encoding;x-amz-content-sha256;x-amz-date"
	canonical := strings.Join([]string{http.MethodPut, path, "",
		"host:" + req.URL.Host, "transfer-encoding:chunked", "x-amz-content-sha256:" + payload, "x-amz-date:" + amzDate, "",
		signed, payload}, "\n")
	scope := day + "/us-east-1/s3/aws4_request"
	crSum := sha256.Sum256([]byte(canonical))
	sts := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(crSum[:])
	mac := func(key []byte, msg string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	k := mac([]byte("AWS4"+site.SecretKey), day)
	for _, part := range []string{"us-east-1", "s3", "aws4_request"} {
		k = mac(k, part)
	}
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+site.AccessKey+"/"+scope+", SignedHeaders="+signed+", Signature="+hex.EncodeToString(mac(k, sts)))
	return req
}

// TestProtectionsRefused: a request asking for a protection twinlake does
// not provide (MFA delete, a conditional delete), or object lock in a
// bucket created without it, is refused and changes nothing, instead of
// being served without it.
func TestProtectionsRefused(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	rc := rawClient{t, site}
	mustCreateBucket(t, c, "prot")
	for _, tc := range []struct {
		name string
		rr   rawRequest
	}{
		{"MFA delete", rawRequest{method: http.MethodPut, target: "/prot?versioning", header: map[string]string{"x-amz-mfa": "SERIAL 123456"},
			body: []byte(`<VersioningConfiguration><Status>Enabled</Status><MfaDelete>Enabled</MfaDelete></VersioningConfiguration>`)}},
		{"MFA delete in the document", rawRequest{method: http.MethodPut, target: "/prot?versioning",
			body: []byte(`<VersioningConfiguration><Status>Enabled</Status><MfaDelete>Enabled</MfaDelete></VersioningConfiguration>`)}},
		{"conditional delete", rawRequest{method: http.MethodDelete, target: "/prot/k", header: map[string]string{"If-Match": `"abc"`}}},
	} {
		if st, code := rc.do(tc.rr); st != http.StatusNotImplemented || code != "NotImplemented" {
			t.Errorf("%s: %d %s, want 501 NotImplemented", tc.name, st, code)
		}
	}
	for _, tc := range []struct {
		name string
		rr   rawRequest
	}{
		{"retention on PUT", rawRequest{method: http.MethodPut, target: "/prot/k", body: []byte("x"),
			header: map[string]string{"x-amz-object-lock-mode": "COMPLIANCE", "x-amz-object-lock-retain-until-date": "2099-01-01T00:00:00Z"}}},
		{"legal hold on upload", rawRequest{method: http.MethodPost, target: "/prot/k?uploads", header: map[string]string{"x-amz-object-lock-legal-hold": "ON"}}},
	} {
		if st, code := rc.do(tc.rr); st != http.StatusBadRequest || code != "InvalidRequest" {
			t.Errorf("%s in a bucket without object lock: %d %s, want 400 InvalidRequest", tc.name, st, code)
		}
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("prot"), Key: aws.String("k")}); httpStatus(err) != 404 {
		t.Fatalf("a refused write stored the object: %v", err)
	}
	if v, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String("prot")}); err != nil || v.Status != "" {
		t.Fatalf("a refused versioning change applied: %+v %v", v, err)
	}
	if ups, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("prot")}); err != nil || len(ups.Uploads) != 0 {
		t.Fatalf("a refused upload was started: %+v %v", ups, err)
	}
}

// TestConditionalWrites: If-None-Match: * and If-Match on PutObject and
// CompleteMultipartUpload; of writers racing to create a key exactly one
// wins and every other gets 412, decided under the key's lock.
func TestConditionalWrites(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "cond")

	const racers = 8
	codes := make(chan string, racers)
	start := make(chan struct{})
	for i := range racers {
		go func() {
			<-start
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cond"), Key: aws.String("race"),
				Body: strings.NewReader(fmt.Sprintf("writer %d", i)), IfNoneMatch: aws.String("*")})
			codes <- apiCode(err)
		}()
	}
	close(start)
	won := 0
	for range racers {
		switch code := <-codes; code {
		case "":
			won++
		case "PreconditionFailed":
		default:
			t.Errorf("racing create: %s", code)
		}
	}
	if won != 1 {
		t.Fatalf("%d racing creates succeeded, want exactly 1", won)
	}

	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cond"), Key: aws.String("k"), Body: strings.NewReader("one")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cond"), Key: aws.String("k"), Body: strings.NewReader("two"), IfMatch: aws.String(`"0123"`)}); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("If-Match of another ETag: %v", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cond"), Key: aws.String("k"), Body: strings.NewReader("two"), IfMatch: put.ETag}); err != nil {
		t.Fatalf("If-Match of the current ETag: %v", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cond"), Key: aws.String("absent"), Body: strings.NewReader("x"), IfMatch: put.ETag}); apiCode(err) != "NoSuchKey" {
		t.Fatalf("If-Match on a missing key: %v", err)
	}

	complete := func(key string, in *s3.CompleteMultipartUploadInput) error {
		cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("cond"), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("cond"), Key: aws.String(key), UploadId: cu.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("part")})
		if err != nil {
			t.Fatal(err)
		}
		in.Bucket, in.Key, in.UploadId = aws.String("cond"), aws.String(key), cu.UploadId
		in.MultipartUpload = &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: up.ETag, PartNumber: aws.Int32(1)}}}
		_, err = c.CompleteMultipartUpload(ctx, in)
		return err
	}
	if err := complete("k", &s3.CompleteMultipartUploadInput{IfNoneMatch: aws.String("*")}); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("complete with If-None-Match over an object: %v", err)
	}
	if err := complete("fresh", &s3.CompleteMultipartUploadInput{IfNoneMatch: aws.String("*")}); err != nil {
		t.Fatalf("complete with If-None-Match of a new key: %v", err)
	}
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("cond"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	if err := complete("k", &s3.CompleteMultipartUploadInput{IfMatch: aws.String(`"0123"`)}); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("complete with a stale If-Match: %v", err)
	}
	if err := complete("k", &s3.CompleteMultipartUploadInput{IfMatch: h.ETag}); err != nil {
		t.Fatalf("complete with the current If-Match: %v", err)
	}
}

// TestUploadPartCopyRange: x-amz-copy-source-range must lie inside the
// source (InvalidRange otherwise) and be bytes=first-last
// (InvalidArgument otherwise).
func TestUploadPartCopyRange(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "cprange")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cprange"), Key: aws.String("src"), Body: strings.NewReader("12345")}); err != nil {
		t.Fatal(err)
	}
	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("cprange"), Key: aws.String("dst")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ rng, code string }{
		{"bytes=0-21", "InvalidRange"},
		{"bytes=5-5", "InvalidRange"},
		{"bytes=-2", "InvalidArgument"},
		{"bytes=3-1", "InvalidArgument"},
		{"0-1", "InvalidArgument"},
		{"bytes=1-3", ""},
	} {
		_, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String("cprange"), Key: aws.String("dst"), UploadId: cu.UploadId,
			PartNumber: aws.Int32(1), CopySource: aws.String("cprange/src"), CopySourceRange: aws.String(tc.rng)})
		if apiCode(err) != tc.code {
			t.Errorf("range %s: %v, want %q", tc.rng, err, tc.code)
		}
	}
	// If-None-Match with an ETag list fails only when the current ETag is in it.
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cprange"), Key: aws.String("src"), Body: strings.NewReader("zar"), IfNoneMatch: aws.String("ABCORZ")}); err != nil {
		t.Fatalf("If-None-Match of another ETag: %v", err)
	}
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("cprange"), Key: aws.String("src")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cprange"), Key: aws.String("src"), Body: strings.NewReader("x"), IfNoneMatch: h.ETag}); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("If-None-Match of the current ETag: %v", err)
	}
}

// TestCompleteChecksum: a checksum sent with CompleteMultipartUpload must
// be the composite of the parts' (BadDigest otherwise, and nothing is
// completed).
func TestCompleteChecksum(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "cksum")
	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("cksum"), Key: aws.String("k"), ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
	if err != nil {
		t.Fatal(err)
	}
	up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("cksum"), Key: aws.String("k"), UploadId: cu.UploadId, PartNumber: aws.Int32(1),
		Body: strings.NewReader("only part"), ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
	if err != nil {
		t.Fatal(err)
	}
	partSum := aws.ToString(up.ChecksumSHA256)
	raw, _ := base64.StdEncoding.DecodeString(partSum)
	whole := sha256.Sum256(raw)
	composite := base64.StdEncoding.EncodeToString(whole[:]) + "-1"
	complete := func(sum string) error {
		_, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("cksum"), Key: aws.String("k"), UploadId: cu.UploadId,
			ChecksumSHA256:  aws.String(sum),
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: up.ETag, PartNumber: aws.Int32(1), ChecksumSHA256: aws.String(partSum)}}}})
		return err
	}
	for _, bad := range []string{"bad", partSum + "-1", composite[:len(composite)-1] + "2"} {
		if err := complete(bad); apiCode(err) != "BadDigest" {
			t.Fatalf("complete with checksum %q: %v", bad, err)
		}
	}
	if err := complete(composite); err != nil {
		t.Fatalf("complete with the composite checksum: %v", err)
	}
}

// TestExpectedBucketOwner: x-amz-expected-bucket-owner (and the copy
// source's x-amz-source-expected-bucket-owner) naming anyone but the site
// owner, which owns every bucket, is refused with 403 AccessDenied and
// changes nothing, for signed, presigned and anonymous requests alike;
// naming the owner serves the request.
func TestExpectedBucketOwner(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, c, "own")
	owner, stranger := aws.String("twinlake"), aws.String("123456789012")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("own"), Key: aws.String("k"), Body: strings.NewReader("x"), ExpectedBucketOwner: owner}); err != nil {
		t.Fatalf("PUT expecting the site owner: %v", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("own"), Key: aws.String("other"), Body: strings.NewReader("x"), ExpectedBucketOwner: stranger}); apiCode(err) != "AccessDenied" {
		t.Fatalf("PUT expecting another owner: %v, want AccessDenied", err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("own"), Key: aws.String("other")}); httpStatus(err) != 404 {
		t.Fatalf("the refused PUT stored the object: %v", err)
	}
	if _, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("own"), ExpectedBucketOwner: stranger}); apiCode(err) != "AccessDenied" {
		t.Fatalf("list expecting another owner: %v, want AccessDenied", err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("own"), Key: aws.String("copy"), CopySource: aws.String("own/k"),
		ExpectedSourceBucketOwner: stranger}); apiCode(err) != "AccessDenied" {
		t.Fatalf("copy expecting another source owner: %v, want AccessDenied", err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("own"), Key: aws.String("copy"), CopySource: aws.String("own/k"),
		ExpectedSourceBucketOwner: owner, ExpectedBucketOwner: owner}); err != nil {
		t.Fatalf("copy expecting the site owner: %v", err)
	}
	ps := s3.NewPresignClient(c)
	for _, tc := range []struct {
		expected *string
		status   int
	}{{stranger, 403}, {owner, 200}} {
		req, err := ps.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("own"), Key: aws.String("k"), ExpectedBucketOwner: tc.expected})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(req.URL, "x-amz-expected-bucket-owner=") {
			t.Fatalf("the SDK did not hoist the header into the URL: %s", req.URL)
		}
		resp, err := http.Get(req.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Fatalf("presigned GET expecting %s: %d, want %d", *tc.expected, resp.StatusCode, tc.status)
		}
	}
	if _, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("own"), ACL: types.BucketCannedACLPublicReadWrite}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		expected string
		status   int
	}{{"123456789012", 403}, {"twinlake", 200}} {
		req, _ := http.NewRequest(http.MethodGet, site.URL+"/own?list-type=2", nil)
		req.Header.Set("x-amz-expected-bucket-owner", tc.expected)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Fatalf("anonymous list of a public-read-write bucket expecting %s: %d, want %d", tc.expected, resp.StatusCode, tc.status)
		}
	}
}

// TestMissingObjectToLister: a GET or HEAD that is not allowed, of a key
// that does not exist, answers 404 NoSuchKey to an identity allowed to
// list the bucket (with s3:prefix the key), as S3 and MinIO answer, and
// 403 AccessDenied to anyone else; an object that exists but may not be
// read stays 403.
func TestMissingObjectToLister(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	anon := func(method, path string) (int, string) {
		req, _ := http.NewRequest(method, site.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		code := ""
		if i := strings.Index(string(b), "<Code>"); i >= 0 {
			code, _, _ = strings.Cut(string(b[i+len("<Code>"):]), "<")
		}
		return resp.StatusCode, code
	}
	for _, b := range []string{"listable", "pfx", "closed"} {
		mustCreateBucket(t, c, b)
	}
	if _, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("listable"), ACL: types.BucketCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"gone", "secret"} {
		in := &s3.PutObjectInput{Bucket: aws.String("listable"), Key: aws.String(k), Body: strings.NewReader("x")}
		if k == "secret" {
			in.ACL = types.ObjectCannedACLPrivate
		}
		if _, err := c.PutObject(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("listable"), Key: aws.String("gone")}); err != nil {
		t.Fatal(err)
	}
	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::pfx","Condition":{"StringLike":{"s3:prefix":"public/*"}}}]}`
	if _, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("pfx"), Policy: aws.String(doc)}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/listable/never", 404, "NoSuchKey"},
		{"GET", "/listable/gone", 404, "NoSuchKey"},
		{"HEAD", "/listable/gone", 404, ""},
		{"GET", "/listable/secret", 403, "AccessDenied"},
		{"GET", "/pfx/public/missing", 404, "NoSuchKey"},
		{"HEAD", "/pfx/public/missing", 404, ""},
		{"GET", "/pfx/private/missing", 403, "AccessDenied"},
		{"HEAD", "/pfx/private/missing", 403, ""},
		{"GET", "/closed/missing", 403, "AccessDenied"},
	} {
		if st, code := anon(tc.method, tc.path); st != tc.status || code != tc.code {
			t.Errorf("anonymous %s %s: %d %s, want %d %s", tc.method, tc.path, st, code, tc.status, tc.code)
		}
	}
}

// TestSigV4DateHeader: a SigV4 request dated by a signed Date header alone
// (no x-amz-date), as botocore signs when its caller sets Date, is
// accepted in RFC 1123 with GMT or a numeric zone ("-0000", what Python's
// email.utils writes) against a real server, and stores the object.
func TestSigV4DateHeader(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	mustCreateBucket(t, c, "dated")
	mac := func(key []byte, msg string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	for i, layout := range []string{"Mon, 02 Jan 2006 15:04:05 -0000", http.TimeFormat} {
		body := fmt.Sprintf("dated %d", i)
		path := fmt.Sprintf("/dated/k%d", i)
		req, err := http.NewRequest(http.MethodPut, site.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		date, amzDate, day := now.Format(layout), now.Format("20060102T150405Z"), now.Format("20060102")
		sum := sha256.Sum256([]byte(body))
		payload := hex.EncodeToString(sum[:])
		req.Header.Set("Date", date)
		req.Header.Set("X-Amz-Content-Sha256", payload)
		signed := "date;host;x-amz-content-sha256"
		canonical := strings.Join([]string{http.MethodPut, path, "",
			"date:" + date, "host:" + req.URL.Host, "x-amz-content-sha256:" + payload, "",
			signed, payload}, "\n")
		scope := day + "/us-east-1/s3/aws4_request"
		crSum := sha256.Sum256([]byte(canonical))
		sts := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(crSum[:])
		k := mac([]byte("AWS4"+site.SecretKey), day)
		for _, part := range []string{"us-east-1", "s3", "aws4_request"} {
			k = mac(k, part)
		}
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+site.AccessKey+"/"+scope+", SignedHeaders="+signed+", Signature="+hex.EncodeToString(mac(k, sts)))
		resp, err := site.HTTPClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("PUT dated %q: %d %s", date, resp.StatusCode, b)
		}
		got, _ := getBody(t, c, &s3.GetObjectInput{Bucket: aws.String("dated"), Key: aws.String(path[len("/dated/"):])})
		if got != body {
			t.Fatalf("stored %q, want %q", got, body)
		}
	}
}
