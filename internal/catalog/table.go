package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// Table is a table's current state. Metadata is set by calls that build or
// parse it (create, commit, register); MetadataJSON always is.
type Table struct {
	Ident            Ident
	UUID             string
	Location         string
	MetadataLocation string // "" for a staged (uncommitted) create
	Version          int64
	Metadata         table.Metadata
	MetadataJSON     []byte
}

// CreateTableRequest describes a new table. PartitionSpec and SortOrder may
// refer to the request schema's field IDs; fresh IDs are assigned.
type CreateTableRequest struct {
	Ident         Ident
	Schema        *iceberg.Schema
	Location      string // "" means the default, s3://<warehouse>/<ns...>/<name>-<uuid hex>
	PartitionSpec *iceberg.PartitionSpec
	SortOrder     *table.SortOrder
	Properties    map[string]string
	// Stage builds the metadata without creating the table: nothing is
	// written and the table stays invisible until a commit with the
	// assert-create requirement creates it.
	Stage bool
}

// CreateTable creates a table (or stages one) and returns it. A location
// that overlaps a live table's is ErrLocationInUse.
func (c *Catalog) CreateTable(ctx context.Context, wh string, req CreateTableRequest) (*Table, error) {
	if err := ValidateIdent(req.Ident); err != nil {
		return nil, err
	}
	if req.Schema == nil {
		return nil, fmt.Errorf("%w: a schema is required", ErrInvalidRequest)
	}
	if _, err := c.Warehouse(ctx, wh); err != nil {
		return nil, err
	}
	tableUUID := uuid.New()
	loc := strings.TrimRight(req.Location, "/")
	if loc == "" {
		loc = defaultTableLocation(wh, req.Ident, tableUUID)
	}
	if _, err := locationPath(wh, loc); err != nil {
		return nil, err
	}
	order := table.UnsortedSortOrder
	if req.SortOrder != nil {
		order = *req.SortOrder
	}
	md, err := table.NewMetadataWithUUID(req.Schema, req.PartitionSpec, order, loc, req.Properties, tableUUID)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	data, err := json.Marshal(md)
	if err != nil {
		return nil, err
	}
	c.structMu.RLock()
	defer c.structMu.RUnlock()
	unlock := c.lockSet(entryKey(pfxTable, wh, req.Ident), entryKey(pfxView, wh, req.Ident))
	defer unlock()
	if _, err := c.getNamespace(wh, req.Ident.Namespace); err != nil {
		return nil, err
	}
	if err := c.checkFree(tableKind, wh, req.Ident); err != nil {
		return nil, err
	}
	c.locMu.Lock()
	defer c.locMu.Unlock()
	if err := c.checkLocation(wh, req.Ident, loc); err != nil {
		return nil, err
	}
	t := &Table{Ident: req.Ident, UUID: md.TableUUID().String(), Location: loc, Metadata: md, MetadataJSON: data}
	if req.Stage {
		return t, nil
	}
	p := &pendingTable{id: req.Ident, e: entry{ID: newID(), UUID: t.UUID, Location: loc, UpdatedMS: c.nowMS()},
		md: md, data: data, changed: true}
	p.e.MetadataLocation = metadataFileLocation(loc, 0)
	if err := c.writeCommits(ctx, wh, []*pendingTable{p}, nil); err != nil {
		return nil, err
	}
	return p.table(), nil
}

// LoadTable returns a table's current metadata location and JSON. It reads
// only the meta store.
func (c *Catalog) LoadTable(ctx context.Context, wh string, id Ident) (*Table, error) {
	e, data, err := c.loadEntry(ctx, tableKind, wh, id)
	if err != nil {
		return nil, err
	}
	return &Table{Ident: id, UUID: e.UUID, Location: e.Location, MetadataLocation: e.MetadataLocation,
		Version: e.Version, MetadataJSON: data}, nil
}

// TableExists reports whether the table exists.
func (c *Catalog) TableExists(ctx context.Context, wh string, id Ident) error {
	return c.entryExists(ctx, tableKind, wh, id)
}

// ListTables lists the tables of a namespace, sorted by name, one page at a
// time.
func (c *Catalog) ListTables(ctx context.Context, wh string, ns []string, page Page) ([]Ident, string, error) {
	return c.listEntries(ctx, tableKind, wh, ns, page)
}

// RenameTable renames a table, possibly into another namespace.
func (c *Catalog) RenameTable(ctx context.Context, wh string, from, to Ident) error {
	return c.renameEntry(ctx, tableKind, wh, from, to)
}

// DropTable drops a table. With purge it then deletes the files the
// table's metadata references (see purge; delete markers, in a versioned
// warehouse), never others under its location; the identity tombstone keeps
// the last metadata location either way. In a warehouse with soft delete
// the table is kept as deleted, purge or not, until its retention ends
// (table_undrop.go).
func (c *Catalog) DropTable(ctx context.Context, wh string, id Ident, purge bool) error {
	e, metadata, err := c.dropEntry(ctx, tableKind, wh, id)
	if err != nil || !purge || metadata == nil {
		return err
	}
	return c.purge(ctx, wh, id, e, metadata)
}

// RegisterOptions adjust RegisterTable.
type RegisterOptions struct {
	// Overwrite replaces the metadata location of an existing table of that
	// name (the spec's overwrite=true) instead of answering ErrTableExists.
	Overwrite bool
}

// RegisterTable adds a table from an existing metadata file in the
// warehouse, without writing a new one; with opts.Overwrite an existing
// table of that name is pointed at the file in one batch (a view of that
// name is still ErrViewExists). A location that overlaps another live
// table's is ErrLocationInUse (as registering a live table's own metadata
// under a second name would be); the replaced table's own location is not.
func (c *Catalog) RegisterTable(ctx context.Context, wh string, id Ident, metadataLocation string, opts RegisterOptions) (*Table, error) {
	if err := ValidateIdent(id); err != nil {
		return nil, err
	}
	if _, err := c.Warehouse(ctx, wh); err != nil {
		return nil, err
	}
	data, err := c.readFile(ctx, wh, metadataLocation)
	if err != nil {
		return nil, err
	}
	md, err := table.ParseMetadataBytes(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidRequest, metadataLocation, err)
	}
	if _, err := locationPath(wh, md.Location()); err != nil {
		return nil, err
	}
	c.structMu.RLock()
	defer c.structMu.RUnlock()
	unlock := c.lockSet(entryKey(pfxTable, wh, id), entryKey(pfxView, wh, id))
	defer unlock()
	if _, err := c.getNamespace(wh, id.Namespace); err != nil {
		return nil, err
	}
	p := &pendingTable{id: id}
	if err := c.checkFree(tableKind, wh, id); err != nil {
		prev, gerr := c.getEntry(tableKind, wh, id)
		if !opts.Overwrite || gerr != nil {
			return nil, err
		}
		p.prev, p.existed = prev, true
	}
	c.locMu.Lock()
	defer c.locMu.Unlock()
	if err := c.checkLocation(wh, id, md.Location()); err != nil {
		return nil, err
	}
	// A new entry ID: the metadata cache is keyed by ID and version, and the
	// registered file's version may equal the replaced one's.
	p.e = entry{ID: newID(), UUID: md.TableUUID().String(), Location: md.Location(),
		MetadataLocation: metadataLocation, Version: parseMetadataVersion(metadataLocation), UpdatedMS: c.nowMS()}
	p.md, p.data, p.changed, p.registered = md, data, true, true
	if err := c.writeCommits(ctx, wh, []*pendingTable{p}, nil); err != nil {
		return nil, err
	}
	return p.table(), nil
}
