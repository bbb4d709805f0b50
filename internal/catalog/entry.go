package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"

	"github.com/twinlake/twinlake/internal/meta"
)

// entry is the small meta record of a table or view; its metadata JSON lives
// under metadataKey(ID) so that listings never read it.
type entry struct {
	ID               string `json:"id"`
	UUID             string `json:"uuid"`
	Location         string `json:"loc"`
	MetadataLocation string `json:"mloc"`
	Version          int64  `json:"ver"`
	UpdatedMS        int64  `json:"u"`
}

// entryKind ties the meta prefix, identity kind and errors of tables and
// views together, so the shared code below serves both.
type entryKind struct {
	pfx, kind         string
	notFound, exists  error
	otherPfx          string
	otherExistsAsThis error
	locations         bool // entries are in the location index (location.go)
}

var (
	tableKind = entryKind{pfx: pfxTable, kind: KindTable, notFound: ErrNoSuchTable, exists: ErrTableExists,
		otherPfx: pfxView, otherExistsAsThis: ErrViewExists, locations: true}
	viewKind = entryKind{pfx: pfxView, kind: KindView, notFound: ErrNoSuchView, exists: ErrViewExists,
		otherPfx: pfxTable, otherExistsAsThis: ErrTableExists}
)

func (c *Catalog) getEntry(k entryKind, wh string, id Ident) (entry, error) {
	v, err := c.meta.Get(entryKey(k.pfx, wh, id))
	if errors.Is(err, meta.ErrNotFound) {
		return entry{}, fmt.Errorf("%w: %s", k.notFound, id)
	}
	if err != nil {
		return entry{}, err
	}
	return k.decode(id, v)
}

func (k entryKind) decode(id Ident, v []byte) (entry, error) {
	var e entry
	if err := json.Unmarshal(v, &e); err != nil {
		return entry{}, fmt.Errorf("catalog: decode %s %s: %w", k.kind, id, err)
	}
	return e, nil
}

// findEntry checks the identifier and the warehouse, then reads the table
// or view entry.
func (c *Catalog) findEntry(ctx context.Context, k entryKind, wh string, id Ident) (entry, error) {
	if err := ValidateIdent(id); err != nil {
		return entry{}, err
	}
	if _, err := c.Warehouse(ctx, wh); err != nil {
		return entry{}, err
	}
	return c.getEntry(k, wh, id)
}

// entryExists reports whether the table or view exists.
func (c *Catalog) entryExists(ctx context.Context, k entryKind, wh string, id Ident) error {
	_, err := c.findEntry(ctx, k, wh, id)
	return err
}

// loadEntry returns the entry and its metadata JSON; it reads only the
// meta store.
func (c *Catalog) loadEntry(ctx context.Context, k entryKind, wh string, id Ident) (entry, []byte, error) {
	e, err := c.findEntry(ctx, k, wh, id)
	if err != nil {
		return entry{}, nil, err
	}
	data, err := c.entryMetadata(e)
	return e, data, err
}

// checkFree fails if a table or view already has the name.
func (c *Catalog) checkFree(k entryKind, wh string, id Ident) error {
	for _, p := range []struct {
		pfx string
		err error
	}{{k.pfx, k.exists}, {k.otherPfx, k.otherExistsAsThis}} {
		_, err := c.meta.Get(entryKey(p.pfx, wh, id))
		if err == nil {
			return fmt.Errorf("%w: %s", p.err, id)
		}
		if !errors.Is(err, meta.ErrNotFound) {
			return err
		}
	}
	return nil
}

// entryMetadata reads the stored metadata JSON of an entry.
func (c *Catalog) entryMetadata(e entry) ([]byte, error) {
	v, err := c.meta.Get(metadataKey(e.ID))
	if err != nil {
		return nil, fmt.Errorf("catalog: metadata of %s: %w", e.MetadataLocation, err)
	}
	return v, nil
}

// identity builds the identity record of an entry.
func (k entryKind) identity(id Ident, e entry, deleted bool) Record {
	return Record{Kind: k.kind, Namespace: id.Namespace, Name: id.Name, UUID: e.UUID, Location: e.Location,
		MetadataLocation: e.MetadataLocation, Version: e.Version, Deleted: deleted, UpdatedMS: e.UpdatedMS}
}

// setEntry adds the writes of an entry and its metadata to a batch.
func setEntry(b meta.Batch, k entryKind, wh string, id Ident, e entry, metadata []byte) error {
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	b.Set(entryKey(k.pfx, wh, id), data)
	if metadata != nil {
		b.Set(metadataKey(e.ID), metadata)
	}
	return nil
}

// listEntries lists the names in a namespace, sorted, one page at a time.
func (c *Catalog) listEntries(ctx context.Context, k entryKind, wh string, ns []string, page Page) (out []Ident, next string, err error) {
	if _, err := c.LoadNamespace(ctx, wh, ns); err != nil {
		return nil, "", err
	}
	prefix := entryScanPrefix(k.pfx, wh, ns)
	start, err := pageStart(prefix, page.Token)
	if err != nil {
		return nil, "", err
	}
	err = meta.Scan(c.meta, start, meta.PrefixEnd(prefix), func(key, _ []byte) (bool, error) {
		if page.Size > 0 && len(out) == page.Size {
			next = encodeToken(prefix, []byte(out[len(out)-1].Name))
			return false, nil
		}
		out = append(out, Ident{Namespace: ns, Name: string(key[len(prefix):])})
		return true, nil
	})
	return out, next, err
}

