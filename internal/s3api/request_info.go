package s3api

import "context"

// RequestInfo is what the S3 edge learned about one request, for an access
// log kept outside the package: it is filled in as the request is served
// and complete once ServeHTTP returns. It never holds a secret: the access
// key is the verified signer's, the query string is not kept.
type RequestInfo struct {
	ID        string // x-amz-request-id
	API       string // S3 API name, e.g. PutObject; "Unknown" if none matched
	Bucket    string
	Key       string
	AccessKey string // the verified signer; "" for anonymous requests
	// BodyElsewhere is set when the node that received the request
	// wrote its body (OfferedBody): this process read none of it.
	BodyElsewhere bool
}

type requestInfoKey struct{}

// WithRequestInfo returns a context under which the S3 edge records what it
// learns about a request in the returned RequestInfo.
func WithRequestInfo(ctx context.Context) (context.Context, *RequestInfo) {
	info := &RequestInfo{}
	return context.WithValue(ctx, requestInfoKey{}, info), info
}

func requestInfo(ctx context.Context) *RequestInfo {
	info, _ := ctx.Value(requestInfoKey{}).(*RequestInfo)
	return info
}

// record copies what req learned into the request's RequestInfo, if any.
func (req *request) record() {
	info := requestInfo(req.r.Context())
	if info == nil {
		return
	}
	info.ID, info.API, info.Bucket, info.Key = req.id, req.api, req.bucket, req.key
	if req.auth != nil && !req.auth.Anonymous {
		info.AccessKey = req.auth.AccessKey
	}
}
