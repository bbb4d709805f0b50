package nodeapi

import (
	"net/http/httptest"
	"strconv"
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
