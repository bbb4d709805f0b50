package adminclient

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Paths of the soft-delete calls; each follows a warehouse's path.
const (
	PathWarehouseSettingsSuffix = "/settings"
	PathWarehouseDeletedSuffix  = "/deleted"
	PathWarehouseUndropSuffix   = "/undrop"
)

// Error codes of the soft-delete calls.
const (
	CodeNoSuchEntry     = "NoSuchTableOrView" // 404: nothing soft-deleted of that name (or its retention ended)
	CodeNoSuchNamespace = "NoSuchNamespace"   // 404: undrop into a namespace that was dropped since
	CodeEntryExists     = "TableOrViewExists" // 409: the undrop's target name is taken
	CodeLocationInUse   = "LocationInUse"     // 409: a live table took the dropped table's location
)

// Kinds of catalog entries, as the soft-delete calls name them.
const (
	KindTable = "table"
	KindView  = "view"
)

// WarehouseSettingsRequest sets warehouse settings by name, such as
// "soft_delete": "7d" or "off".
type WarehouseSettingsRequest struct {
	Settings map[string]string `json:"settings"`
}

// DeletedEntry is a soft-deleted table or view.
type DeletedEntry struct {
	Kind             string    `json:"kind"`
	Namespace        []string  `json:"namespace"`
	Name             string    `json:"name"`
	UUID             string    `json:"uuid"`
	Location         string    `json:"location"`
	MetadataLocation string    `json:"metadataLocation"`
	Dropped          time.Time `json:"dropped"`
	Expires          time.Time `json:"expires"`
}

// DeletedList is the answer of a deleted listing.
type DeletedList struct {
	Entries []DeletedEntry `json:"entries"`
}

// UndropRequest brings back a soft-deleted table or view, under As if set.
type UndropRequest struct {
	Kind      string   `json:"kind"`
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
	As        string   `json:"as,omitempty"`
	// UUID picks one of several dropped incarnations; "" is the newest.
	UUID string `json:"uuid,omitempty"`
}

// UndropResult is the restored table or view.
type UndropResult struct {
	Kind             string   `json:"kind"`
	Namespace        []string `json:"namespace"`
	Name             string   `json:"name"`
	UUID             string   `json:"uuid"`
	MetadataLocation string   `json:"metadataLocation"`
}

// SetWarehouseSettings changes warehouse settings and returns the warehouse
// after the change.
func (c *Client) SetWarehouseSettings(ctx context.Context, name string, settings map[string]string) (Warehouse, error) {
	var w Warehouse
	err := c.call(ctx, http.MethodPut, warehousePath(name)+PathWarehouseSettingsSuffix, WarehouseSettingsRequest{Settings: settings}, &w)
	return w, err
}

// ListDeleted lists the soft-deleted tables or views (kind) of a namespace
// whose retention has not ended.
func (c *Client) ListDeleted(ctx context.Context, warehouse, kind string, namespace []string) ([]DeletedEntry, error) {
	var l DeletedList
	q := url.Values{"kind": {kind}, "level": namespace}
	err := c.callQuery(ctx, http.MethodGet, warehousePath(warehouse)+PathWarehouseDeletedSuffix, q, &l)
	return l.Entries, err
}

// Undrop restores a soft-deleted table or view with its whole history.
func (c *Client) Undrop(ctx context.Context, warehouse string, req UndropRequest) (UndropResult, error) {
	var res UndropResult
	err := c.call(ctx, http.MethodPost, warehousePath(warehouse)+PathWarehouseUndropSuffix, req, &res)
	return res, err
}
