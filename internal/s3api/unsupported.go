package s3api

import "net/http"

// unsupportedAPI is an S3 sub-resource twinlake does not serve. Requests for
// it answer NotImplemented rather than being served as a plain GET or PUT of
// the bucket or object, and are counted under the S3 API's own name, so
// that a client probing, say, GetBucketAcl shows up as such in the metrics
// and the access log instead of as an anonymous error.
type unsupportedAPI struct {
	query  string // the sub-resource query key
	bucket string // the API's name without its verb, on a bucket ("" if none)
	object string // the same on an object
	// named holds, by method, the APIs not named verb+stem (POST APIs,
	// CreateSession, RenameObject).
	named map[string]string
}

var unsupported = []unsupportedAPI{
	{query: "logging", bucket: "BucketLogging"},
	{query: "notification", bucket: "BucketNotificationConfiguration"},
	{query: "replication", bucket: "BucketReplication"},
	{query: "website", bucket: "BucketWebsite"},
	{query: "accelerate", bucket: "BucketAccelerateConfiguration"},
	{query: "requestPayment", bucket: "BucketRequestPayment"},
	{query: "torrent", object: "ObjectTorrent"},
	{query: "restore", named: map[string]string{http.MethodPost: "RestoreObject"}},
	{query: "select", named: map[string]string{http.MethodPost: "SelectObjectContent"}},
	{query: "analytics", bucket: "BucketAnalyticsConfiguration"},
	{query: "metrics", bucket: "BucketMetricsConfiguration"},
	{query: "inventory", bucket: "BucketInventoryConfiguration"},
	{query: "intelligent-tiering", bucket: "BucketIntelligentTieringConfiguration"},
	{query: "ownershipControls", bucket: "BucketOwnershipControls"},
	{query: "publicAccessBlock", bucket: "PublicAccessBlock"},
	{query: "metadataTable", bucket: "BucketMetadataTableConfiguration"},
	{query: "metadataConfiguration", bucket: "BucketMetadataConfiguration"},
	{query: "session", named: map[string]string{http.MethodGet: "CreateSession"}},
	{query: "renameObject", named: map[string]string{http.MethodPut: "RenameObject"}},
}

// verbs are the API name prefixes of the methods S3 APIs use; any other
// method is not named, which keeps the metric label set bounded.
var verbs = map[string]string{
	http.MethodGet: "Get", http.MethodPut: "Put", http.MethodDelete: "Delete", http.MethodHead: "Head",
}

// findUnsupported returns the unsupported sub-resource req asks for.
func findUnsupported(req *request) (unsupportedAPI, bool) {
	for _, u := range unsupported {
		if req.query.Has(u.query) {
			return u, true
		}
	}
	return unsupportedAPI{}, false
}

// name is the S3 API a request for u with method on scope sc calls, or
// "Unknown" when no S3 API has that shape.
func (u unsupportedAPI) name(method string, sc scope) string {
	if n, ok := u.named[method]; ok {
		return n
	}
	if method == http.MethodPost {
		return "Unknown"
	}
	stem := u.bucket
	if sc == scopeObject {
		stem = u.object
	}
	verb, ok := verbs[method]
	if !ok || stem == "" {
		return "Unknown"
	}
	return verb + stem
}
