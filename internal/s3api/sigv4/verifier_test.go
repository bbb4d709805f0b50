package sigv4

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// awsExample builds one of the requests of the AWS S3 SigV4 documentation.
func awsExample(method, target string, body []byte, headers map[string]string) *http.Request {
	r := httptest.NewRequest(method, target, bytes.NewReader(body))
	r.Host = "examplebucket.s3.amazonaws.com"
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	return r
}

func exampleAuth(signedHeaders, signature string) string {
	return "AWS4-HMAC-SHA256 Credential=" + exampleAccessKey + "/20130524/us-east-1/s3/aws4_request," +
		"SignedHeaders=" + signedHeaders + ",Signature=" + signature
}

// TestVerifyAWSDocumentationExamples checks the published vectors, which
// pin the canonical request independently of any SDK.
func TestVerifyAWSDocumentationExamples(t *testing.T) {
	emptyHash := sha256Hex(nil)
	putBody := []byte("Welcome to Amazon S3.")
	putHeaders := func(sig string) map[string]string {
		return map[string]string{
			"Date":                 "Fri, 24 May 2013 00:00:00 GMT",
			"X-Amz-Date":           exampleAmzDate,
			"X-Amz-Storage-Class":  "REDUCED_REDUNDANCY",
			"X-Amz-Content-Sha256": sha256Hex(putBody),
			"Authorization":        exampleAuth("date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class", sig),
		}
	}
	getHeaders := func(signed, sig string, extra ...string) map[string]string {
		h := map[string]string{
			"X-Amz-Date":           exampleAmzDate,
			"X-Amz-Content-Sha256": emptyHash,
			"Authorization":        exampleAuth(signed, sig),
		}
		for i := 0; i < len(extra); i += 2 {
			h[extra[i]] = extra[i+1]
		}
		return h
	}
	const putSig = "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"
	cases := []struct {
		name    string
		req     *http.Request
		payload PayloadMode
	}{
		{"get object", awsExample("GET", "/test.txt", nil, getHeaders("host;range;x-amz-content-sha256;x-amz-date",
			"f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41", "Range", "bytes=0-9")), PayloadSigned},
		{"put object, $ sent raw", awsExample("PUT", "/test$file.text", putBody, putHeaders(putSig)), PayloadSigned},
		{"put object, $ escaped", awsExample("PUT", "/test%24file.text", putBody, putHeaders(putSig)), PayloadSigned},
		{"get lifecycle", awsExample("GET", "/?lifecycle", nil, getHeaders("host;x-amz-content-sha256;x-amz-date",
			"fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543")), PayloadSigned},
		{"list objects", awsExample("GET", "/?max-keys=2&prefix=J", nil, getHeaders("host;x-amz-content-sha256;x-amz-date",
			"34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")), PayloadSigned},
		{"presigned get", awsExample("GET", "/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256"+
			"&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"+
			"&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"+
			"&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404", nil, nil), PayloadUnsigned},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := newTestVerifier(exampleTime().Add(time.Minute)).Verify(c.req, "s3")
			if err != nil {
				var mm *SignatureMismatchError
				if errors.As(err, &mm) {
					t.Logf("canonical request:\n%s", mm.CanonicalRequest)
				}
				t.Fatal(err)
			}
			if res.AccessKey != exampleAccessKey || res.Region != "us-east-1" || res.Payload != c.payload {
				t.Fatalf("result %+v", res)
			}
			body, err := io.ReadAll(res.Body(c.req))
			wantErr(t, err, nil)
			if c.req.Method == "PUT" && !bytes.Equal(body, putBody) {
				t.Fatalf("body %q", body)
			}
		})
	}
}

// signedPut is a request signed by the AWS SDK, as a server receives it.
func signedPut(t *testing.T, mutate func(*http.Request)) *http.Request {
	body := []byte("hello, twinlake")
	r := newClientRequest(t, "PUT", "http://twinlake.test:9000/bucket/dir/a%20key+%C3%A9~!$'()*.txt?partNumber=2&uploadId=x%2By", body)
	r.Header.Set("X-Amz-Content-Sha256", sha256Hex(body))
	r.Header.Set("X-Amz-Meta-Color", "  dark   blue ")
	r.Header.Set("Content-Type", "text/plain")
	if mutate != nil {
		mutate(r)
	}
	sdkSign(t, r, r.Header.Get("X-Amz-Content-Sha256"), "s3", testTime())
	return toServer(t, r)
}

