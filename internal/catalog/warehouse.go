package catalog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
)

// Warehouse describes one warehouse bucket.
type Warehouse struct {
	Name       string
	Created    time.Time
	Encryption string // default encryption ("AES256") or ""
}

// CreateWarehouseOptions adjust CreateWarehouse on an existing bucket.
type CreateWarehouseOptions struct {
	// IgnoreExisting succeeds if the warehouse already exists.
	IgnoreExisting bool
	// UpgradeExisting turns an existing plain bucket into a warehouse
	// (enabling versioning), keeping its objects.
	UpgradeExisting bool
}

// CreateWarehouse creates a versioned bucket flagged as warehouse, or flags an
// existing one as opts allow. It reports whether anything changed.
func (c *Catalog) CreateWarehouse(ctx context.Context, name string, opts CreateWarehouseOptions) (Warehouse, bool, error) {
	b, err := c.obj.Bucket(ctx, name)
	switch {
	case errors.Is(err, objects.ErrBucketNotFound):
		return c.createWarehouseBucket(ctx, name)
	case err != nil:
		return Warehouse{}, false, err
	case b.Warehouse && opts.IgnoreExisting:
		return toWarehouse(b), false, nil
	case b.Warehouse:
		return Warehouse{}, false, fmt.Errorf("%w: %s", ErrWarehouseExists, name)
	case !opts.UpgradeExisting:
		return Warehouse{}, false, fmt.Errorf("%w: %s (upgrade it to a warehouse explicitly)", ErrBucketNotWarehouse, name)
	}
	err = c.obj.UpdateBucket(ctx, name, func(b *objects.Bucket) error {
		b.Versioning = objects.VersioningEnabled
		b.Warehouse = true
		return nil
	})
	if err != nil {
		return Warehouse{}, false, err
	}
	return c.createdWarehouse(ctx, name)
}

// createWarehouseBucket makes a new bucket that is a warehouse from its
// first commit.
func (c *Catalog) createWarehouseBucket(ctx context.Context, name string) (Warehouse, bool, error) {
	err := c.obj.CreateWarehouseBucket(ctx, name)
	switch {
	case errors.Is(err, objects.ErrInvalidBucketName):
		return Warehouse{}, false, fmt.Errorf("%w: %q is not a valid bucket name", ErrInvalidIdentifier, name)
	case err != nil:
		return Warehouse{}, false, err
	}
	return c.createdWarehouse(ctx, name)
}

func (c *Catalog) createdWarehouse(ctx context.Context, name string) (Warehouse, bool, error) {
	b, err := c.obj.Bucket(ctx, name)
	if err != nil {
		return Warehouse{}, false, err
	}
	c.log.Info("warehouse created", "warehouse", name)
	return toWarehouse(b), true, nil
}

func toWarehouse(b objects.Bucket) Warehouse {
	return Warehouse{Name: b.Name, Created: b.Created, Encryption: b.Encryption}
}

// Warehouse returns the named warehouse, or ErrNoSuchWarehouse if no bucket
// of that name is flagged as one.
func (c *Catalog) Warehouse(ctx context.Context, name string) (Warehouse, error) {
	b, err := c.obj.Bucket(ctx, name)
	if errors.Is(err, objects.ErrBucketNotFound) || (err == nil && !b.Warehouse) {
		return Warehouse{}, fmt.Errorf("%w: %q", ErrNoSuchWarehouse, name)
	}
	if err != nil {
		return Warehouse{}, err
	}
	return toWarehouse(b), nil
}

// ListWarehouses returns every warehouse, sorted by name.
func (c *Catalog) ListWarehouses(ctx context.Context) []Warehouse {
	var out []Warehouse
	for _, b := range c.obj.ListBuckets(ctx) {
		if b.Warehouse {
			out = append(out, toWarehouse(b))
		}
	}
	return out
}

// RemoveWarehouse clears the warehouse flag of a bucket that holds no
// namespaces. The bucket and its objects, identity-record tombstones
// included, stay; remove the bucket with rb if it is no longer wanted.
func (c *Catalog) RemoveWarehouse(ctx context.Context, name string) error {
	c.structMu.Lock()
	defer c.structMu.Unlock()
	if _, err := c.Warehouse(ctx, name); err != nil {
		return err
	}
	empty, err := c.rangeEmpty(warehouseScanPrefix(pfxNamespace, name))
	if err != nil {
		return err
	}
	if !empty {
		return fmt.Errorf("%w: %s", ErrWarehouseNotEmpty, name)
	}
	if err := c.obj.UpdateBucket(ctx, name, func(b *objects.Bucket) error {
		b.Warehouse = false
		return nil
	}); err != nil {
		return err
	}
	c.log.Info("warehouse removed", "warehouse", name)
	return nil
}

// SetWarehouseEncryption sets the warehouse's default encryption ("AES256",
// or "" to clear it); new metadata, data and identity files are encrypted.
func (c *Catalog) SetWarehouseEncryption(ctx context.Context, name, alg string) (Warehouse, error) {
	if _, err := c.Warehouse(ctx, name); err != nil {
		return Warehouse{}, err
	}
	if err := c.obj.SetBucketEncryption(ctx, name, alg); err != nil {
		if errors.Is(err, objects.ErrInvalidArgument) || errors.Is(err, objects.ErrSSEUnavailable) {
			return Warehouse{}, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
		}
		return Warehouse{}, err
	}
	return c.Warehouse(ctx, name)
}

func (c *Catalog) rangeEmpty(prefix []byte) (bool, error) {
	empty := true
	err := meta.Scan(c.meta, prefix, meta.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		empty = false
		return false, nil
	})
	return empty, err
}

// Stats counts what the catalog holds, for gauges.
type Stats struct {
	Warehouses, Namespaces, Tables, Views int64
}

// Stats counts warehouses, namespaces, tables and views. It scans the
// catalog's small index keys, never metadata.
func (c *Catalog) Stats(ctx context.Context) (Stats, error) {
	s := Stats{Warehouses: int64(len(c.ListWarehouses(ctx)))}
	for _, p := range []struct {
		pfx string
		n   *int64
	}{{pfxNamespace, &s.Namespaces}, {pfxTable, &s.Tables}, {pfxView, &s.Views}} {
		err := meta.Scan(c.meta, []byte(p.pfx), meta.PrefixEnd([]byte(p.pfx)), func(k, v []byte) (bool, error) {
			*p.n++
			return true, nil
		})
		if err != nil {
			return s, err
		}
	}
	return s, nil
}
