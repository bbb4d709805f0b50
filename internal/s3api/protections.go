package s3api

import (
	"net/http"
	"slices"
	"strings"
)

// A request that asks for a protection twinlake does not provide is
// refused, never served without it: a client told 200 believes it got
// what it asked for. Each row names a header, the APIs it matters to, and
// when its value asks for something (nil: whenever present).
type protection struct {
	header string
	apis   []string
	asks   func(value string) bool
	err    *APIError
}

var (
	errMFAUnsupported = apiErr("NotImplemented", http.StatusNotImplemented,
		"MFA delete is not supported by this server.")
	errConditionalDeleteUnsupported = apiErr("NotImplemented", http.StatusNotImplemented,
		"Conditional deletes are not supported by this server; the object was not deleted.")
	errAppendUnsupported = apiErr("NotImplemented", http.StatusNotImplemented,
		"Appending to an object is not supported by this server.")
)

func isTrue(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "true") }
func isOn(v string) bool   { return strings.EqualFold(strings.TrimSpace(v), "ON") }

// objectWrites are the APIs creating an object (CopyObject is routed as
// PutObject).
var objectWrites = []string{"PutObject", "CreateMultipartUpload"}

var protections = []protection{
	{"x-amz-mfa", nil, nil, errMFAUnsupported},
	{"If-Match", []string{"DeleteObject"}, nil, errConditionalDeleteUnsupported},
	{"x-amz-if-match-last-modified-time", []string{"DeleteObject"}, nil, errConditionalDeleteUnsupported},
	{"x-amz-if-match-size", []string{"DeleteObject"}, nil, errConditionalDeleteUnsupported},
	{"x-amz-write-offset-bytes", []string{"PutObject"}, nil, errAppendUnsupported},
}

// checkProtections refuses a request to api (a route's name) carrying a
// header from the table above.
func checkProtections(h http.Header, api string) error {
	for _, p := range protections {
		vs := hvalues(h, p.header)
		if len(vs) == 0 || p.apis != nil && !slices.Contains(p.apis, api) {
			continue
		}
		if p.asks == nil || p.asks(vs[0]) {
			return p.err
		}
	}
	return nil
}

// errWrongBucketOwner answers a request whose expected bucket owner is not
// the bucket's, as S3 answers it.
var errWrongBucketOwner = apiErr("AccessDenied", http.StatusForbidden, "Access Denied")

// checkExpectedOwner refuses a request naming an expected bucket owner
// (x-amz-expected-bucket-owner, and x-amz-source-expected-bucket-owner for
// a copy's source) other than the site owner, which owns every bucket
// (siteOwner): the client asked not to touch a bucket of anyone else. A
// presigned URL carries the header in its query, where the SDKs hoist it.
func checkExpectedOwner(req *request) error {
	if req.bucket == "" {
		return nil
	}
	for _, name := range []string{"x-amz-expected-bucket-owner", "x-amz-source-expected-bucket-owner"} {
		vs := hvalues(req.r.Header, name)
		if len(vs) == 0 && req.auth != nil && req.auth.Presigned {
			vs = req.query[name]
		}
		for _, v := range vs {
			if strings.TrimSpace(v) != siteOwner.ID {
				return errWrongBucketOwner
			}
		}
	}
	return nil
}