func TestVerifyHeaderAuthentication(t *testing.T) {
	cases := []struct {
		name    string
		sign    func(*http.Request) // before signing
		tamper  func(*http.Request) // after, on the server side
		service string
		now     time.Duration // offset from the signing time
		secret  string
		want    error
	}{
		{name: "valid"},
		{name: "clock ahead within skew", now: 14 * time.Minute},
		{name: "clock behind within skew", now: -14 * time.Minute},
		{name: "too skewed ahead", now: 16 * time.Minute, want: ErrRequestTimeTooSkewed},
		{name: "too skewed behind", now: -16 * time.Minute, want: ErrRequestTimeTooSkewed},
		{name: "wrong secret", secret: "not-the-secret", want: ErrSignatureDoesNotMatch},
		{name: "wrong service", service: "s3tables", want: ErrAuthorizationHeaderMalformed},
		{name: "unknown key", tamper: func(r *http.Request) {
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), exampleAccessKey, "AKIDUNKNOWN", 1))
		}, want: ErrInvalidAccessKeyID},
		{name: "tampered signed header", tamper: func(r *http.Request) { r.Header.Set("Content-Type", "text/html") }, want: ErrSignatureDoesNotMatch},
		{name: "tampered meta", tamper: func(r *http.Request) { r.Header.Set("X-Amz-Meta-Color", "red") }, want: ErrSignatureDoesNotMatch},
		{name: "whitespace-only header change", tamper: func(r *http.Request) { r.Header.Set("X-Amz-Meta-Color", "dark blue") }},
		{name: "tampered query", tamper: func(r *http.Request) { r.URL.RawQuery = "partNumber=3&uploadId=x%2By" }, want: ErrSignatureDoesNotMatch},
		{name: "added query", tamper: func(r *http.Request) { r.URL.RawQuery += "&acl" }, want: ErrSignatureDoesNotMatch},
		{name: "tampered path", tamper: func(r *http.Request) { r.RequestURI = strings.Replace(r.RequestURI, "dir", "dif", 1) }, want: ErrSignatureDoesNotMatch},
		{name: "tampered method", tamper: func(r *http.Request) { r.Method = "POST" }, want: ErrSignatureDoesNotMatch},
		{name: "unsigned x-amz header", tamper: func(r *http.Request) { r.Header.Set("X-Amz-Acl", "public-read") }, want: ErrUnsignedHeader},
		{name: "tampered date", tamper: func(r *http.Request) {
			r.Header.Set("X-Amz-Date", testTime().Add(time.Second).Format(amzDateLayout))
		}, want: ErrSignatureDoesNotMatch},
		{name: "no content sha256", sign: func(r *http.Request) { r.Header.Del("X-Amz-Content-Sha256") }, want: ErrMissingContentSHA256},
		{name: "also presigned", tamper: func(r *http.Request) { r.URL.RawQuery += "&X-Amz-Signature=00" }, want: ErrMultipleAuthMechanisms},
		{name: "signature v2", tamper: func(r *http.Request) { r.Header.Set("Authorization", "AWS "+exampleAccessKey+":c2lnbmF0dXJl") }, want: ErrSignatureDoesNotMatch}, // SigV2, checked as such
		{name: "two authorization headers", tamper: func(r *http.Request) { r.Header.Add("Authorization", r.Header.Get("Authorization")) }, want: ErrAuthorizationHeaderMalformed},
		{name: "bad date", tamper: func(r *http.Request) { r.Header.Set("X-Amz-Date", "yesterday") }, want: ErrInvalidDate},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := signedPut(t, c.sign)
			if c.tamper != nil {
				c.tamper(r)
			}
			v := newTestVerifier(testTime().Add(c.now))
			if c.secret != "" {
				v.Creds = staticCreds{exampleAccessKey: c.secret}
			}
			service := c.service
			if service == "" {
				service = "s3"
			}
			res, err := v.Verify(r, service)
			wantErr(t, err, c.want)
			if err != nil {
				return
			}
			if res.AccessKey != exampleAccessKey || res.Region != "eu-west-3" || res.Service != "s3" ||
				res.Payload != PayloadSigned || res.Presigned || res.Anonymous || !res.SignedAt.Equal(testTime()) {
				t.Fatalf("result %+v", res)
			}
			body, err := io.ReadAll(res.Body(r))
			if err != nil || string(body) != "hello, twinlake" {
				t.Fatalf("body %q, %v", body, err)
			}
		})
	}
}

