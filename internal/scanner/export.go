package scanner

import (
	"context"
	"encoding/json"

	"github.com/twinlake/twinlake/internal/catalog"
)

// Export is a site's Tables catalog as a rebuilding replica reads it from
// the primary (peer API).
type Export struct {
	Warehouses []WarehouseExport `json:"warehouses"`
}

// WarehouseExport is one warehouse of an Export.
type WarehouseExport struct {
	Name       string           `json:"name"`
	Encryption string           `json:"encryption,omitempty"`
	Namespaces []catalog.Record `json:"namespaces"`
	Entries    []catalog.Record `json:"entries"`
}

// ExportJSON returns this site's catalog export.
func (s *Scanner) ExportJSON(ctx context.Context) ([]byte, error) {
	var ex Export
	for _, b := range s.cfg.Objects.ListBuckets(ctx) {
		if !b.Warehouse {
			continue
		}
		local, err := s.cfg.Catalog.ExportWarehouse(ctx, b.Name)
		if err != nil {
			return nil, err
		}
		we := WarehouseExport{Name: b.Name, Encryption: b.Encryption, Namespaces: []catalog.Record{}, Entries: []catalog.Record{}}
		for _, ns := range local.Namespaces {
			we.Namespaces = append(we.Namespaces, catalog.Record{Kind: catalog.KindNamespace, Namespace: ns.Levels, Properties: ns.Properties})
		}
		for _, e := range local.Entries {
			we.Entries = append(we.Entries, s.cfg.Catalog.IdentityOf(e))
		}
		ex.Warehouses = append(ex.Warehouses, we)
	}
	return json.Marshal(ex)
}
