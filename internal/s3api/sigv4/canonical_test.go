package sigv4

import (
	"net/http/httptest"
	"net/url"
	"testing"
)

func TestNormalizePath(t *testing.T) {
	cases := []struct{ in, want string }{
		{"/", "/"},
		{"/bucket/key", "/bucket/key"},
		{"/a-b_c.d~e", "/a-b_c.d~e"},
		{"/a b", "/a%20b"},
		{"/a%20b", "/a%20b"},
		{"/a%2fb", "/a%2Fb"}, // an escaped slash is data and stays escaped
		{"/a%2Fb", "/a%2Fb"},
		{"/%41%7e", "/A~"}, // needlessly escaped unreserved bytes are decoded
		{"/test$file.text", "/test%24file.text"},
		{"/!'()*", "/%21%27%28%29%2A"},
		{"/é", "/%C3%A9"},
		{"/%c3%a9", "/%C3%A9"},
		{"/100%", "/100%25"}, // a stray percent is a byte like any other
		{"/%zz", "/%25zz"},
		{"/a+b", "/a%2Bb"},
		{"//double//slash/", "//double//slash/"},
	}
	for _, c := range cases {
		if got := normalizePath(c.in); got != c.want {
			t.Errorf("normalizePath(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := normalizePath(c.want); got != c.want {
			t.Errorf("normalizePath is not idempotent on %q: %q", c.want, got)
		}
	}
}

func TestCanonicalURIs(t *testing.T) {
	cases := []struct {
		target, service, first, second string
	}{
		{"/bucket/key", "s3", "/bucket/key", ""},
		{"/bucket/a%20b", "s3", "/bucket/a%20b", ""},
		{"/bucket/a$b", "s3", "/bucket/a$b", "/bucket/a%24b"},
		{"/", "s3", "/", ""},
		{"/v1/namespaces/a%1Fb", "s3tables", "/v1/namespaces/a%251Fb", ""},
		{"/v1/a%20b", "admin", "/v1/a%2520b", ""},
		{"/v1/a$b", "admin", "/v1/a%24b", "/v1/a%2524b"},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", c.target, nil)
		first, second := canonicalURIs(r, c.service)
		if first != c.first || second != c.second {
			t.Errorf("%s %s: got %q, %q; want %q, %q", c.service, c.target, first, second, c.first, c.second)
		}
	}
}

func TestCanonicalQuery(t *testing.T) {
	cases := []struct {
		raw       string
		presigned bool
		want      string
	}{
		{"", false, ""},
		{"acl", false, "acl="},
		{"prefix=J&max-keys=2", false, "max-keys=2&prefix=J"},
		{"a=2&a=1&b", false, "a=1&a=2&b="},
		{"k=a b&k2=a+b&k3=a%2Bb", false, "k=a%20b&k2=a%20b&k3=a%2Bb"},
		{"%7Bk%7D=v&a~=~", false, "%7Bk%7D=v&a~=~"}, // sorted by the encoded name
		{"k=%C3%A9/*", false, "k=%C3%A9%2F%2A"},
		{"X-Amz-Signature=abc&X-Amz-Date=1", true, "X-Amz-Date=1"},
		{"X-Amz-Signature=abc&X-Amz-Date=1", false, "X-Amz-Date=1&X-Amz-Signature=abc"},
	}
	for _, c := range cases {
		q, _ := url.ParseQuery(c.raw)
		if got := string(appendCanonicalQuery(nil, q, c.presigned)); got != c.want {
			t.Errorf("%q: got %q, want %q", c.raw, got, c.want)
		}
	}
}

func TestCanonicalHeaders(t *testing.T) {
	r := httptest.NewRequest("PUT", "http://ignored.test/k", nil)
	r.Host = "twinlake.test:9000"
	r.ContentLength = 42
	r.Header.Add("X-Amz-Meta-List", " a   b ")
	r.Header.Add("X-Amz-Meta-List", "c")
	r.Header.Set("Content-Type", "\ttext/plain ")
	got := string(appendCanonicalHeaders(nil, r, []string{"content-length", "content-type", "host", "x-amz-meta-list", "x-amz-absent"}))
	want := "content-length:42\ncontent-type:text/plain\nhost:twinlake.test:9000\nx-amz-meta-list:a b,c\nx-amz-absent:\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestKeyCache(t *testing.T) {
	var c keyCache
	s := scope{"20130524", "us-east-1", "s3"}
	want := testSigningKey(exampleSecret, s.date, s.region, s.service)
	for range 2 { // a miss, then a hit
		if k := c.get(exampleAccessKey, exampleSecret, s); string(k[:]) != string(want) {
			t.Fatal("wrong signing key")
		}
	}
	// A rotated secret must not be served the old key.
	rotated := c.get(exampleAccessKey, "new-secret", s)
	if string(rotated[:]) != string(testSigningKey("new-secret", s.date, s.region, s.service)) {
		t.Fatal("stale key after rotation")
	}
	for i := range 3 * maxCachedKeys {
		c.get(exampleAccessKey, exampleSecret, scope{s.date, "region-" + string(rune('a'+i%26)) + string(rune(i)), "s3"})
	}
	if n := len(c.keys); n > maxCachedKeys {
		t.Fatalf("cache grew to %d entries", n)
	}
}
