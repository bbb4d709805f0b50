package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

const (
	defaultMaxSkew            = 15 * time.Minute
	defaultMaxBufferedPayload = 8 << 20
	// amzDateLayout is ISO 8601 basic format, as in x-amz-date and X-Amz-Date.
	amzDateLayout = "20060102T150405Z"
)

// Credentials looks up the secret key for an access key. Implementations
// must be safe for concurrent use; Verify calls SecretKey on every signed
// request, so it should not block on I/O.
type Credentials interface {
	SecretKey(accessKey string) (secret string, ok bool)
}

// SessionCredentials is an optional capability of Credentials: resolving
// the temporary access keys that STS issues, whose secret travels sealed in
// the session token the request carries (x-amz-security-token). expired
// reports a token that opened but is past its expiry; ok is false for a
// token that is not valid for accessKey.
type SessionCredentials interface {
	SessionSecretKey(accessKey, token string) (secret string, expired, ok bool)
}

// securityToken is the header, and the presigned query parameter, that
// carries a session token.
const securityToken = "X-Amz-Security-Token"

// Verifier authenticates SigV4-signed requests, and SigV2-signed ones to
// service "s3" (v2.go). Set the exported fields
// before first use and do not change them after; a Verifier is safe for
// concurrent use and must not be copied once used (it holds the signing-key
// cache).
type Verifier struct {
	// Creds resolves access keys. Required.
	Creds Credentials
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxSkew is how far a request's date may be from Now; 0 means 15
	// minutes.
	MaxSkew time.Duration
	// MaxBufferedPayload bounds how much body Verify reads into memory to
	// hash when a request to a service other than s3 omits
	// x-amz-content-sha256; 0 means 8 MiB.
	MaxBufferedPayload int64
	// Domain is the virtual-host domain (BUCKET.Domain) of the S3 surface,
	// whose requests SigV2 signs with the bucket in the resource; "" for
	// none.
	Domain string

	keys keyCache
}

// Result is the outcome of a successful Verify: who signed the request and
// how its payload is to be checked.
type Result struct {
	// AccessKey is the access key that signed the request; "" if Anonymous.
	AccessKey string
	// Anonymous is set when the request carries neither an Authorization
	// header nor presigned query parameters. Whether to serve it is the
	// caller's decision (usually AccessDenied).
	Anonymous bool
	// Presigned is set for query-string (presigned URL) authentication.
	Presigned bool
	// Region and Service are from the credential scope. Any region is
	// accepted; Service always equals the one passed to Verify.
	Region  string
	Service string
	// SignedAt is the request's signing time.
	SignedAt time.Time
	// Payload is how the body is protected; Body enforces it.
	Payload PayloadMode
	// DecodedLength is x-amz-decoded-content-length for streaming modes (-1
	// if an unsigned-trailer request omitted it), otherwise -1.
	DecodedLength int64
	// Signature is the request's signature, the seed of the chunk signature
	// chain; "" if Anonymous.
	Signature string
	// SessionToken is the session token the request was verified with
	// (temporary credentials), or "".
	SessionToken string

	amzDate          string            // signing time as in the string to sign
	scope            string            // credential scope as in the string to sign
	key              [sha256.Size]byte // signing key, for chunk signatures
	sum              [sha256.Size]byte // expected payload digest for PayloadSigned
	bodyHashed       bool              // Verify already hashed the body
	declaredTrailers []string          // lower-case names from x-amz-trailer
	trailers         http.Header       // trailing headers read by the body reader
}

// signedRequest is what both ways of signing reduce a request to before the
// signature is checked.
type signedRequest struct {
	auth      authorization
	service   string
	signedAt  time.Time
	amzDate   string
	presigned bool
	query     url.Values
	claim     payloadClaim
	hasClaim  bool // x-amz-content-sha256 was present (or implied)
}

