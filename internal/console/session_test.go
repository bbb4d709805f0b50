package console

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestSessionIdleTimeoutAndPolls(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	ss := newSessions(10*time.Minute, 100, clk.now)
	s := ss.create("ak", "sk")
	if len(s.id) < 40 || len(s.csrf) < 40 || s.id == s.csrf {
		t.Fatalf("weak tokens: %q %q", s.id, s.csrf)
	}
	clk.add(9 * time.Minute)
	if _, ok := ss.get(s.id, false); !ok { // a poll: does not touch
		t.Fatal("session gone before its idle timeout")
	}
	clk.add(2 * time.Minute)
	if _, ok := ss.get(s.id, true); ok {
		t.Fatal("a poll kept the session alive past its idle timeout")
	}
	if ss.len() != 0 {
		t.Fatal("expired session not removed")
	}

	s = ss.create("ak", "sk")
	for range 5 { // user activity keeps it alive
		clk.add(9 * time.Minute)
		if _, ok := ss.get(s.id, true); !ok {
			t.Fatal("active session expired")
		}
	}
	clk.add(MaxSessionLifetime)
	if _, ok := ss.get(s.id, true); ok {
		t.Fatal("session outlived MaxSessionLifetime")
	}
	if _, ok := ss.get("", true); ok {
		t.Fatal("empty id found a session")
	}
}

func TestSessionBoundEvictsLeastRecentlyUsed(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	ss := newSessions(time.Hour, 3, clk.now)
	var ids []string
	for range 3 {
		ids = append(ids, ss.create("ak", "sk").id)
		clk.add(time.Second)
	}
	ss.get(ids[0], true) // ids[1] is now the least recently used
	clk.add(time.Second)
	ss.create("ak", "sk")
	if ss.len() != 3 {
		t.Fatalf("%d sessions, want the bound 3", ss.len())
	}
	if _, ok := ss.get(ids[1], false); ok {
		t.Fatal("least recently used session kept")
	}
	if _, ok := ss.get(ids[0], false); !ok {
		t.Fatal("recently used session evicted")
	}
}

func TestValidCSRF(t *testing.T) {
	s := session{csrf: "token-abc"}
	for _, tc := range []struct {
		in   string
		want bool
	}{{"token-abc", true}, {"", false}, {"token-abd", false}, {"token-ab", false}, {"token-abcd", false}} {
		if got := validCSRF(s, tc.in); got != tc.want {
			t.Errorf("validCSRF(%q) = %v", tc.in, got)
		}
	}
	if validCSRF(session{}, "") {
		t.Error("an empty token matched an empty session token")
	}
}

type creds map[string]string

func (c creds) SecretKey(ak string) (string, bool) { s, ok := c[ak]; return s, ok }
func (c creds) IsService(ak string) bool           { return ak == "svc" }

type allowAll struct{}

func (allowAll) AllowAdmin(string, string) bool { return true }

// newTestConsole is a console whose backend answers every call 200 {}.
func newTestConsole(t *testing.T, clk *fakeClock) *Console {
	t.Helper()
	c, err := New(Config{Credentials: creds{"alice": "alice-secret", "svc": "svc-secret"}, Authorizer: allowAll{},
		Backend:     http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("{}")) }),
		IdleTimeout: time.Minute, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func do(c *Console, method, path, body string, hdr map[string]string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	for _, ck := range cookies {
		r.AddCookie(ck)
	}
	w := httptest.NewRecorder()
	c.ServeHTTP(w, r)
	return w
}

