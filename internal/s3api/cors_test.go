package s3api_test

import (
	"context"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7/pkg/cors"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestCORSConfigRoundTrip: a CORS configuration set with minio-go reads
// back the same through minio-go and aws-sdk-go-v2; Get and Delete of none
// answer NoSuchCORSConfiguration.
func TestCORSConfigRoundTrip(t *testing.T) {
	ctx := context.Background()
	site := testsite.Start(t)
	mc, _ := minioClient(t, site)
	sdk := sdkClient(site, site.SecretKey)
	mustCreateBucket(t, sdk, "web")

	if _, err := sdk.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String("web")}); apiCode(err) != "NoSuchCORSConfiguration" {
		t.Fatalf("GetBucketCors of none: %v", err)
	}
	if _, err := sdk.DeleteBucketCors(ctx, &s3.DeleteBucketCorsInput{Bucket: aws.String("web")}); apiCode(err) != "NoSuchCORSConfiguration" {
		t.Fatalf("DeleteBucketCors of none: %v", err)
	}
	if got, err := mc.GetBucketCors(ctx, "web"); err != nil || got != nil {
		t.Fatalf("minio-go GetBucketCors of none: %v %v", got, err)
	}

	rules := []cors.Rule{
		{ID: "app", AllowedOrigin: []string{"https://app.example.com", "https://*.example.org"}, AllowedMethod: []string{"GET", "PUT"},
			AllowedHeader: []string{"x-amz-*", "content-type"}, ExposeHeader: []string{"ETag", "x-amz-version-id"}, MaxAgeSeconds: 600},
		{AllowedOrigin: []string{"*"}, AllowedMethod: []string{"HEAD"}},
	}
	if err := mc.SetBucketCors(ctx, "web", cors.NewConfig(rules)); err != nil {
		t.Fatalf("SetBucketCors: %v", err)
	}
	got, err := mc.GetBucketCors(ctx, "web")
	if err != nil || got == nil {
		t.Fatalf("GetBucketCors: %v %v", got, err)
	}
	if !reflect.DeepEqual(got.CORSRules, rules) {
		t.Fatalf("minio-go read back\n %+v\nwant %+v", got.CORSRules, rules)
	}
	out, err := sdk.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String("web")})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.CORSRules) != 2 || aws.ToString(out.CORSRules[0].ID) != "app" || aws.ToInt32(out.CORSRules[0].MaxAgeSeconds) != 600 ||
		!reflect.DeepEqual(out.CORSRules[0].AllowedOrigins, rules[0].AllowedOrigin) || !reflect.DeepEqual(out.CORSRules[1].AllowedMethods, []string{"HEAD"}) {
		t.Fatalf("sdk read back %+v", out.CORSRules)
	}

	// The SDK's own PutBucketCors replaces it.
	_, err = sdk.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String("web"), CORSConfiguration: &types.CORSConfiguration{
		CORSRules: []types.CORSRule{{AllowedOrigins: []string{"*"}, AllowedMethods: []string{"GET"}}}}})
	if err != nil {
		t.Fatalf("sdk PutBucketCors: %v", err)
	}
	if got, err := mc.GetBucketCors(ctx, "web"); err != nil || len(got.CORSRules) != 1 || got.CORSRules[0].AllowedMethod[0] != "GET" {
		t.Fatalf("after the sdk's put: %+v %v", got, err)
	}

	if err := mc.SetBucketCors(ctx, "web", nil); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if _, err := sdk.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String("web")}); apiCode(err) != "NoSuchCORSConfiguration" {
		t.Fatalf("GetBucketCors after delete: %v", err)
	}
	if _, err := sdk.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String("nosuch")}); apiCode(err) != "NoSuchBucket" {
		t.Fatalf("GetBucketCors of a missing bucket: %v", err)
	}
}