// Verify authenticates r for service: header authentication, presigned
// query authentication, or neither (Result.Anonymous, nil error). It checks
// the credential scope, the clock and the signature, and parses how the
// payload is protected, but it does not read the body — except when a
// header-signed request to a service other than s3 omits
// x-amz-content-sha256: the signature then covers a digest only the body can
// supply, so Verify reads up to MaxBufferedPayload bytes and replaces r.Body
// with a replay of them. A presigned request without x-amz-content-sha256
// has an UNSIGNED-PAYLOAD.
func (v *Verifier) Verify(r *http.Request, service string) (*Result, error) {
	query := r.URL.Query()
	_, hasHeader := r.Header["Authorization"]
	hasQuery := query.Has(amzAlgorithm) || query.Has(amzCredential) || query.Has(amzSignature)
	if v2Header, v2Query := isV2(r, query); service == "s3" && (v2Header || v2Query) {
		if v2Header && (hasQuery || v2Query) || v2Query && hasHeader {
			return nil, ErrMultipleAuthMechanisms
		}
		return v.verifyV2(r, query, v2Query)
	}
	switch {
	case hasHeader && hasQuery:
		return nil, ErrMultipleAuthMechanisms
	case hasHeader:
		return v.verifyHeader(r, query, service)
	case hasQuery:
		return v.verifyPresigned(r, query, service)
	}
	return anonymousResult(r)
}

// verifyHeader authenticates a request signed in its Authorization header.
func (v *Verifier) verifyHeader(r *http.Request, query url.Values, service string) (*Result, error) {
	values := r.Header["Authorization"]
	if len(values) != 1 {
		return nil, fmt.Errorf("%w: expected one Authorization header", ErrAuthorizationHeaderMalformed)
	}
	auth, err := parseAuthorization(values[0])
	if err != nil {
		return nil, err
	}
	if err := checkScope(auth.scope, service, ErrAuthorizationHeaderMalformed); err != nil {
		return nil, err
	}
	signedAt, amzDate, dateHeader, err := requestTime(r.Header)
	if err != nil {
		return nil, err
	}
	if auth.scope.date != amzDate[:8] {
		return nil, fmt.Errorf("%w: credential date is not the request date", ErrAuthorizationHeaderMalformed)
	}
	if !auth.signs(dateHeader) {
		return nil, fmt.Errorf("%w: %s", ErrUnsignedHeader, dateHeader)
	}
	if skew := v.now().Sub(signedAt).Abs(); skew > v.maxSkew() {
		return nil, ErrRequestTimeTooSkewed
	}
	sr := &signedRequest{auth: auth, service: service, signedAt: signedAt, amzDate: amzDate, query: query}
	if err := sr.readClaim(r.Header, service == "s3"); err != nil {
		return nil, err
	}
	return v.authenticate(r, sr)
}

// verifyPresigned authenticates a request signed in its query string.
func (v *Verifier) verifyPresigned(r *http.Request, query url.Values, service string) (*Result, error) {
	p, err := parsePresigned(query)
	if err != nil {
		return nil, err
	}
	if err := checkScope(p.auth.scope, service, ErrAuthorizationQueryParametersError); err != nil {
		return nil, err
	}
	now := v.now()
	if p.signedAt.Sub(now) > v.maxSkew() {
		return nil, ErrRequestNotReadyYet
	}
	if p.expires == 0 || now.After(p.signedAt.Add(p.expires)) {
		return nil, ErrExpiredPresign
	}
	sr := &signedRequest{auth: p.auth, service: service, signedAt: p.signedAt, amzDate: p.amzDate, presigned: true, query: query}
	if err := sr.readClaim(r.Header, false); err != nil {
		return nil, err
	}
	if !sr.hasClaim {
		sr.claim, sr.hasClaim = payloadClaim{mode: PayloadUnsigned, canonical: unsignedPayload}, true
	}
	return v.authenticate(r, sr)
}

// readClaim parses x-amz-content-sha256 if present; required reports a
// missing one as ErrMissingContentSHA256.
func (sr *signedRequest) readClaim(h http.Header, required bool) error {
	values, ok := h["X-Amz-Content-Sha256"]
	if !ok {
		if required {
			return ErrMissingContentSHA256
		}
		return nil
	}
	if len(values) != 1 {
		return ErrInvalidContentSHA256
	}
	claim, err := parsePayloadClaim(values[0])
	sr.claim, sr.hasClaim = claim, err == nil
	return err
}