func TestSignInCookieCSRFAndExpiry(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	c := newTestConsole(t, clk)
	api := Prefix + "api/"
	for _, body := range []string{`{"accessKey":"alice","secretKey":"wrong"}`, `{"accessKey":"bob","secretKey":"alice-secret"}`,
		`{"accessKey":"svc","secretKey":"svc-secret"}`, `{"accessKey":"","secretKey":""}`, `not json`} {
		if w := do(c, "POST", api+"login", body, nil); w.Code == http.StatusOK || len(w.Result().Cookies()) != 0 {
			t.Fatalf("sign-in %s: %d, cookies %v", body, w.Code, w.Result().Cookies())
		}
	}
	w := do(c, "POST", api+"login", `{"accessKey":"alice","secretKey":"alice-secret"}`, nil)
	if w.Code != http.StatusOK {
		t.Fatalf("sign-in: %d %s", w.Code, w.Body)
	}
	ck := w.Result().Cookies()[0]
	if !strings.HasPrefix(ck.Name, SessionCookie+"_") || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != Prefix || ck.Secure {
		t.Fatalf("cookie %+v", ck)
	}
	var csrf string
	if i := strings.Index(w.Body.String(), `"csrf":"`); i >= 0 {
		csrf = strings.SplitN(w.Body.String()[i+8:], `"`, 2)[0]
	}
	if csrf == "" || strings.Contains(w.Body.String(), "alice-secret") {
		t.Fatalf("sign-in answer: %s", w.Body)
	}
	if w := do(c, "GET", api+"session", "", nil, ck); w.Code != http.StatusOK {
		t.Fatalf("session: %d", w.Code)
	}
	// Changes need the CSRF token: none, forged, then the right one.
	for _, tok := range []string{"", "forged-" + csrf[:10], csrf + "x"} {
		w := do(c, "PUT", api+"server/config/api", `{"requests_max":"5"}`, map[string]string{CSRFHeader: tok}, ck)
		if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "InvalidCSRFToken") {
			t.Fatalf("CSRF %q: %d %s", tok, w.Code, w.Body)
		}
	}
	if w := do(c, "POST", api+"logout", "", map[string]string{CSRFHeader: csrf}, ck); w.Code != http.StatusNoContent {
		t.Fatalf("sign-out: %d %s", w.Code, w.Body)
	}
	if w := do(c, "GET", api+"session", "", nil, ck); w.Code != http.StatusUnauthorized {
		t.Fatalf("session after sign-out: %d", w.Code)
	}

	// Idle expiry.
	w = do(c, "POST", api+"login", `{"accessKey":"alice","secretKey":"alice-secret"}`, nil)
	ck = w.Result().Cookies()[0]
	clk.add(59 * time.Second)
	if w := do(c, "GET", api+"session", "", nil, ck); w.Code != http.StatusOK {
		t.Fatalf("session before timeout: %d", w.Code)
	}
	clk.add(61 * time.Second)
	if w := do(c, "GET", api+"session", "", nil, ck); w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "NoSession") {
		t.Fatalf("expired session: %d %s", w.Code, w.Body)
	}
	// A forged session id is refused.
	if w := do(c, "GET", api+"session", "", nil, &http.Cookie{Name: ck.Name, Value: randomToken()}); w.Code != http.StatusUnauthorized {
		t.Fatalf("forged session: %d", w.Code)
	}
}

func TestSecureCookieUnderTLS(t *testing.T) {
	c := newTestConsole(t, &fakeClock{t: time.Unix(1_700_000_000, 0)})
	r := httptest.NewRequest("POST", "https://example.test"+Prefix+"api/login", strings.NewReader(`{"accessKey":"alice","secretKey":"alice-secret"}`))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	c.ServeHTTP(w, r)
	if ck := w.Result().Cookies(); w.Code != http.StatusOK || len(ck) != 1 || !ck[0].Secure {
		t.Fatalf("TLS sign-in: %d %v", w.Code, ck)
	}
}

