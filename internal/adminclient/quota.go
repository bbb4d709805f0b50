package adminclient

import (
	"context"
	"net/http"
	"net/url"
)

// PathBucketQuota is the admin call that reads (GET) and sets (PUT) a
// bucket's quota: PathBucketQuota + "/{bucket}".
const PathBucketQuota = "/twinlake/admin/v1/bucket-quota"

// QuotaTypeHard is the only kind of quota: writes past it are refused.
const QuotaTypeHard = "hard"

// BucketQuota is a bucket's quota and what it holds against it.
type BucketQuota struct {
	Bucket string `json:"bucket,omitempty"`
	// Quota is the most bytes of live objects the bucket may hold; 0 is
	// none.
	Quota     int64  `json:"quota"`
	QuotaType string `json:"quotaType,omitempty"`
	// Used and Objects are the bucket's live bytes and objects (GET only).
	Used    int64 `json:"used"`
	Objects int64 `json:"objects"`
}

// BucketQuota reads a bucket's quota and usage.
func (c *Client) BucketQuota(ctx context.Context, bucket string) (BucketQuota, error) {
	var out BucketQuota
	err := c.call(ctx, http.MethodGet, PathBucketQuota+"/"+url.PathEscape(bucket), nil, &out)
	return out, err
}

// SetBucketQuota sets a bucket's hard quota in bytes; 0 clears it.
func (c *Client) SetBucketQuota(ctx context.Context, bucket string, bytes int64) error {
	return c.noAnswer(ctx, http.MethodPut, PathBucketQuota+"/"+url.PathEscape(bucket), BucketQuota{Quota: bytes, QuotaType: QuotaTypeHard})
}