// TestCORSConfigValidation: what AWS refuses is refused with its error
// code, and a refused configuration leaves the stored one alone.
func TestCORSConfigValidation(t *testing.T) {
	site := testsite.Start(t)
	rc := rawClient{t: t, site: site}
	if st, code := rc.do(rawRequest{method: "PUT", target: "/val"}); st != 200 {
		t.Fatalf("create bucket: %d %s", st, code)
	}
	rule := func(inner string) string {
		return "<CORSConfiguration><CORSRule>" + inner + "</CORSRule></CORSConfiguration>"
	}
	good := rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>")
	if st, code := rc.do(rawRequest{method: "PUT", target: "/val?cors", body: []byte(good)}); st != 200 {
		t.Fatalf("good configuration: %d %s", st, code)
	}
	many := "<CORSConfiguration>" + strings.Repeat("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>", 101) + "</CORSConfiguration>"
	hundred := "<CORSConfiguration>" + strings.Repeat("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>", 100) + "</CORSConfiguration>"
	huge := rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>" + strings.Repeat("<AllowedHeader>x-amz-meta-padding</AllowedHeader>", 2000))
	for _, tc := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"not xml", "{not xml", 400, "MalformedXML"},
		{"other root", "<LifecycleConfiguration/>", 400, "MalformedXML"},
		{"no rules", "<CORSConfiguration></CORSConfiguration>", 400, "MalformedXML"},
		{"no origin", rule("<AllowedMethod>GET</AllowedMethod>"), 400, "MalformedXML"},
		{"no method", rule("<AllowedOrigin>*</AllowedOrigin>"), 400, "MalformedXML"},
		{"unsupported method", rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod>"), 400, "InvalidRequest"},
		{"lower-case method", rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>get</AllowedMethod>"), 400, "InvalidRequest"},
		{"two wildcards in an origin", rule("<AllowedOrigin>https://*.*.example.com</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"), 400, "InvalidRequest"},
		{"two wildcards in a header", rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedHeader>*a*</AllowedHeader>"), 400, "InvalidRequest"},
		{"wildcard expose header", rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><ExposeHeader>x-*</ExposeHeader>"), 400, "InvalidRequest"},
		{"negative max age", rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><MaxAgeSeconds>-1</MaxAgeSeconds>"), 400, "InvalidRequest"},
		{"max age not a number", rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><MaxAgeSeconds>soon</MaxAgeSeconds>"), 400, "MalformedXML"},
		{"long ID", rule("<ID>" + strings.Repeat("i", 256) + "</ID><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"), 400, "InvalidRequest"},
		{"101 rules", many, 400, "MalformedXML"},
		{"over 64 KiB", huge, 400, "MaxMessageLengthExceeded"},
		{"100 rules", hundred, 200, ""},
	} {
		st, code := rc.do(rawRequest{method: "PUT", target: "/val?cors", body: []byte(tc.body)})
		if st != tc.status || code != tc.code {
			t.Errorf("%s: got %d %s, want %d %s", tc.name, st, code, tc.status, tc.code)
		}
	}
	if len(huge) <= 64<<10 {
		t.Fatalf("the oversized body is only %d bytes", len(huge))
	}
	resp, err := http.DefaultClient.Do(rc.sign(rawRequest{method: "GET", target: "/val?cors"}))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Count(string(body), "<CORSRule>") != 100 {
		t.Fatalf("stored configuration: %d, %d rules", resp.StatusCode, strings.Count(string(body), "<CORSRule>"))
	}
	// CORS is a bucket sub-resource only.
	if st, code := rc.do(rawRequest{method: "GET", target: "/val/k?cors"}); st != 501 || code != "NotImplemented" {
		t.Fatalf("object ?cors: %d %s", st, code)
	}
}

// preflight sends an unsigned OPTIONS request with headers.
func preflight(t *testing.T, site *testsite.Site, path string, h map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodOptions, site.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := site.HTTPClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func putCORS(t *testing.T, rc rawClient, bucket, doc string) {
	t.Helper()
	if st, code := rc.do(rawRequest{method: "PUT", target: "/" + bucket + "?cors", body: []byte(doc)}); st != 200 {
		t.Fatalf("PutBucketCors: %d %s", st, code)
	}
}

const testCORS = `<CORSConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <CORSRule>
    <AllowedOrigin>https://app.example.com</AllowedOrigin>
    <AllowedOrigin>https://*.example.org</AllowedOrigin>
    <AllowedMethod>GET</AllowedMethod>
    <AllowedMethod>PUT</AllowedMethod>
    <AllowedHeader>content-type</AllowedHeader>
    <AllowedHeader>x-amz-*</AllowedHeader>
    <ExposeHeader>ETag</ExposeHeader>
    <ExposeHeader>x-amz-request-id</ExposeHeader>
    <MaxAgeSeconds>3000</MaxAgeSeconds>
  </CORSRule>
  <CORSRule>
    <AllowedOrigin>*</AllowedOrigin>
    <AllowedMethod>HEAD</AllowedMethod>
    <AllowedMethod>GET</AllowedMethod>
  </CORSRule>
</CORSConfiguration>`

// TestCORSPreflight: OPTIONS is answered without authentication: 200 with
// the matching rule's headers, 403 AccessForbidden when no rule matches or
// the bucket has none, 400 without Origin or a requested method.
func TestCORSPreflight(t *testing.T) {
	site := testsite.Start(t)
	rc := rawClient{t: t, site: site}
	for _, b := range []string{"/pfl", "/bare"} {
		if st, code := rc.do(rawRequest{method: "PUT", target: b}); st != 200 {
			t.Fatalf("create bucket: %d %s", st, code)
		}
	}
	putCORS(t, rc, "pfl", testCORS)

	resp := preflight(t, site, "/pfl/dir/photo.jpg", map[string]string{"Origin": "https://app.example.com",
		"Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "Content-Type, X-Amz-Date,x-amz-meta-owner"})
	want := map[string]string{
		"Access-Control-Allow-Origin":      "https://app.example.com",
		"Access-Control-Allow-Methods":     "GET, PUT",
		"Access-Control-Allow-Headers":     "content-type, x-amz-date, x-amz-meta-owner",
		"Access-Control-Expose-Headers":    "ETag, x-amz-request-id",
		"Access-Control-Max-Age":           "3000",
		"Access-Control-Allow-Credentials": "true",
	}
	if resp.StatusCode != 200 {
		t.Fatalf("allowed preflight: %d", resp.StatusCode)
	}
	for k, v := range want {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if !strings.Contains(resp.Header.Get("Vary"), "Origin") {
		t.Errorf("Vary = %q", resp.Header.Get("Vary"))
	}

	// The second rule's wildcard origin answers "*", on the bucket too.
	resp = preflight(t, site, "/pfl", map[string]string{"Origin": "http://elsewhere.test", "Access-Control-Request-Method": "HEAD"})
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("Access-Control-Allow-Methods") != "HEAD, GET" ||
		resp.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("wildcard preflight: %d %v", resp.StatusCode, resp.Header)
	}
	// One '*' inside an origin.
	resp = preflight(t, site, "/pfl/k", map[string]string{"Origin": "https://cdn.example.org", "Access-Control-Request-Method": "GET"})
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "https://cdn.example.org" {
		t.Fatalf("wildcard-in-origin preflight: %d %v", resp.StatusCode, resp.Header)
	}

	for _, tc := range []struct {
		name, path string
		h          map[string]string
		status     int
	}{
		{"origin not allowed for the method", "/pfl/k", map[string]string{"Origin": "http://elsewhere.test", "Access-Control-Request-Method": "PUT"}, 403},
		{"method no rule allows", "/pfl/k", map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "DELETE"}, 403},
		{"header not allowed", "/pfl/k", map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "x-custom"}, 403},
		{"origin case differs", "/pfl/k", map[string]string{"Origin": "https://APP.example.com", "Access-Control-Request-Method": "PUT"}, 403},
		{"suffix wildcard does not match the bare domain", "/pfl/k", map[string]string{"Origin": "https://example.org", "Access-Control-Request-Method": "PUT"}, 403},
		{"bucket without CORS", "/bare/k", map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "GET"}, 403},
		{"missing bucket", "/nosuch/k", map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "GET"}, 403},
		{"no origin", "/pfl/k", map[string]string{"Access-Control-Request-Method": "GET"}, 400},
		{"no requested method", "/pfl/k", map[string]string{"Origin": "https://app.example.com"}, 400},
	} {
		req, _ := http.NewRequest(http.MethodOptions, site.URL+tc.path, nil)
		for k, v := range tc.h {
			req.Header.Set(k, v)
		}
		resp, err := site.HTTPClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		st, code := readAPIError(t, resp)
		wantCode := "AccessForbidden"
		if tc.status == 400 {
			wantCode = "BadRequest"
		}
		if st != tc.status || code != wantCode {
			t.Errorf("%s: got %d %s, want %d %s", tc.name, st, code, tc.status, wantCode)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: denied preflight carries Access-Control-Allow-Origin", tc.name)
		}
	}

	// A signed OPTIONS is no different: preflight is never authenticated,
	// and it never reaches a handler that could serve data.
	req := rc.sign(rawRequest{method: "OPTIONS", target: "/bare/k", header: map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "GET"}})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if st, code := readAPIError(t, resp); st != 403 || code != "AccessForbidden" {
		t.Fatalf("signed preflight to a bucket without CORS: %d %s", st, code)
	}
}

// TestCORSHeadersOnActualRequests: a request with an Origin gets the
// matching rule's headers on success and on error, anonymous or signed; a
// request whose origin no rule allows gets none.
func TestCORSHeadersOnActualRequests(t *testing.T) {
	site := testsite.Start(t)
	rc := rawClient{t: t, site: site}
	if st, code := rc.do(rawRequest{method: "PUT", target: "/act"}); st != 200 {
		t.Fatalf("create bucket: %d %s", st, code)
	}
	if st, code := rc.do(rawRequest{method: "PUT", target: "/act/obj", body: []byte("hello")}); st != 200 {
		t.Fatalf("put: %d %s", st, code)
	}
	putCORS(t, rc, "act", testCORS)

	get := func(path, origin string, signed bool) *http.Response {
		t.Helper()
		var req *http.Request
		if signed {
			req = rc.sign(rawRequest{method: "GET", target: path, header: map[string]string{"Origin": origin}})
		} else {
			req, _ = http.NewRequest("GET", site.URL+path, nil)
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	check := func(what string, resp *http.Response, status int, allow, expose string) {
		t.Helper()
		if resp.StatusCode != status {
			t.Errorf("%s: status %d, want %d", what, resp.StatusCode, status)
		}
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != allow {
			t.Errorf("%s: Access-Control-Allow-Origin %q, want %q", what, got, allow)
		}
		if got := resp.Header.Get("Access-Control-Expose-Headers"); got != expose {
			t.Errorf("%s: Access-Control-Expose-Headers %q, want %q", what, got, expose)
		}
		if !strings.Contains(resp.Header.Get("Vary"), "Origin") {
			t.Errorf("%s: Vary %q", what, resp.Header.Get("Vary"))
		}
	}
	check("signed GET", get("/act/obj", "https://app.example.com", true), 200, "https://app.example.com", "ETag, x-amz-request-id")
	check("signed GET of a missing key", get("/act/none", "https://app.example.com", true), 404, "https://app.example.com", "ETag, x-amz-request-id")
	check("signed GET, origin of the wildcard rule", get("/act/obj", "http://other.test", true), 200, "http://other.test", "")
	check("anonymous GET (denied), wildcard rule", get("/act/obj", "http://other.test", false), 403, "*", "")
	check("anonymous GET (denied), named origin", get("/act/obj", "https://app.example.com", false), 403, "https://app.example.com", "ETag, x-amz-request-id")

	// DELETE is allowed by no rule: no CORS headers, whatever the answer.
	req := rc.sign(rawRequest{method: "DELETE", target: "/act/none", header: map[string]string{"Origin": "https://app.example.com"}})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("DELETE from an origin no rule allows it for: %d %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	// Without an Origin nothing is added.
	resp = get("/act/obj", "", true)
	if resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.Header.Get("Vary") != "" {
		t.Fatalf("no Origin: %v", resp.Header)
	}
	// A bucket without CORS adds nothing.
	if st, code := rc.do(rawRequest{method: "DELETE", target: "/act?cors"}); st != 204 {
		t.Fatalf("DeleteBucketCors: %d %s", st, code)
	}
	if resp := get("/act/obj", "https://app.example.com", true); resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("after DeleteBucketCors: %v", resp.Header)
	}
}
