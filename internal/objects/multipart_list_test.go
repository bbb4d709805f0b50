package objects

import (
	"context"
	"slices"
	"testing"
)

// TestListMultipartUploadsPages: paging through uploads with the markers
// each page returns (small pages, a prefix, keys with several uploads)
// gives every upload once, in order; each page starts at its marker's key;
// a marker before the prefix starts at the prefix, one past it gives an
// empty page.
func TestListMultipartUploadsPages(t *testing.T) {
	ctx := context.Background()
	l := newLayer(t)
	if err := l.CreateBucket(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	var want []string
	keys := []string{"a/1", "a/2", "a/2/x", "a/3", "b/1", "z"}
	for _, k := range keys {
		for range 3 {
			u, err := l.CreateMultipartUpload(ctx, "bkt", k, PutOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if k[0] == 'a' {
				want = append(want, k+" "+u.UploadID)
			}
		}
	}
	slices.Sort(want)
	for _, size := range []int{1, 2, 5, 100} {
		var got []string
		opts := UploadListOptions{Prefix: "a/", MaxUploads: size}
		for range 100 {
			res, err := l.ListMultipartUploads(ctx, "bkt", opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range res.Uploads {
				got = append(got, u.Key+" "+u.UploadID)
			}
			if !res.IsTruncated {
				break
			}
			opts.KeyMarker, opts.UploadIDMarker = res.NextKeyMarker, res.NextUploadIDMarker
		}
		if !slices.Equal(got, want) {
			t.Errorf("pages of %d: %d uploads %q, want %d", size, len(got), got, len(want))
		}
	}
	for _, tc := range []struct {
		marker string
		n      int
	}{{"", 12}, {"0", 12}, {"a/", 12}, {"a/2", 6}, {"a/2/x", 3}, {"a/3", 0}, {"b", 0}, {"zz", 0}} {
		res, err := l.ListMultipartUploads(ctx, "bkt", UploadListOptions{Prefix: "a/", KeyMarker: tc.marker, MaxUploads: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Uploads) != tc.n {
			t.Errorf("key marker %q: %d uploads, want %d", tc.marker, len(res.Uploads), tc.n)
		}
	}
}
