package rest

import (
	"errors"
	"net/http"
	"syscall"

	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/catalogwire"
	"github.com/twinlake/twinlake/internal/meta"
)

// Errors of the REST edge itself; the domain's live in internal/catalog.
var (
	// ErrUnauthenticated is answered (401 NotAuthorizedException) when a
	// request carries no signature.
	ErrUnauthenticated = errors.New("request is not signed (SigV4, service s3tables)")
	// ErrForbidden is answered (403 ForbiddenException) when a signature does
	// not verify or its access key is unknown.
	ErrForbidden = errors.New("request signature does not verify")
	// errBadRequest is answered (400 BadRequestException) for bodies and
	// parameters that do not parse.
	errBadRequest = errors.New("bad request")
	// errNoRoute is answered (404 NotFoundException) for an unknown path.
	errNoRoute = errors.New("no such Iceberg REST endpoint")
	// errReadOnly is answered (403 ForbiddenException) for a catalog change
	// the site refuses (the Tables replica).
	errReadOnly = errors.New("catalog changes are refused here")
	// errMethod is answered (405) for a known path with another method.
	errMethod = errors.New("method not allowed on this endpoint")
	// errUnsupported is answered (406 UnsupportedOperationException) for an
	// endpoint of the spec this server does not serve.
	errUnsupported = errors.New("the server does not support this operation")
	// errKeyReused is answered (422 UnprocessableEntityException) for an
	// Idempotency-Key first used for another request.
	errKeyReused = errors.New("idempotency key reused")
)

// Iceberg error types used on the wire.
const (
	typeBadRequest        = "BadRequestException"
	typeNotAuthorized     = "NotAuthorizedException"
	typeForbidden         = "ForbiddenException"
	typeNoSuchWarehouse   = "NoSuchWarehouseException"
	typeNoSuchNamespace   = "NoSuchNamespaceException"
	typeNoSuchTable       = "NoSuchTableException"
	typeNoSuchView        = "NoSuchViewException"
	typeNotFound          = "NotFoundException"
	typeAlreadyExists     = "AlreadyExistsException"
	typeNamespaceNotEmpty = "NamespaceNotEmptyException"
	typeCommitFailed      = "CommitFailedException"
	typeMethodNotAllowed  = "MethodNotAllowedException"
	typeUnsupported       = "UnsupportedOperationException"
	typeUnprocessable     = "UnprocessableEntityException"
	typeUnavailable       = "ServiceUnavailableException"
	typeInternal          = "InternalServerError"
)

// errorTable maps errors to the Iceberg error model, first match wins.
var errorTable = []struct {
	err    error
	typ    string
	status int
}{
	{ErrUnauthenticated, typeNotAuthorized, http.StatusUnauthorized},
	{ErrForbidden, typeForbidden, http.StatusForbidden},
	{errReadOnly, typeForbidden, http.StatusForbidden},
	{errBadRequest, typeBadRequest, http.StatusBadRequest},
	{errNoRoute, typeNotFound, http.StatusNotFound},
	{errMethod, typeMethodNotAllowed, http.StatusMethodNotAllowed},
	{errUnsupported, typeUnsupported, http.StatusNotAcceptable},
	{errKeyReused, typeUnprocessable, http.StatusUnprocessableEntity},
	// The node stopped leading its site while it served the request: the
	// write was refused whole; retried, the next leader serves it.
	{meta.ErrFenced, typeUnavailable, http.StatusServiceUnavailable},
	// Out of room for new data (objects.ErrStorageFull, a full drive):
	// refused before anything was committed.
	{syscall.ENOSPC, typeUnavailable, http.StatusServiceUnavailable},
	{catalog.ErrNoSuchWarehouse, typeNoSuchWarehouse, http.StatusNotFound},
	{catalog.ErrNoSuchNamespace, typeNoSuchNamespace, http.StatusNotFound},
	{catalog.ErrNoSuchTable, typeNoSuchTable, http.StatusNotFound},
	{catalog.ErrNoSuchView, typeNoSuchView, http.StatusNotFound},
	{catalog.ErrNamespaceExists, typeAlreadyExists, http.StatusConflict},
	{catalog.ErrTableExists, typeAlreadyExists, http.StatusConflict},
	{catalog.ErrViewExists, typeAlreadyExists, http.StatusConflict},
	{catalog.ErrNamespaceNotEmpty, typeNamespaceNotEmpty, http.StatusConflict},
	{catalog.ErrCommitFailed, typeCommitFailed, http.StatusConflict},
	{catalog.ErrInvalidIdentifier, typeBadRequest, http.StatusBadRequest},
	{catalog.ErrInvalidLocation, typeBadRequest, http.StatusBadRequest},
	{catalog.ErrLocationInUse, typeBadRequest, http.StatusBadRequest},
	{catalog.ErrInvalidRequest, typeBadRequest, http.StatusBadRequest},
	{catalog.ErrUnprocessable, typeUnprocessable, http.StatusUnprocessableEntity},
}

// errorModel is the Iceberg REST error body.
type (
	errorModel = catalogwire.ErrorResponse
	errorBody  = catalogwire.ErrorModel
)

// classify returns the wire form of err. Errors outside the table are
// internal: their text is logged, not sent.
func classify(err error) (errorModel, bool) {
	for _, e := range errorTable {
		if errors.Is(err, e.err) {
			return errorModel{Error: errorBody{Message: err.Error(), Type: e.typ, Code: e.status}}, false
		}
	}
	return errorModel{Error: errorBody{Message: "internal error; see the server log", Type: typeInternal,
		Code: http.StatusInternalServerError}}, true
}
