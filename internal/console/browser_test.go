package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// One headless Chromium serves every browser test of the package; each
// test opens its own tab (and browser context, so cookies stay apart).
var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	os.Exit(code)
}

// chromiumPath finds a Chromium or Chrome binary ("" when there is none).
func chromiumPath() string {
	if p := os.Getenv("TWINLAKE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// tab returns a fresh tab of the shared browser, bounded by timeout. The
// test is skipped only when no Chromium binary exists on this machine.
func tab(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		t.Skip("no chromium binary found: install Debian's chromium package (.ci/run does) or set TWINLAKE_CHROMIUM to run the browser tests")
	}
	browser.once.Do(func() {
		opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
			chromedp.WindowSize(1366, 900), chromedp.Flag("disable-dev-shm-usage", true))
		actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, bcancel := chromedp.NewContext(actx)
		browser.ctx = bctx
		browser.cancel = func() { bcancel(); acancel() }
		browser.err = chromedp.Do(bctx)
	})
	if browser.err != nil {
		t.Fatalf("start chromium %s: %v", path, browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	ctx, cancel2 := context.WithTimeout(ctx, timeout)
	t.Cleanup(cancel2)
	return ctx
}

// page drives one tab.
type page struct {
	t   *testing.T
	ctx context.Context
	dir string
	n   int
}

func newPage(t *testing.T, timeout time.Duration) *page {
	return &page{t: t, ctx: tab(t, timeout), dir: t.TempDir()}
}

func (p *page) run(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.screenshot("failure")
		p.t.Fatal(err)
	}
}

// eval runs a JavaScript expression and decodes its (JSON) value.
func (p *page) eval(js string, out any, opts ...chromedp.EvaluateOption) {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[any](js, opts...))
	if err != nil {
		p.screenshot("failure")
		p.t.Fatalf("evaluate %s: %v", js, err)
	}
	if out != nil {
		b, _ := json.Marshal(v)
		if err := json.Unmarshal(b, out); err != nil {
			p.t.Fatalf("evaluate %s: decode %s: %v", js, b, err)
		}
	}
}

// text returns the visible text of the first element matching sel ("" if none).
func (p *page) text(sel string) string {
	var s string
	p.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e ? e.innerText : ""; })()`, sel), &s)
	return s
}

// waitText polls until cond accepts the text of sel.
func (p *page) waitText(sel string, timeout time.Duration, cond func(string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := p.text(sel)
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.screenshot("timeout")
			p.t.Fatalf("%s: text %q not as wanted within %v", sel, s, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// screenshot saves a full-page PNG under the test's temp directory.
func (p *page) screenshot(name string) string {
	buf, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	p.n++
	f := filepath.Join(p.dir, fmt.Sprintf("%02d-%s.png", p.n, name))
	if err := os.WriteFile(f, buf, 0o644); err != nil {
		p.t.Fatal(err)
	}
	if os.Getenv("TWINLAKE_CONSOLE_SHOTS") != "" {
		_ = os.WriteFile(filepath.Join(os.Getenv("TWINLAKE_CONSOLE_SHOTS"), fmt.Sprintf("%s-%02d-%s.png", p.t.Name(), p.n, name)), buf, 0o644)
	}
	p.t.Logf("screenshot %s", f)
	return f
}

// signIn opens the console of the site at base and signs in.
func (p *page) signIn(base, ak, sk string) {
	p.t.Helper()
	p.run(chromedp.Navigate(base+"/twinlake/console/"),
		chromedp.WaitVisible(chromedp.CSS("#accessKey")),
		chromedp.SendKeys(chromedp.CSS("#accessKey"), ak),
		chromedp.SendKeys(chromedp.CSS("#secretKey"), sk),
		chromedp.Click(chromedp.CSS(`#login-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#nav")))
}

// open shows a console page by its hash route ("#/buckets?bucket=x"), as
// following a link in the page does.
func (p *page) open(hash string) {
	p.t.Helper()
	p.eval(fmt.Sprintf(`location.hash = %q; true`, hash), nil)
}

// fetchJSON calls the console API from the page, as its script does, and
// returns the status and body.
func (p *page) fetchJSON(method, path string, body string, csrf string) (int, string) {
	p.t.Helper()
	var res struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
	}
	js := fmt.Sprintf(`(async () => {
		const h = {"Content-Type": "application/json"};
		if (%q) h["X-Twinlake-CSRF"] = %q;
		const r = await fetch("api/" + %q, {method: %q, headers: h, body: %q || undefined});
		return {status: r.status, body: await r.text()};
	})()`, csrf, csrf, path, method, body)
	p.eval(js, &res, chromedp.EvalAwaitPromise)
	return res.Status, res.Body
}

// csrf returns the page's CSRF token.
func (p *page) csrf() string {
	var tok string
	p.eval(`state.session.csrf`, &tok)
	return tok
}

func mustJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
}

func contains(sub string) func(string) bool {
	return func(s string) bool { return strings.Contains(s, sub) }
}

// assertLabelled fails the test when a form control has no label, a
// button no name, or a chart no text alternative: the page must be usable
// with a screen reader and the keyboard.
func (p *page) assertLabelled(where string) {
	p.t.Helper()
	var bad []string
	p.eval(`(() => {
		const bad = [];
		for (const e of document.querySelectorAll("input, select, textarea")) {
			if (e.type === "hidden" || e.closest("[hidden]")) continue;
			if (!(e.labels && e.labels.length) && !e.getAttribute("aria-label") && !e.getAttribute("aria-labelledby")) bad.push(e.outerHTML.slice(0, 80));
		}
		for (const b of document.querySelectorAll("button, a[href]")) {
			if (b.closest("[hidden]")) continue;
			if (!(b.innerText || "").trim() && !b.getAttribute("aria-label")) bad.push(b.outerHTML.slice(0, 80));
		}
		for (const s of document.querySelectorAll("svg")) {
			if (!s.getAttribute("aria-label")) bad.push("svg without aria-label");
		}
		return bad;
	})()`, &bad)
	if len(bad) > 0 {
		p.t.Fatalf("%s: unlabelled controls: %q", where, bad)
	}
}

// runbook runs a Tables DR action from the page: its button, the typed
// confirmation, the dialog's button, and waits for the page to say it
// started.
func (p *page) runbook(action, confirm string) {
	p.t.Helper()
	p.run(chromedp.Click(chromedp.CSS(`button[data-action="`+action+`"]`)), chromedp.WaitVisible(chromedp.CSS("#confirm-name")),
		chromedp.SendKeys(chromedp.CSS("#confirm-name"), confirm), chromedp.Click(chromedp.CSS("#confirm-go")))
	label := map[string]string{"failover": "Fail over", "resync-open": "Resync open", "rebuild": "Rebuild",
		"catalog-reset": "Catalog reset", "backfill": "Backfill"}[action]
	p.waitText("#action-result", 10*time.Second, contains(label+" started"))
}
