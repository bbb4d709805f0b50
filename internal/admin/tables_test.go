package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/admin"
	"github.com/twinlake/twinlake/internal/admin/admintest"
	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/catalog"
)

// fakeTables is an in-memory admin.TablesAdmin.
type fakeTables struct {
	whs map[string]adminclient.Warehouse
}

func (f *fakeTables) CreateWarehouse(_ context.Context, name string, req adminclient.WarehouseCreateRequest) (adminclient.Warehouse, error) {
	if w, ok := f.whs[name]; ok {
		if req.IgnoreExisting {
			return w, nil
		}
		return adminclient.Warehouse{}, fmt.Errorf("%w: %s", catalog.ErrWarehouseExists, name)
	}
	w := adminclient.Warehouse{Name: name, Created: time.Unix(1, 0).UTC()}
	f.whs[name] = w
	w.Changed = true
	return w, nil
}

func (f *fakeTables) ListWarehouses(context.Context) ([]adminclient.Warehouse, error) {
	var out []adminclient.Warehouse
	for _, w := range f.whs {
		out = append(out, w)
	}
	return out, nil
}

func (f *fakeTables) Warehouse(_ context.Context, name string) (adminclient.Warehouse, error) {
	w, ok := f.whs[name]
	if !ok {
		return w, catalog.ErrNoSuchWarehouse
	}
	return w, nil
}

func (f *fakeTables) RemoveWarehouse(_ context.Context, name string) error {
	if _, ok := f.whs[name]; !ok {
		return catalog.ErrNoSuchWarehouse
	}
	delete(f.whs, name)
	return nil
}

func (f *fakeTables) SetWarehouseEncryption(_ context.Context, name, alg string) (adminclient.Warehouse, error) {
	w, ok := f.whs[name]
	if !ok {
		return w, catalog.ErrNoSuchWarehouse
	}
	if alg != "" && alg != "AES256" {
		return w, fmt.Errorf("%w: algorithm %q", catalog.ErrInvalidRequest, alg)
	}
	w.Encryption = alg
	f.whs[name] = w
	return w, nil
}

func TestWarehouseCalls(t *testing.T) {
	site := admintest.Start(t, func(c *admin.Config) { c.Tables = &fakeTables{whs: map[string]adminclient.Warehouse{}} })
	c := site.Client(t, admintest.RootAccessKey, admintest.RootSecretKey)
	ctx := t.Context()
	w, err := c.CreateWarehouse(ctx, "lake", adminclient.WarehouseCreateRequest{})
	if err != nil || !w.Changed {
		t.Fatalf("create = %+v, %v", w, err)
	}
	_, err = c.CreateWarehouse(ctx, "lake", adminclient.WarehouseCreateRequest{})
	wantAPIError(t, err, adminclient.CodeWarehouseExists, http.StatusConflict)
	if w, err := c.CreateWarehouse(ctx, "lake", adminclient.WarehouseCreateRequest{IgnoreExisting: true}); err != nil || w.Changed {
		t.Errorf("ignore existing = %+v, %v", w, err)
	}
	if ws, err := c.ListWarehouses(ctx); err != nil || len(ws) != 1 {
		t.Errorf("list = %v, %v", ws, err)
	}
	if w, err := c.SetWarehouseEncryption(ctx, "lake", "AES256"); err != nil || w.Encryption != "AES256" {
		t.Errorf("encrypt = %+v, %v", w, err)
	}
	_, err = c.SetWarehouseEncryption(ctx, "lake", "ROT13")
	wantAPIError(t, err, adminclient.CodeInvalidWarehouse, http.StatusBadRequest)
	if err := c.RemoveWarehouse(ctx, "lake"); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetWarehouse(ctx, "lake")
	wantAPIError(t, err, adminclient.CodeNoSuchWarehouse, http.StatusNotFound)
	// Only administrators.
	u := site.Client(t, admintest.UserAccessKey, "x")
	_, err = u.ListWarehouses(ctx)
	if err == nil {
		t.Error("a non-administrator listed warehouses")
	}
}

func TestWarehouseCallsWithoutCatalog(t *testing.T) {
	site := admintest.Start(t, nil)
	c := site.Client(t, admintest.RootAccessKey, admintest.RootSecretKey)
	_, err := c.ListWarehouses(t.Context())
	wantAPIError(t, err, adminclient.CodeNotImplemented, http.StatusNotImplemented)
}
