package cli

import (
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

// putObjects writes each key with its value as the body.
func putObjects(t *testing.T, e siteEnv, bucket string, objs map[string]string) {
	t.Helper()
	for k, v := range objs {
		if _, err := e.c.PutObject(t.Context(), bucket, k, strings.NewReader(v), int64(len(v)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDUAndTree(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "--with-versioning", "s1/bkt")
	putObjects(t, e, "bkt", map[string]string{
		"top.txt": "12345", "a/one": "1", "a/x/two": "22", "a/x/three": "333", "b/four": "4444",
	})
	putObjects(t, e, "bkt", map[string]string{"b/four": "44"}) // a second version
	e.runSteps(t, []step{
		{name: "du total", args: []string{"du", "s1/bkt"}, check: func(t *testing.T, out string) {
			if strings.TrimSpace(out) != "13B\t5 objects\ts1/bkt" {
				t.Errorf("du = %q", out)
			}
		}},
		{name: "du depth", args: []string{"du", "--depth", "2", "s1/bkt"}, check: func(t *testing.T, out string) {
			want := "6B\t3 objects\ts1/bkt/a/x/\n" + "6B\t3 objects\ts1/bkt/a/\n" + "2B\t1 object\ts1/bkt/b/\n" + "13B\t5 objects\ts1/bkt\n"
			// a/x/ holds two and three: 5 bytes, 2 objects.
			want = strings.Replace(want, "6B\t3 objects\ts1/bkt/a/x/", "5B\t2 objects\ts1/bkt/a/x/", 1)
			if out != want {
				t.Errorf("du --depth 2 =\n%s\nwant\n%s", out, want)
			}
		}},
		{name: "du prefix versions json", args: []string{"du", "--versions", "--json", "s1/bkt/b"}, check: func(t *testing.T, out string) {
			o := checkJSONStyle(t, out)
			if len(o) != 1 || o[0]["size"] != float64(6) || o[0]["objects"] != float64(2) || o[0]["prefix"] != "s1/bkt/b/" {
				t.Errorf("du --versions --json = %v", o)
			}
		}},
		{name: "du missing bucket", args: []string{"du", "s1/nosuch"}, wantErr: "NoSuchBucket"},
		{name: "tree", args: []string{"tree", "s1/bkt"}, check: func(t *testing.T, out string) {
			want := "s1/bkt\n├─ a\n│  └─ x\n└─ b\n"
			if out != want {
				t.Errorf("tree =\n%s\nwant\n%s", out, want)
			}
		}},
		{name: "tree files depth", args: []string{"tree", "--files", "--depth", "2", "s1/bkt"}, check: func(t *testing.T, out string) {
			want := "s1/bkt\n├─ a\n│  ├─ one\n│  └─ x\n├─ b\n│  └─ four\n└─ top.txt\n"
			if out != want {
				t.Errorf("tree -f -d 2 =\n%s\nwant\n%s", out, want)
			}
		}},
		{name: "tree json", args: []string{"tree", "--files", "--json", "s1/bkt/a"}, check: func(t *testing.T, out string) {
			o := checkJSONStyle(t, out)
			if len(o) != 4 || o[0]["key"] != "s1/bkt/a/one" || o[0]["type"] != "file" || o[1]["key"] != "s1/bkt/a/x/" || o[1]["type"] != "folder" || o[2]["depth"] != float64(2) {
				t.Errorf("tree --json = %v", o)
			}
		}},
	})
}
