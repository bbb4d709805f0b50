package app

import (
	"context"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// quotas serves the admin API's bucket quota calls from the object layer.
type quotas struct{ s *Server }

// BucketQuota returns a bucket's quota with its live bytes and objects.
func (q quotas) BucketQuota(ctx context.Context, bucket string) (adminclient.BucketQuota, error) {
	b, err := q.s.objects.Bucket(ctx, bucket)
	if err != nil {
		return adminclient.BucketQuota{}, err
	}
	u, err := q.s.objects.BucketUsage(bucket)
	if err != nil {
		return adminclient.BucketQuota{}, err
	}
	out := adminclient.BucketQuota{Bucket: bucket, Quota: b.Quota, Used: u.Bytes, Objects: u.Objects}
	if b.Quota > 0 {
		out.QuotaType = adminclient.QuotaTypeHard
	}
	return out, nil
}

// SetBucketQuota sets a bucket's hard quota (0 clears it).
func (q quotas) SetBucketQuota(ctx context.Context, bucket string, bytes int64) error {
	return q.s.objects.SetBucketQuota(ctx, bucket, bytes)
}