func TestVerifyMismatchReportsCanonicalRequest(t *testing.T) {
	r := signedPut(t, nil)
	r.Method = "DELETE"
	_, err := newTestVerifier(testTime()).Verify(r, "s3")
	var mm *SignatureMismatchError
	if !errors.As(err, &mm) || !errors.Is(err, ErrSignatureDoesNotMatch) {
		t.Fatalf("error %v", err)
	}
	if !strings.HasPrefix(mm.CanonicalRequest, "DELETE\n/bucket/dir/a%20key%2B%C3%A9~%21%24%27%28%29%2A.txt\npartNumber=2&uploadId=x%2By\n") ||
		!strings.HasPrefix(mm.StringToSign, "AWS4-HMAC-SHA256\n20260314T150926Z\n20260314/eu-west-3/s3/aws4_request\n") ||
		strings.Contains(mm.Error(), exampleSecret) {
		t.Fatalf("mismatch %+v", mm)
	}
}

func TestVerifyDateHeader(t *testing.T) {
	// A request dated by Date alone is valid when Date is signed.
	r := awsExample("GET", "/k", nil, nil)
	r.Header.Set("Date", testTime().Format(http.TimeFormat))
	r.Header.Set("X-Amz-Content-Sha256", sha256Hex(nil))
	r.Header.Set("Authorization", signWithoutAmzDate(t, r, "date;host;x-amz-content-sha256"))
	_, err := newTestVerifier(testTime()).Verify(r, "s3")
	wantErr(t, err, nil)

	// botocore dates a request by Date in RFC 1123 with a numeric zone
	// ("-0000") when the caller set a Date header.
	for _, date := range []string{testTime().Format("Mon, 02 Jan 2006 15:04:05 -0000"), testTime().In(time.FixedZone("", 2*3600)).Format(time.RFC1123Z)} {
		r.Header.Set("Date", date)
		r.Header.Set("Authorization", signWithoutAmzDate(t, r, "date;host;x-amz-content-sha256"))
		_, err = newTestVerifier(testTime()).Verify(r, "s3")
		wantErr(t, err, nil)
	}
	r.Header.Set("Date", "Fri, 24 May 2013 00:00:00 PST") // a zone name Go cannot place
	r.Header.Set("Authorization", signWithoutAmzDate(t, r, "date;host;x-amz-content-sha256"))
	_, err = newTestVerifier(testTime()).Verify(r, "s3")
	wantErr(t, err, ErrInvalidDate)
	r.Header.Set("Date", testTime().Format(http.TimeFormat))

	// Unsigned, the Date could be replaced to replay the request later.
	r.Header.Set("Authorization", signWithoutAmzDate(t, r, "host;x-amz-content-sha256"))
	_, err = newTestVerifier(testTime()).Verify(r, "s3")
	wantErr(t, err, ErrUnsignedHeader)
}

// signWithoutAmzDate builds an Authorization header with the test encoder's
// primitives, since the SDK always adds x-amz-date.
func signWithoutAmzDate(t *testing.T, r *http.Request, signedHeaders string) string {
	t.Helper()
	amzDate := testTime().Format(amzDateLayout)
	var canon strings.Builder
	canon.WriteString(r.Method + "\n" + r.URL.EscapedPath() + "\n\n")
	for name := range strings.SplitSeq(signedHeaders, ";") {
		v := r.Header.Get(name)
		if name == "host" {
			v = r.Host
		}
		canon.WriteString(name + ":" + v + "\n")
	}
	canon.WriteString("\n" + signedHeaders + "\n" + r.Header.Get("X-Amz-Content-Sha256"))
	s := newChunkSigner(exampleSecret, amzDate, "us-east-1", "s3")
	sig := s.hmacHex("AWS4-HMAC-SHA256", amzDate, s.scope, sha256Hex([]byte(canon.String())))
	return "AWS4-HMAC-SHA256 Credential=" + exampleAccessKey + "/" + s.scope + ", SignedHeaders=" + signedHeaders + ", Signature=" + sig
}

func TestVerifyAnonymous(t *testing.T) {
	cases := []struct {
		name    string
		sha     string
		payload PayloadMode
		want    error
	}{
		{name: "plain", payload: PayloadUnsigned},
		{name: "unsigned trailer", sha: streamingUnsignedTrailerValue, payload: PayloadStreamingUnsignedTrailer},
		{name: "digest", sha: sha256Hex(nil), payload: PayloadSigned},
		{name: "signed streaming", sha: streamingSignedPayload, want: ErrInvalidContentSHA256},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/bucket/key?versionId=1", nil)
			if c.sha != "" {
				r.Header.Set("X-Amz-Content-Sha256", c.sha)
			}
			res, err := newTestVerifier(testTime()).Verify(r, "s3")
			wantErr(t, err, c.want)
			if err == nil && (!res.Anonymous || res.AccessKey != "" || res.Payload != c.payload) {
				t.Fatalf("result %+v", res)
			}
		})
	}
}

