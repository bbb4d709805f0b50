package s3api_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
)

// stsClient returns an aws-sdk-go-v2 STS client for the site's S3 endpoint.
func stsClient(site *testsite.Site, access, secret string) *sts.Client {
	return sts.New(sts.Options{
		BaseEndpoint: aws.String(site.URL), Region: "us-east-1", HTTPClient: site.HTTPClient,
		Credentials: credentials.NewStaticCredentialsProvider(access, secret, ""),
	})
}

// tempSDK returns an S3 client signed with temporary credentials.
func tempSDK(site *testsite.Site, access, secret, token string) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(site.URL), Region: "us-east-1", UsePathStyle: true, HTTPClient: site.HTTPClient,
		Credentials: credentials.NewStaticCredentialsProvider(access, secret, token),
	})
}

func assumeRole(t *testing.T, c *sts.Client, in *sts.AssumeRoleInput) (*sts.AssumeRoleOutput, error) {
	t.Helper()
	if in.RoleArn == nil {
		in.RoleArn, in.RoleSessionName = aws.String("arn:aws:iam::000000000000:role/any"), aws.String("test")
	}
	return c.AssumeRole(context.Background(), in)
}

// TestSTSAssumeRole checks AssumeRole with aws-sdk-go-v2's STS client on a
// real site: the temporary credential has the parent's rights intersected
// with the inline policy (header-signed and presigned), a garbled or
// missing session token is refused, disabling the parent revokes it, and it
// is refused once expired.
func TestSTSAssumeRole(t *testing.T) {
	var skew atomic.Int64
	site := testsite.Start(t, testsite.WithClock(func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }))
	ctx := context.Background()
	root := sdkClient(site, site.SecretKey)
	mustCreateBucket(t, root, "bucket-a")
	mustCreateBucket(t, root, "bucket-b")
	for _, b := range []string{"bucket-a", "bucket-b"} {
		if _, err := root.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: strings.NewReader("v")}); err != nil {
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
	must(adm.CreatePolicy(ctx, "a-rw", []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*",
		"Resource":["arn:aws:s3:::bucket-a","arn:aws:s3:::bucket-a/*"]}]}`)))
	must(adm.AddUser(ctx, "eng", "eng-secret"))
	must(adm.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"a-rw"}, User: "eng"}))

	getOnly := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::*"}]}`
	out, err := assumeRole(t, stsClient(site, "eng", "eng-secret"), &sts.AssumeRoleInput{DurationSeconds: aws.Int32(900), Policy: aws.String(getOnly)})
	if err != nil {
		t.Fatalf("AssumeRole: %v", err)
	}
	c := out.Credentials
	if exp := time.Until(aws.ToTime(c.Expiration)); exp < 14*time.Minute || exp > 16*time.Minute {
		t.Fatalf("expiration in %s, want ~15m", exp)
	}
	tmp := tempSDK(site, aws.ToString(c.AccessKeyId), aws.ToString(c.SecretAccessKey), aws.ToString(c.SessionToken))
	get := func(cl *s3.Client, bucket string) error {
		o, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")})
		if err == nil {
			o.Body.Close()
		}
		return err
	}
	must(get(tmp, "bucket-a"))
	if _, err := tmp.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bucket-a"), Key: aws.String("x"), Body: strings.NewReader("x")}); apiCode(err) != "AccessDenied" {
		t.Fatalf("PUT with a GetObject-only session: %v, want AccessDenied", err)
	}
	if err := get(tmp, "bucket-b"); apiCode(err) != "AccessDenied" {
		t.Fatalf("GET outside the parent's rights: %v, want AccessDenied", err)
	}

	// Presigned: the token rides in the query.
	ps, err := s3.NewPresignClient(tmp).PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bucket-a"), Key: aws.String("k")})
	must(err)
	if !strings.Contains(ps.URL, "X-Amz-Security-Token=") {
		t.Fatalf("presigned URL lacks the token: %s", ps.URL)
	}
	resp, err := site.HTTPClient.Get(ps.URL)
	must(err)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("presigned GET: %s", resp.Status)
	}

	// Garbled, missing, and another session's token.
	ak, sk, tok := aws.ToString(c.AccessKeyId), aws.ToString(c.SecretAccessKey), aws.ToString(c.SessionToken)
	if err := get(tempSDK(site, ak, sk, tok[:len(tok)-4]+"AAAA"), "bucket-a"); apiCode(err) != "InvalidToken" {
		t.Fatalf("garbled token: %v, want InvalidToken", err)
	}
	if err := get(tempSDK(site, ak, sk, ""), "bucket-a"); apiCode(err) != "InvalidAccessKeyId" {
		t.Fatalf("no token: %v, want InvalidAccessKeyId", err)
	}
	other, err := assumeRole(t, stsClient(site, "eng", "eng-secret"), &sts.AssumeRoleInput{})
	must(err)
	if err := get(tempSDK(site, ak, sk, aws.ToString(other.Credentials.SessionToken)), "bucket-a"); apiCode(err) != "InvalidToken" {
		t.Fatalf("another session's token: %v, want InvalidToken", err)
	}
	// The default duration is an hour; without an inline policy the
	// session has all of the parent's rights.
	if exp := time.Until(aws.ToTime(other.Credentials.Expiration)); exp < 59*time.Minute || exp > 61*time.Minute {
		t.Fatalf("default expiration in %s, want ~1h", exp)
	}
	full := tempSDK(site, aws.ToString(other.Credentials.AccessKeyId), aws.ToString(other.Credentials.SecretAccessKey), aws.ToString(other.Credentials.SessionToken))
	_, err = full.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bucket-a"), Key: aws.String("x"), Body: strings.NewReader("x")})
	must(err)

	// Disabling the parent revokes its sessions at once; enabling restores.
	must(adm.SetUserStatus(ctx, "eng", false))
	if err := get(tmp, "bucket-a"); apiCode(err) != "InvalidToken" {
		t.Fatalf("parent disabled: %v, want InvalidToken", err)
	}
	must(adm.SetUserStatus(ctx, "eng", true))
	must(get(tmp, "bucket-a"))

	// Past its expiry (IAM's clock moved; signing time is still real).
	skew.Store(int64(16 * time.Minute))
	if err := get(tmp, "bucket-a"); apiCode(err) != "ExpiredToken" {
		t.Fatalf("expired session: %v, want ExpiredToken", err)
	}
	must(get(full, "bucket-a"))
}

