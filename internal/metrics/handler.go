package metrics

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where the lead mounts Handler.
const Path = "/twinlake/metrics"

// Authenticator verifies a SigV4-signed scrape. internal/app implements it
// over the server's SigV4 verifier and IAM (the same adapter serves
// internal/admin).
type Authenticator interface {
	// Authenticate returns the access key that signed r, or an error.
	Authenticate(r *http.Request) (accessKey string, err error)
	// IsAdmin reports whether accessKey may read metrics.
	IsAdmin(accessKey string) bool
}

// Auth says who may scrape. A request passes if Public is set, or it
// carries "Authorization: Bearer <BearerToken>", or it is SigV4-signed by an
// administrator.
type Auth struct {
	// Public opens the endpoint to anyone (TWINLAKE_METRICS_AUTH=public,
	// read by internal/app).
	Public bool
	// BearerToken, if not empty, is accepted as a bearer token; it is
	// compared in constant time.
	BearerToken string
	// Authenticator, if not nil, accepts SigV4-signed scrapes.
	Authenticator Authenticator
}

// Handler serves the registry in the Prometheus exposition formats behind
// auth. It returns ErrNoAuth if auth lets nobody in.
func (r *Registry) Handler(auth Auth) (http.Handler, error) {
	if !auth.Public && auth.BearerToken == "" && auth.Authenticator == nil {
		return nil, ErrNoAuth
	}
	expose := promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{
		ErrorHandling:     promhttp.ContinueOnError,
		Registry:          r.reg, // counts its own errors
		EnableOpenMetrics: true,
	})
	want := sha256.Sum256([]byte(auth.BearerToken))
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !auth.Public {
			if err := auth.check(req, want); err != nil {
				status := http.StatusUnauthorized
				if errors.Is(err, errForbidden) {
					status = http.StatusForbidden
				} else {
					w.Header().Set("WWW-Authenticate", `Bearer realm="twinlake"`)
				}
				http.Error(w, err.Error(), status)
				return
			}
		}
		expose.ServeHTTP(w, req)
	}), nil
}

// check authenticates req. Tokens are compared by their SHA-256 so that the
// comparison takes the same time whatever their lengths.
func (a Auth) check(req *http.Request, want [sha256.Size]byte) error {
	header := req.Header.Get("Authorization")
	if token, ok := strings.CutPrefix(header, "Bearer "); ok {
		got := sha256.Sum256([]byte(token))
		if a.BearerToken != "" && subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
			return nil
		}
		return errUnauthenticated
	}
	if a.Authenticator == nil {
		return errUnauthenticated
	}
	key, err := a.Authenticator.Authenticate(req)
	if err != nil || key == "" {
		return errUnauthenticated
	}
	if !a.Authenticator.IsAdmin(key) {
		return errForbidden
	}
	return nil
}