// presignedGet is a presigned request from the AWS SDK, as a server
// receives it.
func presignedGet(t *testing.T, expires string, service string) *http.Request {
	r := newClientRequest(t, "GET", "http://twinlake.test/bucket/some%20key?versionId=7&X-Amz-Expires="+expires, nil)
	r.Header.Set("X-Amz-Expected-Bucket-Owner", "123456789012") // hoisted into the query
	r.Header.Set("X-Amz-Meta-Kept", "kept as a header")
	r.Header.Set("If-Match", `"etag"`)
	url, headers := sdkPresign(t, r, service, testTime())
	sr := newClientRequest(t, "GET", url, nil)
	for k, v := range headers {
		sr.Header[k] = v
	}
	return toServer(t, sr)
}

func TestVerifyPresigned(t *testing.T) {
	cases := []struct {
		name    string
		expires string
		now     time.Duration
		service string
		tamper  func(*http.Request)
		want    error
	}{
		{name: "valid", expires: "900", now: 5 * time.Minute},
		{name: "valid, signed slightly in the future", expires: "900", now: -10 * time.Minute},
		{name: "valid for a week", expires: "604800", now: 6 * 24 * time.Hour},
		{name: "valid non-s3 presign", expires: "60", service: "s3tables"},
		{name: "expired", expires: "900", now: 16 * time.Minute, want: ErrExpiredPresign},
		{name: "not valid yet", expires: "900", now: -16 * time.Minute, want: ErrRequestNotReadyYet},
		{name: "expires zero is expired at once", expires: "0", want: ErrExpiredPresign},
		{name: "expires negative", expires: "-7", want: ErrAuthorizationQueryParametersError},
		{name: "expires over a week", expires: "604801", want: ErrAuthorizationQueryParametersError},
		{name: "expires not a number", expires: "soon", want: ErrAuthorizationQueryParametersError},
		{name: "tampered query", expires: "900", tamper: func(r *http.Request) {
			r.URL.RawQuery = strings.Replace(r.URL.RawQuery, "versionId=7", "versionId=8", 1)
		}, want: ErrSignatureDoesNotMatch},
		{name: "tampered hoisted header", expires: "900", tamper: func(r *http.Request) {
			r.URL.RawQuery = strings.Replace(r.URL.RawQuery, "123456789012", "123456789013", 1)
		}, want: ErrSignatureDoesNotMatch},
		{name: "tampered meta header", expires: "900", tamper: func(r *http.Request) { r.Header.Set("X-Amz-Meta-Kept", "x") }, want: ErrSignatureDoesNotMatch},
		{name: "tampered signed header", expires: "900", tamper: func(r *http.Request) { r.Header.Set("If-Match", "*") }, want: ErrSignatureDoesNotMatch},
		{name: "extended expiry", expires: "900", tamper: func(r *http.Request) {
			r.URL.RawQuery = strings.Replace(r.URL.RawQuery, "X-Amz-Expires=900", "X-Amz-Expires=901", 1)
		}, want: ErrSignatureDoesNotMatch},
		{name: "added unsigned x-amz header", expires: "900", tamper: func(r *http.Request) { r.Header.Set("X-Amz-Copy-Source", "/other/key") }, want: ErrUnsignedHeader},
		{name: "missing credential", expires: "900", tamper: func(r *http.Request) { dropQuery(r, amzCredential) }, want: ErrAuthorizationQueryParametersError},
		{name: "missing signature", expires: "900", tamper: func(r *http.Request) { dropQuery(r, amzSignature) }, want: ErrAuthorizationQueryParametersError},
		{name: "other algorithm", expires: "900", tamper: func(r *http.Request) { setQuery(r, amzAlgorithm, "AWS4-ECDSA-P256-SHA256") }, want: ErrAuthorizationQueryParametersError},
		{name: "valid admin presign", expires: "900", service: "admin"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			service := c.service
			if service == "" {
				service = "s3"
			}
			r := presignedGet(t, c.expires, service)
			if c.tamper != nil {
				c.tamper(r)
			}
			res, err := newTestVerifier(testTime().Add(c.now)).Verify(r, service)
			wantErr(t, err, c.want)
			if err == nil && (!res.Presigned || res.AccessKey != exampleAccessKey || res.Service != service) {
				t.Fatalf("result %+v", res)
			}
		})
	}
	t.Run("scoped to another service", func(t *testing.T) {
		_, err := newTestVerifier(testTime()).Verify(presignedGet(t, "900", "s3"), "admin")
		wantErr(t, err, ErrAuthorizationQueryParametersError)
	})
}

