package nodeapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MinSecretLen is the shortest node secret accepted.
const MinSecretLen = 16

// MaxSkew is how far a request's signing time may be from the server's
// clock.
const MaxSkew = 5 * time.Minute

const (
	headerDate = "X-Twinlake-Node-Date"
	authScheme = "TWINLAKE-NODE "
)

// errAuth is answered 403.
var errAuth = errors.New("node request not authenticated")

// signature is HMAC-SHA256, under the node secret, of the method, the
// path with its query and the signing time: a request cannot be replayed
// against another shard or call, nor beyond MaxSkew. The body is not
// covered: shards carry their own checksums.
func signature(secret []byte, method, uri, date string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(method + "\n" + uri + "\n" + date))
	return hex.EncodeToString(m.Sum(nil))
}

// sign adds the node authentication to r.
func sign(secret []byte, r *http.Request, now time.Time) {
	date := strconv.FormatInt(now.Unix(), 10)
	r.Header.Set(headerDate, date)
	r.Header.Set("Authorization", authScheme+signature(secret, r.Method, r.URL.RequestURI(), date))
}

// verify checks r's node authentication.
func verify(secret []byte, r *http.Request) error {
	date := r.Header.Get(headerDate)
	sec, err := strconv.ParseInt(date, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: no signing time", errAuth)
	}
	if d := time.Since(time.Unix(sec, 0)); d > MaxSkew || d < -MaxSkew {
		return fmt.Errorf("%w: signing time %s away from this node's clock", errAuth, d.Round(time.Second))
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), authScheme)
	want := signature(secret, r.Method, r.URL.RequestURI(), date)
	if !ok || !hmac.Equal([]byte(got), []byte(want)) {
		return fmt.Errorf("%w: bad signature", errAuth)
	}
	return nil
}
