package s3api

import (
	"encoding/xml"
	"errors"
	"net/http"
	"syscall"

	"github.com/twinlake/twinlake/internal/checksum"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/s3api/sigv4"
)

// APIError is an S3 protocol error: the Code and HTTP status S3 uses.
type APIError struct {
	Code    string
	Message string
	Status  int
}

func (e *APIError) Error() string { return e.Code + ": " + e.Message }

func apiErr(code string, status int, msg string) *APIError {
	return &APIError{Code: code, Message: msg, Status: status}
}

// Protocol errors raised by the edge itself.
var (
	errAccessDenied        = apiErr("AccessDenied", http.StatusForbidden, "Access Denied.")
	errMethodNotAllowed    = apiErr("MethodNotAllowed", http.StatusMethodNotAllowed, "The specified method is not allowed against this resource.")
	errNotImplemented      = apiErr("NotImplemented", http.StatusNotImplemented, "A header or query you provided implies functionality that is not implemented.")
	errMalformedXML        = apiErr("MalformedXML", http.StatusBadRequest, "The XML you provided was not well-formed or did not validate against our published schema.")
	errMissingLength       = apiErr("MissingContentLength", http.StatusLengthRequired, "You must provide the Content-Length HTTP header.")
	errEntityTooLarge      = apiErr("EntityTooLarge", http.StatusBadRequest, "Your proposed upload exceeds the maximum allowed object size.")
	errInvalidArgument     = apiErr("InvalidArgument", http.StatusBadRequest, "Invalid argument.")
	errInvalidRequest      = apiErr("InvalidRequest", http.StatusBadRequest, "Invalid request.")
	errInvalidCopySource   = apiErr("InvalidArgument", http.StatusBadRequest, "Copy Source must mention the source bucket and key: sourcebucket/sourcekey.")
	errInvalidMaxKeys      = apiErr("InvalidArgument", http.StatusBadRequest, "Argument max-keys must be an integer between 0 and 2147483647.")
	errInvalidPartNumber   = apiErr("InvalidArgument", http.StatusBadRequest, "Part number must be an integer between 1 and 10000, inclusive.")
	errInvalidToken        = apiErr("InvalidArgument", http.StatusBadRequest, "The continuation token provided is incorrect.")
	errPreconditionFailed  = apiErr("PreconditionFailed", http.StatusPreconditionFailed, "At least one of the pre-conditions you specified did not hold.")
	errInvalidEncodingType = apiErr("InvalidArgument", http.StatusBadRequest, "Invalid Encoding Method specified in Request.")
	errTooManyKeys         = apiErr("MalformedXML", http.StatusBadRequest, "A Delete request may name at most 1000 keys.")
	errInvalidStorageClass = apiErr("InvalidStorageClass", http.StatusBadRequest, "The storage class you specified is not valid.")
	errMalformedPolicy     = apiErr("MalformedPolicy", http.StatusBadRequest, "Policies must be valid JSON.")
	errInvalidTag          = apiErr("InvalidTag", http.StatusBadRequest, "The tag provided was not a valid tag.")
	errInvalidRangeCopy    = apiErr("InvalidArgument", http.StatusBadRequest, "The x-amz-copy-source-range value must be of the form bytes=first-last.")
	errMissingTrailer      = apiErr("InvalidRequest", http.StatusBadRequest, "The declared trailing checksum was not sent.")
	errKeyTooLongErr       = apiErr("KeyTooLongError", http.StatusBadRequest, "Your key is too long.")
	errInvalidURI          = apiErr("InvalidURI", http.StatusBadRequest, "Couldn't parse the specified URI.")
)

