package cli

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/twinlake/twinlake/internal/app"
	"github.com/twinlake/twinlake/internal/testsite"
)

// promScrape is the part of a Prometheus scrape configuration generate
// writes.
type promScrape struct {
	ScrapeConfigs []struct {
		JobName       string `yaml:"job_name"`
		MetricsPath   string `yaml:"metrics_path"`
		Scheme        string `yaml:"scheme"`
		Authorization *struct {
			Type            string `yaml:"type"`
			Credentials     string `yaml:"credentials"`
			CredentialsFile string `yaml:"credentials_file"`
		} `yaml:"authorization"`
		StaticConfigs []struct {
			Targets []string `yaml:"targets"`
		} `yaml:"static_configs"`
	} `yaml:"scrape_configs"`
}

// TestAdminPrometheus generates a scrape configuration for a real site and
// scrapes the site the way Prometheus would with it, then prints the metrics
// as root and as a user who may not read them.
func TestAdminPrometheus(t *testing.T) {
	const token = `tok"en: with # yaml specials`
	site := testsite.Start(t, testsite.WithApp(func(c *app.Config) { c.MetricsToken = token }))
	e := newCLIEnv(t)
	e.must("alias", "set", "site", site.URL, site.AccessKey, site.SecretKey)
	t.Setenv("TWINLAKE_METRICS_TOKEN", "")

	cfg := generated(t, e, "admin", "prometheus", "generate", "site", "--token", token)
	sc := cfg.ScrapeConfigs[0]
	if sc.JobName != "twinlake-site" || sc.MetricsPath != "/twinlake/metrics" || sc.Scheme != "http" ||
		len(sc.StaticConfigs) != 1 || len(sc.StaticConfigs[0].Targets) != 1 || sc.StaticConfigs[0].Targets[0] != site.Addr ||
		sc.Authorization == nil || sc.Authorization.Type != "Bearer" || sc.Authorization.Credentials != token {
		t.Fatalf("generate: %+v", sc)
	}
	if status := bearerScrape(t, sc.Scheme+"://"+sc.StaticConfigs[0].Targets[0]+sc.MetricsPath, sc.Authorization.Credentials); status != http.StatusOK {
		t.Fatalf("scrape with the generated configuration: HTTP %d", status)
	}
	if status := bearerScrape(t, site.URL+"/twinlake/metrics", "wrong"); status != http.StatusUnauthorized {
		t.Fatalf("scrape with a wrong token: HTTP %d", status)
	}
	checkPromConfig(t, e, "site", "--token", token)

	// The token comes from the client's environment, a file, or nowhere.
	t.Setenv("TWINLAKE_METRICS_TOKEN", "from-env")
	if got := generated(t, e, "admin", "prometheus", "generate", "site", "--job", "dr").ScrapeConfigs[0]; got.JobName != "dr" ||
		got.Authorization.Credentials != "from-env" {
		t.Fatalf("generate with $TWINLAKE_METRICS_TOKEN: %+v", got)
	}
	t.Setenv("TWINLAKE_METRICS_TOKEN", "")
	if got := generated(t, e, "admin", "prometheus", "generate", "site", "--token-file", "/etc/prom/tl.token").ScrapeConfigs[0]; got.Authorization.CredentialsFile != "/etc/prom/tl.token" ||
		got.Authorization.Credentials != "" {
		t.Fatalf("generate --token-file: %+v", got.Authorization)
	}
	if got := generated(t, e, "admin", "prometheus", "generate", "site", "--public").ScrapeConfigs[0]; got.Authorization != nil {
		t.Fatalf("generate --public has authorization: %+v", got.Authorization)
	}
	out, errOut, err := e.runIn("", "admin", "prometheus", "generate", "site")
	if err != nil || !strings.Contains(out, "REPLACE-WITH-TWINLAKE_METRICS_TOKEN") || !strings.Contains(errOut, "replace "+"REPLACE-WITH-TWINLAKE_METRICS_TOKEN") {
		t.Fatalf("generate without a token: %v\n%s\nstderr: %s", err, out, errOut)
	}
	e.must("alias", "set", "tls", "https://lake.example.com", "k", "secret-key")
	if got := generated(t, e, "admin", "prometheus", "generate", "tls", "--public").ScrapeConfigs[0]; got.Scheme != "https" ||
		got.StaticConfigs[0].Targets[0] != "lake.example.com:443" {
		t.Fatalf("generate for an https alias without a port: %+v", got)
	}

	e.must("mb", "site/prombkt")
	e.must("admin", "user", "add", "site", "alice", "alice-secret")
	e.must("alias", "set", "alice", site.URL, "alice", "alice-secret")
	e.runCasesCLI(t, []adminCase{
		{name: "metrics as root", args: []string{"admin", "prometheus", "metrics", "site"}, want: []string{
			"# TYPE twinlake_s3_requests_total counter", `twinlake_s3_requests_total{api="CreateBucket",code="200"} 1`,
			"twinlake_replication_received_objects_total 0", "twinlake_tables_scanner_state{state=",
		}},
		{name: "metrics denied", args: []string{"admin", "prometheus", "metrics", "alice"}, wantErr: "HTTP 403"},
		{name: "metrics no alias", args: []string{"admin", "prometheus", "metrics", "nope"}, wantErr: "no such alias"},
		{name: "generate exclusive flags", args: []string{"admin", "prometheus", "generate", "site", "--public", "--token", "x"},
			wantErr: "none of the others can be"},
	})
	e.must("admin", "policy", "attach", "site", "diagnostics", "--user", "alice")
	e.runCasesCLI(t, []adminCase{{name: "metrics as diagnostics user", args: []string{"admin", "prometheus", "metrics", "alice"},
		want: []string{"twinlake_s3_requests_total"}}})
}

// runCasesCLI runs admin cases against a real site's aliases.
func (e cliEnv) runCasesCLI(t *testing.T, cases []adminCase) {
	t.Helper()
	adminEnv{cliEnv: e}.runCases(t, cases)
}

// generated runs a generate command line and parses its YAML.
func generated(t *testing.T, e cliEnv, args ...string) promScrape {
	t.Helper()
	out := e.must(args...)
	var cfg promScrape
	if err := yaml.Unmarshal([]byte(out), &cfg); err != nil || len(cfg.ScrapeConfigs) != 1 {
		t.Fatalf("%s: not one scrape config (%v):\n%s", strings.Join(args, " "), err, out)
	}
	return cfg
}

// bearerScrape GETs url with a bearer token and returns the status.
func bearerScrape(t *testing.T, url, token string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// checkPromConfig has promtool, when installed, check the generated
// configuration as a whole prometheus.yml.
func checkPromConfig(t *testing.T, e cliEnv, args ...string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool not on PATH: the generated configuration is not checked by promtool")
		return
	}
	p := filepath.Join(t.TempDir(), "prometheus.yml")
	out := e.must(append([]string{"admin", "prometheus", "generate"}, args...)...)
	if err := os.WriteFile(p, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	if res, err := exec.Command(promtool, "check", "config", p).CombinedOutput(); err != nil {
		t.Fatalf("promtool check config: %v\n%s\n%s", err, res, out)
	}
}
