package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/scanner"
)

// TablesReplication is the Tables replica machinery as the admin API drives
// it; *scanner.Scanner implements it.
type TablesReplication interface {
	Status(offset, limit int) scanner.Status
	Failover(ctx context.Context) error
	BackfillStart(ctx context.Context) (scanner.BackfillJob, error)
	BackfillStatus(ctx context.Context) (scanner.BackfillJob, error)
	BackfillCancel(ctx context.Context) (scanner.BackfillJob, error)
	ResyncOpen(ctx context.Context) (scanner.RebuildStatus, error)
	ResyncRebuild(ctx context.Context, confirmed bool) (scanner.RebuildStatus, error)
	CatalogReset(ctx context.Context, confirmed bool) (string, error)
}

// tablesReplRoutes are the Tables replication calls.
var tablesReplRoutes = []route{
	{http.MethodGet, adminclient.PathTablesReplicationStatus, "admin.TablesReplicationStatus", (*Server).tablesReplStatus},
	{http.MethodPost, adminclient.PathTablesReplicationFailover, "admin.TablesFailover", (*Server).tablesFailover},
	{http.MethodPost, adminclient.PathTablesReplicationBackfill, "admin.TablesBackfillStart", (*Server).tablesBackfill},
	{http.MethodGet, adminclient.PathTablesReplicationBackfill, "admin.TablesBackfillStatus", (*Server).tablesBackfill},
	{http.MethodDelete, adminclient.PathTablesReplicationBackfill, "admin.TablesBackfillCancel", (*Server).tablesBackfill},
	{http.MethodPost, adminclient.PathTablesResyncOpen, "admin.TablesResyncOpen", (*Server).tablesResyncOpen},
	{http.MethodPost, adminclient.PathTablesResyncRebuild, "admin.TablesResyncRebuild", (*Server).tablesResyncRebuild},
	{http.MethodPost, adminclient.PathTablesCatalogReset, "admin.TablesCatalogReset", (*Server).tablesCatalogReset},
}

var errTablesReplUnavailable = errors.New("this server runs without Tables replication")

func (s *Server) tablesReplCall(w http.ResponseWriter, fn func(TablesReplication) (any, error)) error {
	var out any
	err := errTablesReplUnavailable
	if s.cfg.TablesReplication != nil {
		out, err = fn(s.cfg.TablesReplication)
	}
	if err == nil {
		writeJSON(w, http.StatusOK, out)
	}
	return err
}

func queryInt(r *http.Request, name string) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: %s %q", ErrBadRequest, name, v)
	}
	return n, nil
}

func (s *Server) tablesReplStatus(w http.ResponseWriter, r *http.Request, _ *call) error {
	offset, err := queryInt(r, "offset")
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	return s.tablesReplCall(w, func(t TablesReplication) (any, error) { return t.Status(offset, limit), nil })
}

func (s *Server) tablesFailover(w http.ResponseWriter, r *http.Request, c *call) error {
	c.msg = "failover requested"
	return s.tablesReplCall(w, func(t TablesReplication) (any, error) {
		if err := t.Failover(r.Context()); err != nil {
			return nil, err
		}
		return t.Status(0, 1), nil
	})
}

func (s *Server) tablesBackfill(w http.ResponseWriter, r *http.Request, c *call) error {
	return s.tablesReplCall(w, func(t TablesReplication) (any, error) {
		switch r.Method {
		case http.MethodPost:
			c.msg = "backfill start"
			return t.BackfillStart(r.Context())
		case http.MethodDelete:
			c.msg = "backfill cancel"
			return t.BackfillCancel(r.Context())
		}
		return t.BackfillStatus(r.Context())
	})
}

func (s *Server) tablesResyncOpen(w http.ResponseWriter, r *http.Request, c *call) error {
	c.msg = "catalog resync window opened"
	return s.tablesReplCall(w, func(t TablesReplication) (any, error) { return t.ResyncOpen(r.Context()) })
}

func (s *Server) tablesResyncRebuild(w http.ResponseWriter, r *http.Request, c *call) error {
	confirm := r.URL.Query().Get("confirm") == "true"
	c.msg = "catalog rebuild requested"
	return s.tablesReplCall(w, func(t TablesReplication) (any, error) { return t.ResyncRebuild(r.Context(), confirm) })
}

func (s *Server) tablesCatalogReset(w http.ResponseWriter, r *http.Request, c *call) error {
	confirm := r.URL.Query().Get("confirm") == "true"
	c.msg = "catalog reset requested"
	return s.tablesReplCall(w, func(t TablesReplication) (any, error) {
		label, err := t.CatalogReset(r.Context(), confirm)
		return adminclient.CatalogResetResult{Backup: label}, err
	})
}
