package cli

import (
	"crypto/rand"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

func TestPipeAndCopyStdin(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "s1/bkt")
	// Larger than one 16MiB part: both go up as multipart uploads.
	big := make([]byte, 20<<20)
	rand.Read(big)
	roundTrip := func(key string) func(t *testing.T, out string) {
		return func(t *testing.T, out string) {
			if got := e.content(t, "bkt", key); got != string(big) {
				t.Fatalf("%s: %d bytes back, want the 20MiB written", key, len(got))
			}
			info, err := e.c.StatObject(t.Context(), "bkt", key, minio.StatObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(info.ETag, "-") {
				t.Errorf("%s: ETag %q is not a multipart ETag", key, info.ETag)
			}
		}
	}
	e.runSteps(t, []step{
		{name: "pipe 20MiB", args: []string{"pipe", "s1/bkt/piped.bin"}, stdin: string(big), check: func(t *testing.T, out string) {
			if out != "" {
				t.Errorf("pipe printed %q, want nothing", out)
			}
			roundTrip("piped.bin")(t, out)
		}},
		{name: "cp stdin 20MiB", args: []string{"cp", "--json", "-", "s1/bkt/copied.bin"}, stdin: string(big), check: func(t *testing.T, out string) {
			objs := jsonLines(t, out)
			if len(objs) != 1 || objs[0]["status"] != "success" || objs[0]["source"] != "-" || objs[0]["size"] != float64(20<<20) {
				t.Errorf("cp - --json = %v", objs)
			}
			roundTrip("copied.bin")(t, out)
		}},
		{name: "pipe small with attrs and tags", args: []string{"pipe", "--json", "--attr", "Content-Type=text/plain;owner=ana", "--tags", "team=data&env=prod", "s1/bkt/hello.txt"},
			stdin: "hello\n", want: []string{`"status":"success"`, `"size":6`},
			check: func(t *testing.T, _ string) {
				info, err := e.c.StatObject(t.Context(), "bkt", "hello.txt", minio.StatObjectOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if e.content(t, "bkt", "hello.txt") != "hello\n" || info.ContentType != "text/plain" || info.UserMetadata["Owner"] != "ana" {
					t.Errorf("hello.txt: type %q meta %v", info.ContentType, info.UserMetadata)
				}
				tg, err := e.c.GetObjectTagging(t.Context(), "bkt", "hello.txt", minio.GetObjectTaggingOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if m := tg.ToMap(); m["team"] != "data" || m["env"] != "prod" {
					t.Errorf("tags = %v", m)
				}
			}},
		{name: "cp stdin human", args: []string{"cp", "-", "s1/bkt/h2.txt"}, stdin: "hi", want: []string{"`-` -> `s1/bkt/h2.txt` (2B)"}},
		{name: "pipe empty stdin", args: []string{"pipe", "s1/bkt/empty"}, check: func(t *testing.T, _ string) {
			if got := e.content(t, "bkt", "empty"); got != "" {
				t.Errorf("empty = %q", got)
			}
		}},
		{name: "pipe to folder", args: []string{"pipe", "s1/bkt/dir/"}, wantErr: "needs an object name"},
		{name: "pipe no key", args: []string{"pipe", "s1/bkt"}, wantErr: "want ALIAS/BUCKET/KEY"},
		{name: "pipe missing bucket", args: []string{"pipe", "s1/nosuch/k"}, stdin: "x", wantErr: "NoSuchBucket"},
		{name: "pipe error json", args: []string{"pipe", "--json", "s1/nosuch/k"}, stdin: "x", wantErr: "NoSuchBucket"},
		{name: "cp stdin recursive", args: []string{"cp", "-r", "-", "s1/bkt/x"}, wantErr: "standard input is one object"},
	})
	out, _, err := e.runIn("x", "pipe", "--json", "s1/nosuch/k")
	objs := jsonLines(t, out)
	if err == nil || len(objs) != 1 || objs[0]["status"] != "error" || objs[0]["error"].(map[string]any)["code"] != "NoSuchBucket" {
		t.Errorf("pipe --json to a missing bucket: err %v, out %v", err, objs)
	}
}
