package s3api_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/minio/minio-go/v7"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/app"
	"github.com/twinlake/twinlake/internal/s3api/sigv4"
	"github.com/twinlake/twinlake/internal/testsite"
)

// postField is one form field, in the order sent.
type postField struct{ name, value string }

// postForm POSTs fields then a file part (filename, data) to target as
// multipart/form-data, without following redirects. host, when set,
// replaces the Host header (virtual-host style).
func postForm(t *testing.T, site *testsite.Site, target, host string, fields []postField, filename string, data []byte) *http.Response {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := mw.WriteField(f.name, f.value); err != nil {
			t.Fatal(err)
		}
	}
	fw, err := mw.CreateFormFile("file", filename)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(data)
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, target, &buf)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if host != "" {
		req.Host = host
	}
	client := *site.HTTPClient
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// mapFields orders minio-go's form data (key first is not required; file
// goes last on its own).
func mapFields(m map[string]string) []postField {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]postField, 0, len(m))
	for _, k := range names {
		out = append(out, postField{k, m[k]})
	}
	return out
}

// signedPolicyForm builds SigV4 form fields for a policy document written
// by hand: the policy and the signature over its base64 text.
func signedPolicyForm(access, secret, doc string, now time.Time, extra ...postField) []postField {
	b64 := base64.StdEncoding.EncodeToString([]byte(doc))
	date := now.UTC().Format("20060102T150405Z")
	fields := append([]postField{}, extra...)
	return append(fields,
		postField{"x-amz-algorithm", "AWS4-HMAC-SHA256"},
		postField{"x-amz-credential", access + "/" + date[:8] + "/us-east-1/s3/aws4_request"},
		postField{"x-amz-date", date},
		postField{"policy", b64},
		postField{"x-amz-signature", sigv4.SignPostPolicy(secret, date[:8], "us-east-1", b64)},
	)
}

// policyDoc is a POST policy expiring at exp with the given conditions
// plus those every signed form needs.
func policyDoc(exp time.Time, conds ...string) string {
	all := append([]string{
		`["eq","$x-amz-algorithm","AWS4-HMAC-SHA256"]`, `["starts-with","$x-amz-credential",""]`, `["starts-with","$x-amz-date",""]`,
	}, conds...)
	return `{"expiration":"` + exp.UTC().Format("2006-01-02T15:04:05.000Z") + `","conditions":[` + strings.Join(all, ",") + `]}`
}

func errorCode(t *testing.T, resp *http.Response) (int, string) {
	t.Helper()
	body, _ := io.ReadAll(resp.Body)
	var e struct{ Code, Message string }
	xml.Unmarshal(body, &e)
	return resp.StatusCode, e.Code
}

// TestPostPolicyMinioPresigned drives the presigned POST flow end to end:
// minio-go builds and signs the policy, a plain net/http multipart POST
// uploads through it (key from ${filename}, metadata, 201 PostResponse),
// and minio-go reads the object back.
func TestPostPolicyMinioPresigned(t *testing.T) {
	site := testsite.Start(t)
	c, _ := minioClient(t, site)
	ctx := context.Background()
	const bucket = "post-minio"
	if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	p := minio.NewPostPolicy()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(p.SetBucket(bucket))
	must(p.SetKeyStartsWith("uploads/"))
	must(p.SetExpires(time.Now().Add(10 * time.Minute)))
	must(p.SetContentType("text/plain"))
	must(p.SetContentLengthRange(1, 4<<20))
	must(p.SetUserMetadata("origin", "browser"))
	must(p.SetSuccessStatusAction("201"))
	u, form, err := c.PresignedPostPolicy(ctx, p)
	must(err)
	form["key"] = "uploads/${filename}"
	data := bytes.Repeat([]byte("post policy upload\n"), 100000) // 1.9 MB, streamed
	resp := postForm(t, site, u.String(), "", mapFields(form), "notes.txt", data)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST = %d %s", resp.StatusCode, body)
	}
	var pr struct {
		Location, Bucket, Key, ETag string
	}
	must(xml.Unmarshal(body, &pr))
	if pr.Bucket != bucket || pr.Key != "uploads/notes.txt" || pr.ETag == "" || pr.ETag != resp.Header.Get("ETag") ||
		!strings.HasSuffix(pr.Location, "/"+bucket+"/uploads/notes.txt") {
		t.Fatalf("PostResponse = %+v (ETag header %q)", pr, resp.Header.Get("ETag"))
	}
	obj, err := c.GetObject(ctx, bucket, "uploads/notes.txt", minio.GetObjectOptions{})
	must(err)
	got, err := io.ReadAll(obj)
	must(err)
	st, err := obj.Stat()
	must(err)
	if !bytes.Equal(got, data) || st.ContentType != "text/plain" || st.UserMetadata["Origin"] != "browser" || `"`+st.ETag+`"` != pr.ETag {
		t.Fatalf("read back %d bytes, type %q, meta %v, etag %q", len(got), st.ContentType, st.UserMetadata, st.ETag)
	}
}

