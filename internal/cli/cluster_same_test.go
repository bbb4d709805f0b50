package cli

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/minio/minio-go/v7"
)

// answer is what a node answered a request: its status, its headers but
// those that name the request or the moment (Date, the request ID), and
// its body without the request ID an error carries.
type answer struct {
	status int
	header http.Header
	body   []byte
}

var errorRequestID = regexp.MustCompile(`<RequestId>[^<]*</RequestId>|<HostId>[^<]*</HostId>`)

// signedAnswer sends method path (with its query) to node, signed as
// access/secret with the extra headers, and reads the answer.
func signedAnswer(t *testing.T, node, method, path string, extra http.Header, access, secret string) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, "http://"+node+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range extra {
		req.Header[k] = v
	}
	const emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	req.Header.Set("X-Amz-Content-Sha256", emptyHash)
	if err := v4.NewSigner().SignHTTP(t.Context(), aws.Credentials{AccessKeyID: access, SecretAccessKey: secret}, req, emptyHash, "s3", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	// As minio-go's: no Accept-Encoding, nothing unpacked.
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s through %s: %v", method, path, node, err)
	}
	h := resp.Header.Clone()
	for _, k := range []string{"Date", "X-Amz-Request-Id", "X-Amz-Id-2"} {
		h.Del(k)
	}
	return answer{status: resp.StatusCode, header: h, body: errorRequestID.ReplaceAll(body, nil)}
}

// sameThroughEveryNode: every live node answers a set of reads (whole,
// ranged and conditional GETs, a part, overridden headers, HEAD, errors,
// a listing; objects large and small, encrypted and gzip-encoded) exactly
// as the leader does, status, headers and body: passing a request on, or
// reading its data from the drives itself, changes nothing a client sees.
func sameThroughEveryNode(t *testing.T, nodes []string, dead, leader int, access, secret string) {
	t.Helper()
	head := signedAnswer(t, nodes[leader], http.MethodHead, "/data/large", nil, access, secret)
	etag := head.header.Get("ETag")
	if head.status != http.StatusOK || etag == "" {
		t.Fatalf("HEAD on the leader: %d %v", head.status, head.header)
	}
	reads := []struct {
		method, path string
		header       http.Header
	}{
		{"GET", "/data/large", nil},
		{"HEAD", "/data/large", nil},
		{"GET", "/data/large", http.Header{"Range": {"bytes=100-200"}}},
		{"GET", "/data/large", http.Header{"Range": {"bytes=1000-3000000"}}},
		{"GET", "/data/large", http.Header{"Range": {"bytes=-500"}}},
		{"GET", "/data/large", http.Header{"Range": {"bytes=99999999-"}}},
		{"GET", "/data/large?partNumber=2", nil},
		{"GET", "/data/large", http.Header{"If-None-Match": {etag}}},
		{"GET", "/data/large", http.Header{"If-Match": {`"0123"`}}},
		{"GET", "/data/large?response-content-type=text%2Fplain&response-content-disposition=attachment", nil},
		{"GET", "/data/sealed", nil},
		{"GET", "/data/packed-large", nil},
		{"GET", "/data/packed-small", nil},
		{"GET", "/data/no-such-key", nil},
		{"HEAD", "/data/no-such-key", nil},
		{"GET", "/data?list-type=2&prefix=w0%2F&max-keys=7", nil},
	}
	for _, rd := range reads {
		want := signedAnswer(t, nodes[leader], rd.method, rd.path, rd.header, access, secret)
		for i, node := range nodes {
			if i == dead || i == leader {
				continue
			}
			got := signedAnswer(t, node, rd.method, rd.path, rd.header, access, secret)
			if diff := answerDiff(want, got); diff != "" {
				t.Errorf("%s %s %v through %s, not the leader: %s", rd.method, rd.path, rd.header, node, diff)
			}
		}
	}
}

// answerDiff says how got differs from want, or "".
func answerDiff(want, got answer) string {
	var diffs []string
	if got.status != want.status {
		diffs = append(diffs, fmt.Sprintf("status %d, want %d", got.status, want.status))
	}
	keys := slices.Sorted(maps.Keys(want.header))
	for k := range got.header {
		if _, ok := want.header[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if g, w := strings.Join(got.header[k], ","), strings.Join(want.header[k], ","); g != w {
			diffs = append(diffs, fmt.Sprintf("%s %q, want %q", k, g, w))
		}
	}
	if !bytes.Equal(got.body, want.body) {
		diffs = append(diffs, fmt.Sprintf("a body of %d bytes, want %d", len(got.body), len(want.body)))
	}
	return strings.Join(diffs, "; ")
}

// sourceIPThroughEveryNode: a bucket policy's aws:SourceIp condition sees
// the client's address through any node, not the address of the node
// that passed the request to the leader: an anonymous GET allowed from
// 127.0.0.5 alone is answered 200 from there and 403 from 127.0.0.6,
// through every live node alike.
func sourceIPThroughEveryNode(t *testing.T, c *minio.Client, nodes []string, dead int) {
	t.Helper()
	ctx := t.Context()
	if err := c.MakeBucket(ctx, "byip", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":["s3:GetObject"],` +
		`"Resource":["arn:aws:s3:::byip/*"],"Condition":{"IpAddress":{"aws:SourceIp":"127.0.0.5/32"}}}]}`
	if err := c.SetBucketPolicy(ctx, "byip", policy); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, "byip", "x", strings.NewReader("from one address"), 16, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, node := range nodes {
		if i == dead {
			continue
		}
		for from, want := range map[string]int{"127.0.0.5": http.StatusOK, "127.0.0.6": http.StatusForbidden} {
			d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
			client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
			resp, err := client.Get("http://" + node + "/byip/x")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("an anonymous GET from %s through %s: %d, want %d", from, node, resp.StatusCode, want)
			}
		}
	}
}

// specialKeysThroughEveryNode: objects whose keys need escaping or hold
// "//", "./" or "../" (S3 allows them all) are written through one node
// and read and listed through every live node as they are; a node's
// router once redirected "a//b" to "a/b".
func specialKeysThroughEveryNode(t *testing.T, clients []*minio.Client, nodes []string, dead, leader int) {
	t.Helper()
	ctx := t.Context()
	keys := []string{"a//b", "c/./d", "e/../f", "g//", "dir/file with space", "a+b=c&d", "ünïcødé/日本", "a%2Fb", "x?y#z", "semi;colon", "percent%25"}
	writer := clients[(leader+1)%len(clients)]
	if (leader+1)%len(clients) == dead {
		writer = clients[leader]
	}
	if err := writer.MakeBucket(ctx, "keys", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if _, err := writer.PutObject(ctx, "keys", k, strings.NewReader("v:"+k), int64(len("v:"+k)), minio.PutObjectOptions{}); err != nil {
			t.Fatalf("put %q: %v", k, err)
		}
	}
	for i, c := range clients {
		if i == dead {
			continue
		}
		for _, k := range keys {
			got, err := getObject(ctx, c, "keys", k)
			if err != nil || string(got) != "v:"+k {
				t.Errorf("%q through %s: %q, %v", k, nodes[i], got, err)
			}
		}
		var listed []string
		for o := range c.ListObjects(ctx, "keys", minio.ListObjectsOptions{Recursive: true}) {
			if o.Err != nil {
				t.Fatalf("list through %s: %v", nodes[i], o.Err)
			}
			listed = append(listed, o.Key)
		}
		if want := slices.Sorted(slices.Values(keys)); !slices.Equal(listed, want) {
			t.Errorf("listed through %s: %q, want %q", nodes[i], listed, want)
		}
	}
}
