package sigv4

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// The worked examples of AWS's SigV2 documentation ("Signing and
// Authenticating REST Requests"), virtual-host style under s3.amazonaws.com.
func TestV2DocumentationExamples(t *testing.T) {
	v := &Verifier{Creds: staticCreds{"AKIAIOSFODNN7EXAMPLE": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}, Domain: "s3.amazonaws.com"}
	for _, tc := range []struct {
		method, date, ctype, sig string
	}{
		{http.MethodGet, "Tue, 27 Mar 2007 19:36:42 +0000", "", "bWq2s1WEIj+Ydj0vQ697zp+IXMU="},
		{http.MethodPut, "Tue, 27 Mar 2007 21:15:45 +0000", "image/jpeg", "MyyxeRY7whkBe+bq8fHCL/2kKUg="},
	} {
		r := &http.Request{Method: tc.method, Host: "johnsmith.s3.amazonaws.com", URL: &url.URL{Path: "/photos/puppy.jpg"},
			RequestURI: "/photos/puppy.jpg", Header: http.Header{}}
		r.Header.Set("Date", tc.date)
		if tc.ctype != "" {
			r.Header.Set("Content-Type", tc.ctype)
		}
		r.Header.Set("Authorization", "AWS AKIAIOSFODNN7EXAMPLE:"+tc.sig)
		d, err := time.Parse(time.RFC1123Z, tc.date)
		if err != nil {
			t.Fatal(err)
		}
		v.Now = func() time.Time { return d.Add(time.Minute) }
		res, err := v.Verify(r, "s3")
		if err != nil || res.AccessKey != "AKIAIOSFODNN7EXAMPLE" || res.Payload != PayloadUnsigned {
			t.Fatalf("%s: %+v %v", tc.method, res, err)
		}
		r.Header.Set("Authorization", "AWS AKIAIOSFODNN7EXAMPLE:"+tc.sig[:10]+"AAAAAAAAAAAAAAAAA=")
		if _, err := v.Verify(r, "s3"); !errors.Is(err, ErrSignatureDoesNotMatch) {
			t.Fatalf("%s with a wrong signature: %v", tc.method, err)
		}
		r.Header.Set("Authorization", "AWS AKIAIOSFODNN7EXAMPLE:"+tc.sig)
		if _, err := v.Verify(r, "s3tables"); !errors.Is(err, ErrUnsupportedAlgorithm) {
			t.Fatalf("SigV2 to another surface: %v", err)
		}
	}
}

func TestV2Presigned(t *testing.T) {
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	v := &Verifier{Creds: staticCreds{"AK": "SECRET"}, Now: func() time.Time { return now }}
	sign := func(expires int64, extra string) *http.Request {
		r := &http.Request{Method: http.MethodGet, Host: "h", URL: &url.URL{Path: "/b/k"}, RequestURI: "/b/k", Header: http.Header{}}
		q := url.Values{"versionId": {"v1"}, "x-id": {"GetObject"}}
		sts, _ := v2StringToSign(r, q, strconv.FormatInt(expires, 10), "")
		if sts != "GET\n\n\n"+strconv.FormatInt(expires, 10)+"\n/b/k?versionId=v1" {
			t.Fatalf("string to sign %q", sts)
		}
		q.Set(v2AccessKeyID, "AK")
		q.Set(v2Expires, strconv.FormatInt(expires, 10))
		q.Set(v2Signature, v2Sign("SECRET", sts)+extra)
		r.URL.RawQuery = q.Encode()
		r.RequestURI = "/b/k?" + r.URL.RawQuery
		return r
	}
	if res, err := v.Verify(sign(now.Unix()+60, ""), "s3"); err != nil || !res.Presigned {
		t.Fatalf("valid presign: %+v %v", res, err)
	}
	if _, err := v.Verify(sign(now.Unix()-1, ""), "s3"); !errors.Is(err, ErrExpiredPresign) {
		t.Fatalf("expired presign: %v", err)
	}
	if _, err := v.Verify(sign(now.Unix()+60, "x"), "s3"); !errors.Is(err, ErrSignatureDoesNotMatch) {
		t.Fatalf("tampered presign: %v", err)
	}
}

// TestV2BucketResource: botocore signs a request to a bucket itself with
// the resource "/bucket/" (AWS's examples do too); the path as sent,
// "/bucket", is accepted as well, and neither form reaches another path.
func TestV2BucketResource(t *testing.T) {
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	v := &Verifier{Creds: staticCreds{"AK": "SECRET"}, Now: func() time.Time { return now }}
	date := now.Format(http.TimeFormat)
	req := func(path, signedResource string) *http.Request {
		r := &http.Request{Method: http.MethodPut, Host: "h", URL: &url.URL{Path: path}, RequestURI: path, Header: http.Header{}}
		r.Header.Set("Date", date)
		r.Header.Set("Authorization", "AWS AK:"+v2Sign("SECRET", "PUT\n\n\n"+date+"\n"+signedResource))
		return r
	}
	for _, tc := range []struct {
		path, signed string
		ok           bool
	}{
		{"/bucket", "/bucket/", true},
		{"/bucket", "/bucket", true},
		{"/bucket/key", "/bucket/key/", false},
		{"/bucket/", "/bucket", false},
		{"/other", "/bucket/", false},
	} {
		_, err := v.Verify(req(tc.path, tc.signed), "s3")
		if (err == nil) != tc.ok {
			t.Errorf("path %s signed as %s: %v, want ok=%v", tc.path, tc.signed, err, tc.ok)
		}
	}
}
