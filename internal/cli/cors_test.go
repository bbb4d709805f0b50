package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// cors set|get|remove drive the bucket's CORS configuration: set from XML
// or from JSON, get as XML or (--json) as JSON that set reads back, and the
// server answers a browser's preflight by what was set.
func TestCORSCommands(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "s1/webapp")
	dir := t.TempDir()
	xmlFile := writeFile(t, filepath.Join(dir, "cors.xml"), `<CORSConfiguration>
  <CORSRule>
    <ID>spa</ID>
    <AllowedOrigin>https://app.example.com</AllowedOrigin>
    <AllowedMethod>GET</AllowedMethod>
    <AllowedMethod>PUT</AllowedMethod>
    <AllowedHeader>*</AllowedHeader>
    <ExposeHeader>ETag</ExposeHeader>
    <MaxAgeSeconds>300</MaxAgeSeconds>
  </CORSRule>
</CORSConfiguration>`)

	if _, err := e.run("cors", "get", "s1/webapp"); err == nil || !strings.Contains(err.Error(), "no CORS configuration") {
		t.Fatalf("get before set: %v", err)
	}
	if out := e.must("cors", "set", "s1/webapp", xmlFile); !strings.Contains(out, "set (1 rules)") {
		t.Errorf("set printed %q", out)
	}
	out := e.must("cors", "get", "s1/webapp")
	for _, want := range []string{"<CORSConfiguration", "<ID>spa</ID>", "<AllowedOrigin>https://app.example.com</AllowedOrigin>", "<AllowedMethod>PUT</AllowedMethod>", "<MaxAgeSeconds>300</MaxAgeSeconds>"} {
		if !strings.Contains(out, want) {
			t.Errorf("get lacks %s:\n%s", want, out)
		}
	}
	preflight := func(origin, method string) int {
		req, _ := http.NewRequest(http.MethodOptions, e.site.URL+"/webapp/index.html", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", method)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := preflight("https://app.example.com", "PUT"); st != 200 {
		t.Errorf("preflight after set: %d", st)
	}

	// --json gives the AWS CLI's shape, which set takes back.
	var j struct {
		CORSRules []struct {
			ID             string
			AllowedOrigins []string
			AllowedMethods []string
			MaxAgeSeconds  int
		}
	}
	js := e.must("cors", "get", "--json", "s1/webapp")
	if err := json.Unmarshal([]byte(js), &j); err != nil || len(j.CORSRules) != 1 || j.CORSRules[0].ID != "spa" || j.CORSRules[0].MaxAgeSeconds != 300 {
		t.Fatalf("get --json: %s %v", js, err)
	}
	jsonFile := writeFile(t, filepath.Join(dir, "cors.json"),
		`{"CORSRules":[{"AllowedOrigins":["https://*.example.org"],"AllowedMethods":["get","HEAD"]}]}`)
	e.must("cors", "set", "s1/webapp", jsonFile)
	if st := preflight("https://app.example.com", "PUT"); st != 403 {
		t.Errorf("preflight for the replaced rule: %d", st)
	}
	if st := preflight("https://cdn.example.org", "GET"); st != 200 {
		t.Errorf("preflight for the JSON rule: %d", st)
	}
	e.must("cors", "set", "s1/webapp", writeFile(t, filepath.Join(dir, "back.json"), js))
	if st := preflight("https://app.example.com", "PUT"); st != 200 {
		t.Errorf("preflight after setting get --json's output back: %d", st)
	}

	// What the server refuses comes back with its code; bad files never
	// reach it.
	bad := writeFile(t, filepath.Join(dir, "bad.xml"), `<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod></CORSRule></CORSConfiguration>`)
	if _, err := e.run("cors", "set", "s1/webapp", bad); err == nil || !strings.Contains(err.Error(), "InvalidRequest") && !strings.Contains(err.Error(), "unsupported HTTP method") {
		t.Errorf("set with PATCH: %v", err)
	}
	typo := writeFile(t, filepath.Join(dir, "typo.json"), `{"CORSRules":[{"AllowedOrigin":["*"],"AllowedMethods":["GET"]}]}`)
	if _, err := e.run("cors", "set", "s1/webapp", typo); err == nil || !strings.Contains(err.Error(), "AllowedOrigin") {
		t.Errorf("set with a misspelt JSON field: %v", err)
	}

	if out := e.must("cors", "remove", "--json", "s1/webapp"); !strings.Contains(out, `"status":"removed"`) {
		t.Errorf("remove --json printed %q", out)
	}
	if st := preflight("https://app.example.com", "PUT"); st != 403 {
		t.Errorf("preflight after remove: %d", st)
	}
	if _, err := e.run("cors", "remove", "s1/webapp"); err == nil || !strings.Contains(err.Error(), "NoSuchCORSConfiguration") && !strings.Contains(err.Error(), "CORS configuration does not exist") {
		t.Errorf("remove of none: %v", err)
	}
}
