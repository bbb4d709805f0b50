package s3api_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/twinlake/twinlake/internal/testsite"
)

// rawClient sends hand-built, correctly signed requests, so a test controls
// every byte the server sees.
type rawClient struct {
	t    *testing.T
	site *testsite.Site
}

// rawRequest is one hand-built request.
type rawRequest struct {
	method string
	target string // escaped path and query, exactly as sent on the wire
	body   []byte
	header map[string]string
	// payloadHash is x-amz-content-sha256; "" means the SHA-256 of body.
	payloadHash string
	// declared is the Content-Length sent; 0 means len(body), -1 means
	// Transfer-Encoding: chunked.
	declared int64
	// wire, when set, is what is actually sent as the body (raw TCP), so it
	// can disagree with the declared length.
	wire []byte
}

// sign builds and signs the request as the AWS SDK would.
func (c rawClient) sign(rr rawRequest) *http.Request {
	c.t.Helper()
	var body io.Reader = bytes.NewReader(rr.body)
	if rr.declared < 0 {
		body = io.MultiReader(bytes.NewReader(rr.body)) // hides the length: chunked
	}
	req, err := http.NewRequest(rr.method, c.site.URL+rr.target, body)
	if err != nil {
		c.t.Fatalf("%s %s: %v", rr.method, rr.target, err)
	}
	switch {
	case rr.declared < 0:
		req.ContentLength = -1
	case rr.declared > 0:
		req.ContentLength = rr.declared
	}
	for k, v := range rr.header {
		req.Header.Set(k, v)
	}
	hash := rr.payloadHash
	if hash == "" {
		sum := sha256.Sum256(rr.body)
		hash = hex.EncodeToString(sum[:])
	}
	req.Header.Set("X-Amz-Content-Sha256", hash)
	cred := aws.Credentials{AccessKeyID: c.site.AccessKey, SecretAccessKey: c.site.SecretKey}
	err = v4.NewSigner().SignHTTP(context.Background(), cred, req, hash, "s3", "us-east-1", time.Now(),
		func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err != nil {
		c.t.Fatal(err)
	}
	return req
}

// do sends the request and returns the status and S3 error code.
func (c rawClient) do(rr rawRequest) (int, string) {
	c.t.Helper()
	req := c.sign(rr)
	if rr.wire != nil {
		return c.doRaw(req, rr.wire)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", rr.method, rr.target, err)
	}
	return readAPIError(c.t, resp)
}

// doRaw writes the signed request over a bare TCP connection with wire as
// its body whatever Content-Length says, half-closes, and reads the answer.
func (c rawClient) doRaw(req *http.Request, wire []byte) (int, string) {
	c.t.Helper()
	conn, err := net.Dial("tcp", c.site.Addr)
	if err != nil {
		c.t.Fatal(err)
	}
	defer conn.Close()
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", req.Method, req.URL.RequestURI(), req.Host, req.ContentLength)
	for k, vs := range req.Header {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("Connection: close\r\n\r\n")
	b.Write(wire)
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write(b.Bytes()); err != nil {
		c.t.Fatal(err)
	}
	conn.(*net.TCPConn).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		c.t.Fatalf("reading the answer to %s %s: %v", req.Method, req.URL.RequestURI(), err)
	}
	return readAPIError(c.t, resp)
}

func readAPIError(t *testing.T, resp *http.Response) (int, string) {
	t.Helper()
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode < 300 {
		return resp.StatusCode, ""
	}
	var e struct {
		Code string `xml:"Code"`
	}
	if err := xml.Unmarshal(data, &e); err != nil && len(data) > 0 {
		t.Fatalf("status %d with an unparsable error body: %q", resp.StatusCode, data)
	}
	return resp.StatusCode, e.Code
}

func md5B64(b []byte) string {
	sum := md5.Sum(b)
	return base64.StdEncoding.EncodeToString(sum[:])
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// snapshot lists every path under root except those under skip.
func snapshot(t *testing.T, root, skip string) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == skip {
			return filepath.SkipDir
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// countFiles counts regular files under dir.
func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return n
}

func TestBadInput(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "site", "data")
	site := testsite.Start(t, testsite.WithDir(dir))
	sdk := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	mustCreateBucket(t, sdk, "bad")
	if _, err := sdk.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bad"), Key: aws.String("keep"), Body: strings.NewReader("keep")}); err != nil {
		t.Fatal(err)
	}
	up, err := sdk.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("bad"), Key: aws.String("mpu")})
	if err != nil {
		t.Fatal(err)
	}
	uploadID := aws.ToString(up.UploadId)
	before := snapshot(t, root, dir)
	marker := "twinlake-escape-" + rand.Text()
	outside := filepath.Join(os.TempDir(), marker)

	small := []byte("small body for bad input tests")
	large := bytes.Repeat([]byte("0123456789abcdef"), 300<<10/16) // a blob file, not inline
	long := strings.Repeat("k", 1025)
	cases := []struct {
		name   string
		req    rawRequest
		status int
		code   string
	}{
		// Bucket names.
		{"bucket too short", rawRequest{method: "PUT", target: "/ab"}, 400, "InvalidBucketName"},
		{"bucket upper case", rawRequest{method: "PUT", target: "/UPPER"}, 400, "InvalidBucketName"},
		{"bucket underscore", rawRequest{method: "PUT", target: "/has_underscore"}, 400, "InvalidBucketName"},
		{"bucket dashes at ends", rawRequest{method: "PUT", target: "/-x-"}, 400, "InvalidBucketName"},
		{"bucket IP address", rawRequest{method: "PUT", target: "/192.168.1.1"}, 400, "InvalidBucketName"},
		{"bucket 64 chars", rawRequest{method: "PUT", target: "/" + strings.Repeat("b", 64)}, 400, "InvalidBucketName"},
		{"bucket dot dot", rawRequest{method: "PUT", target: "/%2e%2e"}, 400, "InvalidBucketName"},

		// Key length.
		{"key 1025 bytes", rawRequest{method: "PUT", target: "/bad/" + long, body: small}, 400, "KeyTooLongError"},
		{"key 1024 bytes", rawRequest{method: "PUT", target: "/bad/" + long[1:], body: small}, 200, ""},

		// Dot segments are plain key bytes.
		{"dot dot climb", rawRequest{method: "PUT", target: "/bad/../../../../../../../../tmp/" + marker, body: small}, 200, ""},
		{"dot dot inside", rawRequest{method: "PUT", target: "/bad/a/../b", body: small}, 200, ""},
		{"dot slash", rawRequest{method: "PUT", target: "/bad/./x", body: small}, 200, ""},
		{"lone dot dot", rawRequest{method: "PUT", target: "/bad/..", body: small}, 200, ""},
		{"encoded dot dot", rawRequest{method: "PUT", target: "/bad/%2e%2e/%2e%2e/" + marker + "-enc", body: small}, 200, ""},
		{"encoded slash", rawRequest{method: "PUT", target: "/bad/..%2F..%2F" + marker + "-slash", body: small}, 200, ""},
		{"upper encoded dot dot", rawRequest{method: "PUT", target: "/bad/x/%2E%2E/y", body: small}, 200, ""},

		// Malformed XML bodies.
		{"versioning not xml", rawRequest{method: "PUT", target: "/bad?versioning", body: []byte("Enabled")}, 400, "MalformedXML"},
		{"versioning unclosed", rawRequest{method: "PUT", target: "/bad?versioning", body: []byte("<VersioningConfiguration><Status>Enabled</Status>")}, 400, "MalformedXML"},
		{"versioning wrong root", rawRequest{method: "PUT", target: "/bad?versioning", body: []byte("<Versioning><Status>Enabled</Status></Versioning>")}, 400, "MalformedXML"},
		{"versioning bad status", rawRequest{method: "PUT", target: "/bad?versioning", body: []byte("<VersioningConfiguration><Status>On</Status></VersioningConfiguration>")}, 400, "MalformedXML"},
		{"delete not xml", rawRequest{method: "POST", target: "/bad?delete", body: []byte("keep")}, 400, "MalformedXML"},
		{"delete unclosed", rawRequest{method: "POST", target: "/bad?delete", body: []byte("<Delete><Object><Key>keep</Key></Object>")}, 400, "MalformedXML"},
		{"delete empty body", rawRequest{method: "POST", target: "/bad?delete"}, 400, "MalformedXML"},
		{"delete no objects", rawRequest{method: "POST", target: "/bad?delete", body: []byte("<Delete></Delete>")}, 400, "MalformedXML"},
		{"complete not xml", rawRequest{method: "POST", target: "/bad/mpu?uploadId=" + uploadID, body: []byte("parts")}, 400, "MalformedXML"},
		{"complete unclosed", rawRequest{method: "POST", target: "/bad/mpu?uploadId=" + uploadID, body: []byte("<CompleteMultipartUpload><Part><PartNumber>1</PartNumber>")}, 400, "MalformedXML"},

		// Bodies that disagree with their declared length.
		{"body shorter than declared", rawRequest{method: "PUT", target: "/bad/short", body: small, payloadHash: "UNSIGNED-PAYLOAD", wire: small[:10]}, 400, "IncompleteBody"},
		{"signed body shorter than declared", rawRequest{method: "PUT", target: "/bad/short-signed", body: small, wire: small[:10]}, 400, "IncompleteBody"},
		{"large body shorter than declared", rawRequest{method: "PUT", target: "/bad/short-large", body: large, payloadHash: "UNSIGNED-PAYLOAD", wire: large[:200<<10]}, 400, "IncompleteBody"},
		{"body longer than declared", rawRequest{method: "PUT", target: "/bad/long", body: small[:10], payloadHash: sha256Hex(small), wire: small}, 400, "XAmzContentSHA256Mismatch"},
		{"unsigned body longer than declared", rawRequest{method: "PUT", target: "/bad/long-md5", body: small[:10], payloadHash: "UNSIGNED-PAYLOAD",
			header: map[string]string{"Content-MD5": md5B64(small)}, wire: small}, 400, "BadDigest"},

		// Payload checks.
		{"wrong sha256", rawRequest{method: "PUT", target: "/bad/sha", body: small, payloadHash: sha256Hex([]byte("something else"))}, 400, "XAmzContentSHA256Mismatch"},
		{"wrong sha256 large", rawRequest{method: "PUT", target: "/bad/sha-large", body: large, payloadHash: sha256Hex(small)}, 400, "XAmzContentSHA256Mismatch"},
		{"wrong sha256 part", rawRequest{method: "PUT", target: "/bad/mpu?partNumber=1&uploadId=" + uploadID, body: large, payloadHash: sha256Hex(small)}, 400, "XAmzContentSHA256Mismatch"},
		{"wrong content-md5", rawRequest{method: "PUT", target: "/bad/md5", body: small, header: map[string]string{"Content-MD5": md5B64(large)}}, 400, "BadDigest"},
		{"wrong content-md5 large", rawRequest{method: "PUT", target: "/bad/md5-large", body: large, header: map[string]string{"Content-MD5": md5B64(small)}}, 400, "BadDigest"},
		{"malformed content-md5", rawRequest{method: "PUT", target: "/bad/md5-bad", body: small, header: map[string]string{"Content-MD5": "not base64!"}}, 400, "InvalidDigest"},
		{"empty content-md5", rawRequest{method: "PUT", target: "/bad/md5-empty", body: small, header: map[string]string{"Content-MD5": ""}}, 400, "InvalidDigest"},
		{"malformed checksum", rawRequest{method: "PUT", target: "/bad/sum-bad", body: small, header: map[string]string{"x-amz-checksum-sha256": "bad"}}, 400, "BadDigest"},
		{"wrong checksum", rawRequest{method: "PUT", target: "/bad/sum-wrong", body: small, header: map[string]string{"x-amz-checksum-sha256": "arcu6553sHVAiX4MjW0j7I7vD4w6R+Gz9Ok0Q9lTa+0="}}, 400, "BadDigest"},

		// Characters no XML listing could carry.
		{"key with NUL", rawRequest{method: "PUT", target: "/bad/a%00b", body: small}, 400, "InvalidArgument"},
		{"key with control character", rawRequest{method: "PUT", target: "/bad/a%01b", body: small}, 400, "InvalidArgument"},
		{"upload of a key with a control character", rawRequest{method: "POST", target: "/bad/a%1Fb?uploads"}, 400, "InvalidArgument"},

		// Sub-resources that are not served must not fall through to a plain
		// bucket or object operation.
		{"put bucket logging", rawRequest{method: "PUT", target: "/bad?logging"}, 501, "NotImplemented"},
		{"put object acl of a missing key", rawRequest{method: "PUT", target: "/bad/acl-key?acl", body: small}, 404, "NoSuchKey"},
		{"put object acl that is not XML", rawRequest{method: "PUT", target: "/bad/keep?acl", body: small}, 400, "MalformedACLError"},
		{"delete bucket cors when none is set", rawRequest{method: "DELETE", target: "/bad?cors"}, 404, "NoSuchCORSConfiguration"},
		{"put object cors", rawRequest{method: "PUT", target: "/bad/keep?cors", body: small}, 501, "NotImplemented"},
		{"delete object lifecycle", rawRequest{method: "DELETE", target: "/bad/keep?lifecycle"}, 501, "NotImplemented"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc := rawClient{t: t, site: site}
			status, code := rc.do(tc.req)
			if status != tc.status || code != tc.code {
				t.Fatalf("got %d %s, want %d %s", status, code, tc.status, tc.code)
			}
		})
	}

	// Nothing the bad requests carried was stored.
	lb, err := sdk.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil || len(lb.Buckets) != 1 || aws.ToString(lb.Buckets[0].Name) != "bad" {
		t.Errorf("buckets after bad names: %v %v", lb, err)
	}
	wantKeys := []string{"keep", long[1:], "../../../../../../../../tmp/" + marker, "a/../b", "./x", "..",
		"../../" + marker + "-enc", "../../" + marker + "-slash", "x/../y"}
	sort.Strings(wantKeys)
	var keys []string
	p := s3.NewListObjectsV2Paginator(sdk, &s3.ListObjectsV2Input{Bucket: aws.String("bad")})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	if !slices.Equal(keys, wantKeys) {
		t.Errorf("stored keys:\n%q\nwant:\n%q", keys, wantKeys)
	}
	for _, k := range wantKeys[1:] {
		if k == "keep" {
			continue
		}
		if got, _ := getBody(t, sdk, &s3.GetObjectInput{Bucket: aws.String("bad"), Key: aws.String(k)}); got != string(small) {
			t.Errorf("key %q reads %q", k, got)
		}
	}
	if n := countFiles(t, filepath.Join(dir, "blobs")); n != 0 {
		t.Errorf("%d blob files left by refused writes", n)
	}
	if v, err := sdk.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String("bad")}); err != nil || v.Status != "" {
		t.Errorf("versioning changed by malformed requests: %q %v", v.Status, err)
	}
	lp, err := sdk.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("bad"), Key: aws.String("mpu"), UploadId: up.UploadId})
	if err != nil || len(lp.Parts) != 0 {
		t.Errorf("upload after refused parts and completes: %v %v", lp, err)
	}

	// Nothing was created outside the data directory.
	if after := snapshot(t, root, dir); !slices.Equal(before, after) {
		t.Errorf("files appeared outside the data directory:\nbefore %q\nafter  %q", before, after)
	}
	for _, p := range []string{outside, filepath.Join(root, marker), filepath.Join(root, "site", marker), filepath.Join(filepath.Dir(root), marker)} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists (%v)", p, err)
		}
	}
}
