package cli

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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
	var dl, prefixCmd string
	var ulURL string
	var ulForm []any
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
			ulURL, _ = o[0]["postURL"].(string)
			ulForm, _ = o[0]["formData"].([]any)
			if o[0]["shareType"] != "upload" || o[0]["share"] != o[0]["command"] || !strings.HasPrefix(o[0]["share"].(string), "curl http") ||
				!strings.HasSuffix(o[0]["share"].(string), " -F file=@<FILE>") || o[0]["expire"] != "168h0m0s" || len(ulForm) < 6 {
				t.Errorf("share upload --json = %v", o)
			}
		}},
		{name: "upload", args: []string{"share", "upload", "--expire", "10m", "--content-type", "text/plain", "s1/bkt/inbox/"}, check: func(t *testing.T, out string) {
			_, prefixCmd, _ = strings.Cut(out, "Share: ")
			prefixCmd = strings.TrimSpace(prefixCmd)
			for _, want := range []string{"URL: s1/bkt/inbox/", "Expire: 0 days 0 hours 10 minutes 0 seconds", "-F policy=", "-F x-amz-signature=", "-F 'key=inbox/${filename}'", "-F Content-Type=text/plain"} {
				if !strings.Contains(out, want) {
					t.Errorf("share upload output lacks %q:\n%s", want, out)
				}
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
	// The upload form works without credentials: its fields, then the file.
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range ulForm {
		m := f.(map[string]any)
		mw.WriteField(m["name"].(string), m["value"].(string))
	}
	fw, _ := mw.CreateFormFile("file", "local.txt")
	fw.Write([]byte("uploaded"))
	mw.Close()
	resp, err = http.Post(ulURL, mw.FormDataContentType(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || e.content(t, "bkt", "up.txt") != "uploaded" {
		t.Errorf("POST upload form: %s", resp.Status)
	}
	// The printed command itself, run by a shell with curl: the file keeps
	// its name under the shared prefix.
	if _, err := exec.LookPath("curl"); err != nil {
		t.Log("no curl: the printed command was not run")
		return
	}
	file := filepath.Join(t.TempDir(), "photo.txt")
	if err := os.WriteFile(file, []byte("through curl"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := strings.Replace(prefixCmd, "<FILE>", file, 1) + " --fail --silent --show-error"
	if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v %s", cmd, err, out)
	}
	if got := e.content(t, "bkt", "inbox/photo.txt"); got != "through curl" {
		t.Errorf("curl upload stored %q", got)
	}
}
