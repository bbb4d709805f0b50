package nodeapi

import (
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReadOffer: an offer verifies on the request it was signed for, under
// the node secret, within MaxSkew, and on no other.
func TestReadOffer(t *testing.T) {
	secret := []byte("0123456789abcdef")
	signed := func(path string, at time.Time) string {
		r := httptest.NewRequest("GET", path, nil)
		SignReadOffer(secret, r, at)
		return r.Header.Get(HeaderReadOffer)
	}
	now := time.Now()
	good := signed("/b/k?versionId=1", now)
	date := strconv.FormatInt(now.Unix(), 10)
	for _, tc := range []struct {
		name, method, path, offer string
		secret                    []byte
		want                      bool
	}{
		{"signed", "GET", "/b/k?versionId=1", good, secret, true},
		{"another secret", "GET", "/b/k?versionId=1", good, []byte("fedcba9876543210"), false},
		{"another query", "GET", "/b/k?versionId=2", good, secret, false},
		{"another method", "HEAD", "/b/k?versionId=1", good, secret, false},
		{"too old", "GET", "/b/k", signed("/b/k", now.Add(-MaxSkew-time.Minute)), secret, false},
		{"a node API signature", "GET", "/b/k", date + ":" + signature(secret, "GET", "/b/k", date), secret, false},
		{"no signature", "GET", "/b/k", date, secret, false},
		{"no time", "GET", "/b/k", ":00", secret, false},
		{"none", "GET", "/b/k", "", secret, false},
	} {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		if tc.offer != "" {
			r.Header.Set(HeaderReadOffer, tc.offer)
		}
		if got := VerifyReadOffer(tc.secret, r); got != tc.want {
			t.Errorf("%s: verified %t, want %t", tc.name, got, tc.want)
		}
	}
}

// TestClientAddr: a client address verifies on the request it was signed
// for, under the node secret, within MaxSkew, and on no other; a forged
// or malformed one yields nothing.
func TestClientAddr(t *testing.T) {
	secret := []byte("0123456789abcdef")
	now := time.Now()
	signed := func(path, addr string, at time.Time) string {
		r := httptest.NewRequest("GET", path, nil)
		SignClientAddr(secret, r, addr, at)
		return r.Header.Get(HeaderClientAddr)
	}
	good := signed("/b/k", "192.0.2.7:5555", now)
	v6 := signed("/b/k", "[2001:db8::1]:443", now)
	date := strconv.FormatInt(now.Unix(), 10)
	for _, tc := range []struct {
		name, path, value string
		want              string // "" for none
	}{
		{"signed", "/b/k", good, "192.0.2.7:5555"},
		{"IPv6", "/b/k", v6, "[2001:db8::1]:443"},
		{"another path", "/b/other", good, ""},
		{"another address", "/b/k", strings.Replace(good, "192.0.2.7", "192.0.2.8", 1), ""},
		{"too old", "/b/k", signed("/b/k", "192.0.2.7:5555", now.Add(-MaxSkew-time.Minute)), ""},
		{"a read offer's signature", "/b/k", date + ";192.0.2.7:5555;" + offerSignature(secret, "GET", "/b/k", date), ""},
		{"no signature", "/b/k", date + ";192.0.2.7:5555", ""},
		{"no address", "/b/k", date + ";;" + clientSignature(secret, "GET", "/b/k", date, ""), ""},
		{"none", "/b/k", "", ""},
	} {
		r := httptest.NewRequest("GET", tc.path, nil)
		if tc.value != "" {
			r.Header.Set(HeaderClientAddr, tc.value)
		}
		got, ok := VerifiedClientAddr(secret, r)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: %q %t, want %q", tc.name, got, ok, tc.want)
		}
	}
}
