package cli

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestShare(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "s1/bkt")
	e.must("pipe", "s1/bkt/doc.txt")
	if _, _, err := e.runIn("shared content", "pipe", "s1/bkt/doc.txt"); err != nil {
		t.Fatal(err)
	}
	var dl, ul string
	e.runSteps(t, []step{
		{name: "download", args: []string{"share", "download", "--expire", "1h", "s1/bkt/doc.txt"},
			want: []string{"URL: s1/bkt/doc.txt", "Expire: 0 days 1 hours 0 minutes 0 seconds", "Share: http"}},
		{name: "download json", args: []string{"share", "download", "--json", "--expire", "2h", "s1/bkt/doc.txt"}, check: func(t *testing.T, out string) {
			o := checkJSONStyle(t, out)
			dl, _ = o[0]["share"].(string)
			if o[0]["expireSeconds"] != float64(7200) || o[0]["shareType"] != "download" || !strings.Contains(dl, "X-Amz-Expires=7200") {
				t.Errorf("share download --json = %v", o)
			}
		}},
		{name: "upload json", args: []string{"share", "upload", "--json", "s1/bkt/up.txt"}, check: func(t *testing.T, out string) {
			o := checkJSONStyle(t, out)
			ul, _ = o[0]["share"].(string)
			if o[0]["shareType"] != "upload" || !strings.HasPrefix(o[0]["command"].(string), "curl -T <FILE> '") || o[0]["expire"] != "168h0m0s" {
				t.Errorf("share upload --json = %v", o)
			}
		}},
		{name: "expire too long", args: []string{"share", "download", "--expire", "200h", "s1/bkt/doc.txt"}, wantErr: "--expire"},
		{name: "no key", args: []string{"share", "download", "s1/bkt"}, wantErr: "want ALIAS/BUCKET/KEY"},
	})
	// The URLs work without credentials.
	resp, err := http.Get(dl)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "shared content" {
		t.Errorf("GET presigned: %s %q", resp.Status, body)
	}
	req, _ := http.NewRequest(http.MethodPut, ul, strings.NewReader("uploaded"))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || e.content(t, "bkt", "up.txt") != "uploaded" {
		t.Errorf("PUT presigned: %s", resp.Status)
	}
}