// authenticate checks what both ways of signing share: that every x-amz-*
// header is signed, that the access key exists, and the signature.
func (v *Verifier) authenticate(r *http.Request, sr *signedRequest) (*Result, error) {
	if name, ok := unsignedAmzHeader(r.Header, &sr.auth); ok {
		return nil, fmt.Errorf("%w: %s", ErrUnsignedHeader, name)
	}
	token := sessionToken(r, sr)
	secret, err := v.secretKey(sr.auth.accessKey, token)
	if err != nil {
		return nil, err
	}
	bodyHashed := false
	if !sr.hasClaim {
		claim, err := hashBody(r, v.maxBufferedPayload())
		if err != nil {
			return nil, err
		}
		sr.claim, bodyHashed = claim, true
	}
	key := v.keys.get(sr.auth.accessKey, secret, sr.auth.scope)
	scopeStr := sr.auth.scope.String()
	if err := checkSignature(r, sr, &key, scopeStr); err != nil {
		return nil, err
	}
	res, err := newResult(r.Header, sr)
	if err != nil {
		return nil, err
	}
	res.key, res.scope, res.bodyHashed = key, scopeStr, bodyHashed
	res.SessionToken = token
	return res, nil
}

// sessionToken returns the session token a request carries: the signed
// x-amz-security-token header, or for a presigned request the query
// parameter of that name (covered by the signature as part of the query).
func sessionToken(r *http.Request, sr *signedRequest) string {
	if t := r.Header.Get(securityToken); t != "" {
		return t
	}
	if sr.presigned {
		return sr.query.Get(securityToken)
	}
	return ""
}

// secretKey resolves the signing secret: from the session token when the
// request carries one, else from the long-term credentials.
func (v *Verifier) secretKey(accessKey, token string) (string, error) {
	if token == "" {
		secret, ok := v.Creds.SecretKey(accessKey)
		if !ok {
			return "", ErrInvalidAccessKeyID
		}
		return secret, nil
	}
	sc, ok := v.Creds.(SessionCredentials)
	if !ok {
		return "", ErrInvalidToken
	}
	secret, expired, ok := sc.SessionSecretKey(accessKey, token)
	switch {
	case expired:
		return "", ErrExpiredToken
	case !ok:
		return "", ErrInvalidToken
	}
	return secret, nil
}

// checkSignature recomputes the signature over each canonical URI
// candidate and compares it in constant time with the one provided.
func checkSignature(r *http.Request, sr *signedRequest, key *[sha256.Size]byte, scopeStr string) error {
	want, _ := decodeHex32(sr.auth.signature) // format checked while parsing
	cr := newCanonicalRequest(r, sr.query, &sr.auth, sr.claim.canonical, sr.presigned)
	first, second := canonicalURIs(r, sr.service)
	mac := hmac.New(sha256.New, key[:])
	canonical := make([]byte, 0, len(cr.method)+len(first)+len(cr.tail)+16)
	sts := make([]byte, 0, 128+len(scopeStr))
	var got [sha256.Size]byte
	for _, uri := range [2]string{first, second} {
		if uri == "" {
			continue
		}
		canonical = cr.appendWithURI(canonical[:0], uri)
		sts = appendStringToSign(sts[:0], sr.amzDate, scopeStr, canonical)
		mac.Reset()
		mac.Write(sts)
		if hmac.Equal(mac.Sum(got[:0]), want[:]) {
			return nil
		}
	}
	// Report the normalized form, the one a conforming client signs.
	if second != "" {
		first = second
	}
	canonical = cr.appendWithURI(canonical[:0], first)
	return &SignatureMismatchError{
		AccessKey:         sr.auth.accessKey,
		SignatureProvided: sr.auth.signature,
		CanonicalRequest:  string(canonical),
		StringToSign:      string(appendStringToSign(sts[:0], sr.amzDate, scopeStr, canonical)),
	}
}

// newResult describes an authenticated request.
func newResult(h http.Header, sr *signedRequest) (*Result, error) {
	res := &Result{
		AccessKey:     sr.auth.accessKey,
		Presigned:     sr.presigned,
		Region:        sr.auth.scope.region,
		Service:       sr.service,
		SignedAt:      sr.signedAt,
		Payload:       sr.claim.mode,
		DecodedLength: -1,
		Signature:     sr.auth.signature,
		amzDate:       sr.amzDate,
		sum:           sr.claim.sum,
	}
	if err := res.readStreamingHeaders(h); err != nil {
		return nil, err
	}
	return res, nil
}

