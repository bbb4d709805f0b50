package console

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Bounds of sign-in guessing: each remote address may fail signInBurst
// times at once, then once per signInRefill; beyond that its sign-ins are
// refused (429) before the key is even looked up.
const (
	signInBurst   = 10
	signInRefill  = 6 * time.Second
	signInTracked = 10000 // addresses remembered; the oldest are forgotten first
)

// failures is a token bucket of failed sign-ins per remote address.
type failures struct {
	now func() time.Time

	mu sync.Mutex
	m  map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newFailures(now func() time.Time) *failures {
	return &failures{now: now, m: map[string]*bucket{}}
}

func remoteHost(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// refill brings b up to date and reports its tokens.
func (f *failures) refill(b *bucket, now time.Time) float64 {
	b.tokens = min(signInBurst, b.tokens+now.Sub(b.at).Seconds()/signInRefill.Seconds())
	b.at = now
	return b.tokens
}

// allowed reports whether host may try to sign in now.
func (f *failures) allowed(host string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.m[host]
	return !ok || f.refill(b, f.now()) >= 1
}

// failed takes a token from host's bucket.
func (f *failures) failed(host string) {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.m[host]
	if !ok {
		if len(f.m) >= signInTracked {
			f.forgetOldestLocked()
		}
		b = &bucket{tokens: signInBurst, at: now}
		f.m[host] = b
	}
	f.refill(b, now)
	b.tokens = max(0, b.tokens-1)
}

func (f *failures) forgetOldestLocked() {
	var oldest string
	var at time.Time
	for h, b := range f.m {
		if oldest == "" || b.at.Before(at) {
			oldest, at = h, b.at
		}
	}
	delete(f.m, oldest)
}

// sameOrigin refuses a change whose Origin header names another site: with
// SameSite=Strict cookies and the CSRF token this is a third check, and
// the only one protecting sign-in itself (no cookie yet) from a page that
// would sign a victim into the attacker's account.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true // not a browser, or a same-origin GET
	}
	u, err := url.Parse(o)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}