// renameEntry moves a table or view to a new identifier: it keeps its ID,
// UUID and metadata, writes a tombstone for the old name and a record for
// the new one, then swaps the meta keys in one batch.
func (c *Catalog) renameEntry(ctx context.Context, k entryKind, wh string, from, to Ident) error {
	if err := ValidateIdent(from); err != nil {
		return err
	}
	if err := ValidateIdent(to); err != nil {
		return err
	}
	if _, err := c.Warehouse(ctx, wh); err != nil {
		return err
	}
	c.structMu.RLock()
	defer c.structMu.RUnlock()
	unlock := c.lockSet(entryKey(k.pfx, wh, from), entryKey(k.pfx, wh, to), entryKey(k.otherPfx, wh, to))
	defer unlock()
	e, err := c.getEntry(k, wh, from)
	if err != nil {
		return err
	}
	if _, err := c.getNamespace(wh, to.Namespace); err != nil {
		return err
	}
	if err := c.checkFree(k, wh, to); err != nil {
		return err
	}
	e.UpdatedMS = c.nowMS()
	if err := c.putIdentity(ctx, wh, k.identity(from, e, true)); err != nil {
		return err
	}
	if err := c.putIdentity(ctx, wh, k.identity(to, e, false)); err != nil {
		return err
	}
	b := c.meta.NewBatch()
	b.Delete(entryKey(k.pfx, wh, from))
	if err := setEntry(b, k, wh, to, e, nil); err != nil {
		return err
	}
	k.moveLocation(b, wh, from, e.Location, to, e.Location)
	if err := c.markApplied(ctx, b, wh, "", ""); err != nil {
		return err
	}
	return b.Commit(true)
}

// dropEntry removes a table or view, leaving a tombstone identity record.
// It returns the dropped entry and its metadata so that a purge can follow;
// in a warehouse with soft delete it keeps the entry as deleted instead
// (table_undrop.go) and returns nil metadata: nothing may be purged now.
func (c *Catalog) dropEntry(ctx context.Context, k entryKind, wh string, id Ident) (entry, []byte, error) {
	if err := ValidateIdent(id); err != nil {
		return entry{}, nil, err
	}
	if _, err := c.Warehouse(ctx, wh); err != nil {
		return entry{}, nil, err
	}
	settings, err := c.WarehouseSettings(ctx, wh)
	if err != nil {
		return entry{}, nil, err
	}
	c.structMu.RLock()
	defer c.structMu.RUnlock()
	unlock := c.lockSet(entryKey(k.pfx, wh, id))
	defer unlock()
	e, err := c.getEntry(k, wh, id)
	if err != nil {
		return entry{}, nil, err
	}
	if settings.SoftDelete > 0 {
		return e, nil, c.softDrop(ctx, k, wh, id, e, settings.SoftDelete)
	}
	metadata, err := c.entryMetadata(e)
	if err != nil {
		return entry{}, nil, err
	}
	e.UpdatedMS = c.nowMS()
	if err := c.putIdentity(ctx, wh, k.identity(id, e, true)); err != nil {
		return entry{}, nil, err
	}
	b := c.meta.NewBatch()
	b.Delete(entryKey(k.pfx, wh, id))
	b.Delete(metadataKey(e.ID))
	k.unindexLocation(b, wh, id, e.Location)
	if err := c.markApplied(ctx, b, wh, "", ""); err != nil {
		return entry{}, nil, err
	}
	if err := b.Commit(true); err != nil {
		return entry{}, nil, err
	}
	c.cache.drop(e.ID)
	return e, metadata, nil
}

func newUUID() string { return uuid.NewString() }

// metadataCache keeps parsed metadata of recently used entries, keyed by
// entry ID and valid only for the version it was parsed at, so a commit does
// not re-parse the current metadata each time. It is bounded; when full an
// arbitrary entry is evicted.
type metadataCache struct {
	mu  sync.Mutex
	max int
	m   map[string]cached
}

type cached struct {
	version int64
	md      any
}

func newMetadataCache(max int) metadataCache { return metadataCache{max: max, m: map[string]cached{}} }

func (mc *metadataCache) get(id string, version int64) (any, bool) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	c, ok := mc.m[id]
	if !ok || c.version != version {
		return nil, false
	}
	return c.md, true
}

func (mc *metadataCache) put(id string, version int64, md any) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if _, ok := mc.m[id]; !ok && len(mc.m) >= mc.max {
		for k := range mc.m {
			delete(mc.m, k)
			break
		}
	}
	mc.m[id] = cached{version: version, md: md}
}

func (mc *metadataCache) drop(id string) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	delete(mc.m, id)
}
