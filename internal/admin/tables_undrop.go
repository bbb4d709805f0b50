package admin

import (
	"context"
	"fmt"
	"net/http"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// TablesSoftDelete is the optional capability of a TablesAdmin that serves
// warehouse settings, the listing of soft-deleted tables and views, and
// undrop. Without it those calls answer 501.
type TablesSoftDelete interface {
	SetWarehouseSettings(ctx context.Context, name string, settings map[string]string) (adminclient.Warehouse, error)
	ListDeleted(ctx context.Context, warehouse, kind string, namespace []string) ([]adminclient.DeletedEntry, error)
	Undrop(ctx context.Context, warehouse string, req adminclient.UndropRequest) (adminclient.UndropResult, error)
}

// tablesUndropRoutes are the warehouse settings and soft-delete calls.
var tablesUndropRoutes = []route{
	{http.MethodPut, adminclient.PathWarehouses + "/{name}" + adminclient.PathWarehouseSettingsSuffix,
		"admin.SetWarehouseSettings", (*Server).setWarehouseSettings},
	{http.MethodGet, adminclient.PathWarehouses + "/{name}" + adminclient.PathWarehouseDeletedSuffix,
		"admin.ListDeletedTables", (*Server).listDeleted},
	{http.MethodPost, adminclient.PathWarehouses + "/{name}" + adminclient.PathWarehouseUndropSuffix,
		"admin.UndropTable", (*Server).undrop},
}

// softDeleteCall runs fn against the catalog's soft-delete capability.
func (s *Server) softDeleteCall(fn func(t TablesSoftDelete) error) error {
	t, ok := s.cfg.Tables.(TablesSoftDelete)
	if !ok {
		return errTablesUnavailable
	}
	return fn(t)
}

func (s *Server) setWarehouseSettings(w http.ResponseWriter, r *http.Request, c *call) error {
	var req adminclient.WarehouseSettingsRequest
	if err := s.readTablesBody(w, r, &req); err != nil {
		return err
	}
	name := r.PathValue("name")
	c.msg = fmt.Sprintf("warehouse %s settings %v", name, req.Settings)
	return s.softDeleteCall(func(t TablesSoftDelete) error {
		wh, err := t.SetWarehouseSettings(r.Context(), name, req.Settings)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, wh)
		return nil
	})
}

func (s *Server) listDeleted(w http.ResponseWriter, r *http.Request, _ *call) error {
	q := r.URL.Query()
	return s.softDeleteCall(func(t TablesSoftDelete) error {
		es, err := t.ListDeleted(r.Context(), r.PathValue("name"), q.Get("kind"), q["level"])
		if err != nil {
			return err
		}
		if es == nil {
			es = []adminclient.DeletedEntry{}
		}
		writeJSON(w, http.StatusOK, adminclient.DeletedList{Entries: es})
		return nil
	})
}

func (s *Server) undrop(w http.ResponseWriter, r *http.Request, c *call) error {
	var req adminclient.UndropRequest
	if err := s.readTablesBody(w, r, &req); err != nil {
		return err
	}
	name := r.PathValue("name")
	c.msg = fmt.Sprintf("warehouse %s undrop %s %v.%s as %q", name, req.Kind, req.Namespace, req.Name, req.As)
	return s.softDeleteCall(func(t TablesSoftDelete) error {
		res, err := t.Undrop(r.Context(), name, req)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, res)
		return nil
	})
}
