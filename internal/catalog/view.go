package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/view"
	"github.com/google/uuid"
)

// View is a view's current state. Metadata is set by create and commit;
// MetadataJSON always is.
type View struct {
	Ident            Ident
	UUID             string
	Location         string
	MetadataLocation string
	Version          int64
	Metadata         view.Metadata
	MetadataJSON     []byte
}

// CreateViewRequest describes a new view.
type CreateViewRequest struct {
	Ident       Ident
	Schema      *iceberg.Schema
	Location    string // "" means the default, s3://<warehouse>/<ns...>/<name>
	Properties  map[string]string
	ViewVersion *view.Version
}

// ViewCommit is a change to a view (a replace): requirements checked against
// its current metadata, then updates applied in order.
type ViewCommit struct {
	Ident        Ident
	Requirements []view.Requirement
	Updates      []view.Update
}

// CreateView creates a view.
func (c *Catalog) CreateView(ctx context.Context, wh string, req CreateViewRequest) (*View, error) {
	if err := ValidateIdent(req.Ident); err != nil {
		return nil, err
	}
	if req.Schema == nil || req.ViewVersion == nil {
		return nil, fmt.Errorf("%w: a view needs a schema and a view-version", ErrInvalidRequest)
	}
	if _, err := c.Warehouse(ctx, wh); err != nil {
		return nil, err
	}
	loc := strings.TrimRight(req.Location, "/")
	if loc == "" {
		loc = defaultLocation(wh, req.Ident)
	}
	if _, err := keyInWarehouse(wh, loc); err != nil {
		return nil, err
	}
	md, err := view.NewMetadataWithUUID(req.ViewVersion, req.Schema, loc, req.Properties, uuid.New())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	c.structMu.RLock()
	defer c.structMu.RUnlock()
	unlock := c.lockSet(entryKey(pfxView, wh, req.Ident), entryKey(pfxTable, wh, req.Ident))
	defer unlock()
	if _, err := c.getNamespace(wh, req.Ident.Namespace); err != nil {
		return nil, err
	}
	if err := c.checkFree(viewKind, wh, req.Ident); err != nil {
		return nil, err
	}
	e := entry{ID: newID(), UUID: md.ViewUUID().String(), Location: loc, Version: 0}
	return c.writeView(ctx, wh, req.Ident, e, md)
}

// writeView writes a view's new metadata file and identity record, then
// its meta entry.
func (c *Catalog) writeView(ctx context.Context, wh string, id Ident, e entry, md view.Metadata) (*View, error) {
	data, err := json.Marshal(md)
	if err != nil {
		return nil, err
	}
	e.UpdatedMS = c.nowMS()
	e.MetadataLocation = metadataFileLocation(e.Location, e.Version)
	if err := parallel([]func() error{
		func() error { return c.putFile(ctx, wh, e.MetadataLocation, data) },
		func() error { return c.putIdentity(ctx, wh, viewKind.identity(id, e, false)) },
	}); err != nil {
		return nil, err
	}
	b := c.meta.NewBatch()
	if err := setEntry(b, viewKind, wh, id, e, data); err != nil {
		return nil, err
	}
	if err := c.markApplied(ctx, b, wh, KindView, e.MetadataLocation); err != nil {
		return nil, err
	}
	if err := b.Commit(true); err != nil {
		return nil, err
	}
	return &View{Ident: id, UUID: e.UUID, Location: e.Location, MetadataLocation: e.MetadataLocation,
		Version: e.Version, Metadata: md, MetadataJSON: data}, nil
}

// LoadView returns a view's current metadata location and JSON.
func (c *Catalog) LoadView(ctx context.Context, wh string, id Ident) (*View, error) {
	e, data, err := c.loadEntry(ctx, viewKind, wh, id)
	if err != nil {
		return nil, err
	}
	return &View{Ident: id, UUID: e.UUID, Location: e.Location, MetadataLocation: e.MetadataLocation,
		Version: e.Version, MetadataJSON: data}, nil
}

// ViewExists reports whether the view exists.
func (c *Catalog) ViewExists(ctx context.Context, wh string, id Ident) error {
	return c.entryExists(ctx, viewKind, wh, id)
}

// ListViews lists the views of a namespace, sorted by name, one page at a
// time.
func (c *Catalog) ListViews(ctx context.Context, wh string, ns []string, page Page) ([]Ident, string, error) {
	return c.listEntries(ctx, viewKind, wh, ns, page)
}

// CommitView replaces a view's definition: requirements are checked against
// its current metadata under its lock (ErrCommitFailed if one fails), then the
// updates are applied and a new metadata version written.
func (c *Catalog) CommitView(ctx context.Context, wh string, vc ViewCommit) (*View, error) {
	if err := ValidateIdent(vc.Ident); err != nil {
		return nil, err
	}
	if _, err := c.Warehouse(ctx, wh); err != nil {
		return nil, err
	}
	c.structMu.RLock()
	defer c.structMu.RUnlock()
	unlock := c.lockSet(entryKey(pfxView, wh, vc.Ident))
	defer unlock()
	e, err := c.getEntry(viewKind, wh, vc.Ident)
	if err != nil {
		return nil, err
	}
	data, err := c.entryMetadata(e)
	if err != nil {
		return nil, err
	}
	cur, err := view.ParseMetadataBytes(data)
	if err != nil {
		return nil, fmt.Errorf("catalog: parse view metadata %s: %w", e.MetadataLocation, err)
	}
	for _, r := range vc.Requirements {
		if err := r.Validate(cur); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrCommitFailed, vc.Ident, err)
		}
	}
	if len(vc.Updates) == 0 {
		return &View{Ident: vc.Ident, UUID: e.UUID, Location: e.Location, MetadataLocation: e.MetadataLocation,
			Version: e.Version, Metadata: cur, MetadataJSON: data}, nil
	}
	b, err := view.MetadataBuilderFromBase(cur)
	if err != nil {
		return nil, err
	}
	for _, u := range vc.Updates {
		if err := u.Apply(b); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalidRequest, vc.Ident, err)
		}
	}
	res, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidRequest, vc.Ident, err)
	}
	if _, err := keyInWarehouse(wh, res.Metadata.Location()); err != nil {
		return nil, err
	}
	e.Location = res.Metadata.Location()
	e.Version++
	return c.writeView(ctx, wh, vc.Ident, e, res.Metadata)
}

// RenameView renames a view, possibly into another namespace.
func (c *Catalog) RenameView(ctx context.Context, wh string, from, to Ident) error {
	return c.renameEntry(ctx, viewKind, wh, from, to)
}

// DropView drops a view, leaving a tombstone identity record.
func (c *Catalog) DropView(ctx context.Context, wh string, id Ident) error {
	_, _, err := c.dropEntry(ctx, viewKind, wh, id)
	return err
}