// TestPostPolicyRefusals holds forms to their policies: each refused form
// gets S3's code and stores nothing.
func TestPostPolicyRefusals(t *testing.T) {
	site := testsite.Start(t)
	root := sdkClient(site, site.SecretKey)
	const bucket = "post-refusals"
	mustCreateBucket(t, root, bucket)
	target := site.URL + "/" + bucket
	now := time.Now()
	later := now.Add(time.Hour)
	base := []string{`{"bucket":"` + bucket + `"}`, `["starts-with","$key","in/"]`, `["content-length-range",4,10]`}
	sign := func(doc string, extra ...postField) []postField {
		return signedPolicyForm(site.AccessKey, site.SecretKey, doc, now, extra...)
	}
	badSig := sign(policyDoc(later, base...), postField{"key", "in/x"})
	badSig[len(badSig)-1].value = strings.Repeat("0", 64)
	cases := []struct {
		name   string
		fields []postField
		data   string
		status int
		code   string
	}{
		{"expired", sign(policyDoc(now.Add(-time.Minute), base...), postField{"key", "in/x"}), "hello", 403, "AccessDenied"},
		{"key outside starts-with", sign(policyDoc(later, base...), postField{"key", "out/x"}), "hello", 403, "AccessDenied"},
		{"too small", sign(policyDoc(later, base...), postField{"key", "in/x"}), "abc", 400, "EntityTooSmall"},
		{"too large", sign(policyDoc(later, base...), postField{"key", "in/x"}), "hello world!", 400, "EntityTooLarge"},
		{"field not in policy", sign(policyDoc(later, base...), postField{"key", "in/x"}, postField{"x-amz-meta-extra", "1"}), "hello", 403, "AccessDenied"},
		{"eq violated", sign(policyDoc(later, append(base, `["eq","$x-amz-meta-a","1"]`)...), postField{"key", "in/x"}, postField{"x-amz-meta-a", "2"}), "hello", 403, "AccessDenied"},
		{"wrong bucket", sign(policyDoc(later, `{"bucket":"other"}`, `["starts-with","$key",""]`), postField{"key", "in/x"}), "hello", 403, "AccessDenied"},
		{"bad signature", badSig, "hello", 403, "SignatureDoesNotMatch"},
		{"unknown access key", signedPolicyForm("nobody", "x", policyDoc(later, base...), now, postField{"key", "in/x"}), "hello", 403, "InvalidAccessKeyId"},
		{"no expiration", sign(`{"conditions":[["starts-with","$key",""]]}`, postField{"key", "in/x"}), "hello", 400, "InvalidPolicyDocument"},
		{"bad length range", sign(policyDoc(later, `{"bucket":"`+bucket+`"}`, `["starts-with","$key",""]`, `["content-length-range",-1,0]`), postField{"key", "in/x"}), "hello", 400, "InvalidPolicyDocument"},
		{"policy not base64", append(sign(policyDoc(later, base...), postField{"key", "in/x"})[:4], postField{"policy", "%%%"}, postField{"x-amz-signature", strings.Repeat("0", 64)}), "hello", 403, "SignatureDoesNotMatch"},
		{"no key", sign(policyDoc(later, base...)), "hello", 400, "InvalidArgument"},
		{"fields too large", append(sign(policyDoc(later, base...), postField{"key", "in/x"}), postField{"x-ignore-pad", strings.Repeat("p", 70<<10)}), "hello", 400, "MaxPostPreDataLengthExceeded"},
		{"too many fields", append(sign(policyDoc(later, base...), postField{"key", "in/x"}), manyFields(300)...), "hello", 400, "MaxPostPreDataLengthExceeded"},
		{"wrong checksum", sign(policyDoc(later, base...), postField{"key", "in/x"}, postField{"x-amz-checksum-sha256", sha256B64("other")}), "hello", 400, "BadDigest"},
		{"no signature", []postField{{"key", "in/x"}, {"policy", base64.StdEncoding.EncodeToString([]byte(policyDoc(later, base...)))}, {"x-amz-algorithm", "AWS4-HMAC-SHA256"}}, "hello", 400, "InvalidArgument"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := postForm(t, site, target, "", tc.fields, "f.txt", []byte(tc.data))
			if status, code := errorCode(t, resp); status != tc.status || code != tc.code {
				t.Fatalf("got %d %s, want %d %s", status, code, tc.status, tc.code)
			}
		})
	}
	out, err := root.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Contents) != 0 {
		t.Fatalf("refused forms stored %d objects, first %q", len(out.Contents), aws.ToString(out.Contents[0].Key))
	}
	// The same form within its bounds is accepted (204 by default), its
	// checksum field (which needs no condition) verified, answered and
	// kept.
	resp := postForm(t, site, target, "", sign(policyDoc(later, base...), postField{"key", "in/x"}, postField{"x-amz-checksum-sha256", sha256B64("hello")}), "f.txt", []byte("hello"))
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("ETag") == "" || resp.Header.Get("x-amz-checksum-sha256") != sha256B64("hello") {
		t.Fatalf("valid form: %d %v", resp.StatusCode, resp.Header)
	}
	head, err := root.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("in/x"), ChecksumMode: "ENABLED"})
	if err != nil || aws.ToString(head.ChecksumSHA256) != sha256B64("hello") {
		t.Fatalf("stored checksum: %v %v", err, head)
	}
}

