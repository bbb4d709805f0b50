package adminclient

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Paths of the warehouse admin calls; a warehouse name follows
// PathWarehouses, and PathWarehouseEncryptionSuffix follows the name.
const (
	PathWarehouses                = "/twinlake/admin/v1/tables/warehouses"
	PathWarehouseEncryptionSuffix = "/encryption"
)

// Error codes of the warehouse admin calls.
const (
	CodeNoSuchWarehouse    = "NoSuchWarehouse"        // 404
	CodeWarehouseExists    = "WarehouseAlreadyExists" // 409
	CodeBucketNotWarehouse = "BucketNotWarehouse"     // 409: a plain bucket has the name; pass upgradeExisting
	CodeWarehouseNotEmpty  = "WarehouseNotEmpty"      // 409: namespaces remain
	CodeInvalidWarehouse   = "InvalidWarehouse"       // 400: bad name or encryption algorithm
	CodeNotImplemented     = "NotImplemented"         // 501: the server has no Tables support
)

// Warehouse describes one warehouse bucket.
type Warehouse struct {
	Name string `json:"name"`
	// Created is when the bucket was created.
	Created time.Time `json:"created"`
	// Encryption is the default encryption of new objects ("AES256") or "".
	Encryption string `json:"encryption,omitempty"`
	// SoftDelete is the soft-delete retention ("7d") or "off".
	SoftDelete string `json:"softDelete,omitempty"`
	// Maintenance is the table maintenance policy, as the warehouse
	// settings set it ("maintenance=on expire_older_than=5d retain_last=1
	// orphans_older_than=3d").
	Maintenance string `json:"maintenance,omitempty"`
	// Changed is set by create when the call created or upgraded it.
	Changed bool `json:"changed,omitempty"`
}

// WarehouseCreateRequest is the body of a warehouse create (PUT).
type WarehouseCreateRequest struct {
	// IgnoreExisting succeeds if the warehouse already exists.
	IgnoreExisting bool `json:"ignoreExisting,omitempty"`
	// UpgradeExisting turns an existing plain bucket into a warehouse.
	UpgradeExisting bool `json:"upgradeExisting,omitempty"`
}

// WarehouseList is the answer of a warehouse list.
type WarehouseList struct {
	Warehouses []Warehouse `json:"warehouses"`
}

// EncryptionRequest sets (Algorithm "AES256") or clears ("") a warehouse's
// default encryption.
type EncryptionRequest struct {
	Algorithm string `json:"algorithm"`
}

func warehousePath(name string) string { return PathWarehouses + "/" + url.PathEscape(name) }

// CreateWarehouse creates a versioned bucket flagged as warehouse (or flags
// an existing one as req allows) and returns it.
func (c *Client) CreateWarehouse(ctx context.Context, name string, req WarehouseCreateRequest) (Warehouse, error) {
	var w Warehouse
	err := c.call(ctx, http.MethodPut, warehousePath(name), req, &w)
	return w, err
}

// ListWarehouses returns every warehouse of the site.
func (c *Client) ListWarehouses(ctx context.Context) ([]Warehouse, error) {
	var l WarehouseList
	err := c.call(ctx, http.MethodGet, PathWarehouses, nil, &l)
	return l.Warehouses, err
}

// GetWarehouse returns one warehouse.
func (c *Client) GetWarehouse(ctx context.Context, name string) (Warehouse, error) {
	var w Warehouse
	err := c.call(ctx, http.MethodGet, warehousePath(name), nil, &w)
	return w, err
}

// RemoveWarehouse clears a warehouse's flag; it refuses while namespaces
// remain (CodeWarehouseNotEmpty). The bucket and its objects stay.
func (c *Client) RemoveWarehouse(ctx context.Context, name string) error {
	resp, err := c.do(ctx, http.MethodDelete, warehousePath(name), nil, nil)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// SetWarehouseEncryption sets ("AES256") or clears ("") the warehouse's
// default encryption and returns the warehouse after the change.
func (c *Client) SetWarehouseEncryption(ctx context.Context, name, algorithm string) (Warehouse, error) {
	var w Warehouse
	err := c.call(ctx, http.MethodPut, warehousePath(name)+PathWarehouseEncryptionSuffix, EncryptionRequest{Algorithm: algorithm}, &w)
	return w, err
}
