package s3api_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/twinlake/twinlake/internal/testsite"
)

const (
	allUsersURI  = "http://acs.amazonaws.com/groups/global/AllUsers"
	authUsersURI = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
)

// grantStrings renders grants as "who PERM", sorted.
func grantStrings(gs []types.Grant) []string {
	var out []string
	for _, g := range gs {
		who := aws.ToString(g.Grantee.ID)
		if g.Grantee.URI != nil {
			who = aws.ToString(g.Grantee.URI)
		}
		out = append(out, string(g.Grantee.Type)+":"+who+" "+string(g.Permission))
	}
	slices.Sort(out)
	return out
}

// wantGrants is the grant list of a canned ACL, owner ID owner.
func wantGrants(owner, acl string) []string {
	out := []string{"CanonicalUser:" + owner + " FULL_CONTROL"}
	switch acl {
	case "public-read":
		out = append(out, "Group:"+allUsersURI+" READ")
	case "public-read-write":
		out = append(out, "Group:"+allUsersURI+" READ", "Group:"+allUsersURI+" WRITE")
	case "authenticated-read":
		out = append(out, "Group:"+authUsersURI+" READ")
	}
	slices.Sort(out)
	return out
}

// anon sends an unsigned request and returns its status.
func anon(t testing.TB, site *testsite.Site, method, path string, body []byte) int {
	t.Helper()
	req, err := http.NewRequest(method, site.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := site.HTTPClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// anonWithHeader sends an unsigned request with one header.
func anonWithHeader(t *testing.T, site *testsite.Site, method, path, name, value string) int {
	t.Helper()
	req, err := http.NewRequest(method, site.URL+path, strings.NewReader("anon"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(name, value)
	resp, err := site.HTTPClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestACLCannedRoundTrip sets every canned ACL on buckets and objects
// through each way S3 offers (x-amz-acl on CreateBucket, PutObject,
// CopyObject, CreateMultipartUpload; PutBucketAcl/PutObjectAcl with the
// header, grant headers or a body) and reads it back as AWS's grants with
// the owner ListBuckets shows; grants no canned ACL has are refused.
func TestACLCannedRoundTrip(t *testing.T) {
	site := testsite.Start(t)
	ctx := context.Background()
	c := sdkClient(site, site.SecretKey)
	lb, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil {
		t.Fatal(err)
	}
	ownerID := aws.ToString(lb.Owner.ID)
	if ownerID == "" {
		t.Fatal("ListBuckets has no owner ID")
	}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("acl"), ACL: types.BucketCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	bucketACL := func() []string {
		t.Helper()
		out, err := c.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: aws.String("acl")})
		if err != nil {
			t.Fatal(err)
		}
		if aws.ToString(out.Owner.ID) != ownerID {
			t.Fatalf("bucket ACL owner %q, want %q", aws.ToString(out.Owner.ID), ownerID)
		}
		return grantStrings(out.Grants)
	}
	if got := bucketACL(); !slices.Equal(got, wantGrants(ownerID, "public-read")) {
		t.Fatalf("after CreateBucket public-read: %v", got)
	}
	for _, acl := range []types.BucketCannedACL{"private", "public-read-write", "authenticated-read", "public-read"} {
		if _, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("acl"), ACL: acl}); err != nil {
			t.Fatalf("PutBucketAcl %s: %v", acl, err)
		}
		if got := bucketACL(); !slices.Equal(got, wantGrants(ownerID, string(acl))) {
			t.Fatalf("bucket %s: %v", acl, got)
		}
	}

	objectACL := func(key string) []string {
		t.Helper()
		out, err := c.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: aws.String("acl"), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		if aws.ToString(out.Owner.ID) != ownerID {
			t.Fatalf("object ACL owner %q", aws.ToString(out.Owner.ID))
		}
		return grantStrings(out.Grants)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("acl"), Key: aws.String("plain"), Body: strings.NewReader("p")}); err != nil {
		t.Fatal(err)
	}
	if got := objectACL("plain"); !slices.Equal(got, wantGrants(ownerID, "private")) {
		t.Fatalf("default object ACL: %v", got)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("acl"), Key: aws.String("pub"), Body: strings.NewReader("p"),
		ACL: types.ObjectCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	if got := objectACL("pub"); !slices.Equal(got, wantGrants(ownerID, "public-read")) {
		t.Fatalf("PutObject public-read: %v", got)
	}
	// minio-go names the canned ACL from the grants it reads.
	mc, err := minio.New(strings.TrimPrefix(site.URL, "http://"), &minio.Options{
		Creds: miniocreds.NewStaticV4(site.AccessKey, site.SecretKey, ""), Transport: site.HTTPClient.Transport})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"pub": "public-read", "plain": "private"} {
		info, err := mc.GetObjectACL(ctx, "acl", key)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Metadata.Get("X-Amz-Acl"); got != want {
			t.Fatalf("minio-go GetObjectACL %s = %q, want %q", key, got, want)
		}
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("acl"), Key: aws.String("copy"), CopySource: aws.String("acl/plain"),
		ACL: types.ObjectCannedACLAuthenticatedRead}); err != nil {
		t.Fatal(err)
	}
	if got := objectACL("copy"); !slices.Equal(got, wantGrants(ownerID, "authenticated-read")) {
		t.Fatalf("CopyObject authenticated-read: %v", got)
	}
	mp, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("acl"), Key: aws.String("mp"), ACL: types.ObjectCannedACLPublicRead})
	if err != nil {
		t.Fatal(err)
	}
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("acl"), Key: aws.String("mp"), UploadId: mp.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("part")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("acl"), Key: aws.String("mp"), UploadId: mp.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: part.ETag}}}}); err != nil {
		t.Fatal(err)
	}
	if got := objectACL("mp"); !slices.Equal(got, wantGrants(ownerID, "public-read")) {
		t.Fatalf("multipart public-read: %v", got)
	}
	for _, acl := range []types.ObjectCannedACL{"public-read-write", "bucket-owner-full-control", "private"} {
		if _, err := c.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("acl"), Key: aws.String("pub"), ACL: acl}); err != nil {
			t.Fatalf("PutObjectAcl %s: %v", acl, err)
		}
		want := string(acl)
		if acl == "bucket-owner-full-control" {
			want = "private" // the bucket owner is the object owner
		}
		if got := objectACL("pub"); !slices.Equal(got, wantGrants(ownerID, want)) {
			t.Fatalf("object %s: %v", acl, got)
		}
	}

	// A body holding exactly a canned ACL's grants (what a client that
	// read the ACL sends back) is that canned ACL.
	if _, err := c.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("acl"), Key: aws.String("pub"),
		AccessControlPolicy: &types.AccessControlPolicy{Owner: &types.Owner{ID: aws.String(ownerID)}, Grants: []types.Grant{
			{Grantee: &types.Grantee{Type: types.TypeCanonicalUser, ID: aws.String(ownerID)}, Permission: types.PermissionFullControl},
			{Grantee: &types.Grantee{Type: types.TypeGroup, URI: aws.String(allUsersURI)}, Permission: types.PermissionRead},
		}}}); err != nil {
		t.Fatalf("PutObjectAcl with public-read's grants: %v", err)
	}
	if got := objectACL("pub"); !slices.Equal(got, wantGrants(ownerID, "public-read")) {
		t.Fatalf("after grants body: %v", got)
	}
	// Grant headers likewise.
	if _, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("acl"),
		GrantFullControl: aws.String(`id="` + ownerID + `"`), GrantRead: aws.String("uri=" + authUsersURI)}); err != nil {
		t.Fatalf("grant headers: %v", err)
	}
	if got := bucketACL(); !slices.Equal(got, wantGrants(ownerID, "authenticated-read")) {
		t.Fatalf("after grant headers: %v", got)
	}

	// Anything else is refused, and the ACL stays as it was.
	refused := []struct {
		name string
		code string
		put  *s3.PutBucketAclInput
	}{
		{"grant to another user", "AccessControlListNotSupported", &s3.PutBucketAclInput{AccessControlPolicy: &types.AccessControlPolicy{
			Owner: &types.Owner{ID: aws.String(ownerID)}, Grants: []types.Grant{
				{Grantee: &types.Grantee{Type: types.TypeCanonicalUser, ID: aws.String(ownerID)}, Permission: types.PermissionFullControl},
				{Grantee: &types.Grantee{Type: types.TypeCanonicalUser, ID: aws.String("someone-else")}, Permission: types.PermissionRead}}}}},
		{"email grantee", "UnresolvableGrantByEmailAddress", &s3.PutBucketAclInput{AccessControlPolicy: &types.AccessControlPolicy{
			Owner: &types.Owner{ID: aws.String(ownerID)}, Grants: []types.Grant{
				{Grantee: &types.Grantee{Type: types.TypeAmazonCustomerByEmail, EmailAddress: aws.String("a@example.com")}, Permission: types.PermissionFullControl}}}}},
		{"no owner grant", "AccessControlListNotSupported", &s3.PutBucketAclInput{GrantRead: aws.String("uri=" + allUsersURI)}},
		{"write-acp to all", "AccessControlListNotSupported", &s3.PutBucketAclInput{GrantFullControl: aws.String("id=" + ownerID), GrantWriteACP: aws.String("uri=" + allUsersURI)}},
		{"canned and grants", "InvalidRequest", &s3.PutBucketAclInput{ACL: "private", GrantFullControl: aws.String("id=" + ownerID)}},
		{"unknown canned", "InvalidArgument", &s3.PutBucketAclInput{ACL: "everyone"}},
		{"aws-exec-read", "NotImplemented", &s3.PutBucketAclInput{ACL: "aws-exec-read"}},
		{"nothing", "MissingSecurityHeader", &s3.PutBucketAclInput{}},
	}
	for _, tc := range refused {
		tc.put.Bucket = aws.String("acl")
		if _, err := c.PutBucketAcl(ctx, tc.put); apiCode(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	if got := bucketACL(); !slices.Equal(got, wantGrants(ownerID, "authenticated-read")) {
		t.Fatalf("after refused puts: %v", got)
	}
	// x-amz-acl and grant headers on writes are checked just the same.
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("acl"), Key: aws.String("x"), Body: strings.NewReader("x"),
		GrantRead: aws.String("id=someone-else")}); apiCode(err) != "AccessControlListNotSupported" {
		t.Fatalf("PutObject with a grant header: %v", err)
	}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("acl2"), ACL: "log-delivery-write"}); apiCode(err) != "NotImplemented" {
		t.Fatalf("CreateBucket log-delivery-write: %v", err)
	}
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("acl2")}); err == nil {
		t.Fatal("refused CreateBucket created the bucket")
	}
}

