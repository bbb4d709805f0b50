package sigv4

import (
	"fmt"
	"strings"
)

const (
	// algorithm is the only signing algorithm this package verifies.
	algorithm = "AWS4-HMAC-SHA256"
	// terminator ends every credential scope.
	terminator = "aws4_request"
	// maxSignedHeaders bounds the SignedHeaders list so checking it for
	// duplicates stays cheap on hostile input.
	maxSignedHeaders = 128
)

// scope is a credential scope, date/region/service/aws4_request.
type scope struct {
	date, region, service string
}

// String returns the scope as it appears in a string to sign.
func (s scope) String() string {
	return s.date + "/" + s.region + "/" + s.service + "/" + terminator
}

// authorization is what a signed request claims, read from either the
// Authorization header or the presigned query parameters.
type authorization struct {
	accessKey     string
	scope         scope
	signedHeaders []string // lower-case, in the order the client listed them
	signature     string   // 64 lower-case hex digits
}

// signs reports whether name (lower-case) is among the signed headers.
func (a *authorization) signs(name string) bool {
	for _, h := range a.signedHeaders {
		if h == name {
			return true
		}
	}
	return false
}

// parseAuthorization parses an Authorization header of the form
//
//	AWS4-HMAC-SHA256 Credential=AKID/20130524/us-east-1/s3/aws4_request,
//	SignedHeaders=host;x-amz-date, Signature=<64 hex>
//
// Components may be separated by "," or ", " and appear in any order, each
// exactly once. The value is not echoed in errors: it is attacker-sized.
func parseAuthorization(header string) (authorization, error) {
	scheme, rest, _ := strings.Cut(header, " ")
	if scheme != algorithm {
		if scheme == "" {
			return authorization{}, fmt.Errorf("%w: empty", ErrAuthorizationHeaderMalformed)
		}
		return authorization{}, ErrUnsupportedAlgorithm
	}
	var a authorization
	var haveCred, haveHeaders, haveSig bool
	for rest != "" {
		var part string
		part, rest, _ = strings.Cut(rest, ",")
		name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		var err error
		switch {
		case !ok:
			err = fmt.Errorf("%w: component without '='", ErrAuthorizationHeaderMalformed)
		case name == "Credential" && !haveCred:
			haveCred = true
			a.accessKey, a.scope, err = parseCredential(value, ErrAuthorizationHeaderMalformed)
		case name == "SignedHeaders" && !haveHeaders:
			haveHeaders = true
			a.signedHeaders, err = parseSignedHeaders(value, ErrAuthorizationHeaderMalformed)
		case name == "Signature" && !haveSig:
			haveSig = true
			err = checkSignatureFormat(value, ErrAuthorizationHeaderMalformed)
			a.signature = value
		default:
			err = fmt.Errorf("%w: unexpected or repeated component", ErrAuthorizationHeaderMalformed)
		}
		if err != nil {
			return authorization{}, err
		}
	}
	if !haveCred || !haveHeaders || !haveSig {
		return authorization{}, fmt.Errorf("%w: needs Credential, SignedHeaders and Signature", ErrAuthorizationHeaderMalformed)
	}
	return a, nil
}

// parseCredential splits AKID/date/region/service/aws4_request. It splits
// from the right so an access key may itself contain '/'. malformed is the
// sentinel to wrap, which depends on where the credential came from.
func parseCredential(v string, malformed error) (string, scope, error) {
	rest, term, ok1 := cutLast(v, '/')
	rest, service, ok2 := cutLast(rest, '/')
	rest, region, ok3 := cutLast(rest, '/')
	key, date, ok4 := cutLast(rest, '/')
	switch {
	case !ok1 || !ok2 || !ok3 || !ok4 || key == "":
		return "", scope{}, fmt.Errorf("%w: credential is not key/date/region/service/aws4_request", malformed)
	case term != terminator:
		return "", scope{}, fmt.Errorf("%w: credential scope must end in aws4_request", malformed)
	case !isScopeDate(date) || region == "" || service == "":
		return "", scope{}, fmt.Errorf("%w: invalid credential scope", malformed)
	}
	return key, scope{date: date, region: region, service: service}, nil
}

// parseSignedHeaders splits a ';'-separated list of lower-case header names,
// which must include host and must not repeat a name.
func parseSignedHeaders(v string, malformed error) ([]string, error) {
	n := strings.Count(v, ";") + 1
	if n > maxSignedHeaders {
		return nil, fmt.Errorf("%w: too many signed headers", malformed)
	}
	names := make([]string, 0, n)
	host := false
	for name := range strings.SplitSeq(v, ";") {
		if !isLowerToken(name) {
			return nil, fmt.Errorf("%w: signed header names must be lower-case tokens", malformed)
		}
		for _, prev := range names {
			if prev == name {
				return nil, fmt.Errorf("%w: signed header %s repeated", malformed, name)
			}
		}
		host = host || name == "host"
		names = append(names, name)
	}
	if !host {
		return nil, fmt.Errorf("%w: signed headers must include host", malformed)
	}
	return names, nil
}

// checkSignatureFormat requires 64 lower-case hex digits, the only form a
// SigV4 signature takes; chunk signatures are chained from its exact text.
func checkSignatureFormat(v string, malformed error) error {
	if _, ok := decodeHex32(v); !ok || strings.ContainsAny(v, "ABCDEF") {
		return fmt.Errorf("%w: signature must be 64 lower-case hex digits", malformed)
	}
	return nil
}

func cutLast(s string, sep byte) (before, after string, found bool) {
	i := strings.LastIndexByte(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

// isScopeDate reports whether s is YYYYMMDD. The calendar is checked later,
// against the request's own date.
func isScopeDate(s string) bool {
	if len(s) != 8 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isLowerToken reports whether s is a non-empty RFC 9110 token without
// upper-case letters: what a signer emits for a header name.
func isLowerToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