func TestUploadBound(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	c := newTestConsole(t, clk)
	w := do(c, "POST", Prefix+"api/login", `{"accessKey":"alice","secretKey":"alice-secret"}`, nil)
	ck := w.Result().Cookies()[0]
	csrf := c.sessions.m[ck.Value].csrf
	r := httptest.NewRequest("PUT", Prefix+"api/buckets/photos/object?key=big.bin", strings.NewReader("x"))
	r.ContentLength = DefaultMaxUpload + 1
	r.Header.Set(CSRFHeader, csrf)
	r.AddCookie(ck)
	rec := httptest.NewRecorder()
	c.ServeHTTP(rec, r)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized upload: %d %s", rec.Code, rec.Body)
	}
	for _, path := range []string{"api/buckets/photos/object?key=a/../../etc/passwd", "api/buckets/..%2Fetc/object?key=x", "api/buckets/photos/object?key=%2Fabs"} {
		r := httptest.NewRequest("PUT", Prefix+path, strings.NewReader("x"))
		r.Header.Set(CSRFHeader, csrf)
		r.AddCookie(ck)
		rec := httptest.NewRecorder()
		c.ServeHTTP(rec, r)
		if rec.Code != http.StatusBadRequest && rec.Code != http.StatusNotFound {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
}

func TestValidKeyAndBucket(t *testing.T) {
	for _, k := range []string{"a/../b", "..", "./x", "/abs", "a\x00b", "a\nb", strings.Repeat("k", 1025), "\xff"} {
		if validKey(k, false) == nil {
			t.Errorf("key %q accepted", k)
		}
	}
	for _, k := range []string{"a/b/c.txt", "<script>alert(1)</script>", "dir/", "a..b", "ü/ß"} {
		if err := validKey(k, false); err != nil {
			t.Errorf("key %q refused: %v", k, err)
		}
	}
	for _, b := range []string{"..", "a", "UPPER", "a/b", "../etc", "-ab", "a..b", "bucket%2f"} {
		if validBucket(b) == nil {
			t.Errorf("bucket %q accepted", b)
		}
	}
	if err := validBucket("photos-2024.eu"); err != nil {
		t.Error(err)
	}
}

func TestStaticPagesAndHeaders(t *testing.T) {
	c := newTestConsole(t, &fakeClock{t: time.Unix(1_700_000_000, 0)})
	w := do(c, "GET", Prefix, "", nil)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "console.js") {
		t.Fatalf("index: %d", w.Code)
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Fatalf("CSP %q", csp)
	}
	if w := do(c, "GET", strings.TrimSuffix(Prefix, "/"), "", nil); w.Code != http.StatusFound {
		t.Fatalf("bare prefix: %d", w.Code)
	}
	if w := do(c, "GET", Prefix+"console.js", "", nil); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "textContent") {
		t.Fatalf("script: %d", w.Code)
	}
	if w := do(c, "GET", Prefix+"api/nope", "", nil); w.Code != http.StatusNotFound {
		t.Fatalf("unknown call: %d", w.Code)
	}
}

func TestHistoryRingAndSharedSnapshot(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	h := newHistory(time.Minute, 2*time.Second, clk.now)
	takes := 0
	sent := int64(0)
	take := func() (*SitesView, error) {
		takes++
		sent += 2000
		return &SitesView{Sites: []SiteView{{Name: "b", Online: takes < 5}}, Links: []LinkView{{Target: "b", Pending: int64(takes), LagSeconds: float64(takes), SentBytes: sent}}}, nil
	}
	for range 100 { // many pollers within one step: one snapshot
		if _, err := h.snapshot(take); err != nil {
			t.Fatal(err)
		}
	}
	if takes != 1 {
		t.Fatalf("%d snapshots within one step", takes)
	}
	var v *SitesView
	for range 40 {
		clk.add(2 * time.Second)
		v, _ = h.snapshot(take)
	}
	if got := len(v.History["b"]); got != 31 { // one minute at 2 s, both ends
		t.Fatalf("%d samples kept, want 31", got)
	}
	if v.Links[0].Throughput != 1000 {
		t.Fatalf("throughput %v, want 1000 B/s", v.Links[0].Throughput)
	}
	if want := time.Unix(1_700_000_000, 0).Add(6 * time.Second); !v.Sites[0].LastContact.Equal(want) {
		t.Fatalf("last contact %v, want %v", v.Sites[0].LastContact, want)
	}
}

