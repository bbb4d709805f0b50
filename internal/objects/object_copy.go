package objects

import (
	"context"

	"github.com/twinlake/twinlake/internal/checksum"
)

// CopyOptions describe a server-side copy.
type CopyOptions struct {
	// ReplaceMetadata takes metadata from Put instead of the source
	// (x-amz-metadata-directive: REPLACE).
	ReplaceMetadata bool
	// ReplaceTags takes tags from Put.Tags (x-amz-tagging-directive: REPLACE).
	ReplaceTags bool
	// Put carries the destination metadata, SSE and conditions.
	Put PutOptions
	// SourceCustomerKey is the source's SSE-C key, if it has one.
	SourceCustomerKey []byte
}

// CopyObject copies a version (the latest when srcVersionID is empty) to
// dstBucket/dstKey as a new version. It returns the new version and the
// source version copied.
func (l *Layer) CopyObject(ctx context.Context, srcBucket, srcKey, srcVersionID, dstBucket, dstKey string, opts CopyOptions) (*Version, *Version, error) {
	src, err := l.HeadObject(ctx, srcBucket, srcKey, srcVersionID)
	if err != nil {
		return nil, src, err
	}
	r, err := l.OpenRangeWithKey(srcBucket, srcKey, src, 0, src.Size, opts.SourceCustomerKey)
	if err != nil {
		return nil, src, err
	}
	defer r.Close()
	put := opts.Put
	put.Size = src.Size
	if !opts.ReplaceMetadata {
		put.ContentType, put.UserMeta, put.Headers = src.ContentType, src.UserMeta, src.Headers
	}
	if !opts.ReplaceTags {
		put.Tags = src.Tags
	}
	if put.Checksum == "" {
		for alg := range src.Checksums {
			if a, err := checksum.ParseAlgorithm(alg); err == nil {
				put.Checksum = a
			}
		}
	}
	v, err := l.PutObject(ctx, dstBucket, dstKey, r, put)
	return v, src, err
}
