package console

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// Errors the console's JSON API answers with, each with its code and
// status in errorTable.
var (
	// errSignIn: the access key is unknown, disabled, the service
	// credential, or the secret does not match (401).
	errSignIn = errors.New("access key or secret key is wrong")
	// errNoSession: no session cookie, or the session ended (idle timeout,
	// lifetime, sign-out) (401).
	errNoSession = errors.New("not signed in or the session expired")
	// errCSRF: a change without the session's CSRF token (403).
	errCSRF = errors.New("missing or wrong CSRF token")
	// errNoRoute: no such console API call (404).
	errNoRoute = errors.New("no such console page or call")
	// errBadPath: a bucket, key or prefix the console refuses (400).
	errBadPath = errors.New("invalid bucket, key or path")
	// errBadRequest: a malformed body or parameter (400).
	errBadRequest = errors.New("bad request")
	// errTooLarge: an upload above the console's bound (413).
	errTooLarge = errors.New("upload exceeds the console's size limit")
	// errNotConfirmed: a runbook action whose typed confirmation does not
	// match (412).
	errNotConfirmed = errors.New("confirmation does not match")
	// errForbidden: the signed-in user's policies do not allow the call (403).
	errForbidden = errors.New("access denied by your policies")
	// errCrossOrigin: a change sent by a page of another origin (403).
	errCrossOrigin = errors.New("request from another origin")
	// errTooManySignIns: too many failed sign-ins from this address (429).
	errTooManySignIns = errors.New("too many failed sign-ins from this address; wait a minute")
)

// ErrorBody is the JSON error every console API call answers with.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type errorEntry struct {
	err    error
	code   string
	status int
}

var errorTable = []errorEntry{
	{errSignIn, "SignInFailed", http.StatusUnauthorized},
	{errNoSession, "NoSession", http.StatusUnauthorized},
	{errCSRF, "InvalidCSRFToken", http.StatusForbidden},
	{errNoRoute, "NotFound", http.StatusNotFound},
	{errBadPath, "InvalidPath", http.StatusBadRequest},
	{errBadRequest, "BadRequest", http.StatusBadRequest},
	{errTooLarge, "EntityTooLarge", http.StatusRequestEntityTooLarge},
	{errNotConfirmed, "ConfirmationRequired", http.StatusPreconditionFailed},
	{errForbidden, "AccessDenied", http.StatusForbidden},
	{errCrossOrigin, "CrossOriginRequest", http.StatusForbidden},
	{errTooManySignIns, "TooManySignIns", http.StatusTooManyRequests},
}

// writeError answers err: console errors by errorTable, errors of the
// surfaces behind the console with their own code and status (an S3
// AccessDenied stays a 403 AccessDenied), anything else as 500.
func writeError(w http.ResponseWriter, err error) {
	body, status := classify(err)
	writeJSON(w, status, body)
}

func classify(err error) (ErrorBody, int) {
	for _, e := range errorTable {
		if errors.Is(err, e.err) {
			return ErrorBody{Code: e.code, Message: err.Error()}, e.status
		}
	}
	var ae *adminclient.Error
	if errors.As(err, &ae) {
		return ErrorBody{Code: ae.Code, Message: ae.Message}, passStatus(ae.StatusCode)
	}
	var ce *adminclient.CatalogError
	if errors.As(err, &ce) {
		return ErrorBody{Code: ce.Type, Message: ce.Message}, passStatus(ce.StatusCode)
	}
	var me minio.ErrorResponse
	if errors.As(err, &me) && me.Code != "" {
		return ErrorBody{Code: me.Code, Message: me.Message}, passStatus(me.StatusCode)
	}
	return ErrorBody{Code: "InternalError", Message: err.Error()}, http.StatusInternalServerError
}

// passStatus keeps a backend's 4xx and 5xx, but never a 401: that status
// tells the page its session ended, which a refused signature behind the
// console (a disabled user) is not.
func passStatus(code int) int {
	switch {
	case code == http.StatusUnauthorized:
		return http.StatusForbidden
	case code < 400 || code > 599:
		return http.StatusBadGateway
	}
	return code
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
