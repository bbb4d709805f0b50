package objects

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
)

// Copying an object out (io.Copy, which uses the reader's WriteTo and so
// hands plain blob files to the writer) gives exactly the bytes Read gives,
// for every range: within a part, across parts, at the ends, inline.
func TestReadRangesThroughWriteTo(t *testing.T) {
	ctx := context.Background()
	l := newLayer(t)
	if err := l.CreateBucket(ctx, "ranges"); err != nil {
		t.Fatal(err)
	}
	up, err := l.CreateMultipartUpload(ctx, "ranges", "mp", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var whole bytes.Buffer
	var parts []CompletePart
	for i, size := range []int{5 << 20, 5 << 20, 300} {
		body := strings.Repeat(fmt.Sprintf("%c", 'a'+i), size)
		whole.WriteString(body)
		p, err := l.UploadPart(ctx, "ranges", "mp", up.UploadID, i+1, strings.NewReader(body), PutOptions{Size: int64(size)})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, CompletePart{Number: i + 1, ETag: p.Segment.ETag})
	}
	mp, err := l.CompleteMultipartUpload(ctx, "ranges", "mp", up.UploadID, parts, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	small := put(t, l, "ranges", "small", "tiny") // inline
	for _, tc := range []struct {
		key  string
		v    *Version
		want string
	}{{"mp", mp, whole.String()}, {"small", small, "tiny"}} {
		for _, rg := range [][2]int64{{0, tc.v.Size}, {0, 1}, {tc.v.Size - 1, 1}, {1, 2}, {5<<20 - 10, 20}, {5<<20 - 1, 5<<20 + 2}, {10<<20 - 1, 301}, {5, 0}} {
			off, n := rg[0], rg[1]
			if off+n > tc.v.Size {
				continue
			}
			r, err := l.OpenRangeWithKey("ranges", tc.key, tc.v, off, n, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			copied, err := io.Copy(&got, r)
			r.Close()
			if err != nil || copied != n || got.String() != tc.want[off:off+n] {
				t.Errorf("%s range %d+%d: copied %d, %v, match %v", tc.key, off, n, copied, err, got.String() == tc.want[off:off+n])
			}
		}
	}
}