// A link new to the console's rings is seeded with the site's own record
// of the hour before (10 s samples), and only inside the window.
func TestHistorySeededFromTheSite(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	h := newHistory(time.Minute, 2*time.Second, clk.now)
	if !h.unseen([]string{"b"}) {
		t.Fatal("a new link is not unseen")
	}
	now := clk.now()
	seed := map[string][]Sample{"b": {
		{Time: now.Add(-2 * time.Minute), Backlog: 99}, // outside the window
		{Time: now.Add(-50 * time.Second), Backlog: 7, SentBytes: -1},
		{Time: now.Add(-10 * time.Second), Backlog: 8, SentBytes: -1},
	}}
	v, err := h.snapshot(func() (*SitesView, error) {
		return &SitesView{Links: []LinkView{{Target: "b", Pending: 9}}, seed: seed}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, s := range v.History["b"] {
		got = append(got, s.Backlog)
	}
	if !slices.Equal(got, []int64{7, 8, 9}) {
		t.Fatalf("history backlogs %v, want the seed inside the window then the sample", got)
	}
	if h.unseen([]string{"b"}) {
		t.Error("a seeded link is still unseen")
	}
}

func TestParseTargetSample(t *testing.T) {
	n, tg, v, ok := parseTargetSample(`twinlake_replication_sent_bytes_total{target="site2"} 1.5e+06`)
	if !ok || n != "twinlake_replication_sent_bytes_total" || tg != "site2" || v != 1.5e6 {
		t.Fatalf("%q %q %v %v", n, tg, v, ok)
	}
	for _, l := range []string{"# HELP x", `x 1`, `x{other="a"} 1`, `x{target="a"} nan-ish`} {
		if _, _, _, ok := parseTargetSample(l); ok {
			t.Errorf("%q parsed", l)
		}
	}
}

func TestSignInGuards(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	c := newTestConsole(t, clk)
	login := Prefix + "api/login"
	good := `{"accessKey":"alice","secretKey":"alice-secret"}`
	// A form post (no JSON content type) and a cross-origin post are refused.
	r := httptest.NewRequest("POST", login, strings.NewReader(good))
	r.Header.Set("Content-Type", "text/plain")
	w := httptest.NewRecorder()
	c.ServeHTTP(w, r)
	if w.Code != http.StatusBadRequest {
		t.Fatalf("text/plain sign-in: %d", w.Code)
	}
	if w := do(c, "POST", login, good, map[string]string{"Origin": "https://evil.example"}); w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "CrossOriginRequest") {
		t.Fatalf("cross-origin sign-in: %d %s", w.Code, w.Body)
	}
	if w := do(c, "POST", login, good, map[string]string{"Origin": "http://example.com"}); w.Code != http.StatusOK {
		t.Fatalf("same-origin sign-in: %d %s", w.Code, w.Body)
	}
	// Guessing: after the burst of failures, even the right secret waits.
	for i := range signInBurst {
		if w := do(c, "POST", login, `{"accessKey":"alice","secretKey":"guess"}`, nil); w.Code != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i, w.Code)
		}
	}
	if w := do(c, "POST", login, good, nil); w.Code != http.StatusTooManyRequests {
		t.Fatalf("after %d failures: %d", signInBurst, w.Code)
	}
	clk.add(signInRefill)
	if w := do(c, "POST", login, good, nil); w.Code != http.StatusOK {
		t.Fatalf("after a refill: %d %s", w.Code, w.Body)
	}
	// Another address is not affected.
	r = httptest.NewRequest("POST", login, strings.NewReader(good))
	r.Header.Set("Content-Type", "application/json")
	r.RemoteAddr = "198.51.100.7:4000"
	w = httptest.NewRecorder()
	c.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("other address: %d", w.Code)
	}
}

func TestMetadataVersion(t *testing.T) {
	for loc, want := range map[string]int64{
		"s3://lake/sales/orders-1/metadata/00002-056720e3-a4c2.metadata.json": 2,
		"s3://lake/v/metadata/00000-d8b6.metadata.json":                       0,
		"s3://lake/v/metadata/v1.metadata.json":                               -1,
		"":                                                                    -1,
	} {
		if got := metadataVersion(loc); got != want {
			t.Errorf("metadataVersion(%q) = %d, want %d", loc, got, want)
		}
	}
}
