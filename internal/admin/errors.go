package admin

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/httprec"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/replication"
	"github.com/twinlake/twinlake/internal/scanner"
)

// ErrUnauthenticated is answered (401) when a request is unsigned or its
// signature does not verify.
var ErrUnauthenticated = errors.New("request is not signed by a known user")

// ErrAccessDenied is answered (403) when a correctly signed request comes
// from a user who is not an administrator.
var ErrAccessDenied = errors.New("admin access required")

// ErrNoRoute is answered (404) for a path or method the admin API lacks.
var ErrNoRoute = errors.New("no such admin API route")

// ErrBadRequest is answered (400) for a malformed body or query parameter.
var ErrBadRequest = errors.New("bad request")

// ErrContentSHA256Mismatch is answered (400) when a request body is not the
// one its X-Amz-Content-Sha256 header, covered by the signature, names.
var ErrContentSHA256Mismatch = errors.New("body does not match X-Amz-Content-Sha256")

// ErrInvalidConfig is returned by New when its Config lacks a collaborator.
var ErrInvalidConfig = errors.New("admin: invalid config")

// errorTable maps errors to the admin API's wire codes and statuses, first
// match wins: the admin surface's one error vocabulary. The domain
// refusals come before the generic entries, because a refusal may wrap the
// error its guard returned (a role conflict wraps config.ErrRefused).
var errorTable = []errorEntry{
	{ErrUnauthenticated, adminclient.CodeUnauthenticated, http.StatusUnauthorized},
	{ErrAccessDenied, adminclient.CodeAccessDenied, http.StatusForbidden},

	// Tables replication (the scanner's roles and jobs).
	{errTablesReplUnavailable, adminclient.CodeNotImplemented, http.StatusNotImplemented},
	{scanner.ErrNotReplica, adminclient.CodeNotReplica, http.StatusConflict},
	{scanner.ErrReplicaReadOnly, adminclient.CodeReplicaReadOnly, http.StatusForbidden},
	{scanner.ErrRoleConflict, adminclient.CodeRoleConflict, http.StatusConflict},
	{scanner.ErrNoResyncWindow, adminclient.CodeNoResyncWindow, http.StatusConflict},
	{scanner.ErrPeerResyncActive, adminclient.CodePeerResyncActive, http.StatusConflict},
	{scanner.ErrBackfillRunning, adminclient.CodeBackfillRunning, http.StatusConflict},
	{scanner.ErrNoBackfill, adminclient.CodeNoBackfill, http.StatusNotFound},
	{scanner.ErrNotConfirmed, adminclient.CodeNotConfirmed, http.StatusPreconditionRequired},

	// Heal.
	{errHealUnavailable, adminclient.CodeNotImplemented, http.StatusNotImplemented},
	{errQuotaUnavailable, adminclient.CodeNotImplemented, http.StatusNotImplemented},

	// Profiling.
	{errProfileBusy, adminclient.CodeProfileBusy, http.StatusConflict},

	// Site replication.
	{errReplicationUnavailable, adminclient.CodeNotImplemented, http.StatusNotImplemented},
	{replication.ErrPeerHasData, adminclient.CodeSiteHasData, http.StatusConflict},
	{replication.ErrNotConfigured, adminclient.CodeNotConfigured, http.StatusConflict},
	{replication.ErrResyncRunning, adminclient.CodeResyncRunning, http.StatusConflict},
	{replication.ErrNoResync, adminclient.CodeNoResync, http.StatusNotFound},
	{replication.ErrInvalidRequest, adminclient.CodeInvalidReplRequest, http.StatusBadRequest},
	{replication.ErrLinkDown, adminclient.CodePeerUnreachable, http.StatusBadGateway},
	{replication.ErrRefused, adminclient.CodePeerRefused, http.StatusBadGateway},
	{objects.ErrBucketNotFound, adminclient.CodeNoSuchBucket, http.StatusNotFound},
	{objects.ErrInvalidArgument, adminclient.CodeBadRequest, http.StatusBadRequest},

	// Warehouses.
	{errTablesUnavailable, adminclient.CodeNotImplemented, http.StatusNotImplemented},
	{catalog.ErrNoSuchWarehouse, adminclient.CodeNoSuchWarehouse, http.StatusNotFound},
	{catalog.ErrWarehouseExists, adminclient.CodeWarehouseExists, http.StatusConflict},
	{catalog.ErrBucketNotWarehouse, adminclient.CodeBucketNotWarehouse, http.StatusConflict},
	{catalog.ErrWarehouseNotEmpty, adminclient.CodeWarehouseNotEmpty, http.StatusConflict},
	{catalog.ErrNoSuchTable, adminclient.CodeNoSuchEntry, http.StatusNotFound},
	{catalog.ErrNoSuchView, adminclient.CodeNoSuchEntry, http.StatusNotFound},
	{catalog.ErrNoSuchNamespace, adminclient.CodeNoSuchNamespace, http.StatusNotFound},
	{catalog.ErrTableExists, adminclient.CodeEntryExists, http.StatusConflict},
	{catalog.ErrViewExists, adminclient.CodeEntryExists, http.StatusConflict},
	{catalog.ErrLocationInUse, adminclient.CodeLocationInUse, http.StatusConflict},
	{catalog.ErrInvalidIdentifier, adminclient.CodeInvalidWarehouse, http.StatusBadRequest},
	{catalog.ErrInvalidRequest, adminclient.CodeInvalidWarehouse, http.StatusBadRequest},

	// The node stopped leading its site while it served the request: the
	// write was refused whole; retried, the next leader serves it.
	{meta.ErrFenced, adminclient.CodeUnavailable, http.StatusServiceUnavailable},

	// The surface itself and the settings.
	{ErrNoRoute, adminclient.CodeNotFound, http.StatusNotFound},
	{ErrContentSHA256Mismatch, adminclient.CodeContentSHA256Mismatch, http.StatusBadRequest},
	{ErrBadRequest, adminclient.CodeBadRequest, http.StatusBadRequest},
	{config.ErrUnknownSubsystem, adminclient.CodeUnknownSubsystem, http.StatusNotFound},
	{config.ErrRefused, adminclient.CodeConfigRefused, http.StatusConflict},
	{config.ErrUnknownKey, adminclient.CodeInvalidConfig, http.StatusBadRequest},
	{config.ErrInvalidValue, adminclient.CodeInvalidConfig, http.StatusBadRequest},
}

// errorEntry maps one sentinel to its wire code and status.
type errorEntry struct {
	err    error
	code   string
	status int
}

// classify returns the wire form of err. Errors outside the table are
// internal: their text is logged, not sent.
func classify(err error) (status int, body adminclient.ErrorBody, internal bool) {
	for _, e := range append(errorTable[:len(errorTable):len(errorTable)], iamErrorTable...) {
		if errors.Is(err, e.err) {
			return e.status, adminclient.ErrorBody{Code: e.code, Message: err.Error()}, false
		}
	}
	return http.StatusInternalServerError,
		adminclient.ErrorBody{Code: adminclient.CodeInternal, Message: "internal error; see the server log"}, true
}

// writeError answers err as the admin JSON error body.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, body, internal := classify(err)
	// The request ID ties what the client reports to the server's log.
	body.RequestID = httprec.NewRequestID()
	w.Header().Set("x-amz-request-id", body.RequestID)
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	if internal {
		s.log.Error("admin call failed", "method", r.Method, "path", r.URL.Path, "requestId", body.RequestID, "err", err)
	}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", adminclient.ContentTypeJSON)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
