package s3api_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
)

// userSDK returns an aws-sdk-go-v2 client signed with another identity.
func userSDK(site *testsite.Site, access, secret string) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(site.URL), Region: "us-east-1", UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(access, secret, ""), HTTPClient: site.HTTPClient,
	})
}

// TestIAMEnforcement checks users' policies, groups, access keys and bucket
// policies on the S3 surface with real clients: a read-only user reads but
// cannot write, a one-bucket user cannot list another, a disabled user and
// an expired or disabled key are refused, anonymous reads follow the bucket
// policy, and the admin API refuses a non-admin.
// rootAdmin is an admin client of site signed as its root.
func rootAdmin(t *testing.T, site *testsite.Site) *adminclient.Client {
	t.Helper()
	adm, err := adminclient.New(site.URL, adminclient.Credentials{AccessKey: site.AccessKey, SecretKey: site.SecretKey}, adminclient.Config{HTTPClient: site.HTTPClient})
	if err != nil {
		t.Fatal(err)
	}
	return adm
}

func TestIAMEnforcement(t *testing.T) {
	site := testsite.Start(t)
	ctx := context.Background()
	root := sdkClient(site, site.SecretKey)
	mustCreateBucket(t, root, "shared")
	mustCreateBucket(t, root, "team-a")
	mustCreateBucket(t, root, "team-b")
	for _, b := range []string{"shared", "team-a", "team-b"} {
		if _, err := root.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("public/hello.txt"), Body: strings.NewReader("hello")}); err != nil {
			t.Fatal(err)
		}
	}
	adm := rootAdmin(t, site)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(adm.AddUser(ctx, "reader", "reader-secret"))
	must(adm.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"readonly"}, User: "reader"}))
	must(adm.CreatePolicy(ctx, "team-a-rw", []byte(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":["s3:ListBucket","s3:GetObject","s3:PutObject","s3:DeleteObject"],
		 "Resource":["arn:aws:s3:::team-a","arn:aws:s3:::team-a/*"]}]}`)))
	must(adm.AddUser(ctx, "alice", "alice-secret"))
	must(adm.AddGroupMembers(ctx, "team-a", []string{"alice"}))
	must(adm.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"team-a-rw"}, Group: "team-a"}))

	// Read-only user: GET works, PUT is AccessDenied (aws-sdk-go-v2).
	reader := userSDK(site, "reader", "reader-secret")
	if body, _ := getBody(t, reader, &s3.GetObjectInput{Bucket: aws.String("shared"), Key: aws.String("public/hello.txt")}); body != "hello" {
		t.Fatalf("reader GET = %q", body)
	}
	if _, err := reader.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("shared"), Key: aws.String("x"), Body: strings.NewReader("x")}); apiCode(err) != "AccessDenied" {
		t.Fatalf("reader PUT: %v", err)
	}

	// One-bucket user through its group (minio-go): team-a yes, team-b no.
	alice, err := minio.New(strings.TrimPrefix(site.URL, "http://"), &minio.Options{
		Creds: miniocreds.NewStaticV4("alice", "alice-secret", ""), Transport: site.HTTPClient.Transport})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutObject(ctx, "team-a", "doc.txt", strings.NewReader("a"), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatalf("alice PUT team-a: %v", err)
	}
	if keys := listKeys(t, alice, "team-a", minio.ListObjectsOptions{Recursive: true}); len(keys) != 2 {
		t.Fatalf("alice list team-a = %v", keys)
	}
	for obj := range alice.ListObjects(ctx, "team-b", minio.ListObjectsOptions{}) {
		if minioCode(obj.Err) != "AccessDenied" {
			t.Fatalf("alice list team-b: %+v", obj)
		}
	}
	if _, err := alice.PutObject(ctx, "team-b", "x", strings.NewReader("x"), 1, minio.PutObjectOptions{}); minioCode(err) != "AccessDenied" {
		t.Fatalf("alice PUT team-b: %v", err)
	}
	// Multi-object delete is checked per key.
	for e := range alice.RemoveObjects(ctx, "team-b", func() <-chan minio.ObjectInfo {
		ch := make(chan minio.ObjectInfo, 1)
		ch <- minio.ObjectInfo{Key: "public/hello.txt"}
		close(ch)
		return ch
	}(), minio.RemoveObjectsOptions{}) {
		if minioCode(e.Err) != "AccessDenied" {
			t.Fatalf("alice multi-delete in team-b: %+v", e)
		}
	}
	if _, err := root.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("team-b"), Key: aws.String("public/hello.txt")}); err != nil {
		t.Fatalf("refused delete removed the object: %v", err)
	}

	// A session-policy access key is narrower than its user; disabling
	// the user refuses the user and its keys.
	key, err := adm.CreateAccessKey(ctx, adminclient.AccessKeyCreateRequest{User: "alice", Policy: []byte(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::team-a/*"}]}`)})
	must(err)
	dash := userSDK(site, key.AccessKey, key.SecretKey)
	if body, _ := getBody(t, dash, &s3.GetObjectInput{Bucket: aws.String("team-a"), Key: aws.String("doc.txt")}); body != "a" {
		t.Fatalf("key GET = %q", body)
	}
	if _, err := dash.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("team-a"), Key: aws.String("y"), Body: strings.NewReader("y")}); apiCode(err) != "AccessDenied" {
		t.Fatalf("narrowed key PUT: %v", err)
	}
	must(adm.SetUserStatus(ctx, "alice", false))
	aliceSDK := userSDK(site, "alice", "alice-secret")
	if _, err := aliceSDK.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("team-a")}); apiCode(err) != "InvalidAccessKeyId" {
		t.Fatalf("disabled user: %v", err)
	}
	if _, err := dash.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("team-a"), Key: aws.String("doc.txt")}); apiCode(err) != "InvalidAccessKeyId" {
		t.Fatalf("key of disabled user: %v", err)
	}
	must(adm.SetUserStatus(ctx, "alice", true))

	// Anonymous GET: refused until a bucket policy allows Principal "*" for
	// the prefix; other prefixes and writes stay refused.
	anon := func(method, path string) (int, string) {
		req, _ := http.NewRequest(method, site.URL+path, strings.NewReader("z"))
		resp, err := site.HTTPClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := anon(http.MethodGet, "/shared/public/hello.txt"); code != 403 || !strings.Contains(body, "<Code>AccessDenied</Code>") {
		t.Fatalf("anonymous GET without policy: %d %s", code, body)
	}
	_, err = root.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("shared"), Policy: aws.String(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":{"AWS":["*"]},"Action":["s3:GetObject"],"Resource":["arn:aws:s3:::shared/public/*"]}]}`)})
	must(err)
	if code, body := anon(http.MethodGet, "/shared/public/hello.txt"); code != 200 || body != "hello" {
		t.Fatalf("anonymous GET allowed by policy: %d %s", code, body)
	}
	if code, _ := anon(http.MethodGet, "/shared/doc.txt"); code != 403 {
		t.Fatalf("anonymous GET outside the prefix: %d", code)
	}
	if code, _ := anon(http.MethodPut, "/shared/public/new.txt"); code != 403 {
		t.Fatalf("anonymous PUT: %d", code)
	}
	if code, _ := anon(http.MethodGet, "/team-b/public/hello.txt"); code != 403 {
		t.Fatalf("anonymous GET in another bucket: %d", code)
	}
	// A malformed bucket policy is refused with where it is wrong.
	_, err = root.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("shared"), Policy: aws.String(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":["s3:GetObject"],"Resource":["arn:aws:s3:::shared/*"]}]}`)})
	if apiCode(err) != "MalformedPolicy" || !strings.Contains(err.Error(), "Principal") {
		t.Fatalf("bucket policy without principal: %v", err)
	}

	// Metrics: diagnostics opens them, readonly does not.
	if _, err := testsite.Scrape(site, "reader", "reader-secret"); err == nil {
		t.Fatal("readonly user scraped metrics")
	}
	must(adm.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"diagnostics"}, User: "reader"}))
	if _, err := testsite.Scrape(site, "reader", "reader-secret"); err != nil {
		t.Fatalf("diagnostics user scrape: %v", err)
	}
	must(adm.DetachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"diagnostics"}, User: "reader"}))

	// The admin API refuses a non-admin user with its JSON error.
	ua, _ := adminclient.New(site.URL, adminclient.Credentials{AccessKey: "reader", SecretKey: "reader-secret"}, adminclient.Config{HTTPClient: site.HTTPClient})
	var ae *adminclient.Error
	if _, err := ua.ListUsers(ctx); !errors.As(err, &ae) || ae.Code != adminclient.CodeAccessDenied || ae.StatusCode != 403 {
		t.Fatalf("non-admin ListUsers: %v", err)
	}
}

// TestPolicyConditionKeys: bucket policy conditions on the keys S3 offers
// for object requests are evaluated with the request's values, for a user
// with no policy of its own: s3:ExistingObjectTag/<key> (the object's tag),
// s3:RequestObjectTag/<key> (x-amz-tagging), s3:x-amz-copy-source,
// s3:x-amz-metadata-directive (COPY when absent) and s3:x-amz-acl. A
// condition on a key the request lacks does not hold.
func TestPolicyConditionKeys(t *testing.T) {
	site := testsite.Start(t)
	root := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	adm := rootAdmin(t, site)
	if err := adm.AddUser(ctx, "stranger", "stranger-secret-key"); err != nil {
		t.Fatal(err)
	}
	u := userSDK(site, "stranger", "stranger-secret-key")
	policy := func(bucket, statements string) {
		t.Helper()
		doc := `{"Version":"2012-10-17","Statement":[` + statements + `]}`
		if _, err := root.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(bucket), Policy: aws.String(doc)}); err != nil {
			t.Fatal(err)
		}
	}
	put := func(c *s3.Client, in *s3.PutObjectInput) error {
		in.Body = strings.NewReader("data")
		_, err := c.PutObject(ctx, in)
		return err
	}
	for _, b := range []string{"tags", "src", "dst", "meta", "acl", "reqtag"} {
		mustCreateBucket(t, root, b)
	}

	// s3:ExistingObjectTag
	for k, tagging := range map[string]string{"pub": "security=public", "priv": "security=private", "none": ""} {
		if err := put(root, &s3.PutObjectInput{Bucket: aws.String("tags"), Key: aws.String(k), Tagging: aws.String(tagging)}); err != nil {
			t.Fatal(err)
		}
	}
	policy("tags", `{"Effect":"Allow","Principal":"*","Action":["s3:GetObject","s3:GetObjectTagging"],"Resource":"arn:aws:s3:::tags/*",
		"Condition":{"StringEquals":{"s3:ExistingObjectTag/security":"public"}}}`)
	for k, ok := range map[string]bool{"pub": true, "priv": false, "none": false, "missing": false} {
		_, err := u.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("tags"), Key: aws.String(k)})
		_, terr := u.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("tags"), Key: aws.String(k)})
		if ok && (err != nil || terr != nil) || !ok && (apiCode(err) != "AccessDenied" || apiCode(terr) != "AccessDenied") {
			t.Errorf("ExistingObjectTag, object %s: GET %v, GetObjectTagging %v; want allowed=%v", k, err, terr, ok)
		}
	}

	// s3:x-amz-copy-source and s3:x-amz-metadata-directive
	for _, k := range []string{"public/a b", "private/a"} {
		if err := put(root, &s3.PutObjectInput{Bucket: aws.String("src"), Key: aws.String(k)}); err != nil {
			t.Fatal(err)
		}
	}
	policy("src", `{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::src/*"}`)
	policy("dst", `{"Effect":"Allow","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::dst/*",
		"Condition":{"StringLike":{"s3:x-amz-copy-source":"src/public/*"}}}`)
	for src, ok := range map[string]bool{"src/public/a%20b": true, "/src/public/a%20b": true, "src/private/a": false} {
		_, err := u.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("dst"), Key: aws.String("copy"), CopySource: aws.String(src)})
		if ok != (err == nil) || !ok && apiCode(err) != "AccessDenied" {
			t.Errorf("copy from %s: %v, want allowed=%v", src, err, ok)
		}
	}
	if err := put(u, &s3.PutObjectInput{Bucket: aws.String("dst"), Key: aws.String("plain")}); apiCode(err) != "AccessDenied" {
		t.Errorf("a plain PUT where only copies are allowed: %v", err)
	}
	policy("meta", `{"Effect":"Allow","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::meta/*",
		"Condition":{"StringEquals":{"s3:x-amz-metadata-directive":"COPY"}}}`)
	for dir, ok := range map[types.MetadataDirective]bool{"": true, types.MetadataDirectiveCopy: true, types.MetadataDirectiveReplace: false} {
		_, err := u.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("meta"), Key: aws.String("copy"), CopySource: aws.String("src/private/a"), MetadataDirective: dir})
		if ok != (err == nil) {
			t.Errorf("copy with metadata directive %q: %v, want allowed=%v", dir, err, ok)
		}
	}

	// s3:x-amz-acl
	policy("acl", `{"Effect":"Allow","Principal":"*","Action":["s3:PutObject","s3:PutObjectAcl"],"Resource":"arn:aws:s3:::acl/*"},
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::acl/*","Condition":{"StringLike":{"s3:x-amz-acl":"public*"}}}`)
	if err := put(u, &s3.PutObjectInput{Bucket: aws.String("acl"), Key: aws.String("private")}); err != nil {
		t.Errorf("PUT without x-amz-acl: %v", err)
	}
	if err := put(u, &s3.PutObjectInput{Bucket: aws.String("acl"), Key: aws.String("public"), ACL: types.ObjectCannedACLPublicRead}); apiCode(err) != "AccessDenied" {
		t.Errorf("PUT with x-amz-acl public-read under a Deny on public*: %v", err)
	}

	// s3:RequestObjectTag
	policy("reqtag", `{"Effect":"Allow","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::reqtag/*",
		"Condition":{"StringEquals":{"s3:RequestObjectTag/security":"public"}}}`)
	for tagging, ok := range map[string]bool{"security=public&x=y": true, "security=private": false, "": false} {
		if err := put(u, &s3.PutObjectInput{Bucket: aws.String("reqtag"), Key: aws.String("k"), Tagging: aws.String(tagging)}); ok != (err == nil) {
			t.Errorf("PUT with x-amz-tagging %q: %v, want allowed=%v", tagging, err, ok)
		}
	}
}

// TestPolicyRefererAndUserAgent: aws:Referer and aws:UserAgent are the
// request's Referer and User-Agent headers; with ...IfExists a request
// without the header passes the condition, as in S3.
func TestPolicyRefererAndUserAgent(t *testing.T) {
	site := testsite.Start(t)
	root := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	for _, b := range []string{"ref", "agent"} {
		mustCreateBucket(t, root, b)
		if _, err := root.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: strings.NewReader("x")}); err != nil {
			t.Fatal(err)
		}
	}
	for b, cond := range map[string]string{
		"ref":   `{"StringLikeIfExists":{"aws:Referer":"http://www.example.com/*"}}`,
		"agent": `{"StringLike":{"aws:UserAgent":"good-agent/*"}}`,
	} {
		doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::` + b + `/*","Condition":` + cond + `}]}`
		if _, err := root.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(b), Policy: aws.String(doc)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		path, header, value string
		status              int
	}{
		{"/ref/k", "Referer", "http://www.example.com/index.html", 200},
		{"/ref/k", "Referer", "http://example.com", 403},
		{"/ref/k", "", "", 200}, // IfExists: no Referer passes
		{"/agent/k", "User-Agent", "good-agent/1.0", 200},
		{"/agent/k", "User-Agent", "curl/8", 403},
	} {
		req, _ := http.NewRequest(http.MethodGet, site.URL+tc.path, nil)
		if tc.header != "" {
			req.Header.Set(tc.header, tc.value)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("anonymous GET %s with %s %q: %d, want %d", tc.path, tc.header, tc.value, resp.StatusCode, tc.status)
		}
	}
}
