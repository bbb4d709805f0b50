package s3api

import "net/http"

// scope is what a route addresses.
type scope int

const (
	scopeService scope = iota // no bucket
	scopeBucket               // bucket, no key
	scopeObject               // bucket and key
)

// route is one S3 API: method, scope, the sub-resource query key that
// selects it ("" for none) and its handler. The table is matched top-down;
// routes with a query key come before the plain route of the same method.
type route struct {
	method  string
	scope   scope
	query   string
	api     string
	handler func(*Server, *request) error
}

var routes = []route{
	{http.MethodGet, scopeService, "", "ListBuckets", (*Server).listBuckets},

	{http.MethodGet, scopeBucket, "location", "GetBucketLocation", (*Server).getBucketLocation},
	{http.MethodGet, scopeBucket, "versioning", "GetBucketVersioning", (*Server).getBucketVersioning},
	{http.MethodPut, scopeBucket, "versioning", "PutBucketVersioning", (*Server).putBucketVersioning},
	{http.MethodGet, scopeBucket, "tagging", "GetBucketTagging", (*Server).getBucketTagging},
	{http.MethodPut, scopeBucket, "tagging", "PutBucketTagging", (*Server).putBucketTagging},
	{http.MethodDelete, scopeBucket, "tagging", "DeleteBucketTagging", (*Server).deleteBucketTagging},
	{http.MethodGet, scopeBucket, "policy", "GetBucketPolicy", (*Server).getBucketPolicy},
	{http.MethodPut, scopeBucket, "policy", "PutBucketPolicy", (*Server).putBucketPolicy},
	{http.MethodDelete, scopeBucket, "policy", "DeleteBucketPolicy", (*Server).deleteBucketPolicy},
	{http.MethodGet, scopeBucket, "policyStatus", "GetBucketPolicyStatus", (*Server).getBucketPolicyStatus},
	{http.MethodGet, scopeBucket, "website", "GetBucketWebsite", (*Server).getBucketWebsite},
	{http.MethodGet, scopeBucket, "publicAccessBlock", "GetPublicAccessBlock", (*Server).getPublicAccessBlock},
	{http.MethodGet, scopeBucket, "ownershipControls", "GetBucketOwnershipControls", (*Server).getBucketOwnershipControls},
	{http.MethodGet, scopeBucket, "accelerate", "GetBucketAccelerateConfiguration", (*Server).getBucketAccelerate},
	{http.MethodGet, scopeBucket, "requestPayment", "GetBucketRequestPayment", (*Server).getBucketRequestPayment},
	{http.MethodGet, scopeBucket, "logging", "GetBucketLogging", (*Server).getBucketLogging},
	{http.MethodGet, scopeBucket, "notification", "GetBucketNotificationConfiguration", (*Server).getBucketNotification},
	{http.MethodGet, scopeBucket, "encryption", "GetBucketEncryption", (*Server).getBucketEncryption},
	{http.MethodPut, scopeBucket, "encryption", "PutBucketEncryption", (*Server).putBucketEncryption},
	{http.MethodDelete, scopeBucket, "encryption", "DeleteBucketEncryption", (*Server).deleteBucketEncryption},
	{http.MethodGet, scopeBucket, "object-lock", "GetObjectLockConfiguration", (*Server).getObjectLockConfiguration},
	{http.MethodPut, scopeBucket, "object-lock", "PutObjectLockConfiguration", (*Server).putObjectLockConfiguration},
	{http.MethodGet, scopeBucket, "cors", "GetBucketCors", (*Server).getBucketCors},
	{http.MethodPut, scopeBucket, "cors", "PutBucketCors", (*Server).putBucketCors},
	{http.MethodDelete, scopeBucket, "cors", "DeleteBucketCors", (*Server).deleteBucketCors},
	{http.MethodGet, scopeBucket, "lifecycle", "GetBucketLifecycleConfiguration", (*Server).getBucketLifecycle},
	{http.MethodPut, scopeBucket, "lifecycle", "PutBucketLifecycleConfiguration", (*Server).putBucketLifecycle},
	{http.MethodDelete, scopeBucket, "lifecycle", "DeleteBucketLifecycle", (*Server).deleteBucketLifecycle},
	{http.MethodGet, scopeBucket, "acl", "GetBucketAcl", (*Server).getBucketAcl},
	{http.MethodPut, scopeBucket, "acl", "PutBucketAcl", (*Server).putBucketAcl},
	{http.MethodGet, scopeBucket, "uploads", "ListMultipartUploads", (*Server).listMultipartUploads},
	{http.MethodGet, scopeBucket, "versions", "ListObjectVersions", (*Server).listObjectVersions},
	{http.MethodPost, scopeBucket, "delete", "DeleteObjects", (*Server).deleteObjects},
	{http.MethodGet, scopeBucket, "", "ListObjects", (*Server).listObjects},
	{http.MethodHead, scopeBucket, "", "HeadBucket", (*Server).headBucket},
	{http.MethodPut, scopeBucket, "", "CreateBucket", (*Server).createBucket},
	{http.MethodDelete, scopeBucket, "", "DeleteBucket", (*Server).deleteBucket},

	{http.MethodGet, scopeObject, "tagging", "GetObjectTagging", (*Server).getObjectTagging},
	{http.MethodGet, scopeObject, "attributes", "GetObjectAttributes", (*Server).getObjectAttributes},
	{http.MethodPut, scopeObject, "tagging", "PutObjectTagging", (*Server).putObjectTagging},
	{http.MethodDelete, scopeObject, "tagging", "DeleteObjectTagging", (*Server).deleteObjectTagging},
	{http.MethodGet, scopeObject, "retention", "GetObjectRetention", (*Server).getObjectRetention},
	{http.MethodPut, scopeObject, "retention", "PutObjectRetention", (*Server).putObjectRetention},
	{http.MethodGet, scopeObject, "legal-hold", "GetObjectLegalHold", (*Server).getObjectLegalHold},
	{http.MethodPut, scopeObject, "legal-hold", "PutObjectLegalHold", (*Server).putObjectLegalHold},
	{http.MethodGet, scopeObject, "acl", "GetObjectAcl", (*Server).getObjectAcl},
	{http.MethodPut, scopeObject, "acl", "PutObjectAcl", (*Server).putObjectAcl},
	{http.MethodPost, scopeObject, "uploads", "CreateMultipartUpload", (*Server).createMultipartUpload},
	{http.MethodPost, scopeObject, "uploadId", "CompleteMultipartUpload", (*Server).completeMultipartUpload},
	{http.MethodPut, scopeObject, "uploadId", "UploadPart", (*Server).uploadPart},
	{http.MethodGet, scopeObject, "uploadId", "ListParts", (*Server).listParts},
	{http.MethodDelete, scopeObject, "uploadId", "AbortMultipartUpload", (*Server).abortMultipartUpload},
	{http.MethodGet, scopeObject, "", "GetObject", (*Server).getObject},
	{http.MethodHead, scopeObject, "", "HeadObject", (*Server).headObject},
	{http.MethodPut, scopeObject, "", "PutObject", (*Server).putObject},
	{http.MethodDelete, scopeObject, "", "DeleteObject", (*Server).deleteObject},
}

