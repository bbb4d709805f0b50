package cli

import (
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

func TestHead(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "s1/bkt")
	var b strings.Builder
	for i := range 50 {
		b.WriteString(strings.Repeat("x", i) + "\n")
	}
	body := b.String()
	if _, err := e.c.PutObject(t.Context(), "bkt", "log", strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	e.must("pipe", "s1/bkt/short") // empty object
	firstLines := func(n int) string {
		return strings.Join(strings.SplitAfter(body, "\n")[:n], "")
	}
	e.runSteps(t, []step{
		{name: "default 10 lines", args: []string{"head", "s1/bkt/log"}, check: func(t *testing.T, out string) {
			if out != firstLines(10) {
				t.Errorf("head = %q", out)
			}
		}},
		{name: "-n 3", args: []string{"head", "-n", "3", "s1/bkt/log"}, check: func(t *testing.T, out string) {
			if out != firstLines(3) {
				t.Errorf("head -n 3 = %q", out)
			}
		}},
		{name: "more lines than the object", args: []string{"head", "-n", "500", "s1/bkt/log"}, check: func(t *testing.T, out string) {
			if out != body {
				t.Errorf("head -n 500: %d bytes, want the whole %d", len(out), len(body))
			}
		}},
		{name: "empty object", args: []string{"head", "s1/bkt/short"}, check: func(t *testing.T, out string) {
			if out != "" {
				t.Errorf("head of empty = %q", out)
			}
		}},
		{name: "missing", args: []string{"head", "s1/bkt/nope"}, wantErr: "NoSuchKey"},
		{name: "negative", args: []string{"head", "-n", "-1", "s1/bkt/log"}, wantErr: "want 0 or more"},
	})
	out, _, err := e.runIn("", "head", "--json", "s1/bkt/nope")
	if objs := checkJSONStyle(t, out); err == nil || objs[0]["status"] != "error" || objs[0]["error"].(map[string]any)["code"] != "NoSuchKey" {
		t.Errorf("head --json missing: err %v out %v", err, objs)
	}
}
