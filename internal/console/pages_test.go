package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/chromedp/chromedp"
	"github.com/minio/minio-go/v7"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
	"github.com/twinlake/twinlake/internal/testsite/icetest"
)

func s3For(t *testing.T, s *testsite.Site, ak, sk string) *minio.Client {
	t.Helper()
	c, err := minio.New(s.Addr, &minio.Options{Creds: miniocreds.NewStaticV4(ak, sk, ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func adminFor(t *testing.T, s *testsite.Site) *adminclient.Client {
	t.Helper()
	c, err := adminclient.New(s.URL, adminclient.Credentials{AccessKey: s.AccessKey, SecretKey: s.SecretKey}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBrowserSitesLinkCutAndFailover signs in to a two-site pair (site2 the
// Tables replica), cuts the link and watches backlog and lag rise on the
// Sites page, restores it and watches them fall, then fails over from the
// Tables DR page of site2 and sees the roles swap.
func TestBrowserSitesLinkCutAndFailover(t *testing.T) {
	ctx := context.Background()
	mesh := testsite.StartSites(t, 2, map[string]string{"retry_base_delay": "50ms", "retry_max_delay": "300ms"}, nil)
	site1, site2 := mesh.Sites[0], mesh.Sites[1]
	for _, s := range mesh.Sites {
		if err := s.Server().Settings().Set(ctx, "tables", map[string]string{"replica_catalog_scan_interval": "200ms"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := site2.Server().Settings().Set(ctx, "tables", map[string]string{"replica_catalog": "on"}); err != nil {
		t.Fatal(err)
	}
	mesh.Join(t)
	adm1 := adminFor(t, site1.Site)
	if _, err := adm1.CreateWarehouse(ctx, "lake", adminclient.WarehouseCreateRequest{}); err != nil {
		t.Fatal(err)
	}
	cat, err := adminclient.NewCatalog(site1.URL, "lake", adminclient.Credentials{AccessKey: site1.AccessKey, SecretKey: site1.SecretKey}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateNamespace(ctx, []string{"sales"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateTable(ctx, []string{"sales"}, adminclient.CatalogCreateTable{Name: "orders",
		Schema: json.RawMessage(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},{"id":2,"name":"name","required":false,"type":"string"}]}`)}); err != nil {
		t.Fatal(err)
	}
	s3 := s3For(t, site1.Site, site1.AccessKey, site1.SecretKey)
	if err := s3.MakeBucket(ctx, "photos", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}

	p := newPage(t, 50*time.Second)
	p.signIn(site1.URL, site1.AccessKey, site1.SecretKey)
	p.waitText(`#sites tr[data-site="site2"] .role`, 10*time.Second, contains("Tables replica"))
	p.waitText(`#sites tr[data-site="site1"] .role`, 5*time.Second, func(s string) bool { return s == "primary" })
	p.waitText(`#links tr[data-link="site2"] .backlog`, 10*time.Second, func(s string) bool { return s == "0" })
	p.screenshot("sites-pair")

	// Cut site1 -> site2 and write: the page shows backlog and lag rising.
	site2.Proxy.Cut()
	for i := range 5 {
		if _, err := s3.PutObject(ctx, "photos", fmt.Sprintf("cut-%d.jpg", i), bytes.NewReader([]byte("pixels")), 6, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p.waitText(`#links tr[data-link="site2"] .backlog`, 10*time.Second, func(s string) bool { n, _ := strconv.Atoi(s); return n >= 5 })
	lagOf := func() float64 {
		var v string
		p.eval(`(document.querySelector('#links tr[data-link="site2"] .lag') || {dataset: {}}).dataset.seconds || "0"`, &v)
		f, _ := strconv.ParseFloat(v, 64)
		return f
	}
	testsite.Eventually(t, 10*time.Second, func() error {
		if l := lagOf(); l < 2 {
			return fmt.Errorf("lag %v s on the page", l)
		}
		return nil
	})
	p.waitText(`#sites tr[data-site="site2"] .health`, 10*time.Second, contains("unreachable"))
	var points int
	p.eval(`document.querySelectorAll("#charts polyline.lag")[0].getAttribute("points").split(" ").length`, &points)
	if points < 3 {
		t.Fatalf("chart has %d points after several polls", points)
	}
	p.assertLabelled("sites page")
	p.screenshot("link-cut")

	// Restore: backlog and lag fall to zero.
	site2.Proxy.Restore()
	p.waitText(`#links tr[data-link="site2"] .backlog`, 20*time.Second, func(s string) bool { return s == "0" })
	testsite.Eventually(t, 10*time.Second, func() error {
		if l := lagOf(); l != 0 {
			return fmt.Errorf("lag %v s on the page", l)
		}
		return nil
	})
	p.waitText(`#sites tr[data-site="site2"] .health`, 10*time.Second, contains("online"))
	p.screenshot("link-restored")

	// Fail over from site2's Tables DR page.
	d := newPage(t, 40*time.Second)
	d.signIn(site2.URL, site2.AccessKey, site2.SecretKey)
	d.open("#/tables-dr")
	d.waitText(`#dr-role`, 10*time.Second, contains("Tables replica"))
	d.waitText(`#dr-entries`, 15*time.Second, contains("orders"))
	// The verified version's age: the commit time of the version the replica serves.
	d.waitText(`#dr-table tr[data-entry="lake/sales/orders"] .age`, 10*time.Second, contains("ago"))
	d.assertLabelled("tables DR page")
	d.screenshot("tables-dr")
	d.run(chromedp.Click(chromedp.CSS(`button[data-action="failover"]`)), chromedp.WaitVisible(chromedp.CSS("#confirm-name")))
	var disabled bool
	d.run(chromedp.SendKeys(chromedp.CSS("#confirm-name"), "wrong"))
	d.eval(`document.getElementById("confirm-go").disabled`, &disabled)
	if !disabled {
		t.Fatal("failover confirm enabled by a name that is not a warehouse")
	}
	d.assertLabelled("failover dialog")
	d.screenshot("failover-confirm")
	d.eval(`document.getElementById("confirm-name").value = ""; true`, nil)
	d.run(chromedp.SendKeys(chromedp.CSS("#confirm-name"), "lake"),
		chromedp.Click(chromedp.CSS("#confirm-go")))
	d.waitText(`#action-result`, 10*time.Second, contains("Fail over started"))
	d.waitText(`#dr-role`, 20*time.Second, contains("primary"))

	// The Sites page of site1 shows the roles as they are now.
	p.waitText(`#sites tr[data-site="site2"] .role`, 15*time.Second, func(s string) bool { return s == "primary" })
	p.screenshot("after-failover")
	st, err := adminFor(t, site2.Site).TablesReplicationStatus(ctx, 0, 1)
	if err != nil || st.State != "disabled" {
		t.Fatalf("site2 after failover: %+v %v", st, err)
	}

	// Finish the swap from site1's Tables DR page: resync open, then
	// rebuild; site1 becomes the Tables replica of the promoted site2.
	p.open("#/tables-dr")
	p.waitText(`#dr-role`, 10*time.Second, contains("primary"))
	p.runbook("resync-open", "lake")
	p.waitText(`#dr-role`, 10*time.Second, contains("being demoted"))
	p.runbook("rebuild", "lake")
	p.waitText(`#dr-rebuild`, 30*time.Second, contains("Completed"))
	p.waitText(`#dr-role`, 10*time.Second, contains("Tables replica"))
	p.waitText(`#dr-entries`, 15*time.Second, contains("orders"))
	p.screenshot("rebuilt")
	p.open("#/sites")
	p.waitText(`#sites tr[data-site="site1"] .role`, 10*time.Second, contains("Tables replica"))
	p.waitText(`#sites tr[data-site="site2"] .role`, 10*time.Second, func(s string) bool { return s == "primary" })
	p.screenshot("roles-swapped")
}

// TestBrowserBucketsUploadDownloadAndEscaping uploads a file through the
// page (with its progress bar), downloads it back, and shows that a key
// named <script>alert(1)</script> renders as text.
func TestBrowserBucketsUploadDownloadAndEscaping(t *testing.T) {
	ctx := context.Background()
	site := testsite.Start(t)
	s3 := s3For(t, site, site.AccessKey, site.SecretKey)
	if err := s3.MakeBucket(ctx, "docs", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	const xss = `<script>alert(1)</script>`
	for _, k := range []string{xss, `<img src=x onerror="window.pwned=1">`, "reports/q1.csv"} {
		if _, err := s3.PutObject(ctx, "docs", k, strings.NewReader("data"), 4, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p := newPage(t, 40*time.Second)
	p.run(chromedp.Navigate(site.URL + "/twinlake/console/"))
	p.eval(`window.alert = () => { window.alerted = true; }; true`, nil)
	p.signIn(site.URL, site.AccessKey, site.SecretKey)
	p.eval(`window.alert = () => { window.alerted = true; }; true`, nil)
	p.open("#/buckets?bucket=docs")
	// With "/" as the delimiter the key lists as the folder "<script>alert(1)</".
	p.waitText(`#object-table`, 10*time.Second, contains(`<script>alert(1)</`))
	p.waitText(`#object-table`, 10*time.Second, contains(`<img src=x onerror="window.pwned=1">`))
	p.screenshot("xss-folder-as-text")
	p.open("#/buckets?bucket=docs&prefix=" + url.QueryEscape(`<script>alert(1)</`))
	p.waitText(`#object-table`, 10*time.Second, contains("script>"))
	var key string
	p.eval(`document.querySelector("#object-table tr[data-key]").dataset.key`, &key)
	if key != xss {
		t.Fatalf("row key %q", key)
	}
	p.waitText(`.crumbs`, 5*time.Second, contains(`<script>alert(1)<`))
	var scripts int
	var injected bool
	p.eval(`document.querySelectorAll("script").length`, &scripts)
	p.eval(`!!(window.alerted || window.pwned || document.querySelector("#object-table img, #object-table script"))`, &injected)
	if scripts != 1 || injected {
		t.Fatalf("a key name became markup: %d script elements, injected=%v", scripts, injected)
	}
	p.screenshot("xss-as-text")

	// Upload a file through the file input.
	content := bytes.Repeat([]byte("twinlake console upload\n"), 40000) // ~940 KiB
	local := filepath.Join(t.TempDir(), "upload.txt")
	if err := os.WriteFile(local, content, 0o644); err != nil {
		t.Fatal(err)
	}
	p.run(chromedp.SetUploadFiles(chromedp.CSS("#upload-file"), []string{local}),
		chromedp.SendKeys(chromedp.CSS("#upload-key"), "inbox/upload.txt"),
		chromedp.Click(chromedp.CSS("#upload-go")))
	p.waitText("#upload-status", 15*time.Second, contains("Uploaded inbox/upload.txt"))
	var progress int
	p.eval(`Number(document.getElementById("upload-progress").value)`, &progress)
	if progress != 100 {
		t.Fatalf("progress %d after upload", progress)
	}
	obj, err := s3.GetObject(ctx, "docs", "inbox/upload.txt", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(obj)
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("uploaded object: %d bytes, %v", len(got), err)
	}
	p.assertLabelled("bucket page")
	p.screenshot("uploaded")

	// Download it back through the page's link (with the session cookie).
	p.open("#/buckets?bucket=docs&prefix=inbox%2F")
	p.waitText("#object-table", 10*time.Second, contains("upload.txt"))
	var dl struct {
		Status int    `json:"status"`
		Len    int    `json:"len"`
		Type   string `json:"type"`
		Disp   string `json:"disp"`
	}
	p.eval(`(async () => { let a;
		for (let i = 0; i < 100 && !(a = document.querySelector('#object-table a.download')); i++) await new Promise(r => setTimeout(r, 50));
		const r = await fetch(a.href); const b = await r.arrayBuffer();
		return {status: r.status, len: b.byteLength, type: r.headers.get("Content-Type"), disp: r.headers.get("Content-Disposition")}; })()`,
		&dl, chromedp.EvalAwaitPromise)
	if dl.Status != 200 || dl.Len != len(content) || dl.Type != "application/octet-stream" || !strings.Contains(dl.Disp, "attachment") {
		t.Fatalf("download: %+v", dl)
	}
	p.screenshot("bucket-browse")
}

// TestBrowserRefusals: a wrong password is refused on the page; a change
// with a forged CSRF token, a session cookie after sign-out, and a path
// trick are refused by the API the page calls.
func TestBrowserRefusals(t *testing.T) {
	site := testsite.Start(t)
	p := newPage(t, 30*time.Second)
	p.run(chromedp.Navigate(site.URL+"/twinlake/console/"), chromedp.WaitVisible(chromedp.CSS("#accessKey")),
		chromedp.SendKeys(chromedp.CSS("#accessKey"), site.AccessKey),
		chromedp.SendKeys(chromedp.CSS("#secretKey"), "not-the-secret"),
		chromedp.Click(chromedp.CSS(`#login-form button[type=submit]`)))
	p.waitText("#login-error", 5*time.Second, contains("Sign-in failed"))
	var navShown bool
	p.eval(`getComputedStyle(document.getElementById("nav")).display !== "none"`, &navShown)
	if navShown {
		t.Fatal("navigation shown after a wrong password")
	}
	p.assertLabelled("sign-in page")
	p.screenshot("wrong-password")

	p.signIn(site.URL, site.AccessKey, site.SecretKey)
	csrf := p.csrf()
	if code, body := p.fetchJSON("POST", "buckets", `{"name":"forged"}`, "forged-token"); code != http.StatusForbidden || !strings.Contains(body, "InvalidCSRFToken") {
		t.Fatalf("forged CSRF: %d %s", code, body)
	}
	if code, body := p.fetchJSON("POST", "buckets", `{"name":"forged"}`, ""); code != http.StatusForbidden {
		t.Fatalf("missing CSRF: %d %s", code, body)
	}
	if code, body := p.fetchJSON("POST", "buckets", `{"name":"real-one"}`, csrf); code != http.StatusCreated {
		t.Fatalf("create with the token: %d %s", code, body)
	}
	if code, _ := p.fetchJSON("PUT", "buckets/real-one/object?key=a%2F..%2F..%2Fetc", "x", csrf); code != http.StatusBadRequest {
		t.Fatalf("path trick: %d", code)
	}
	// The session ends behind the page's back (as an idle timeout ends it):
	// the next page shows the sign-in form and says why.
	if code, _ := p.fetchJSON("POST", "logout", "", csrf); code != http.StatusNoContent {
		t.Fatalf("sign-out call: %d", code)
	}
	p.open("#/buckets")
	p.waitText("#login-error", 5*time.Second, contains("session ended"))
	p.eval(`getComputedStyle(document.getElementById("nav")).display !== "none"`, &navShown)
	if navShown {
		t.Fatal("navigation shown after the session ended")
	}
	if code, _ := p.fetchJSON("GET", "buckets", "", ""); code != http.StatusUnauthorized {
		t.Fatalf("after the session ended: %d", code)
	}
	p.screenshot("session-ended")

	// Sign in again and out with the button.
	p.signIn(site.URL, site.AccessKey, site.SecretKey)
	p.run(chromedp.Click(chromedp.CSS("#signout")), chromedp.WaitVisible(chromedp.CSS("#accessKey")))
	if code, _ := p.fetchJSON("GET", "session", "", ""); code != http.StatusUnauthorized {
		t.Fatalf("after sign-out: %d", code)
	}
}

// TestBrowserTablesAndServerPages walks the Tables page from the warehouse
// list to a table's schema and snapshot timeline (row and file counts from
// the snapshot summaries), then reads the Server page and changes a
// setting after confirming.
func TestBrowserTablesAndServerPages(t *testing.T) {
	ctx := context.Background()
	site := testsite.Start(t)
	if _, err := adminFor(t, site).CreateWarehouse(ctx, "lake", adminclient.WarehouseCreateRequest{}); err != nil {
		t.Fatal(err)
	}
	cat := icetest.Catalog(t, site.URL, site.AccessKey, site.SecretKey, "lake")
	if err := cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil); err != nil {
		t.Fatal(err)
	}
	id := table.Identifier{"sales", "orders"}
	if _, err := cat.CreateTable(ctx, id, icetest.Schema); err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int64{{0, 10}, {10, 25}} {
		if _, err := icetest.AppendRetry(ctx, cat, id, r[0], r[1]); err != nil {
			t.Fatal(err)
		}
	}

	acat, err := adminclient.NewCatalog(site.URL, "lake", adminclient.Credentials{AccessKey: site.AccessKey, SecretKey: site.SecretKey}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acat.CreateView(ctx, []string{"sales"}, adminclient.CatalogCreateView{Name: "big_orders",
		Schema:      json.RawMessage(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"order_id","required":false,"type":"long"}]}`),
		ViewVersion: json.RawMessage(`{"version-id":1,"timestamp-ms":1,"schema-id":0,"summary":{},"representations":[{"type":"sql","sql":"SELECT id AS order_id FROM orders WHERE id > 5","dialect":"spark"}],"default-namespace":["sales"]}`)}); err != nil {
		t.Fatal(err)
	}

	p := newPage(t, 40*time.Second)
	p.signIn(site.URL, site.AccessKey, site.SecretKey)
	p.open("#/tables")
	p.waitText("#warehouses", 10*time.Second, contains("lake"))
	p.run(chromedp.Click(chromedp.CSS(`#warehouses a`)))
	p.waitText("#ns-list", 10*time.Second, contains("sales"))
	p.run(chromedp.Click(chromedp.CSS(`#ns-list a`)))
	p.waitText("#tables", 10*time.Second, contains("orders"))
	p.run(chromedp.Click(chromedp.CSS(`#tables a`)))
	p.waitText("#schema", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "id") && strings.Contains(s, "name") && strings.Contains(s, "long")
	})
	tl := p.waitText("#snapshots", 5*time.Second, contains("rows 25"))
	if !strings.Contains(tl, "rows 10") || !strings.Contains(tl, "(+15)") || strings.Count(tl, "append") != 2 {
		t.Fatalf("snapshot timeline:\n%s", tl)
	}
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.FormatInt(tbl.CurrentSnapshot().SnapshotID, 10) + " current"; !strings.Contains(tl, want) {
		t.Fatalf("timeline lacks the exact current snapshot id %q:\n%s", want, tl)
	}
	p.assertLabelled("table page")
	p.screenshot("table")

	// The view: listed with the tables, its schema from its current version.
	p.open("#/tables?warehouse=lake&namespace=sales")
	p.waitText("#tables", 10*time.Second, contains("big_orders (view)"))
	p.run(chromedp.Click(chromedp.CSS(`#tables li:last-child a`)))
	p.waitText("#schema", 10*time.Second, contains("order_id"))
	p.waitText("#table-detail", 5*time.Second, contains("View sales.big_orders"))
	p.waitText("#view-sql", 5*time.Second, contains("SELECT id AS order_id FROM orders WHERE id > 5"))
	p.screenshot("view")

	p.open("#/server")
	p.waitText("#server-info", 10*time.Second, contains("dev"))
	p.eval(`window.confirm = () => true; true`, nil)
	p.eval(`document.getElementById("cfg-api-requests_max").value = "321"; true`, nil)
	p.run(chromedp.Click(chromedp.CSS(`#cfg-api-requests_max`)))
	p.eval(`document.getElementById("cfg-api-requests_max").closest("tr").querySelector("button").click(); true`, nil)
	testsite.Eventually(t, 10*time.Second, func() error {
		cfg, err := adminFor(t, site).GetConfig(ctx, "api")
		if err != nil {
			return err
		}
		for _, kv := range cfg.Keys {
			if kv.Key == "requests_max" && kv.Value == "321" {
				return nil
			}
		}
		return fmt.Errorf("requests_max not changed: %+v", cfg.Keys)
	})
	p.waitText(`table[data-subsys="api"]`, 10*time.Second, contains("stored"))
	p.assertLabelled("server page")
	p.screenshot("server")
}
