package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// TablesAdmin manages warehouses for the warehouse admin calls.
// internal/app implements it over the catalog; errors are the catalog's
// sentinels.
type TablesAdmin interface {
	CreateWarehouse(ctx context.Context, name string, req adminclient.WarehouseCreateRequest) (adminclient.Warehouse, error)
	ListWarehouses(ctx context.Context) ([]adminclient.Warehouse, error)
	Warehouse(ctx context.Context, name string) (adminclient.Warehouse, error)
	RemoveWarehouse(ctx context.Context, name string) error
	SetWarehouseEncryption(ctx context.Context, name, algorithm string) (adminclient.Warehouse, error)
}

// tablesRoutes are the Tables (warehouse) management calls.
var tablesRoutes = []route{
	{http.MethodGet, adminclient.PathWarehouses, "admin.ListWarehouses", (*Server).listWarehouses},
	{http.MethodGet, adminclient.PathWarehouses + "/{name}", "admin.GetWarehouse", (*Server).getWarehouse},
	{http.MethodPut, adminclient.PathWarehouses + "/{name}", "admin.CreateWarehouse", (*Server).createWarehouse},
	{http.MethodDelete, adminclient.PathWarehouses + "/{name}", "admin.RemoveWarehouse", (*Server).removeWarehouse},
	{http.MethodPut, adminclient.PathWarehouses + "/{name}" + adminclient.PathWarehouseEncryptionSuffix,
		"admin.SetWarehouseEncryption", (*Server).setWarehouseEncryption},
}

// errTablesUnavailable is answered (501) when the server runs without a
// catalog (Config.Tables is nil).
var errTablesUnavailable = errors.New("this server has no Tables catalog")

// tablesCall runs fn against the catalog; its error goes back to wrap,
// which answers it through the one error table.
func (s *Server) tablesCall(w http.ResponseWriter, fn func(t TablesAdmin) error) error {
	if s.cfg.Tables == nil {
		return errTablesUnavailable
	}
	return fn(s.cfg.Tables)
}

func (s *Server) listWarehouses(w http.ResponseWriter, r *http.Request, _ *call) error {
	return s.tablesCall(w, func(t TablesAdmin) error {
		ws, err := t.ListWarehouses(r.Context())
		if err != nil {
			return err
		}
		if ws == nil {
			ws = []adminclient.Warehouse{}
		}
		writeJSON(w, http.StatusOK, adminclient.WarehouseList{Warehouses: ws})
		return nil
	})
}

func (s *Server) getWarehouse(w http.ResponseWriter, r *http.Request, _ *call) error {
	return s.tablesCall(w, func(t TablesAdmin) error {
		wh, err := t.Warehouse(r.Context(), r.PathValue("name"))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, wh)
		return nil
	})
}

func (s *Server) createWarehouse(w http.ResponseWriter, r *http.Request, c *call) error {
	var req adminclient.WarehouseCreateRequest
	if err := s.readTablesBody(w, r, &req); err != nil {
		return err
	}
	name := r.PathValue("name")
	c.msg = "warehouse " + name
	return s.tablesCall(w, func(t TablesAdmin) error {
		wh, err := t.CreateWarehouse(r.Context(), name, req)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, wh)
		return nil
	})
}

func (s *Server) removeWarehouse(w http.ResponseWriter, r *http.Request, c *call) error {
	name := r.PathValue("name")
	c.msg = "warehouse " + name
	return s.tablesCall(w, func(t TablesAdmin) error {
		if err := t.RemoveWarehouse(r.Context(), name); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	})
}

func (s *Server) setWarehouseEncryption(w http.ResponseWriter, r *http.Request, c *call) error {
	var req adminclient.EncryptionRequest
	if err := s.readTablesBody(w, r, &req); err != nil {
		return err
	}
	name := r.PathValue("name")
	c.msg = fmt.Sprintf("warehouse %s encryption=%q", name, req.Algorithm)
	return s.tablesCall(w, func(t TablesAdmin) error {
		wh, err := t.SetWarehouseEncryption(r.Context(), name, req.Algorithm)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, wh)
		return nil
	})
}

// readTablesBody reads a signed JSON body; an empty body leaves v zero.
func (s *Server) readTablesBody(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := s.readBody(w, r)
	if err != nil || len(body) == 0 {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	return nil
}