// TestPostPolicyResponses covers success_action_redirect (303 to the URL
// with bucket, key and etag), success_action_status 200, a SigV2-signed
// form, an ignored x-ignore- field and a virtual-host style POST.
func TestPostPolicyResponses(t *testing.T) {
	site := testsite.Start(t, testsite.WithApp(func(c *app.Config) { c.Domain = "s3.test" }))
	root := sdkClient(site, site.SecretKey)
	const bucket = "post-responses"
	mustCreateBucket(t, root, bucket)
	target := site.URL + "/" + bucket
	later := time.Now().Add(time.Hour)

	doc := policyDoc(later, `{"bucket":"`+bucket+`"}`, `["eq","$key","r.txt"]`, `{"success_action_redirect":"https://app.example/done?x=1"}`)
	resp := postForm(t, site, target, "", signedPolicyForm(site.AccessKey, site.SecretKey, doc, time.Now(),
		postField{"key", "r.txt"}, postField{"success_action_redirect", "https://app.example/done?x=1"}, postField{"x-ignore-note", "anything"}), "r.txt", []byte("redirected"))
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("redirect POST = %d", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if wantSuffix := "?x=1&bucket=" + bucket + "&key=r.txt&etag=%22"; !strings.Contains(resp.Header.Get("Location"), wantSuffix) {
		t.Fatalf("redirect Location %q lacks %q (bucket, key, etag in S3's order)", resp.Header.Get("Location"), wantSuffix)
	}
	if err != nil || loc.Host != "app.example" || loc.Query().Get("x") != "1" || loc.Query().Get("bucket") != bucket ||
		loc.Query().Get("key") != "r.txt" || loc.Query().Get("etag") != resp.Header.Get("ETag") {
		t.Fatalf("redirect Location = %q (ETag %q)", resp.Header.Get("Location"), resp.Header.Get("ETag"))
	}

	// SigV2: AWSAccessKeyId and signature (base64 HMAC-SHA1 of the policy).
	doc2 := `{"expiration":"` + later.UTC().Format(time.RFC3339) + `","conditions":[{"bucket":"` + bucket + `"},["starts-with","$key","v2/"],{"success_action_status":"200"},["starts-with","$Content-Type","text/"],["starts-with","$Cache-Control",""]]}`
	b64 := base64.StdEncoding.EncodeToString([]byte(doc2))
	resp = postForm(t, site, target, "", []postField{
		{"key", "v2/${filename}"}, {"AWSAccessKeyId", site.AccessKey}, {"policy", b64}, {"signature", signV2(site.SecretKey, b64)},
		{"success_action_status", "200"}, {"Content-Type", "text/csv"}, {"Cache-Control", "max-age=60"},
	}, "data.csv", []byte("a,b\n"))
	if resp.StatusCode != http.StatusOK {
		_, code := errorCode(t, resp)
		t.Fatalf("SigV2 POST = %d %s", resp.StatusCode, code)
	}
	head, err := root.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("v2/data.csv")})
	if err != nil || aws.ToString(head.ContentType) != "text/csv" || aws.ToString(head.CacheControl) != "max-age=60" {
		t.Fatalf("SigV2 object: %v %+v", err, head)
	}

	// A canned ACL field: acl=public-read makes the object readable by
	// anyone (the other objects stay private).
	doc4 := policyDoc(later, `{"bucket":"`+bucket+`"}`, `["eq","$key","pub.txt"]`, `{"acl":"public-read"}`)
	resp = postForm(t, site, target, "", signedPolicyForm(site.AccessKey, site.SecretKey, doc4, time.Now(),
		postField{"key", "pub.txt"}, postField{"acl", "public-read"}), "pub.txt", []byte("public"))
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("acl POST = %d", resp.StatusCode)
	}
	for key, want := range map[string]int{"pub.txt": 200, "r.txt": 403} {
		anon, err := site.HTTPClient.Get(target + "/" + key)
		if err != nil {
			t.Fatal(err)
		}
		anon.Body.Close()
		if anon.StatusCode != want {
			t.Fatalf("anonymous GET %s = %d, want %d", key, anon.StatusCode, want)
		}
	}

	// Virtual-host style: POST / with Host bucket.s3.test.
	doc3 := policyDoc(later, `{"bucket":"`+bucket+`"}`, `["eq","$key","vh.txt"]`, `["eq","$success_action_status","201"]`)
	resp = postForm(t, site, site.URL+"/", bucket+".s3.test", signedPolicyForm(site.AccessKey, site.SecretKey, doc3, time.Now(),
		postField{"key", "vh.txt"}, postField{"success_action_status", "201"}), "vh.txt", []byte("vhost"))
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated || !strings.Contains(string(body), "<Location>http://"+bucket+".s3.test") {
		t.Fatalf("virtual-host POST = %d %s", resp.StatusCode, body)
	}
	if _, err := root.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("vh.txt")}); err != nil {
		t.Fatalf("virtual-host object: %v", err)
	}
}

