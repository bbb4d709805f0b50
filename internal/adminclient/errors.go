package adminclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
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
	if json.Unmarshal(data, &body) == nil && body.Code != "" {
		return &Error{Code: body.Code, Message: body.Message, StatusCode: resp.StatusCode}
	}
	msg, _, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
	if msg == "" {
		msg = "no error body"
	}
	code := strings.ReplaceAll(http.StatusText(resp.StatusCode), " ", "")
	if code == "" {
		code = "HTTPError"
	}
	return &Error{Code: code, Message: msg, StatusCode: resp.StatusCode}
}
