package adminclient

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
)

// ErrInvalidEndpoint is returned by New when the endpoint is not an
// http(s)://host[:port] URL.
var ErrInvalidEndpoint = errors.New("adminclient: invalid endpoint")

// ErrMissingCredentials is returned by New when the access or secret key is
// empty: the admin API never answers anonymous requests.
var ErrMissingCredentials = errors.New("adminclient: missing credentials")

// Error is an error answered by the admin API: its code (one of the Code
// constants), message and HTTP status. Classify it with errors.As.
type Error struct {
	Code       string
	Message    string
	StatusCode int
	// RequestID is the server's ID of the failed request, when it gave one.
	RequestID string
	// retryAfter: the answer asked to be retried (Retry-After).
	retryAfter bool
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s (%s, HTTP %d)", e.Message, e.Code, e.StatusCode)
}

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// decodeError turns a non-2xx response into an *Error. A body that is not
// the admin JSON error (a proxy's page, say) still yields one, with the
// status text as code and the body's first line as message.
func decodeError(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var body ErrorBody
	reqID := resp.Header.Get("x-amz-request-id")
	retry := resp.Header.Get("Retry-After") != ""
	if json.Unmarshal(data, &body) == nil && body.Code != "" {
		return &Error{Code: body.Code, Message: body.Message, StatusCode: resp.StatusCode, RequestID: cmp.Or(body.RequestID, reqID), retryAfter: retry}
	}
	msg, _, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
	if msg == "" {
		msg = "no error body"
	}
	code := strings.ReplaceAll(http.StatusText(resp.StatusCode), " ", "")
	if code == "" {
		code = "HTTPError"
	}
	return &Error{Code: code, Message: msg, StatusCode: resp.StatusCode, RequestID: reqID, retryAfter: retry}
}

// UnreachableError is a call that got no HTTP answer: the site is down, the
// URL is wrong, or TLS failed. Its message is one line without Go's chain
// of wrapped errors.
type UnreachableError struct {
	URL string // the site's base URL
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach %s: %s", e.URL, TransportCause(e.Err))
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// TransportCause says in a few words why a request got no answer.
func TransportCause(err error) string {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	switch {
	case errors.Is(err, context.Canceled):
		return "interrupted"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timed out"
	case errors.As(err, &dnsErr):
		return "no such host " + dnsErr.Name
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was closed before an answer"
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr):
		return "its TLS certificate is not trusted here"
	case errors.As(err, &opErr) && opErr.Err != nil:
		return opErr.Err.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