// errorTable maps domain sentinels to S3 errors; the first match wins.
var errorTable = []struct {
	err error
	api *APIError
}{
	// The node lost the site's leadership while it served the request: the
	// write was refused whole, and the next leader serves it once retried.
	{meta.ErrFenced, errLeaderChanged},
	{objects.ErrBucketNotFound, apiErr("NoSuchBucket", 404, "The specified bucket does not exist")},
	{objects.ErrBucketExists, apiErr("BucketAlreadyOwnedByYou", 409, "Your previous request to create the named bucket succeeded and you already own it.")},
	{objects.ErrBucketNotEmpty, apiErr("BucketNotEmpty", 409, "The bucket you tried to delete is not empty.")},
	{objects.ErrInvalidBucketName, apiErr("InvalidBucketName", 400, "The specified bucket is not valid.")},
	{objects.ErrKeyTooLong, errKeyTooLongErr},
	{objects.ErrInvalidKey, apiErr("InvalidArgument", 400, "Object key must be 1 to 1024 bytes of valid UTF-8, without control characters other than tab, line feed and carriage return.")},
	{objects.ErrObjectNotFound, apiErr("NoSuchKey", 404, "The specified key does not exist.")},
	{objects.ErrVersionNotFound, apiErr("NoSuchVersion", 404, "The specified version does not exist.")},
	{objects.ErrInvalidVersionID, apiErr("InvalidArgument", 400, "Invalid version id specified.")},
	{objects.ErrMethodNotAllowed, errMethodNotAllowed},
	{objects.ErrPreconditionFailed, errPreconditionFailed},
	{objects.ErrConditionalConflict, apiErr("ConditionalRequestConflict", 409, "A conflicting operation occurred. If using PutObject you can retry the request.")},
	{objects.ErrBadDigest, apiErr("BadDigest", 400, "The Content-MD5 or checksum you specified did not match what we received.")},
	{objects.ErrIncompleteBody, apiErr("IncompleteBody", 400, "You did not provide the number of bytes specified by the Content-Length HTTP header.")},
	{objects.ErrUploadNotFound, apiErr("NoSuchUpload", 404, "The specified multipart upload does not exist.")},
	{objects.ErrInvalidPartOrder, apiErr("InvalidPartOrder", 400, "The list of parts was not in ascending order.")},
	{objects.ErrInvalidPart, apiErr("InvalidPart", 400, "One or more of the specified parts could not be found or did not match.")},
	{objects.ErrEntityTooSmall, apiErr("EntityTooSmall", 400, "Your proposed upload is smaller than the minimum allowed object size.")},
	{objects.ErrInvalidRange, apiErr("InvalidRange", 416, "The requested range is not satisfiable.")},
	{objects.ErrInvalidTag, errInvalidTag},
	{objects.ErrNoSuchTagSet, apiErr("NoSuchTagSet", 404, "The TagSet does not exist.")},
	{objects.ErrNoSuchPolicy, apiErr("NoSuchBucketPolicy", 404, "The bucket policy does not exist.")},
	{objects.ErrNoSuchEncryption, apiErr("ServerSideEncryptionConfigurationNotFoundError", 404, "The server side encryption configuration was not found.")},
	{objects.ErrQuotaExceeded, apiErr("XMinioAdminBucketQuotaExceeded", 400, "Bucket quota exceeded.")},
	// The site's reserve of free space (objects.ErrStorageFull) or a full
	// drive: MinIO's code for it, which its clients know.
	{syscall.ENOSPC, apiErr("XMinioStorageFull", http.StatusInsufficientStorage,
		"The site has no room for new data: delete objects or add capacity, then try again.")},
	{objects.ErrSSEUnavailable, apiErr("InvalidRequest", 400, "Server-side encryption is not available on this server.")},
	{objects.ErrCustomerKeyRequired, apiErr("InvalidRequest", 400, "The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.")},
	{objects.ErrCustomerKeyMismatch, apiErr("InvalidArgument", 400, "The provided customer key does not match the key the object was encrypted with.")},
	{objects.ErrCustomerKeyNotApplicable, apiErr("InvalidRequest", 400, "The encryption parameters are not applicable to this object.")},
	{objects.ErrInvalidArgument, errInvalidArgument},
	{checksum.ErrBadDigest, apiErr("BadDigest", 400, "The Content-MD5 or checksum you specified did not match what we received.")},
	{checksum.ErrInvalidDigest, apiErr("InvalidDigest", 400, "The Content-MD5 you specified is not valid.")},
	{checksum.ErrUnknownAlgorithm, apiErr("InvalidRequest", 400, "Unknown checksum algorithm.")},
	// A checksum value that cannot be the digest of any body cannot match
	// the one received either: BadDigest, as MinIO and the suite expect.
	{checksum.ErrInvalidChecksum, apiErr("BadDigest", 400, "The x-amz-checksum value you specified is not a valid digest for its algorithm.")},
	{checksum.ErrMultipleChecksums, apiErr("InvalidRequest", 400, "Expecting a single x-amz-checksum- header.")},
	{checksum.ErrAlgorithmMismatch, apiErr("InvalidRequest", 400, "Value for x-amz-sdk-checksum-algorithm header is invalid.")},
	{checksum.ErrInvalidTrailer, apiErr("InvalidRequest", 400, "The value specified in the x-amz-trailer header is not supported.")},
	{checksum.ErrUnknownType, apiErr("InvalidRequest", 400, "Value for x-amz-checksum-type header is invalid.")},
	{checksum.ErrUnsupportedType, apiErr("InvalidRequest", 400, "The checksum type is not supported with this checksum algorithm, or differs from the multipart upload's.")},
	{sigv4.ErrInvalidAccessKeyID, apiErr("InvalidAccessKeyId", 403, "The AWS Access Key Id you provided does not exist in our records.")},
	{sigv4.ErrInvalidToken, apiErr("InvalidToken", 400, "The provided token is malformed or otherwise invalid.")},
	{sigv4.ErrExpiredToken, apiErr("ExpiredToken", 400, "The provided token has expired.")},
	{sigv4.ErrSignatureDoesNotMatch, apiErr("SignatureDoesNotMatch", 403, "The request signature we calculated does not match the signature you provided. Check your key and signing method.")},
	{sigv4.ErrRequestTimeTooSkewed, apiErr("RequestTimeTooSkewed", 403, "The difference between the request time and the server's time is too large.")},
	{sigv4.ErrExpiredPresign, apiErr("AccessDenied", 403, "Request has expired")},
	{sigv4.ErrRequestNotReadyYet, apiErr("AccessDenied", 403, "Request is not valid yet")},
	{sigv4.ErrAuthorizationHeaderMalformed, apiErr("AuthorizationHeaderMalformed", 400, "The authorization header is malformed.")},
	{sigv4.ErrAuthorizationQueryParametersError, apiErr("AuthorizationQueryParametersError", 400, "Error parsing the X-Amz-Credential parameter.")},
	{sigv4.ErrUnsupportedAlgorithm, apiErr("AuthorizationHeaderMalformed", 400, "Unsupported signing algorithm.")},
	{sigv4.ErrMultipleAuthMechanisms, apiErr("InvalidArgument", 400, "Only one auth mechanism allowed.")},
	{sigv4.ErrInvalidDate, apiErr("AccessDenied", 403, "AWS authentication requires a valid Date or x-amz-date header")},
	{sigv4.ErrUnsignedHeader, apiErr("AccessDenied", 403, "There were headers present in the request which were not signed")},
	{sigv4.ErrMissingContentSHA256, apiErr("InvalidRequest", 400, "Missing required header for this request: x-amz-content-sha256")},
	{sigv4.ErrInvalidContentSHA256, apiErr("InvalidArgument", 400, "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-* or a valid sha256 value.")},
	{sigv4.ErrContentSHA256Mismatch, apiErr("XAmzContentSHA256Mismatch", 400, "The provided 'x-amz-content-sha256' header does not match what was computed.")},
	{sigv4.ErrPayloadTooLarge, errEntityTooLarge},
	{sigv4.ErrMissingDecodedContentLength, errMissingLength},
	{sigv4.ErrInvalidDecodedContentLength, apiErr("InvalidArgument", 400, "Invalid x-amz-decoded-content-length.")},
	{sigv4.ErrMalformedChunk, apiErr("IncompleteBody", 400, "The aws-chunked body is malformed.")},
	{sigv4.ErrIncompleteBody, apiErr("IncompleteBody", 400, "You did not provide the number of bytes specified.")},
	{sigv4.ErrDecodedLengthMismatch, apiErr("IncompleteBody", 400, "The decoded body length differs from x-amz-decoded-content-length.")},
	{sigv4.ErrChunkSignatureMismatch, apiErr("SignatureDoesNotMatch", 403, "The chunk signature does not match.")},
	{sigv4.ErrMalformedTrailer, apiErr("MalformedTrailerError", 400, "The request contained trailing data that was not well-formed.")},
}

// errLeaderChanged answers a write refused because the node serving it
// stopped leading its site meanwhile (503, with Retry-After: S3 SDKs retry
// it, and by then the next leader serves).
var errLeaderChanged = apiErr("ServiceUnavailable", http.StatusServiceUnavailable,
	"The site's leader changed while this request was served; nothing was written. Please retry.")

var errInternal = apiErr("InternalError", http.StatusInternalServerError, "We encountered an internal error. Please try again.")

// toAPIError translates any error to its S3 form, once, at the edge.
func toAPIError(err error) *APIError {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return errEntityTooLarge
	}
	for _, e := range errorTable {
		if errors.Is(err, e.err) {
			return e.api
		}
	}
	return errInternal
}

type errorResponse struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string   `xml:"Code"`
	Message   string   `xml:"Message"`
	Resource  string   `xml:"Resource,omitempty"`
	RequestID string   `xml:"RequestId"`
	Key       string   `xml:"Key,omitempty"`
	Bucket    string   `xml:"BucketName,omitempty"`
}