// readStreamingHeaders fills DecodedLength and the declared trailers for
// streaming modes.
func (res *Result) readStreamingHeaders(h http.Header) error {
	if !res.Payload.streaming() {
		return nil
	}
	n, err := parseDecodedLength(h)
	if err != nil {
		return err
	}
	if n < 0 && res.Payload != PayloadStreamingUnsignedTrailer {
		return ErrMissingDecodedContentLength
	}
	res.DecodedLength = n
	res.declaredTrailers, err = parseDeclaredTrailers(h)
	return err
}

// anonymousResult describes a request with no signature. Its payload is
// still decoded as declared, since anonymous uploads to public buckets use
// the same encodings; signed streaming is impossible without a key.
func anonymousResult(r *http.Request) (*Result, error) {
	res := &Result{Anonymous: true, Payload: PayloadUnsigned, DecodedLength: -1}
	values, ok := r.Header["X-Amz-Content-Sha256"]
	if !ok {
		return res, nil
	}
	if len(values) != 1 {
		return nil, ErrInvalidContentSHA256
	}
	claim, err := parsePayloadClaim(values[0])
	if err != nil || claim.mode.chunkSigned() {
		return nil, ErrInvalidContentSHA256
	}
	res.Payload, res.sum = claim.mode, claim.sum
	if err := res.readStreamingHeaders(r.Header); err != nil {
		return nil, err
	}
	return res, nil
}

// checkScope requires the credential scope to name service.
func checkScope(s scope, service string, malformed error) error {
	if s.service != service {
		return fmt.Errorf("%w: credential should be scoped to service %q", malformed, service)
	}
	return nil
}

// requestTime returns a header-signed request's time, the timestamp as it
// goes into the string to sign, and the header it came from: x-amz-date,
// else Date.
// httpDateLayouts are the forms a Date header takes: RFC 7231's (GMT),
// RFC 1123 with a numeric zone ("-0000", which botocore and Python's
// email.utils send), RFC 850 and asctime.
var httpDateLayouts = []string{http.TimeFormat, time.RFC1123Z, time.RFC850, time.ANSIC}

// parseHTTPDate reads a Date header in any of httpDateLayouts.
func parseHTTPDate(v string) (time.Time, bool) {
	for _, layout := range httpDateLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func requestTime(h http.Header) (time.Time, string, string, error) {
	if v := h.Get("X-Amz-Date"); v != "" {
		t, err := time.Parse(amzDateLayout, v)
		if err != nil {
			return time.Time{}, "", "", fmt.Errorf("%w: bad x-amz-date", ErrInvalidDate)
		}
		return t, v, "x-amz-date", nil
	}
	if v := h.Get("Date"); v != "" {
		t, ok := parseHTTPDate(v)
		if !ok {
			return time.Time{}, "", "", fmt.Errorf("%w: bad date", ErrInvalidDate)
		}
		t = t.UTC()
		return t, t.Format(amzDateLayout), "date", nil
	}
	return time.Time{}, "", "", ErrInvalidDate
}

// unsignedAmzHeader returns the first x-amz-* header of h that the request
// did not sign.
func unsignedAmzHeader(h http.Header, a *authorization) (string, bool) {
	for name := range h {
		if len(name) < len("x-amz-") || !equalFoldASCII(name[:len("x-amz-")], "x-amz-") {
			continue
		}
		if !signsFold(a, name) {
			return name, true
		}
	}
	return "", false
}

func signsFold(a *authorization, name string) bool {
	for _, s := range a.signedHeaders {
		if equalFoldASCII(s, name) {
			return true
		}
	}
	return false
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func (v *Verifier) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

func (v *Verifier) maxSkew() time.Duration {
	if v.MaxSkew > 0 {
		return v.MaxSkew
	}
	return defaultMaxSkew
}

func (v *Verifier) maxBufferedPayload() int64 {
	if v.MaxBufferedPayload > 0 {
		return v.MaxBufferedPayload
	}
	return defaultMaxBufferedPayload
}
