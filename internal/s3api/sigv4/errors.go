package sigv4

import (
	"errors"
	"strings"
)

// Sentinel errors. Verify and the readers returned by Result.Body wrap them
// with %w and detail; classify with errors.Is. The S3 code and HTTP status
// each corresponds to is named next to it for the edge that maps them.
var (
	// ErrAuthorizationHeaderMalformed is returned when the Authorization
	// header is not a well-formed AWS4-HMAC-SHA256 header: missing or repeated
	// components, a bad credential scope (wrong terminator, a service other
	// than the one the surface serves, a date that is not the request's), a
	// SignedHeaders list without host, or a signature that is not 64
	// lower-case hex digits.
	// S3: AuthorizationHeaderMalformed, 400.
	ErrAuthorizationHeaderMalformed = errors.New("sigv4: authorization header malformed")

	// ErrAuthorizationQueryParametersError is returned when a presigned
	// request's X-Amz-* query parameters are missing, repeated or invalid,
	// including an X-Amz-Expires outside 1..604800 seconds.
	// S3: AuthorizationQueryParametersError, 400.
	ErrAuthorizationQueryParametersError = errors.New("sigv4: authorization query parameters error")

	// ErrUnsupportedAlgorithm is returned when the request is signed with
	// anything but AWS4-HMAC-SHA256 (or SigV2 to S3): SigV4a, Signature
	// Version 2 to another surface, or another
	// authorization scheme altogether.
	// S3: InvalidRequest, 400 ("Please use AWS4-HMAC-SHA256").
	ErrUnsupportedAlgorithm = errors.New("sigv4: unsupported signing algorithm")

	// ErrMultipleAuthMechanisms is returned when a request carries both an
	// Authorization header and presigned query parameters.
	// S3: InvalidArgument, 400 ("Only one auth mechanism allowed").
	ErrMultipleAuthMechanisms = errors.New("sigv4: only one auth mechanism allowed")

	// ErrInvalidDate is returned when a header-signed request has neither a
	// parseable x-amz-date nor a parseable Date header.
	// S3: AccessDenied, 403 ("AWS authentication requires a valid Date or
	// x-amz-date header").
	ErrInvalidDate = errors.New("sigv4: missing or invalid x-amz-date or date header")

	// ErrRequestTimeTooSkewed is returned when a header-signed request's date
	// is further than Verifier.MaxSkew from the server clock.
	// S3: RequestTimeTooSkewed, 403.
	ErrRequestTimeTooSkewed = errors.New("sigv4: request time too skewed")

	// ErrExpiredPresign is returned when a presigned request is used after
	// X-Amz-Date plus X-Amz-Expires.
	// S3: AccessDenied, 403 ("Request has expired").
	ErrExpiredPresign = errors.New("sigv4: presigned request has expired")

	// ErrRequestNotReadyYet is returned when a presigned request's X-Amz-Date
	// lies further in the future than Verifier.MaxSkew.
	// S3: AccessDenied, 403 ("Request is not valid yet").
	ErrRequestNotReadyYet = errors.New("sigv4: presigned request is not valid yet")

	// ErrUnsignedHeader is returned when the request carries an x-amz-*
	// header, or the Date header it is dated by, that is not in its signed
	// headers: an intermediary could otherwise add or change it.
	// S3: AccessDenied, 403 ("There were headers present in the request which
	// were not signed").
	ErrUnsignedHeader = errors.New("sigv4: headers present in the request were not signed")

	// ErrInvalidAccessKeyID is returned when Credentials does not know the
	// access key the request is signed with.
	// S3: InvalidAccessKeyId, 403.
	ErrInvalidAccessKeyID = errors.New("sigv4: access key id does not exist")

	// ErrInvalidToken is returned when a request carries a session token
	// (x-amz-security-token) that Credentials cannot open for its access key:
	// garbled, issued by another site, or whose parent identity is gone or
	// disabled. S3: InvalidToken, 400.
	ErrInvalidToken = errors.New("sigv4: session token is malformed or otherwise invalid")

	// ErrExpiredToken is returned when a request's session token is past its
	// expiry. S3: ExpiredToken, 400.
	ErrExpiredToken = errors.New("sigv4: session token has expired")

	// ErrSignatureDoesNotMatch is returned when the request's signature is not
	// the one its canonical request yields under the access key's secret. It
	// arrives wrapped in a *SignatureMismatchError.
	// S3: SignatureDoesNotMatch, 403.
	ErrSignatureDoesNotMatch = errors.New("sigv4: signature does not match")

	// ErrMissingContentSHA256 is returned when a header-signed S3 request
	// has no x-amz-content-sha256 header, which S3 requires.
	// S3: InvalidRequest, 400 ("Missing required header for this request:
	// x-amz-content-sha256").
	ErrMissingContentSHA256 = errors.New("sigv4: missing x-amz-content-sha256")

	// ErrInvalidContentSHA256 is returned when x-amz-content-sha256 is neither
	// a SHA-256 digest nor one of the UNSIGNED-PAYLOAD and STREAMING-* values
	// this package supports, or is a signed streaming value on an anonymous
	// request.
	// S3: InvalidArgument, 400.
	ErrInvalidContentSHA256 = errors.New("sigv4: invalid x-amz-content-sha256")

	// ErrContentSHA256Mismatch is returned by the body reader, in place of
	// io.EOF, when the payload's SHA-256 is not the one the request signed.
	// S3: XAmzContentSHA256Mismatch, 400.
	ErrContentSHA256Mismatch = errors.New("sigv4: payload does not match x-amz-content-sha256")

	// ErrPayloadTooLarge is returned when a request to a service other than
	// s3 omits x-amz-content-sha256, so its body must be hashed before the
	// signature can be checked, and the body exceeds
	// Verifier.MaxBufferedPayload.
	// S3: EntityTooLarge, 400 (the Iceberg and admin edges answer 413).
	ErrPayloadTooLarge = errors.New("sigv4: payload too large to hash before authentication")

	// ErrMissingDecodedContentLength is returned when a signed streaming
	// request has no x-amz-decoded-content-length header.
	// S3: MissingContentLength, 411.
	ErrMissingDecodedContentLength = errors.New("sigv4: missing x-amz-decoded-content-length")

	// ErrInvalidDecodedContentLength is returned when
	// x-amz-decoded-content-length is not a non-negative decimal integer.
	// S3: InvalidArgument, 400.
	ErrInvalidDecodedContentLength = errors.New("sigv4: invalid x-amz-decoded-content-length")

	// ErrMalformedChunk is returned by the body reader when aws-chunked
	// framing is broken: a chunk header that is too long or not
	// hex-size[;chunk-signature=sig], a chunk larger than the declared length
	// allows, data where CRLF belongs, or bytes after the final chunk.
	// S3: InvalidRequest, 400 (S3 has no dedicated code for bad framing).
	ErrMalformedChunk = errors.New("sigv4: malformed aws-chunked encoding")

	// ErrIncompleteBody is returned by the body reader when the request body
	// ends before the aws-chunked stream does.
	// S3: IncompleteBody, 400.
	ErrIncompleteBody = errors.New("sigv4: request body ended early")

	// ErrDecodedLengthMismatch is returned by the body reader when the
	// decoded aws-chunked payload is longer or shorter than
	// x-amz-decoded-content-length.
	// S3: IncompleteBody, 400.
	ErrDecodedLengthMismatch = errors.New("sigv4: decoded length differs from x-amz-decoded-content-length")

	// ErrChunkSignatureMismatch is returned by the body reader when a chunk's
	// signature, or the trailer signature, is not the one the chain from the
	// seed signature yields.
	// S3: SignatureDoesNotMatch, 403.
	ErrChunkSignatureMismatch = errors.New("sigv4: chunk signature does not match")

	// ErrMalformedTrailer is returned by the body reader when the trailing
	// headers of an aws-chunked body are not name:value lines, repeat a name,
	// name a header x-amz-trailer did not declare, omit a declared one, or
	// (signed-trailer mode) lack x-amz-trailer-signature.
	// S3: MalformedTrailerError, 400.
	ErrMalformedTrailer = errors.New("sigv4: malformed trailing headers")
)

// SignatureMismatchError describes a request whose signature did not match,
// with the server's canonical request and string to sign, which S3 echoes in
// its SignatureDoesNotMatch response so clients can find the difference. It
// holds no secret. errors.Is(err, ErrSignatureDoesNotMatch) holds for it.
type SignatureMismatchError struct {
	AccessKey         string
	SignatureProvided string
	CanonicalRequest  string
	StringToSign      string
}

// Error reports the mismatch without the canonical request, which may be long.
func (e *SignatureMismatchError) Error() string {
	var b strings.Builder
	b.WriteString(ErrSignatureDoesNotMatch.Error())
	b.WriteString(" (access key ")
	b.WriteString(e.AccessKey)
	b.WriteString(")")
	return b.String()
}

// Unwrap returns ErrSignatureDoesNotMatch.
func (e *SignatureMismatchError) Unwrap() error { return ErrSignatureDoesNotMatch }
