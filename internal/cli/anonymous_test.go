package cli

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestAnonymousCommands sets canned anonymous access with the CLI and
// checks it with plain unauthenticated HTTP.
func TestAnonymousCommands(t *testing.T) {
	site := testsite.Start(t)
	e := adminEnv{cliEnv: newCLIEnv(t)}
	e.must("alias", "set", "s1", site.URL, site.AccessKey, site.SecretKey)
	e.must("mb", "s1/media")
	src := filepath.Join(t.TempDir(), "a.txt")
	os.WriteFile(src, []byte("pixels"), 0o600)
	e.must("cp", src, "s1/media/public/a.txt")
	e.must("cp", src, "s1/media/private/a.txt")
	get := func(path string) int {
		resp, err := http.Get(site.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("/media/public/a.txt"); code != 403 {
		t.Fatalf("anonymous GET before: %d", code)
	}
	e.runCases(t, []adminCase{
		{name: "set download", args: []string{"anonymous", "set", "download", "s1/media/public/"}, want: []string{"is set to `download`"}},
		{name: "set upload (target first)", args: []string{"anonymous", "set", "s1/media/inbox/", "upload"}},
		{name: "set bad level", args: []string{"anonymous", "set", "everyone", "s1/media/x/"}, wantErr: "not none, download, upload or public"},
		{name: "get", args: []string{"anonymous", "get", "s1/media/public/"}, want: []string{"is `download`"}},
		{name: "get none", args: []string{"anonymous", "get", "s1/media/private/"}, want: []string{"is `none`"}},
		{name: "list", args: []string{"anonymous", "list", "s1/media"}, want: []string{"s1/media/public/* => download", "s1/media/inbox/* => upload"}},
	})
	if code := get("/media/public/a.txt"); code != 200 {
		t.Fatalf("anonymous GET after download: %d", code)
	}
	if code := get("/media/private/a.txt"); code != 403 {
		t.Fatalf("anonymous GET of a private key: %d", code)
	}
	req, _ := http.NewRequest(http.MethodPut, site.URL+"/media/inbox/drop.txt", strings.NewReader("hi"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("anonymous PUT to the upload prefix: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	e.must("anonymous", "set", "none", "s1/media/public/")
	if code := get("/media/public/a.txt"); code != 403 {
		t.Fatalf("anonymous GET after none: %d", code)
	}
	if out := e.must("anonymous", "list", "s1/media"); strings.Contains(out, "public") {
		t.Fatalf("list after none:\n%s", out)
	}
}
