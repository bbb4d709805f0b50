package objects

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestDeleteBucketAbortsUploads: uploads in progress do not keep an
// otherwise empty bucket alive (S3 deletes it and them); a version does.
func TestDeleteBucketAbortsUploads(t *testing.T) {
	l := newLayer(t)
	ctx := context.Background()
	for _, b := range []string{"uploads-only", "with-object"} {
		if err := l.CreateBucket(ctx, b); err != nil {
			t.Fatal(err)
		}
		u, err := l.CreateMultipartUpload(ctx, b, "big", PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.UploadPart(ctx, b, "big", u.UploadID, 1, strings.NewReader("part one data"), PutOptions{Size: 13}); err != nil {
			t.Fatal(err)
		}
	}
	put(t, l, "with-object", "k", "v")
	if err := l.DeleteBucket(ctx, "with-object"); !errors.Is(err, ErrBucketNotEmpty) {
		t.Fatalf("delete of a bucket with an object: %v", err)
	}
	if res, err := l.ListMultipartUploads(ctx, "with-object", UploadListOptions{MaxUploads: 10}); err != nil || len(res.Uploads) != 1 {
		t.Fatalf("the refused delete touched the bucket's upload: %+v %v", res, err)
	}
	if err := l.DeleteBucket(ctx, "uploads-only"); err != nil {
		t.Fatalf("delete of a bucket with only an upload in progress: %v", err)
	}
	if _, err := l.Bucket(ctx, "uploads-only"); !errors.Is(err, ErrBucketNotFound) {
		t.Fatalf("bucket still there: %v", err)
	}
	// Recreated, it holds no trace of the old upload.
	if err := l.CreateBucket(ctx, "uploads-only"); err != nil {
		t.Fatal(err)
	}
	if res, err := l.ListMultipartUploads(ctx, "uploads-only", UploadListOptions{MaxUploads: 10}); err != nil || len(res.Uploads) != 0 {
		t.Fatalf("uploads after recreate: %+v %v", res, err)
	}
}
