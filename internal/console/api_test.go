package console_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/console"
	"github.com/twinlake/twinlake/internal/testsite"
)

// apiClient is a browser stand-in: a cookie jar and the CSRF token.
type apiClient struct {
	t    *testing.T
	base string
	hc   *http.Client
	csrf string
}

func newAPIClient(t *testing.T, site *testsite.Site) *apiClient {
	jar, _ := cookiejar.New(nil)
	return &apiClient{t: t, base: site.URL + console.Prefix + "api/", hc: &http.Client{Jar: jar}}
}

func (c *apiClient) do(method, path, body string) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if c.csrf != "" {
		req.Header.Set(console.CSRFHeader, c.csrf)
	}
	if path == "login" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (c *apiClient) signIn(ak, sk string) int {
	c.t.Helper()
	in, _ := json.Marshal(console.LoginRequest{AccessKey: ak, SecretKey: sk})
	code, body := c.do("POST", "login", string(in))
	if code == http.StatusOK {
		var s console.SessionInfo
		mustJSON(c.t, body, &s)
		c.csrf = s.CSRF
	}
	return code
}

// TestConsoleFollowsUserPolicies signs in as a user holding only the
// built-in readonly policy: the console lets them read an object and
// refuses everything their policies do not allow, with the surfaces' own
// AccessDenied, and a disabled user loses the session.
func TestConsoleFollowsUserPolicies(t *testing.T) {
	ctx := context.Background()
	site := testsite.Start(t)
	adm := adminFor(t, site)
	if err := adm.AddUser(ctx, "reader", "reader-secret-key"); err != nil {
		t.Fatal(err)
	}
	if err := adm.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"readonly"}, User: "reader"}); err != nil {
		t.Fatal(err)
	}
	s3 := s3For(t, site, site.AccessKey, site.SecretKey)
	if err := s3.MakeBucket(ctx, "data", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s3.PutObject(ctx, "data", "a.txt", strings.NewReader("hello"), 5, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}

	c := newAPIClient(t, site)
	if code := c.signIn("reader", "wrong-secret"); code != http.StatusUnauthorized {
		t.Fatalf("wrong secret: %d", code)
	}
	if code := c.signIn("reader", "reader-secret-key"); code != http.StatusOK {
		t.Fatalf("sign-in: %d", code)
	}
	if code, body := c.do("GET", "buckets/data/object?key=a.txt", ""); code != http.StatusOK || body != "hello" {
		t.Fatalf("download allowed by readonly: %d %q", code, body)
	}
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "sites", ""},
		{"GET", "server", ""},
		{"GET", "tables-dr", ""},
		{"GET", "buckets", ""},
		{"PUT", "buckets/data/object?key=b.txt", "new"},
		{"DELETE", "buckets/data/object?key=a.txt", ""},
		{"POST", "tables-dr/failover", `{"confirm":"x"}`},
		{"PUT", "server/config/api", `{"requests_max":"7"}`},
	} {
		code, body := c.do(tc.method, tc.path, tc.body)
		if code != http.StatusForbidden || !strings.Contains(body, "AccessDenied") {
			t.Errorf("%s %s as reader: %d %s", tc.method, tc.path, code, body)
		}
	}
	if _, err := s3.StatObject(ctx, "data", "a.txt", minio.StatObjectOptions{}); err != nil {
		t.Fatalf("the reader's refused delete removed the object: %v", err)
	}

	// Root, signed in the same way, may do what the reader may not.
	root := newAPIClient(t, site)
	if code := root.signIn(site.AccessKey, site.SecretKey); code != http.StatusOK {
		t.Fatal(code)
	}
	if code, body := root.do("PUT", "buckets/data/object?key=b.txt", "new"); code != http.StatusOK {
		t.Fatalf("root upload: %d %s", code, body)
	}
	if code, body := root.do("GET", "buckets", ""); code != http.StatusOK || !strings.Contains(body, `"data"`) {
		t.Fatalf("root buckets: %d %s", code, body)
	}

	// A disabled user's session ends at its next call.
	if err := adm.SetUserStatus(ctx, "reader", false); err != nil {
		t.Fatal(err)
	}
	if code, body := c.do("GET", "session", ""); code != http.StatusUnauthorized {
		t.Fatalf("disabled user's session: %d %s", code, body)
	}
}

