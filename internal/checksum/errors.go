package checksum

import "errors"

// The sentinels below are wrapped with %w and carry the algorithm or header
// in their message; classify them with errors.Is. The S3 error code each one
// maps to at the protocol edge is stated in its comment.

// ErrUnknownAlgorithm is returned by ParseAlgorithm and FromHeaders when a
// name is not one of the supported algorithms. S3 code: InvalidRequest.
var ErrUnknownAlgorithm = errors.New("checksum: unknown checksum algorithm")

// ErrInvalidChecksum is returned when an x-amz-checksum-* value (header or
// trailer) is not standard padded base64 or decodes to the wrong number of
// bytes for its algorithm. S3 code: InvalidRequest ("Value for
// x-amz-checksum-... header is invalid").
var ErrInvalidChecksum = errors.New("checksum: malformed checksum value")

// ErrInvalidDigest is returned by VerifyContentMD5 when the Content-MD5
// header is not base64 of exactly 16 bytes. S3 code: InvalidDigest.
var ErrInvalidDigest = errors.New("checksum: malformed Content-MD5")

// ErrBadDigest is returned by Verify and VerifyContentMD5 when a value the
// client declared differs from the one computed over the received bytes.
// S3 code: BadDigest.
var ErrBadDigest = errors.New("checksum: digest mismatch")

// ErrMultipleChecksums is returned by FromHeaders when a request declares
// more than one checksum algorithm (two x-amz-checksum-* headers, or a header
// and a trailer of different algorithms). S3 code: InvalidRequest.
var ErrMultipleChecksums = errors.New("checksum: more than one checksum algorithm declared")

// ErrAlgorithmMismatch is returned by FromHeaders when
// x-amz-sdk-checksum-algorithm names a different algorithm from the
// x-amz-checksum-* header or trailer actually sent. S3 code: InvalidRequest.
var ErrAlgorithmMismatch = errors.New("checksum: x-amz-sdk-checksum-algorithm does not match the checksum sent")

// ErrInvalidTrailer is returned by FromHeaders when x-amz-trailer names
// something other than a single x-amz-checksum-* header. S3 code:
// InvalidRequest.
var ErrInvalidTrailer = errors.New("checksum: unsupported x-amz-trailer")

// ErrNotComputed is returned by Verify when a checksum was expected but the
// computed set holds no value for its algorithm; it is a caller bug (the Set
// was built without that algorithm), not a client error. S3 code:
// InternalError.
var ErrNotComputed = errors.New("checksum: expected algorithm was not computed")

// ErrUnsupportedType is returned by Composite and FullObjectCRC when the
// algorithm cannot produce that multipart checksum type (S3 allows
// COMPOSITE for CRC32, CRC32C, SHA1, SHA256 and FULL_OBJECT for the CRC
// algorithms only). S3 code: InvalidRequest.
var ErrUnsupportedType = errors.New("checksum: checksum type not supported for algorithm")

// ErrUnknownType is returned by ParseType for a value other than COMPOSITE
// or FULL_OBJECT. S3 code: InvalidRequest.
var ErrUnknownType = errors.New("checksum: unknown checksum type")

// ErrNoParts is returned by MultipartETag, Composite and FullObjectCRC when
// given no parts; a completed multipart upload has at least one. S3 code:
// MalformedXML (CompleteMultipartUpload with an empty part list).
var ErrNoParts = errors.New("checksum: no parts")

// ErrInvalidETag is returned by MultipartETag when a part ETag is not 32
// hex digits (optionally in double quotes). S3 code: InvalidPart.
var ErrInvalidETag = errors.New("checksum: malformed part ETag")
