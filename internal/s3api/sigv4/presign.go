package sigv4

import (
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// Presigned query parameters.
const (
	amzAlgorithm     = "X-Amz-Algorithm"
	amzCredential    = "X-Amz-Credential"
	amzDate          = "X-Amz-Date"
	amzExpires       = "X-Amz-Expires"
	amzSignedHeaders = "X-Amz-SignedHeaders"
	amzSignature     = "X-Amz-Signature"

	// maxPresignExpiry is the longest validity SigV4 allows a presigned
	// request: seven days.
	maxPresignExpiry = 7 * 24 * time.Hour
)

// presigned is a parsed set of presigned query parameters.
type presigned struct {
	auth     authorization
	signedAt time.Time
	amzDate  string
	expires  time.Duration
}

// parsePresigned reads the X-Amz-* parameters of a presigned request. Each
// must appear exactly once. The signature is only checked for form here.
func parsePresigned(q url.Values) (presigned, error) {
	var p presigned
	get := func(name string) (string, error) {
		v := q[name]
		if len(v) != 1 {
			return "", fmt.Errorf("%w: need exactly one %s", ErrAuthorizationQueryParametersError, name)
		}
		return v[0], nil
	}
	alg, err := get(amzAlgorithm)
	if err != nil {
		return p, err
	}
	if alg != algorithm {
		return p, fmt.Errorf("%w: X-Amz-Algorithm only supports %s", ErrAuthorizationQueryParametersError, algorithm)
	}
	if p.auth, err = parsePresignedAuth(get); err != nil {
		return p, err
	}
	if p.amzDate, err = get(amzDate); err != nil {
		return p, err
	}
	if p.signedAt, err = time.Parse(amzDateLayout, p.amzDate); err != nil || p.auth.scope.date != p.amzDate[:8] {
		return p, fmt.Errorf("%w: X-Amz-Date is invalid or not the credential date", ErrAuthorizationQueryParametersError)
	}
	expires, err := get(amzExpires)
	if err != nil {
		return p, err
	}
	if p.expires, err = parseExpires(expires); err != nil {
		return p, err
	}
	return p, nil
}

// parsePresignedAuth reads the credential, signed headers and signature.
func parsePresignedAuth(get func(string) (string, error)) (authorization, error) {
	var a authorization
	cred, err := get(amzCredential)
	if err != nil {
		return a, err
	}
	if a.accessKey, a.scope, err = parseCredential(cred, ErrAuthorizationQueryParametersError); err != nil {
		return a, err
	}
	headers, err := get(amzSignedHeaders)
	if err != nil {
		return a, err
	}
	if a.signedHeaders, err = parseSignedHeaders(headers, ErrAuthorizationQueryParametersError); err != nil {
		return a, err
	}
	if a.signature, err = get(amzSignature); err != nil {
		return a, err
	}
	return a, checkSignatureFormat(a.signature, ErrAuthorizationQueryParametersError)
}

// parseExpires reads X-Amz-Expires: whole seconds, 0 to 604800. Zero is a
// URL valid for no time: it is well formed, and answers Request has
// expired (403) as S3 and MinIO answer it, not a malformed query.
func parseExpires(v string) (time.Duration, error) {
	secs, err := strconv.ParseUint(v, 10, 32)
	if err != nil || time.Duration(secs)*time.Second > maxPresignExpiry {
		return 0, fmt.Errorf("%w: X-Amz-Expires must be 0 to 604800 seconds", ErrAuthorizationQueryParametersError)
	}
	return time.Duration(secs) * time.Second, nil
}
