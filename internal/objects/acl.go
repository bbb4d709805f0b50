package objects

import (
	"context"
	"fmt"
)

// FieldACL names the bucket's canned ACL in FieldTimes.
const FieldACL = "acl"

// The canned ACLs twinlake serves, as S3 names them. Private is stored as
// the empty string: it is every bucket's and object's default.
const (
	ACLPrivate                = "private"
	ACLPublicRead             = "public-read"
	ACLPublicReadWrite        = "public-read-write"
	ACLAuthenticatedRead      = "authenticated-read"
	ACLBucketOwnerRead        = "bucket-owner-read"
	ACLBucketOwnerFullControl = "bucket-owner-full-control"
)

// ErrInvalidACL reports a canned ACL twinlake does not know.
var ErrInvalidACL = fmt.Errorf("%w: canned ACL", ErrInvalidArgument)

// CanonicalACL returns the stored form of a canned ACL: "" for private,
// the name otherwise; an unknown name is ErrInvalidACL.
func CanonicalACL(acl string) (string, error) {
	switch acl {
	case "", ACLPrivate:
		return "", nil
	case ACLPublicRead, ACLPublicReadWrite, ACLAuthenticatedRead, ACLBucketOwnerRead, ACLBucketOwnerFullControl:
		return acl, nil
	}
	return "", fmt.Errorf("%w %q", ErrInvalidACL, acl)
}

// SetBucketACL stores the bucket's canned ACL, replicated as a bucket
// setting of its own.
func (l *Layer) SetBucketACL(ctx context.Context, name, acl string) error {
	c, err := CanonicalACL(acl)
	if err != nil {
		return err
	}
	return l.UpdateBucket(ctx, name, func(b *Bucket) error {
		b.ACL = c
		return nil
	})
}

// SetObjectACL stores a version's canned ACL (the latest version when
// versionID is empty) as a metadata change, replicated like a tag change.
// Unlike a bucket's, an object's ACL is kept as named, "private" too: ""
// means the object was given none (it is private; its bucket's ACL does
// not publish it).
func (l *Layer) SetObjectACL(ctx context.Context, bucket, key, versionID, acl string) (*Version, error) {
	if _, err := CanonicalACL(acl); err != nil {
		return nil, err
	}
	return l.updateVersionLock(ctx, bucket, key, versionID, func(v *Version) error {
		if v.DeleteMarker {
			return ErrMethodNotAllowed
		}
		v.ACL = acl
		return nil
	})
}
