package objects

import "context"

// FieldCORS names the bucket's CORS configuration in FieldTimes.
const FieldCORS = "cors"

// SetBucketCORS stores the bucket's CORS configuration (nil removes it).
// The document is the S3 edge's canonical XML, validated there; the layer
// keeps it opaque, as it does the bucket policy, and replicates it as a
// bucket setting of its own.
func (l *Layer) SetBucketCORS(ctx context.Context, name string, doc []byte) error {
	return l.UpdateBucket(ctx, name, func(b *Bucket) error {
		b.CORS = doc
		return nil
	})
}
