package sigv4

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Signature Version 2, the older S3 scheme that tools such as s3cmd still
// use (it presigns with it by default). It is accepted for service "s3"
// only: the header form "Authorization: AWS access-key:signature" and the
// presigned form "?AWSAccessKeyId=…&Expires=…&Signature=…". The signature
// is base64 HMAC-SHA1 over
//
//	method \n Content-MD5 \n Content-Type \n date \n amz-headers resource
//
// where date is the Date header (empty when x-amz-date is sent, which then
// signs among the amz headers) or, presigned, the Expires time. SigV2 does
// not sign the payload: the body is PayloadUnsigned, still checked against
// a Content-MD5 if the client sent one.

const (
	v2Prefix      = "AWS "
	v2AccessKeyID = "AWSAccessKeyId"
	v2Expires     = "Expires"
	v2Signature   = "Signature"
)

// v2SubResources are the query parameters SigV2 signs as part of the
// resource, in the order they are signed (sorted).
var v2SubResources = func() []string {
	s := []string{
		"accelerate", "acl", "analytics", "attributes", "cors", "delete", "encryption", "intelligent-tiering",
		"inventory", "legal-hold", "lifecycle", "location", "logging", "metrics", "notification",
		"object-lock", "ownershipControls", "partNumber", "policy", "policyStatus", "publicAccessBlock",
		"replication", "requestPayment", "response-cache-control", "response-content-disposition",
		"response-content-encoding", "response-content-language", "response-content-type", "response-expires",
		"restore", "retention", "select", "select-type", "tagging", "torrent", "uploadId", "uploads",
		"versionId", "versioning", "versions", "website",
	}
	sort.Strings(s)
	return s
}()

// isV2 reports whether r is signed with SigV2 (header or query).
func isV2(r *http.Request, query url.Values) (header, presigned bool) {
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, v2Prefix) {
		return true, false
	}
	return false, query.Has(v2AccessKeyID) && query.Has(v2Signature)
}

// verifyV2 authenticates a SigV2 request.
func (v *Verifier) verifyV2(r *http.Request, query url.Values, presigned bool) (*Result, error) {
	var accessKey, signature, date string
	var signedAt time.Time
	if presigned {
		accessKey, signature = query.Get(v2AccessKeyID), query.Get(v2Signature)
		secs, err := strconv.ParseInt(query.Get(v2Expires), 10, 64)
		if err != nil || accessKey == "" || signature == "" {
			return nil, fmt.Errorf("%w: SigV2 needs AWSAccessKeyId, Expires and Signature", ErrAuthorizationQueryParametersError)
		}
		expires := time.Unix(secs, 0)
		if v.now().After(expires) {
			return nil, ErrExpiredPresign
		}
		if expires.Sub(v.now()) > maxPresignExpiry {
			return nil, fmt.Errorf("%w: Expires more than seven days ahead", ErrAuthorizationQueryParametersError)
		}
		date, signedAt = query.Get(v2Expires), v.now()
	} else {
		cred, sig, ok := strings.Cut(strings.TrimPrefix(r.Header.Get("Authorization"), v2Prefix), ":")
		if !ok || cred == "" || sig == "" {
			return nil, fmt.Errorf("%w: want AWS access-key:signature", ErrAuthorizationHeaderMalformed)
		}
		accessKey, signature = cred, sig
		t, err := v2RequestTime(r.Header)
		if err != nil {
			return nil, err
		}
		if skew := v.now().Sub(t).Abs(); skew > v.maxSkew() {
			return nil, ErrRequestTimeTooSkewed
		}
		signedAt = t
		if r.Header.Get("X-Amz-Date") == "" {
			date = r.Header.Get("Date")
		}
	}
	token := r.Header.Get(securityToken)
	if token == "" && presigned {
		token = query.Get(securityToken)
	}
	secret, err := v.secretKey(accessKey, token)
	if err != nil {
		return nil, err
	}
	sts, alt := v2StringToSign(r, query, date, v.Domain)
	if !hmac.Equal([]byte(v2Sign(secret, sts)), []byte(signature)) &&
		(alt == "" || !hmac.Equal([]byte(v2Sign(secret, alt)), []byte(signature))) {
		return nil, &SignatureMismatchError{AccessKey: accessKey, SignatureProvided: signature, StringToSign: sts}
	}
	return &Result{
		AccessKey: accessKey, Presigned: presigned, Service: "s3", SignedAt: signedAt,
		Payload: PayloadUnsigned, DecodedLength: -1, Signature: signature, SessionToken: token,
	}, nil
}

