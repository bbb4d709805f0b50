// Package sigv4 authenticates HTTP requests signed with AWS Signature
// Version 4 (and, for S3 only, the older Version 2: v2.go). Every HTTP surface of the server uses it: S3 (service "s3"), the
// Iceberg REST catalog (service "s3tables") and the admin and peer APIs.
//
// It owns the server side of the protocol: parsing the Authorization header
// and presigned query parameters, rebuilding the canonical request, checking
// the signature, the credential scope and the clock, and then decoding the
// payload as the client meant it — checking its SHA-256, or unwrapping
// aws-chunked framing while verifying every chained chunk signature and
// collecting the trailing headers.
//
// It decides who signed a request, not what they may do, and it speaks no wire
// error format: its sentinel errors (errors.go) are translated to S3, Iceberg
// or admin errors at each edge.
//
// Path canonicalization follows the service: "s3" encodes the path once, as
// S3 does; every other service uses the standard double encoding, which is
// what AWS SDKs, botocore and the Iceberg Java signer produce for them.
package sigv4
