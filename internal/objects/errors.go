package objects

import (
	"errors"
	"fmt"
	"syscall"
)

// Sentinel errors. The S3 edge maps each to its S3 error code (named in the
// comment).
var (
	// ErrBucketNotFound: the bucket does not exist (NoSuchBucket).
	ErrBucketNotFound = errors.New("objects: bucket not found")
	// ErrBucketExists: CreateBucket on an existing bucket (BucketAlreadyOwnedByYou).
	ErrBucketExists = errors.New("objects: bucket already exists")
	// ErrBucketNotEmpty: DeleteBucket on a bucket with versions or uploads (BucketNotEmpty).
	ErrBucketNotEmpty = errors.New("objects: bucket not empty")
	// ErrInvalidBucketName: name breaks S3 naming rules (InvalidBucketName).
	ErrInvalidBucketName = errors.New("objects: invalid bucket name")
	// ErrInvalidKey: empty, not UTF-8, or (for a new object) holding a control
	// character XML cannot carry (InvalidArgument).
	ErrInvalidKey = errors.New("objects: invalid object key")
	// ErrKeyTooLong: key over 1024 bytes (KeyTooLongError).
	ErrKeyTooLong = errors.New("objects: object key too long")
	// ErrObjectNotFound: no such key, or its latest version is a delete marker (NoSuchKey).
	ErrObjectNotFound = errors.New("objects: object not found")
	// ErrVersionNotFound: no such version ID (NoSuchVersion).
	ErrVersionNotFound = errors.New("objects: version not found")
	// ErrInvalidVersionID: malformed version ID (InvalidArgument).
	ErrInvalidVersionID = errors.New("objects: invalid version id")
	// ErrMethodNotAllowed: the version is a delete marker (MethodNotAllowed).
	ErrMethodNotAllowed = errors.New("objects: delete marker")
	// ErrPreconditionFailed: If-Match / If-None-Match on write failed (PreconditionFailed).
	ErrPreconditionFailed = errors.New("objects: precondition failed")
	// ErrConditionalConflict: a concurrent conditional write won (ConditionalRequestConflict).
	ErrConditionalConflict = errors.New("objects: conditional request conflict")
	// ErrBadDigest: content did not match a declared checksum or MD5 (BadDigest).
	ErrBadDigest = errors.New("objects: bad digest")
	// ErrIncompleteBody: fewer bytes than declared (IncompleteBody).
	ErrIncompleteBody = errors.New("objects: incomplete body")
	// ErrUploadNotFound: unknown multipart upload ID (NoSuchUpload).
	ErrUploadNotFound = errors.New("objects: upload not found")
	// ErrInvalidPart: a listed part is missing or its ETag differs (InvalidPart).
	ErrInvalidPart = errors.New("objects: invalid part")
	// ErrInvalidPartOrder: parts not in ascending order (InvalidPartOrder).
	ErrInvalidPartOrder = errors.New("objects: invalid part order")
	// ErrEntityTooSmall: a non-final part under 5 MiB (EntityTooSmall).
	ErrEntityTooSmall = errors.New("objects: part too small")
	// ErrInvalidRange: range outside the object (InvalidRange).
	ErrInvalidRange = errors.New("objects: invalid range")
	// ErrInvalidArgument: any other bad argument (InvalidArgument).
	ErrInvalidArgument = errors.New("objects: invalid argument")
	// ErrInvalidTag: bad tag set (InvalidTag).
	ErrInvalidTag = errors.New("objects: invalid tag")
	// ErrNoSuchTagSet: no tags (NoSuchTagSet).
	ErrNoSuchTagSet = errors.New("objects: no tag set")
	// ErrNoSuchPolicy: bucket has no policy (NoSuchBucketPolicy).
	ErrNoSuchPolicy = errors.New("objects: no bucket policy")
	// ErrNoSuchEncryption: bucket has no default encryption (ServerSideEncryptionConfigurationNotFoundError).
	ErrNoSuchEncryption = errors.New("objects: no encryption configuration")
	// ErrSSEUnavailable: SSE requested but no key is configured (InvalidRequest).
	ErrSSEUnavailable = errors.New("objects: server-side encryption unavailable")
	// ErrStorageFull: the site keeps its free space for what it must
	// write to go on (its metadata, deletes) and takes no new object data
	// (XMinioStorageFull). It wraps syscall.ENOSPC, as a drive that is
	// full answers.
	ErrStorageFull = fmt.Errorf("objects: %w: the data directory is down to its reserve of free space", syscall.ENOSPC)
)

// ErrFormat is returned by New when the store was written by a newer
// twinlake whose on-disk format this binary does not know.
var ErrFormat = errors.New("objects: unknown on-disk format")
