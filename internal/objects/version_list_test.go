package objects

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// TestListObjectVersionsDelimiter: with a delimiter, a common prefix is
// listed once however many keys and versions it holds, and paging through
// the listing one entry at a time (markers inside and after common
// prefixes) gives the same entries as one page.
func TestListObjectVersionsDelimiter(t *testing.T) {
	ctx := context.Background()
	l := newLayer(t)
	if err := l.CreateBucket(ctx, "ver"); err != nil {
		t.Fatal(err)
	}
	if err := l.SetVersioning(ctx, "ver", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a/1", "a/1", "a/2", "b", "b", "c/x/1", "c/x/2", "c/y", "d", "e/"} {
		put(t, l, "ver", k, "x")
	}
	if _, err := l.DeleteObject(ctx, "ver", "d", ""); err != nil {
		t.Fatal(err)
	}
	list := func(prefix string, pageSize int) []string {
		t.Helper()
		var out []string
		opts := VersionListOptions{Prefix: prefix, Delimiter: "/", MaxKeys: pageSize}
		for range 100 {
			res, err := l.ListObjectVersions(ctx, "ver", opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range res.Versions {
				out = append(out, fmt.Sprintf("%s:%v", v.Key, v.DeleteMarker))
			}
			for _, cp := range res.CommonPrefixes {
				out = append(out, cp)
			}
			if !res.IsTruncated {
				return out
			}
			opts.KeyMarker, opts.VersionIDMarker = res.NextKeyMarker, res.NextVersionIDMarker
		}
		t.Fatal("more than 100 pages")
		return nil
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"", []string{"b:false", "b:false", "d:true", "d:false", "a/", "c/", "e/"}},
		{"c/", []string{"c/y:false", "c/x/"}},
		{"c/x/", []string{"c/x/1:false", "c/x/2:false"}},
	} {
		all := list(tc.prefix, 1000)
		sortedWant := slices.Clone(tc.want)
		if slices.Sort(all); !slices.Equal(all, slices.Sorted(slices.Values(sortedWant))) {
			t.Errorf("prefix %q in one page: %v, want %v", tc.prefix, all, tc.want)
		}
		for _, size := range []int{1, 2, 3} {
			got := list(tc.prefix, size)
			if slices.Sort(got); !slices.Equal(got, all) {
				t.Errorf("prefix %q in pages of %d: %v, want %v", tc.prefix, size, got, all)
			}
		}
	}
}