func matchRoute(req *request) *route {
	sc := scopeService
	switch {
	case req.bucket != "" && req.key != "":
		sc = scopeObject
	case req.bucket != "":
		sc = scopeBucket
	}
	for i := range routes {
		rt := &routes[i]
		if rt.method == req.r.Method && rt.scope == sc && rt.query != "" && req.query.Has(rt.query) {
			return rt
		}
	}
	// Only then the sub-resources with no API here: some are served for
	// one method (a read of an absent setting) and not the others.
	if u, ok := findUnsupported(req); ok {
		req.api = u.name(req.r.Method, sc)
		return nil
	}
	for i := range routes {
		rt := &routes[i]
		if rt.method != req.r.Method || rt.scope != sc {
			continue
		}
		if rt.query == "" {
			if namesSubresource(req) {
				// A sub-resource with no API of this shape: never serve
				// it as the plain request (a listing, an object read).
				return nil
			}
			return rt
		}
	}
	return nil
}

// subresources are the query keys that select an S3 API: every routed one
// and every unsupported one.
var subresources = func() map[string]bool {
	m := map[string]bool{}
	for _, rt := range routes {
		if rt.query != "" {
			m[rt.query] = true
		}
	}
	for _, u := range unsupported {
		m[u.query] = true
	}
	return m
}()

// namesSubresource reports whether req's query selects some S3 API.
func namesSubresource(req *request) bool {
	for k := range req.query {
		if subresources[k] {
			return true
		}
	}
	return false
}