// TestACLEnforcement checks canned ACLs as a source of Allow next to
// policies: anonymous reads of public-read buckets and objects, anonymous
// writes to public-read-write, authenticated-read for a user without
// policies, and an explicit Deny in a bucket policy beating an ACL.
func TestACLEnforcement(t *testing.T) {
	site := testsite.Start(t)
	ctx := context.Background()
	c := sdkClient(site, site.SecretKey)
	put := func(bucket, key string, acl types.ObjectCannedACL) {
		t.Helper()
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader("data"), ACL: acl}); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range []struct {
		name string
		acl  types.BucketCannedACL
	}{{"priv", ""}, {"pub", "public-read"}, {"pubrw", "public-read-write"}, {"authr", "authenticated-read"}, {"denied", "public-read"}} {
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b.name), ACL: b.acl}); err != nil {
			t.Fatal(err)
		}
		put(b.name, "obj", "")
	}
	put("priv", "open", types.ObjectCannedACLPublicRead)
	put("priv", "members", types.ObjectCannedACLAuthenticatedRead)
	put("pub", "closed", types.ObjectCannedACLPrivate)

	expect := func(method, path string, want int) {
		t.Helper()
		if got := anon(t, site, method, path, []byte("anon")); got != want {
			t.Errorf("anonymous %s %s = %d, want %d", method, path, got, want)
		}
	}
	// Private bucket: nothing, except the object made public-read.
	expect("GET", "/priv/obj", 403)
	expect("GET", "/priv/", 403)
	expect("GET", "/priv/?versions", 403)
	expect("GET", "/priv/open", 200)
	expect("HEAD", "/priv/open", 200)
	expect("GET", "/priv/members", 403)
	expect("PUT", "/priv/open", 403)
	// public-read: lists, no writes; objects are read by their own ACL
	// only, as in S3: one written without an ACL is private.
	expect("GET", "/pub/obj", 403)
	expect("GET", "/pub/closed", 403)
	expect("HEAD", "/pub/closed", 403)
	expect("GET", "/pub/", 200)
	expect("GET", "/pub/?versions", 200)
	expect("PUT", "/pub/new", 403)
	expect("DELETE", "/pub/obj", 403)
	// public-read-write: writes and deletes too.
	expect("PUT", "/pubrw/new", 200)
	expect("GET", "/pubrw/new", 403)
	expect("DELETE", "/pubrw/new", 204)
	// ... but may not publish what it writes (that needs s3:PutObjectAcl).
	if code := anonWithHeader(t, site, "PUT", "/pubrw/published", "x-amz-acl", "public-read"); code != 403 {
		t.Errorf("anonymous PUT with x-amz-acl public-read = %d, want 403", code)
	}
	if code := anonWithHeader(t, site, "PUT", "/pubrw/kept", "x-amz-acl", "private"); code != 200 {
		t.Errorf("anonymous PUT with x-amz-acl private = %d, want 200", code)
	}
	// authenticated-read: not for anonymous requests.
	expect("GET", "/authr/obj", 403)
	// Back to private: anonymous reads stop.
	if _, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("pub"), ACL: "private"}); err != nil {
		t.Fatal(err)
	}
	expect("GET", "/pub/obj", 403)
	if _, err := c.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("priv"), Key: aws.String("open"), ACL: "private"}); err != nil {
		t.Fatal(err)
	}
	expect("GET", "/priv/open", 403)

	// A user without any policy: refused on a private bucket, lists an
	// authenticated-read bucket and reads an authenticated-read object, no
	// more.
	adm := rootAdmin(t, site)
	if err := adm.AddUser(ctx, "nobody", "nobody-secret"); err != nil {
		t.Fatal(err)
	}
	u := userSDK(site, "nobody", "nobody-secret")
	if _, err := u.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("priv"), Key: aws.String("obj")}); apiCode(err) != "AccessDenied" {
		t.Fatalf("user GET private: %v", err)
	}
	if _, err := u.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("authr"), Key: aws.String("obj")}); apiCode(err) != "AccessDenied" {
		t.Fatalf("user GET of a private object in an authenticated-read bucket: %v", err)
	}
	if body, _ := getBody(t, u, &s3.GetObjectInput{Bucket: aws.String("priv"), Key: aws.String("members")}); body != "data" {
		t.Fatalf("user GET authenticated-read object = %q", body)
	}
	mc, err := minio.New(strings.TrimPrefix(site.URL, "http://"), &minio.Options{
		Creds: miniocreds.NewStaticV4("nobody", "nobody-secret", ""), Transport: site.HTTPClient.Transport})
	if err != nil {
		t.Fatal(err)
	}
	if keys := listKeys(t, mc, "authr", minio.ListObjectsOptions{}); !slices.Equal(keys, []string{"obj"}) {
		t.Fatalf("user list authenticated-read bucket = %v", keys)
	}
	if _, err := u.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("authr"), Key: aws.String("w"), Body: strings.NewReader("w")}); apiCode(err) != "AccessDenied" {
		t.Fatalf("user PUT authenticated-read bucket: %v", err)
	}
	// The ACL of a copy's source counts as for a GET: the user copies the
	// authenticated-read object into the public-read-write bucket, not a
	// private one.
	if _, err := u.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("pubrw"), Key: aws.String("copied"), CopySource: aws.String("priv/members")}); err != nil {
		t.Fatalf("user copy of an authenticated-read object: %v", err)
	}
	if _, err := u.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("pubrw"), Key: aws.String("copied2"), CopySource: aws.String("priv/obj")}); apiCode(err) != "AccessDenied" {
		t.Fatalf("user copy of a private object: %v", err)
	}

	// An explicit Deny in the bucket policy beats the ACL, for the bucket's
	// ACL and an object's alike.
	put("denied", "open", types.ObjectCannedACLPublicRead)
	expect("GET", "/denied/open", 200)
	expect("GET", "/denied/", 200)
	if _, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("denied"), Policy: aws.String(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::denied/*"}]}`)}); err != nil {
		t.Fatal(err)
	}
	expect("GET", "/denied/open", 403)
	expect("GET", "/denied/", 200) // the Deny names GetObject only
}

// BenchmarkAnonymousGet measures an unsigned GET allowed by a bucket
// policy and by an object's public-read ACL (which is looked up on the path
// the policies refuse) in a public-read bucket.
func BenchmarkAnonymousGet(b *testing.B) {
	site := testsite.Start(b)
	ctx := context.Background()
	c := sdkClient(site, site.SecretKey)
	for _, bk := range []struct {
		name string
		acl  types.BucketCannedACL
	}{{"bypolicy", ""}, {"byobjectacl", "public-read"}} {
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bk.name), ACL: bk.acl}); err != nil {
			b.Fatal(err)
		}
		var acl types.ObjectCannedACL
		if bk.name == "byobjectacl" {
			acl = types.ObjectCannedACLPublicRead
		}
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bk.name), Key: aws.String("obj"), Body: strings.NewReader("data"), ACL: acl}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("bypolicy"), Policy: aws.String(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bypolicy/*"}]}`)}); err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"bypolicy", "byobjectacl"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if code := anon(b, site, "GET", "/"+name+"/obj", nil); code != 200 {
					b.Fatalf("status %d", code)
				}
			}
		})
	}
}
