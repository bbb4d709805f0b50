package objects

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestCompleteRetried: completing an upload again answers the version it
// made (a client retrying after a lost answer), while an upload ID that
// never completed this key, or whose object was overwritten since, is
// still NoSuchUpload.
func TestCompleteRetried(t *testing.T) {
	l := newLayer(t)
	ctx := context.Background()
	if err := l.CreateBucket(ctx, "retry"); err != nil {
		t.Fatal(err)
	}
	u, err := l.CreateMultipartUpload(ctx, "retry", "k", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.UploadPart(ctx, "retry", "k", u.UploadID, 1, strings.NewReader("part"), PutOptions{Size: 4})
	if err != nil {
		t.Fatal(err)
	}
	list := []CompletePart{{Number: 1, ETag: p.Segment.ETag}}
	v1, err := l.CompleteMultipartUpload(ctx, "retry", "k", u.UploadID, list, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v2, err := l.CompleteMultipartUpload(ctx, "retry", "k", u.UploadID, list, PutOptions{})
	if err != nil || v2.VersionID != v1.VersionID || v2.ETag != v1.ETag || v2.ModTime != v1.ModTime {
		t.Fatalf("retried complete: %+v %v, want the version %+v", v2, err, v1)
	}
	if _, err := l.CompleteMultipartUpload(ctx, "retry", "other", u.UploadID, list, PutOptions{}); !errors.Is(err, ErrUploadNotFound) {
		t.Fatalf("the upload ID on another key: %v", err)
	}
	put(t, l, "retry", "k", "overwritten")
	if _, err := l.CompleteMultipartUpload(ctx, "retry", "k", u.UploadID, list, PutOptions{}); !errors.Is(err, ErrUploadNotFound) {
		t.Fatalf("complete after an overwrite: %v", err)
	}
}
