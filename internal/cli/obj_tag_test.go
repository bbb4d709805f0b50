package cli

import (
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

func TestTag(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "--with-versioning", "s1/bkt")
	put := func(body string) string {
		info, err := e.c.PutObject(t.Context(), "bkt", "k", strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return info.VersionID
	}
	v1 := put("one")
	put("two")
	e.runSteps(t, []step{
		{name: "set object", args: []string{"tag", "set", "s1/bkt/k", "owner=ana&project=zoo"}, want: []string{"Tags set for s1/bkt/k."}},
		{name: "list object", args: []string{"tag", "list", "s1/bkt/k"}, want: []string{"Name : s1/bkt/k", "owner : ana", "project : zoo"}},
		{name: "list object json", args: []string{"tag", "list", "--json", "s1/bkt/k"}, check: func(t *testing.T, out string) {
			o := checkJSONStyle(t, out)
			ts, _ := o[0]["tagset"].(map[string]any)
			if len(o) != 1 || ts["owner"] != "ana" || ts["project"] != "zoo" {
				t.Errorf("tag list --json = %v", o)
			}
		}},
		{name: "old version untagged", args: []string{"tag", "list", "--version-id", v1, "s1/bkt/k"}, want: []string{"(no tags)"}},
		{name: "set old version", args: []string{"tag", "set", "--version-id", v1, "s1/bkt/k", "old=yes"}},
		{name: "list old version", args: []string{"tag", "list", "--version-id", v1, "s1/bkt/k"}, want: []string{"old : yes"}},
		{name: "remove object", args: []string{"tag", "remove", "s1/bkt/k"}, want: []string{"Tags removed for s1/bkt/k."},
			check: func(t *testing.T, _ string) {
				tg, err := e.c.GetObjectTagging(t.Context(), "bkt", "k", minio.GetObjectTaggingOptions{})
				if err != nil || len(tg.ToMap()) != 0 {
					t.Errorf("tags after remove: %v, %v", tg, err)
				}
			}},
		{name: "bucket untagged", args: []string{"tag", "list", "s1/bkt"}, want: []string{"(no tags)"}},
		{name: "set bucket", args: []string{"tag", "set", "--json", "s1/bkt", "cost-center=42"}, check: func(t *testing.T, out string) {
			checkJSONStyle(t, out)
			tg, err := e.c.GetBucketTagging(t.Context(), "bkt")
			if err != nil || tg.ToMap()["cost-center"] != "42" {
				t.Errorf("bucket tags %v, %v", tg, err)
			}
		}},
		{name: "list bucket", args: []string{"tag", "list", "s1/bkt"}, want: []string{"cost-center : 42"}},
		{name: "remove bucket", args: []string{"tag", "remove", "s1/bkt"}},
		{name: "bucket untagged again", args: []string{"tag", "list", "s1/bkt"}, want: []string{"(no tags)"}},
		{name: "bad tags", args: []string{"tag", "set", "s1/bkt/k", "=novalue"}, wantErr: "tags"},
		{name: "missing object", args: []string{"tag", "list", "s1/bkt/nope"}, wantErr: "NoSuchKey"},
		{name: "version id on bucket", args: []string{"tag", "list", "--version-id", v1, "s1/bkt"}, wantErr: "names a bucket"},
	})
}