// TestSTSBadRequests checks AssumeRole's refusals: duration bounds, a
// malformed inline policy, anonymous and temporary callers.
func TestSTSBadRequests(t *testing.T) {
	site := testsite.Start(t)
	rootSTS := stsClient(site, site.AccessKey, site.SecretKey)
	for _, tc := range []struct {
		name string
		in   sts.AssumeRoleInput
		code string
	}{
		{"too short", sts.AssumeRoleInput{DurationSeconds: aws.Int32(899)}, "ValidationError"},
		{"too long", sts.AssumeRoleInput{DurationSeconds: aws.Int32(43201)}, "ValidationError"},
		{"bad policy", sts.AssumeRoleInput{Policy: aws.String(`{"Statement":[{"Effect":"Maybe"}]}`)}, "MalformedPolicyDocument"},
	} {
		if _, err := assumeRole(t, rootSTS, &tc.in); apiCode(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	// Root may assume a role (as in MinIO); the session may not chain.
	out, err := assumeRole(t, rootSTS, &sts.AssumeRoleInput{DurationSeconds: aws.Int32(43200)})
	if err != nil {
		t.Fatalf("root AssumeRole: %v", err)
	}
	c := out.Credentials
	chained := sts.New(sts.Options{BaseEndpoint: aws.String(site.URL), Region: "us-east-1", HTTPClient: site.HTTPClient,
		Credentials: credentials.NewStaticCredentialsProvider(aws.ToString(c.AccessKeyId), aws.ToString(c.SecretAccessKey), aws.ToString(c.SessionToken))})
	if _, err := assumeRole(t, chained, &sts.AssumeRoleInput{}); apiCode(err) != "AccessDenied" {
		t.Fatalf("chained AssumeRole: %v, want AccessDenied", err)
	}
	// The admin surface accepts a session too, with the parent's rights.
	creds := aws.Credentials{AccessKeyID: aws.ToString(c.AccessKeyId), SecretAccessKey: aws.ToString(c.SecretAccessKey), SessionToken: aws.ToString(c.SessionToken)}
	if code := signedGet(t, site, creds, adminclient.PathInfo); code != 200 {
		t.Fatalf("admin info with root's session: %d", code)
	}
	creds.SessionToken += "x"
	if code := signedGet(t, site, creds, adminclient.PathInfo); code == 200 {
		t.Fatal("admin info with a garbled token answered 200")
	}
	// Signed for service s3 rather than sts, by hand.
	form := "Action=AssumeRole&Version=2011-06-15&DurationSeconds=900"
	req, err := http.NewRequest(http.MethodPost, site.URL+"/", strings.NewReader(form))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(form))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	rootCreds := aws.Credentials{AccessKeyID: site.AccessKey, SecretAccessKey: site.SecretKey}
	if err := v4.NewSigner().SignHTTP(context.Background(), rootCreds, req, hex.EncodeToString(sum[:]), "s3", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := site.HTTPClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "<SessionToken>") {
		t.Fatalf("AssumeRole signed for s3: %s %s", resp.Status, body)
	}

	resp, err = site.HTTPClient.Post(site.URL+"/", "application/x-www-form-urlencoded", strings.NewReader("Action=AssumeRole&Version=2011-06-15"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("anonymous AssumeRole: %s, want 403", resp.Status)
	}
}

// signedGet sends a GET signed with creds (session token included) and
// returns the status.
func signedGet(t *testing.T, site *testsite.Site, creds aws.Credentials, path string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, site.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	const emptySHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	req.Header.Set("X-Amz-Content-Sha256", emptySHA)
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, emptySHA, "s3", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := site.HTTPClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