// TestConsoleBucketSettingsAndVersions changes versioning and encryption
// through the console and lists an object's versions.
func TestConsoleBucketSettingsAndVersions(t *testing.T) {
	site := testsite.Start(t)
	c := newAPIClient(t, site)
	if code := c.signIn(site.AccessKey, site.SecretKey); code != http.StatusOK {
		t.Fatal(code)
	}
	if code, body := c.do("POST", "buckets", `{"name":"vers"}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	code, body := c.do("PUT", "buckets/vers/settings", `{"versioning":"Enabled","encryption":"AES256"}`)
	var s console.BucketSettings
	mustJSON(t, body, &s)
	if code != http.StatusOK || s.Versioning != "Enabled" || s.Encryption != "AES256" {
		t.Fatalf("settings: %d %s", code, body)
	}
	for _, v := range []string{"one", "two"} {
		if code, body := c.do("PUT", "buckets/vers/object?key="+url.QueryEscape("k/x.txt"), v); code != http.StatusOK {
			t.Fatalf("upload: %d %s", code, body)
		}
	}
	var vs console.ObjectsView
	_, body = c.do("GET", "buckets/vers/versions?key=k%2Fx.txt", "")
	mustJSON(t, body, &vs)
	if len(vs.Objects) != 2 || !vs.Objects[0].IsLatest || vs.Objects[0].VersionID == "" {
		t.Fatalf("versions: %s", body)
	}
	if code, body := c.do("GET", "buckets/vers/object?key=k%2Fx.txt&versionId="+vs.Objects[1].VersionID, ""); code != http.StatusOK || body != "one" {
		t.Fatalf("old version: %d %q", code, body)
	}
	if code, body := c.do("DELETE", "buckets/vers/object?key=k%2Fx.txt&versionId="+vs.Objects[0].VersionID, ""); code != http.StatusNoContent {
		t.Fatalf("delete version: %d %s", code, body)
	}
	if code, body := c.do("GET", "buckets/vers/object?key=k%2Fx.txt", ""); code != http.StatusOK || body != "one" {
		t.Fatalf("after deleting the latest version: %d %q", code, body)
	}
	var ov console.ObjectsView
	_, body = c.do("GET", "buckets/vers/objects?prefix=k%2F", "")
	mustJSON(t, body, &ov)
	if len(ov.Objects) != 1 || ov.Objects[0].Key != "k/x.txt" {
		t.Fatalf("listing: %s", body)
	}
	// Listing pages follow S3 continuation tokens: 2 prefixes and 3 objects, 2 per page.
	for _, k := range []string{"p/a/1", "p/b/1", "p/c.txt", "p/d.txt", "p/e.txt"} {
		if code, body := c.do("PUT", "buckets/vers/object?key="+url.QueryEscape(k), "x"); code != http.StatusOK {
			t.Fatalf("upload %s: %d %s", k, code, body)
		}
	}
	var seen []string
	token := ""
	for page := 0; ; page++ {
		var pv console.ObjectsView
		_, body := c.do("GET", "buckets/vers/objects?prefix=p%2F&limit=2&token="+url.QueryEscape(token), "")
		mustJSON(t, body, &pv)
		if len(pv.Objects) > 2 || page > 5 {
			t.Fatalf("page %d: %s", page, body)
		}
		for _, o := range pv.Objects {
			seen = append(seen, o.Key)
		}
		if pv.Next == "" {
			break
		}
		token = pv.Next
	}
	if got := strings.Join(seen, ","); got != "p/a/,p/b/,p/c.txt,p/d.txt,p/e.txt" {
		t.Fatalf("paged listing: %s", got)
	}
	if code, body := c.do("PUT", "buckets/vers/settings", `{"versioning":"Suspended","encryption":""}`); code != http.StatusOK || !strings.Contains(body, `"Suspended"`) || !strings.Contains(body, `"encryption":""`) {
		t.Fatalf("settings back: %d %s", code, body)
	}
}

// TestConsoleOverTLS: on an HTTPS site the session cookie is Secure, and
// the console works through the same listener.
func TestConsoleOverTLS(t *testing.T) {
	site := testsite.Start(t, testsite.WithTLS())
	c := newAPIClient(t, site)
	c.hc.Transport = site.HTTPClient.Transport
	req, _ := http.NewRequest("POST", c.base+"login", strings.NewReader(`{"accessKey":"`+site.AccessKey+`","secretKey":"`+site.SecretKey+`"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cks := resp.Cookies()
	if resp.StatusCode != http.StatusOK || len(cks) != 1 || !cks[0].Secure || !cks[0].HttpOnly || cks[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("HTTPS sign-in: %d %+v", resp.StatusCode, cks)
	}
	if code, body := c.do("GET", "server", ""); code != http.StatusOK || !strings.Contains(body, `"version"`) {
		t.Fatalf("server page over HTTPS: %d %s", code, body)
	}
}