func dropQuery(r *http.Request, name string) {
	q := r.URL.Query()
	q.Del(name)
	r.URL.RawQuery = q.Encode()
}

func setQuery(r *http.Request, name, value string) {
	q := r.URL.Query()
	q.Set(name, value)
	r.URL.RawQuery = q.Encode()
}

// TestVerifyOtherServices covers the standard (double) path encoding and the
// payload forms of Iceberg REST clients.
func TestVerifyOtherServices(t *testing.T) {
	body := []byte(`{"identifier":{"namespace":["a","b"],"name":"t"}}`)
	tampered := bytes.ToUpper(body) // same length: Content-Length is signed
	const target = "http://twinlake.test/v1/warehouse/namespaces/a%1Fb/tables/t%20x"
	sum := sha256.Sum256(body)
	cases := []struct {
		name   string
		header string // x-amz-content-sha256 sent; "" for none
		send   []byte // body actually sent
		limit  int64
		want   error // from Verify
		read   error // from reading the body
	}{
		{name: "hex digest header", header: sha256Hex(body), send: body},
		{name: "hex digest header, tampered body", header: sha256Hex(body), send: tampered, read: ErrContentSHA256Mismatch},
		{name: "base64 digest header (Iceberg Java)", header: base64.StdEncoding.EncodeToString(sum[:]), send: body},
		{name: "base64 digest header, tampered body", header: base64.StdEncoding.EncodeToString(sum[:]), send: tampered, read: ErrContentSHA256Mismatch},
		{name: "no header (botocore)", send: body},
		{name: "no header, tampered body", send: tampered, want: ErrSignatureDoesNotMatch},
		{name: "no header, body over the limit", send: body, limit: 10, want: ErrPayloadTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newClientRequest(t, "POST", target, body)
			if c.header != "" {
				r.Header.Set("X-Amz-Content-Sha256", c.header)
			}
			sdkSign(t, r, sha256Hex(body), "s3tables", testTime())
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(c.send)), int64(len(c.send))
			sr := toServer(t, r)
			v := newTestVerifier(testTime())
			v.MaxBufferedPayload = c.limit
			res, err := v.Verify(sr, "s3tables")
			wantErr(t, err, c.want)
			if err != nil {
				return
			}
			got, err := io.ReadAll(res.Body(sr))
			wantErr(t, err, c.read)
			if err == nil && !bytes.Equal(got, body) {
				t.Fatalf("body %q", got)
			}
		})
	}
}

// TestVerifyPathEncodingIsPerService makes sure a signature over one path
// encoding is refused by a service that uses the other: were both accepted,
// "/a b" signed double-encoded would also authorize the different key
// "/a%20b".
func TestVerifyPathEncodingIsPerService(t *testing.T) {
	for _, c := range []struct {
		service      string
		doubleEncode bool
		want         error
	}{
		{"s3", false, nil},
		{"s3", true, ErrSignatureDoesNotMatch},
		{"s3tables", true, nil},
		{"s3tables", false, ErrSignatureDoesNotMatch},
	} {
		r := newClientRequest(t, "GET", "http://twinlake.test/bucket/a%20b", nil)
		r.Header.Set("X-Amz-Content-Sha256", sha256Hex(nil))
		sdkSignEncoding(t, r, sha256Hex(nil), c.service, c.doubleEncode, testTime())
		_, err := newTestVerifier(testTime()).Verify(toServer(t, r), c.service)
		wantErr(t, err, c.want)
	}
}

// TestVerifyConcurrent shares one Verifier, and its key cache, between
// goroutines; run with -race.
func TestVerifyConcurrent(t *testing.T) {
	v := newTestVerifier(testTime())
	done := make(chan error)
	for range 8 {
		r := signedPut(t, nil) // built here: t.Fatal belongs to this goroutine
		go func() {
			var err error
			for range 20 {
				if _, err = v.Verify(r, "s3"); err != nil {
					break
				}
			}
			done <- err
		}()
	}
	for range 8 {
		wantErr(t, <-done, nil)
	}
}
