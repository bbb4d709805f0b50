package metrics

import "errors"

// ErrNoAuth is returned by Handler when Auth allows nobody: not public, no
// bearer token and no Authenticator.
var ErrNoAuth = errors.New("metrics: no way to authenticate scrapers")

// errUnauthenticated and errForbidden are the handler's refusals.
var (
	errUnauthenticated = errors.New("metrics: bearer token or SigV4 signature required")
	errForbidden       = errors.New("metrics: admin access required")
)