// TestPostPolicyIAM requires s3:PutObject on the key for the form's signer,
// as a PUT does.
func TestPostPolicyIAM(t *testing.T) {
	site := testsite.Start(t)
	ctx := context.Background()
	root := sdkClient(site, site.SecretKey)
	const bucket = "post-iam"
	mustCreateBucket(t, root, bucket)
	adm := rootAdmin(t, site)
	for _, step := range []error{
		adm.AddUser(ctx, "viewer", "viewer-secret"),
		adm.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"readonly"}, User: "viewer"}),
		adm.CreatePolicy(ctx, "post-in", []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:PutObject","Resource":"arn:aws:s3:::post-iam/in/*"}]}`)),
		adm.AddUser(ctx, "uploader", "uploader-secret"),
		adm.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"post-in"}, User: "uploader"}),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	doc := policyDoc(time.Now().Add(time.Hour), `{"bucket":"`+bucket+`"}`, `["starts-with","$key",""]`)
	for _, tc := range []struct {
		user, key string
		status    int
	}{
		{"viewer", "in/a", 403},
		{"uploader", "out/a", 403},
		{"uploader", "in/a", 204},
	} {
		resp := postForm(t, site, site.URL+"/"+bucket, "", signedPolicyForm(tc.user, tc.user+"-secret", doc, time.Now(), postField{"key", tc.key}), "a", []byte("data"))
		if status, code := errorCode(t, resp); status != tc.status || status == 403 && code != "AccessDenied" {
			t.Fatalf("%s POST %s = %d %s, want %d", tc.user, tc.key, status, code, tc.status)
		}
	}
	// Publishing what one uploads needs s3:PutObjectAcl too, as with
	// x-amz-acl on a PUT: the uploader may put, not publish.
	pub := policyDoc(time.Now().Add(time.Hour), `{"bucket":"`+bucket+`"}`, `["starts-with","$key",""]`, `{"acl":"public-read"}`)
	for _, tc := range []struct {
		user, secret string
		status       int
	}{{"uploader", "uploader-secret", 403}, {site.AccessKey, site.SecretKey, 204}} {
		resp := postForm(t, site, site.URL+"/"+bucket, "", signedPolicyForm(tc.user, tc.secret, pub, time.Now(),
			postField{"key", "in/public"}, postField{"acl", "public-read"}), "p", []byte("public"))
		if status, code := errorCode(t, resp); status != tc.status || status == 403 && code != "AccessDenied" {
			t.Fatalf("%s POST with acl=public-read = %d %s, want %d", tc.user, status, code, tc.status)
		}
		if tc.status == 403 {
			if _, err := root.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("in/public")}); err == nil {
				t.Fatal("a refused public POST stored the object")
			}
		}
	}

	// Temporary credentials: minio-go adds x-amz-security-token to the
	// form and the policy; without it the temporary key is unknown.
	cred, err := assumeRole(t, stsClient(site, "uploader", "uploader-secret"), &sts.AssumeRoleInput{})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(site.URL)
	tc, err := minio.New(u.Host, &minio.Options{Creds: miniocreds.NewStaticV4(aws.ToString(cred.Credentials.AccessKeyId),
		aws.ToString(cred.Credentials.SecretAccessKey), aws.ToString(cred.Credentials.SessionToken)), Transport: site.HTTPClient.Transport})
	if err != nil {
		t.Fatal(err)
	}
	p := minio.NewPostPolicy()
	p.SetBucket(bucket)
	p.SetKey("in/sts")
	p.SetExpires(time.Now().Add(time.Minute))
	pu, form, err := tc.PresignedPostPolicy(ctx, p)
	if err != nil || form["x-amz-security-token"] == "" {
		t.Fatalf("presign with a session: %v %v", err, form)
	}
	if resp := postForm(t, site, pu.String(), "", mapFields(form), "s", []byte("sts")); resp.StatusCode != 204 {
		t.Fatalf("session POST = %d", resp.StatusCode)
	}
	delete(form, "x-amz-security-token")
	if status, code := errorCode(t, postForm(t, site, pu.String(), "", mapFields(form), "s", []byte("sts"))); status != 403 || code != "InvalidAccessKeyId" {
		t.Fatalf("session POST without its token = %d %s", status, code)
	}

	// Anonymous forms (no signature, no policy) write only where a bucket
	// policy lets anyone.
	if _, err := root.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(bucket), Policy: aws.String(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::post-iam/public/*"}]}`)}); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]int{"public/anon": 204, "in/anon": 403} {
		if resp := postForm(t, site, site.URL+"/"+bucket, "", []postField{{"key", key}}, "x", []byte("anon")); resp.StatusCode != want {
			t.Fatalf("anonymous POST %s = %d, want %d", key, resp.StatusCode, want)
		}
	}
	out, err := root.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	if err != nil || strings.Join(keys, ",") != "in/a,in/public,in/sts,public/anon" {
		t.Fatalf("stored: %v %v", err, keys)
	}
}

func manyFields(n int) []postField {
	out := make([]postField, n)
	for i := range out {
		out[i] = postField{fmt.Sprintf("x-ignore-%d", i), "v"}
	}
	return out
}

func sha256B64(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// signV2 is SigV2's form signature: base64 HMAC-SHA1 of the base64 policy.
func signV2(secret, policyB64 string) string {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(policyB64))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}