// v2RequestTime is a header-signed request's x-amz-date (in any of the
// HTTP date forms) or Date.
func v2RequestTime(h http.Header) (time.Time, error) {
	for _, name := range []string{"X-Amz-Date", "Date"} {
		if v := h.Get(name); v != "" {
			if t, ok := parseHTTPDate(v); ok {
				return t, nil
			}
			if t, err := time.Parse(amzDateLayout, v); err == nil {
				return t, nil
			}
			return time.Time{}, fmt.Errorf("%w: bad %s", ErrInvalidDate, name)
		}
	}
	return time.Time{}, ErrInvalidDate
}

// v2StringToSign builds what SigV2 signs for r, dated by date, and for a
// request to a bucket itself (path "/bucket") a second form whose
// resource is "/bucket/", which botocore signs (as AWS's own examples
// name a bucket); both name the same bucket, so accepting either lets no
// signature reach another resource. alt is "" otherwise.
func v2StringToSign(r *http.Request, query url.Values, date, domain string) (sts, alt string) {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	b.WriteString(r.Header.Get("Content-Md5"))
	b.WriteByte('\n')
	b.WriteString(r.Header.Get("Content-Type"))
	b.WriteByte('\n')
	b.WriteString(date)
	b.WriteByte('\n')
	v2AmzHeaders(&b, r.Header)
	head := b.String()
	path, sub := v2Resource(r, query, domain)
	sts = head + path + sub
	if len(path) > 1 && !strings.Contains(path[1:], "/") {
		alt = head + path + "/" + sub
	}
	return sts, alt
}

// v2AmzHeaders writes the x-amz-* headers, lower-cased and sorted, each
// "name:value1,value2\n".
func v2AmzHeaders(b *strings.Builder, h http.Header) {
	var names []string
	for name := range h {
		if l := strings.ToLower(name); strings.HasPrefix(l, "x-amz-") {
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool { return strings.ToLower(names[i]) < strings.ToLower(names[j]) })
	for _, name := range names {
		b.WriteString(strings.ToLower(name))
		b.WriteByte(':')
		for i, v := range h[name] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strings.TrimSpace(v))
		}
		b.WriteByte('\n')
	}
}

// v2Resource is the path as sent (prefixed with the bucket for a
// virtual-host request under domain) and the signed sub-resources ("" or
// "?a&b=c").
func v2Resource(r *http.Request, query url.Values, domain string) (string, string) {
	path := wirePath(r)
	if domain != "" {
		host := r.Host
		if i := strings.LastIndexByte(host, ':'); i > 0 && !strings.Contains(host[i:], "]") {
			host = host[:i]
		}
		if bucket, ok := strings.CutSuffix(host, "."+domain); ok && bucket != "" {
			path = "/" + bucket + path
		}
	}
	var sub []string
	for _, k := range v2SubResources {
		vs, ok := query[k]
		if !ok {
			continue
		}
		if len(vs) == 0 || vs[0] == "" {
			sub = append(sub, k)
		} else {
			sub = append(sub, k+"="+vs[0])
		}
	}
	if len(sub) == 0 {
		return path, ""
	}
	return path, "?" + strings.Join(sub, "&")
}

// v2Sign is base64 HMAC-SHA1 of sts under secret.
func v2Sign(secret, sts string) string {
	mac := hmac.New(sha1.New, []byte(secret))
	mac.Write([]byte(sts))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
