package monitoring

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"gopkg.in/yaml.v3"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/testsite"
)

// kit is where the monitoring kit lives, relative to this package.
const kit = "../../docs/monitoring"

// metricName finds metric names in PromQL; twinlake's all start so.
var metricName = regexp.MustCompile(`\btwinlake_[a-zA-Z0-9_]+`)

// histogramSuffixes are the series a histogram family exposes.
var histogramSuffixes = []string{"_bucket", "_sum", "_count"}

// ruleFile is the part of a Prometheus rule file the checks read.
type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// ruleTests is the part of a promtool rule test file the checks read.
type ruleTests struct {
	Tests []struct {
		InputSeries []struct {
			Series string `yaml:"series"`
		} `yaml:"input_series"`
		AlertRuleTest []struct {
			Alertname string `yaml:"alertname"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

func readYAML(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(kit, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// dashboardExprs returns every PromQL expression of the dashboard: panel
// targets (rows included) and query variables, by where they are.
func dashboardExprs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(kit, "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels     []dashPanel `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	exprs := map[string]string{}
	var walk func([]dashPanel)
	walk = func(ps []dashPanel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				exprs[fmt.Sprintf("panel %q target %s", p.Title, tg.RefID)] = tg.Expr
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		switch q := v.Query.(type) {
		case string:
			exprs["variable "+v.Name] = q
		case map[string]any:
			exprs["variable "+v.Name], _ = q["query"].(string)
		}
	}
	return exprs
}

type dashPanel struct {
	Title   string `json:"title"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []dashPanel `json:"panels"`
}

// ruleExprs returns every alert rule's expression by alert name.
func ruleExprs(t *testing.T) map[string]string {
	t.Helper()
	var rf ruleFile
	readYAML(t, "alerts.yml", &rf)
	exprs := map[string]string{}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			exprs["alert "+r.Alert] = r.Expr
		}
	}
	return exprs
}

// families parses the metric families (name and type) out of a text-format
// scrape.
func families(scrape string) map[string]string {
	fams := map[string]string{}
	for _, line := range strings.Split(scrape, "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			fams[f[2]] = f[3]
		}
	}
	return fams
}

// exported reports whether name is a series of an exported family: the
// family itself, or a histogram's _bucket, _sum or _count.
func exported(fams map[string]string, name string) bool {
	if _, ok := fams[name]; ok {
		return true
	}
	for _, s := range histogramSuffixes {
		if base, ok := strings.CutSuffix(name, s); ok && fams[base] == "histogram" {
			return true
		}
	}
	return false
}

func TestExported(t *testing.T) {
	fams := map[string]string{"twinlake_a_seconds": "histogram", "twinlake_b_total": "counter"}
	for name, want := range map[string]bool{
		"twinlake_a_seconds_bucket": true, "twinlake_a_seconds_count": true, "twinlake_a_seconds": true,
		"twinlake_b_total": true, "twinlake_b_total_count": false, "twinlake_c": false,
	} {
		if got := exported(fams, name); got != want {
			t.Errorf("exported(%s) = %v, want %v", name, got, want)
		}
	}
	if got := metricName.FindAllString(`sum by (le) (rate(twinlake_a_seconds_bucket{x="twinlake"}[5m])) / twinlake_b_total`, -1); !slices.Equal(got,
		[]string{"twinlake_a_seconds_bucket", "twinlake_b_total"}) {
		t.Errorf("metric names: %v", got)
	}
}

// TestKitMetricsExported starts a primary and a Tables replica, drives S3,
// catalog, replication (a drop and a mismatch included) and the scanner so
// that every family has a series, scrapes both sites, and checks that each
// metric the dashboard and the alert rules (and their tests) use exists.
func TestKitMetricsExported(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two sites")
	}
	exprs := dashboardExprs(t)
	for k, v := range ruleExprs(t) {
		exprs[k] = v
	}
	var rt ruleTests
	readYAML(t, "alerts_test.yml", &rt)
	for i, tc := range rt.Tests {
		for j, s := range tc.InputSeries {
			exprs[fmt.Sprintf("alerts_test.yml test %d series %d", i, j)] = s.Series
		}
	}
	if len(exprs) < 30 {
		t.Fatalf("only %d expressions found in the kit", len(exprs))
	}

	fams := map[string]string{}
	for _, s := range livePair(t) {
		scrape, err := testsite.Scrape(s.Site, "", "")
		if err != nil {
			t.Fatal(err)
		}
		for name, typ := range families(scrape) {
			fams[name] = typ
		}
	}
	used := 0
	for where, expr := range exprs {
		for _, name := range metricName.FindAllString(expr, -1) {
			used++
			if !exported(fams, name) {
				t.Errorf("%s uses %s, which neither site exports", where, name)
			}
		}
	}
	if used < 40 {
		t.Fatalf("only %d metric uses found in the kit", used)
	}
}

// livePair starts site1 (primary) and site2 (Tables replica) and makes
// every metric family of both appear.
func livePair(t *testing.T) []*testsite.Member {
	t.Helper()
	ctx := context.Background()
	m := testsite.StartSites(t, 2, map[string]string{"retry_base_delay": "20ms", "retry_max_delay": "50ms", "max_retries": "1"}, nil)
	primary, replica := m.Sites[0], m.Sites[1]
	if err := replica.Server().Settings().Set(ctx, "tables", map[string]string{
		"replica_catalog": "on", "replica_catalog_scan_interval": "200ms"}); err != nil {
		t.Fatal(err)
	}
	m.Join(t)
	s3p, s3r := s3Client(t, primary), s3Client(t, replica)

	// S3 traffic, an error included.
	if err := s3p.MakeBucket(ctx, "drops", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s3p.StatObject(ctx, "drops", "absent", minio.StatObjectOptions{}); err == nil {
		t.Fatal("stat of an absent object succeeded")
	}
	testsite.Eventually(t, 10*time.Second, func() error { _, err := s3r.GetBucketVersioning(ctx, "drops"); return err })

	// A drop: the bucket vanishes on the replica behind replication's
	// back, so sends fail until max_retries drops them; mismatch detection
	// then finds the versions missing.
	if _, err := replica.Server().Replication().ReceiveBucket(ctx, objects.Bucket{Name: "drops"}, true, time.Now().Add(time.Hour).UnixNano()); err != nil {
		t.Fatal(err)
	}
	if _, err := s3p.PutObject(ctx, "drops", "k", strings.NewReader("v"), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 20*time.Second, func() error { return hasFamily(primary, "twinlake_replication_dropped_objects_total") })
	testsite.Eventually(t, 20*time.Second, func() error {
		if _, err := primary.Server().Replication().CheckMismatches(ctx); err != nil {
			return err
		}
		return hasFamily(primary, "twinlake_replication_mismatches_total")
	})

	// The catalog: a warehouse, a table, a commit and a conflict, which the
	// replica's scanner then verifies.
	adm, err := adminclient.New(primary.URL, adminclient.Credentials{AccessKey: primary.AccessKey, SecretKey: primary.SecretKey}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateWarehouse(ctx, "lake", adminclient.WarehouseCreateRequest{}); err != nil {
		t.Fatal(err)
	}
	cat, err := adminclient.NewCatalog(primary.URL, "lake", adminclient.Credentials{AccessKey: primary.AccessKey, SecretKey: primary.SecretKey}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ns := []string{"ops"}
	if _, err := cat.CreateNamespace(ctx, ns, nil); err != nil {
		t.Fatal(err)
	}
	id := adminclient.CatalogIdent{Namespace: ns, Name: "events"}
	schema := json.RawMessage(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":false,"type":"long"}]}`)
	if _, err := cat.CreateTable(ctx, ns, adminclient.CatalogCreateTable{Name: id.Name, Schema: schema}); err != nil {
		t.Fatal(err)
	}
	setProps := json.RawMessage(`[{"action":"set-properties","updates":{"owner":"ops"}}]`)
	if _, err := cat.CommitTable(ctx, id, json.RawMessage(`[]`), setProps); err != nil {
		t.Fatal(err)
	}
	stale := json.RawMessage(`[{"type":"assert-table-uuid","uuid":"00000000-0000-0000-0000-000000000000"}]`)
	if _, err := cat.CommitTable(ctx, id, stale, setProps); err == nil {
		t.Fatal("a commit with a failed requirement succeeded")
	}
	testsite.Eventually(t, 30*time.Second, func() error {
		if n := len(replica.Server().Scanner().Status(0, 0).Entries); n == 0 {
			return fmt.Errorf("the replica's scanner has seen no table yet")
		}
		return nil
	})
	testsite.Eventually(t, 10*time.Second, func() error { return hasFamily(primary, "twinlake_replication_link_latency_seconds") })
	return m.Sites
}

func s3Client(t *testing.T, s *testsite.Member) *minio.Client {
	t.Helper()
	c, err := minio.New(s.Addr, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hasFamily reports nil once a site's scrape has a family.
func hasFamily(s *testsite.Member, name string) error {
	scrape, err := testsite.Scrape(s.Site, "", "")
	if err != nil {
		return err
	}
	if _, ok := families(scrape)[name]; !ok {
		return fmt.Errorf("%s: no %s yet", s.Name, name)
	}
	return nil
}

// TestRunbookLinks: every alert has a summary and a runbook link to a
// heading of the operator guide, and a promtool test exercises it.
func TestRunbookLinks(t *testing.T) {
	guide, err := os.ReadFile("../../docs/operator-guide.md")
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, line := range strings.Split(string(guide), "\n") {
		if h, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
			anchors[slug(h)] = true
		}
	}
	var rt ruleTests
	readYAML(t, "alerts_test.yml", &rt)
	tested := map[string]bool{}
	for _, tc := range rt.Tests {
		for _, a := range tc.AlertRuleTest {
			tested[a.Alertname] = true
		}
	}
	var rf ruleFile
	readYAML(t, "alerts.yml", &rf)
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			link := r.Annotations["runbook_url"]
			file, anchor, _ := strings.Cut(link, "#")
			if file != "docs/operator-guide.md" || !anchors[anchor] {
				t.Errorf("alert %s: runbook_url %q is not a heading of docs/operator-guide.md", r.Alert, link)
			}
			if r.Annotations["summary"] == "" {
				t.Errorf("alert %s has no summary", r.Alert)
			}
			if !tested[r.Alert] {
				t.Errorf("alert %s has no test in alerts_test.yml", r.Alert)
			}
		}
	}
}

// slug is the anchor GitHub gives a Markdown heading.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9'):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestPromtool checks the rules and runs their unit tests with promtool
// (Debian's prometheus package, installed by .ci/run). Without promtool it
// fails in CI and skips elsewhere.
func TestPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is not on PATH: .ci/run installs Debian's prometheus package, which has it")
		}
		t.Skip("promtool is not on PATH (apt-get install prometheus): the alert rules are not checked")
	}
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = kit
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
