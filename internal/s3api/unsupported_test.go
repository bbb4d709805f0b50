package s3api

import (
	"net/http"
	"testing"
)

// TestUnsupportedAPINames: a request for a sub-resource twinlake does not
// serve is named after the S3 API it calls, so metrics and the access log
// count it as such; shapes no S3 API has stay "Unknown", which keeps the
// metric label set bounded whatever clients send.
func TestUnsupportedAPINames(t *testing.T) {
	for _, tc := range []struct {
		method, target, want string
	}{
		{http.MethodPut, "/b?website", "PutBucketWebsite"},
		{http.MethodPut, "/b?notification", "PutBucketNotificationConfiguration"},
		{http.MethodDelete, "/b?website", "DeleteBucketWebsite"},
		{http.MethodPut, "/b?logging", "PutBucketLogging"},
		{http.MethodPost, "/b/k?restore", "RestoreObject"},
		{http.MethodPost, "/b/k?select&select-type=2", "SelectObjectContent"},
		{http.MethodPut, "/b?publicAccessBlock", "PutPublicAccessBlock"},
		{http.MethodDelete, "/b?ownershipControls", "DeleteBucketOwnershipControls"},
		{http.MethodGet, "/b?metadataTable", "GetBucketMetadataTableConfiguration"},
		{http.MethodGet, "/b?session", "CreateSession"},
		{http.MethodPut, "/b/k?renameObject", "RenameObject"},
		{http.MethodDelete, "/b/k?lifecycle", "Unknown"}, // no object lifecycle API
		{"PROPFIND", "/b?acl", "Unknown"},
		{http.MethodPost, "/b?acl", "Unknown"},
	} {
		r, err := http.NewRequest(tc.method, "http://h"+tc.target, nil)
		if err != nil {
			t.Fatal(err)
		}
		req := &request{r: r, query: r.URL.Query(), api: "Unknown"}
		req.bucket, req.key = (&Server{}).splitPath(r)
		if rt := matchRoute(req); rt != nil {
			t.Errorf("%s %s matched %s", tc.method, tc.target, rt.api)
		}
		if req.api != tc.want {
			t.Errorf("%s %s named %q, want %q", tc.method, tc.target, req.api, tc.want)
		}
	}
}
