package nodeapi

import (
	"bytes"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReadOffer: an offer verifies on the request it was signed for, under
// the node secret, within MaxSkew, and on no other; one an older build
// signed verifies at level 1, and a level changed does not verify.
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
	older := date + ":" + offerSignature(secret, "GET", "/b/k?versionId=1", date, 1)
	for _, tc := range []struct {
		name, method, path, offer string
		secret                    []byte
		want                      bool
		level                     int
	}{
		{"signed", "GET", "/b/k?versionId=1", good, secret, true, OfferLevel},
		{"an older build's", "GET", "/b/k?versionId=1", older, secret, true, 1},
		{"another level", "GET", "/b/k?versionId=1", strings.Replace(good, ":2:", ":3:", 1), secret, false, 0},
		{"level 1 written", "GET", "/b/k?versionId=1", strings.Replace(good, ":2:", ":1:", 1), secret, false, 0},
		{"another secret", "GET", "/b/k?versionId=1", good, []byte("fedcba9876543210"), false, 0},
		{"another query", "GET", "/b/k?versionId=2", good, secret, false, 0},
		{"another method", "HEAD", "/b/k?versionId=1", good, secret, false, 0},
		{"too old", "GET", "/b/k", signed("/b/k", now.Add(-MaxSkew-time.Minute)), secret, false, 0},
		{"a node API signature", "GET", "/b/k", date + ":" + signature(secret, "GET", "/b/k", date), secret, false, 0},
		{"no signature", "GET", "/b/k", date, secret, false, 0},
		{"no time", "GET", "/b/k", ":00", secret, false, 0},
		{"none", "GET", "/b/k", "", secret, false, 0},
	} {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		if tc.offer != "" {
			r.Header.Set(HeaderReadOffer, tc.offer)
		}
		if level, got := VerifiedReadOffer(tc.secret, r); got != tc.want || got && level != tc.level {
			t.Errorf("%s: verified %t at level %d, want %t", tc.name, got, level, tc.want)
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
		{"a read offer's signature", "/b/k", date + ";192.0.2.7:5555;" + offerSignature(secret, "GET", "/b/k", date, 1), ""},
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

// TestWriteOffer: a write offer yields its node and token on the request
// it was signed for, under the node secret, within MaxSkew, and nothing
// on any other or when altered.
func TestWriteOffer(t *testing.T) {
	secret := []byte("0123456789abcdef")
	now := time.Now()
	signed := func(method, path, node, token string, at time.Time) string {
		r := httptest.NewRequest(method, path, nil)
		SignWriteOffer(secret, r, node, token, at)
		return r.Header.Get(HeaderWriteOffer)
	}
	good := signed("PUT", "/b/k?partNumber=1&uploadId=u", "127.0.0.1:9000", "tok", now)
	date := strconv.FormatInt(now.Unix(), 10)
	for _, tc := range []struct {
		name, method, path, offer string
		secret                    []byte
		want                      bool
	}{
		{"signed", "PUT", "/b/k?partNumber=1&uploadId=u", good, secret, true},
		{"another secret", "PUT", "/b/k?partNumber=1&uploadId=u", good, []byte("fedcba9876543210"), false},
		{"another query", "PUT", "/b/k?partNumber=2&uploadId=u", good, secret, false},
		{"another method", "POST", "/b/k?partNumber=1&uploadId=u", good, secret, false},
		{"another node", "PUT", "/b/k?partNumber=1&uploadId=u", strings.Replace(good, "9000", "9001", 1), secret, false},
		{"another token", "PUT", "/b/k?partNumber=1&uploadId=u", strings.Replace(good, ";tok;", ";tik;", 1), secret, false},
		{"too old", "PUT", "/b/k", signed("PUT", "/b/k", "n", "t", now.Add(-MaxSkew-time.Minute)), secret, false},
		{"a read offer", "PUT", "/b/k", date + ":" + offerSignature(secret, "PUT", "/b/k", date, 1), secret, false},
		{"an older build's", "PUT", "/b/k", date + ";127.0.0.1:9000;tok;" + writeOfferSignature(secret, "PUT", "/b/k", date, "127.0.0.1:9000", "tok", 1), secret, true},
		{"another level", "PUT", "/b/k?partNumber=1&uploadId=u", strings.Replace(good, ";tok;2;", ";tok;3;", 1), secret, false},
		{"no level", "PUT", "/b/k?partNumber=1&uploadId=u", strings.Replace(good, ";tok;2;", ";tok;", 1), secret, false},
		{"no token", "PUT", "/b/k", signed("PUT", "/b/k", "n", "", now), secret, false},
		{"no node", "PUT", "/b/k", signed("PUT", "/b/k", "", "t", now), secret, false},
		{"none", "PUT", "/b/k", "", secret, false},
	} {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		if tc.offer != "" {
			r.Header.Set(HeaderWriteOffer, tc.offer)
		}
		node, token, level, ok := VerifiedWriteOffer(tc.secret, r)
		wantLevel := OfferLevel
		if tc.name == "an older build's" {
			wantLevel = 1
		}
		if ok != tc.want || ok && (node != "127.0.0.1:9000" || token != "tok" || level != wantLevel) {
			t.Errorf("%s: verified %t (%q, %q, level %d), want %t", tc.name, ok, node, token, level, tc.want)
		}
	}
}

// TestSeal: what Seal sealed opens with the same secret and aad only,
// and unaltered; two seals of the same secret differ.
func TestSeal(t *testing.T) {
	secret := []byte("0123456789abcdef")
	plain := []byte("a signing key of 32 bytes, say..")
	sealed, err := Seal(secret, []byte("tok"), plain)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, plain[:8]) {
		t.Fatal("sealed data holds the plain text")
	}
	if again, _ := Seal(secret, []byte("tok"), plain); bytes.Equal(again, sealed) {
		t.Fatal("two seals alike")
	}
	if got, err := Open(secret, []byte("tok"), sealed); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("open: %q, %v", got, err)
	}
	altered := bytes.Clone(sealed)
	altered[len(altered)-1] ^= 1
	for name, tc := range map[string]struct {
		secret, aad, sealed []byte
	}{
		"another secret": {[]byte("fedcba9876543210"), []byte("tok"), sealed},
		"another aad":    {secret, []byte("tik"), sealed},
		"altered":        {secret, []byte("tok"), altered},
		"short":          {secret, []byte("tok"), sealed[:5]},
	} {
		if _, err := Open(tc.secret, tc.aad, tc.sealed); err == nil {
			t.Errorf("%s: opened", name)
		}
	}
}

// FuzzNodeHeaders: no value of the headers a node signs onto a request
// it passes on, nor any sealed data, panics or verifies without the
// secret's signature.
func FuzzNodeHeaders(f *testing.F) {
	secret := []byte("0123456789abcdef")
	r := httptest.NewRequest("PUT", "/b/k", nil)
	now := time.Now()
	SignWriteOffer(secret, r, "127.0.0.1:9000", "tok", now)
	SignClientAddr(secret, r, "192.0.2.7:5555", now)
	SignReadOffer(secret, r, now)
	sealed, _ := Seal(secret, []byte("tok"), []byte("key"))
	f.Add(r.Header.Get(HeaderWriteOffer), r.Header.Get(HeaderClientAddr), r.Header.Get(HeaderReadOffer), sealed)
	f.Add(";;;", ";", ":", []byte{})
	f.Fuzz(func(t *testing.T, write, client, read string, seal []byte) {
		r := httptest.NewRequest("PUT", "/b/k", nil)
		r.Header.Set(HeaderWriteOffer, write)
		r.Header.Set(HeaderClientAddr, client)
		r.Header.Set(HeaderReadOffer, read)
		other := []byte("fedcba9876543210")
		if _, _, _, ok := VerifiedWriteOffer(other, r); ok {
			t.Fatalf("write offer %q verified under another secret", write)
		}
		if _, ok := VerifiedClientAddr(other, r); ok {
			t.Fatalf("client address %q verified under another secret", client)
		}
		if _, ok := VerifiedReadOffer(other, r); ok {
			t.Fatalf("read offer %q verified under another secret", read)
		}
		VerifiedWriteOffer(secret, r)
		VerifiedReadOffer(secret, r)
		VerifiedClientAddr(secret, r)
		if _, err := Open(other, []byte("tok"), seal); err == nil {
			t.Fatalf("%x opened under another secret", seal)
		}
	})
}
