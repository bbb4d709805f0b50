package objcmd

import (
	"testing"

	"github.com/twinlake/twinlake/internal/trace"
)

// TestMatchWatch: which trace events watch shows, and as what.
func TestMatchWatch(t *testing.T) {
	f := watchFlags{events: []string{"put", "delete"}, suffix: ".txt"}
	for _, tc := range []struct {
		name string
		ev   trace.Event
		want string // event name, "" for not shown
		key  string
		size int64
	}{
		{"a put", trace.Event{FuncName: "s3.PutObject", Path: "/b/docs/a.txt", StatusCode: 200, BytesIn: 5}, "s3:ObjectCreated:Put", "docs/a.txt", 5},
		{"a chunked put", trace.Event{FuncName: "s3.PutObject", Path: "/b/docs/a.txt", StatusCode: 200, BytesIn: 180,
			Attrs: map[string]string{"decodedLength": "3"}}, "s3:ObjectCreated:Put", "docs/a.txt", 3},
		{"a copy has no size", trace.Event{FuncName: "s3.CopyObject", Path: "/b/docs/c.txt", StatusCode: 200, BytesIn: 0}, "s3:ObjectCreated:Copy", "docs/c.txt", 0},
		{"a delete", trace.Event{FuncName: "s3.DeleteObject", Path: "/b/docs/a.txt", StatusCode: 204}, "s3:ObjectRemoved:Delete", "docs/a.txt", 0},
		{"a multi-object delete names the bucket", trace.Event{FuncName: "s3.DeleteObjects", Path: "/b", StatusCode: 200}, "s3:ObjectRemoved:DeleteObjects", "", 0},
		{"a failed put", trace.Event{FuncName: "s3.PutObject", Path: "/b/docs/a.txt", StatusCode: 403}, "", "", 0},
		{"a get, not asked for", trace.Event{FuncName: "s3.GetObject", Path: "/b/docs/a.txt", StatusCode: 200}, "", "", 0},
		{"outside the prefix", trace.Event{FuncName: "s3.PutObject", Path: "/b/other/a.txt", StatusCode: 200}, "", "", 0},
		{"another suffix", trace.Event{FuncName: "s3.PutObject", Path: "/b/docs/a.log", StatusCode: 200}, "", "", 0},
		{"another bucket of the same stem", trace.Event{FuncName: "s3.PutObject", Path: "/b2/docs/a.txt", StatusCode: 200}, "", "", 0},
		{"a listing", trace.Event{FuncName: "s3.ListObjectsV2", Path: "/b", StatusCode: 200}, "", "", 0},
	} {
		ev, ok := matchWatch(tc.ev, "/b/", "docs/", f)
		if ok != (tc.want != "") || ev.Event != tc.want || ev.Path != tc.key || ev.Size != tc.size {
			t.Errorf("%s: %+v %v, want %q %q size %d", tc.name, ev, ok, tc.want, tc.key, tc.size)
		}
	}
}
