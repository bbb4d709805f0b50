package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/twinlake/twinlake/internal/meta"
)

// This file is the catalog as the Tables replica drives it: the scanner
// applies what it verified from replicated identity records and metadata
// files, without writing identity records or metadata files itself (they
// are already in the bucket) and without commit requirements or location
// checks (the primary made them). Backfill and rebuild use the export and
// identity helpers.

// pfxBackup is where Backup copies the local catalog: cbak/<label>/<key>.
const pfxBackup = "cbak/"

// LocalEntry is a table or view of the local catalog.
type LocalEntry struct {
	Kind             string
	Ident            Ident
	UUID             string
	Location         string
	MetadataLocation string
	Version          int64
	UpdatedMS        int64
}

func kindOf(kind string) (entryKind, error) {
	switch kind {
	case KindTable:
		return tableKind, nil
	case KindView:
		return viewKind, nil
	}
	return entryKind{}, fmt.Errorf("%w: kind %q", ErrInvalidRecord, kind)
}

// ApplyNamespace creates or updates a namespace with props, or removes it
// (deleted), as a replicated identity record says. Missing parents are
// created without properties; their own records set them when they arrive.
func (c *Catalog) ApplyNamespace(ctx context.Context, wh string, levels []string, props map[string]string, updatedMS int64, deleted bool) error {
	if err := ValidateNamespace(levels); err != nil {
		return err
	}
	c.structMu.Lock()
	defer c.structMu.Unlock()
	b := c.meta.NewBatch()
	if deleted {
		b.Delete(namespaceKey(wh, levels))
		return b.Commit(true)
	}
	for i := 1; i < len(levels); i++ {
		if _, err := c.getNamespace(wh, levels[:i]); errors.Is(err, ErrNoSuchNamespace) {
			data, _ := json.Marshal(nsRecord{Props: map[string]string{}, UpdatedMS: updatedMS})
			b.Set(namespaceKey(wh, levels[:i]), data)
		}
	}
	if props == nil {
		props = map[string]string{}
	}
	data, err := json.Marshal(nsRecord{Props: props, UpdatedMS: updatedMS})
	if err != nil {
		return err
	}
	b.Set(namespaceKey(wh, levels), data)
	return b.Commit(true)
}

// ApplyEntry points a table or view at the record's metadata file and
// version, storing metadata (the file's bytes) as its current metadata. Its
// namespace is created if missing.
func (c *Catalog) ApplyEntry(ctx context.Context, wh string, r Record, metadata []byte) error {
	k, err := kindOf(r.Kind)
	if err != nil {
		return err
	}
	id := Ident{Namespace: r.Namespace, Name: r.Name}
	if err := ValidateIdent(id); err != nil {
		return err
	}
	if _, err := c.getNamespace(wh, r.Namespace); errors.Is(err, ErrNoSuchNamespace) {
		if err := c.ApplyNamespace(ctx, wh, r.Namespace, nil, r.UpdatedMS, false); err != nil {
			return err
		}
	}
	c.structMu.RLock()
	defer c.structMu.RUnlock()
	unlock := c.lockSet(entryKey(k.pfx, wh, id))
	defer unlock()
	e, err := c.getEntry(k, wh, id)
	if err != nil && !errors.Is(err, k.notFound) {
		return err
	}
	prevLocation := e.Location
	if e.ID == "" || e.UUID != r.UUID {
		e = entry{ID: newID()}
	}
	e.UUID, e.Location, e.MetadataLocation, e.Version, e.UpdatedMS = r.UUID, r.Location, r.MetadataLocation, r.Version, r.UpdatedMS
	b := c.meta.NewBatch()
	if err := setEntry(b, k, wh, id, e, metadata); err != nil {
		return err
	}
	k.moveLocation(b, wh, id, prevLocation, id, e.Location)
	if err := b.Commit(true); err != nil {
		return err
	}
	c.cache.drop(e.ID)
	return c.forgetDeleted(k, wh, id, r.UUID) // undropped on the primary
}

// ApplyDrop follows a replicated drop: it removes a table or view from the
// local catalog (its files stay). The tombstone in the bucket decides how:
// the one of a soft delete keeps the entry as deleted, undroppable until
// its expiry (ApplyTombstone).
func (c *Catalog) ApplyDrop(ctx context.Context, wh, kind string, id Ident) error {
	if r, err := c.currentRecord(ctx, wh, kind, id); err == nil && r.Deleted {
		return c.ApplyTombstone(ctx, wh, r)
	}
	return c.applyPlainDrop(wh, kind, id)
}

// currentRecord reads the newest identity record of a table or view from
// the bucket.
func (c *Catalog) currentRecord(ctx context.Context, wh, kind string, id Ident) (Record, error) {
	key := TableRecordKey(id.Namespace, id.Name)
	if kind == KindView {
		key = ViewRecordKey(id.Namespace, id.Name)
	}
	data, err := c.readObject(ctx, wh, key)
	if err != nil {
		return Record{}, err
	}
	return ParseRecord(data)
}

func (c *Catalog) applyPlainDrop(wh, kind string, id Ident) error {
	k, err := kindOf(kind)
	if err != nil {
		return err
	}
	c.structMu.RLock()
	defer c.structMu.RUnlock()
	unlock := c.lockSet(entryKey(k.pfx, wh, id))
	defer unlock()
	e, err := c.getEntry(k, wh, id)
	if errors.Is(err, k.notFound) {
		return nil
	}
	if err != nil {
		return err
	}
	b := c.meta.NewBatch()
	b.Delete(entryKey(k.pfx, wh, id))
	b.Delete(metadataKey(e.ID))
	k.unindexLocation(b, wh, id, e.Location)
	if err := b.Commit(true); err != nil {
		return err
	}
	c.cache.drop(e.ID)
	return nil
}

// Local returns a table or view of the local catalog, if present.
func (c *Catalog) Local(wh, kind string, id Ident) (LocalEntry, bool, error) {
	k, err := kindOf(kind)
	if err != nil {
		return LocalEntry{}, false, err
	}
	e, err := c.getEntry(k, wh, id)
	if errors.Is(err, k.notFound) {
		return LocalEntry{}, false, nil
	}
	if err != nil {
		return LocalEntry{}, false, err
	}
	return localOf(kind, id, e), true, nil
}

func localOf(kind string, id Ident, e entry) LocalEntry {
	return LocalEntry{Kind: kind, Ident: id, UUID: e.UUID, Location: e.Location, MetadataLocation: e.MetadataLocation,
		Version: e.Version, UpdatedMS: e.UpdatedMS}
}

// Export is the whole local catalog of one warehouse.
type Export struct {
	Namespaces []Namespace
	Entries    []LocalEntry
}

// ExportWarehouse lists every namespace (with properties) and every table
// and view of a warehouse in the local catalog.
func (c *Catalog) ExportWarehouse(ctx context.Context, wh string) (Export, error) {
	var out Export
	np := warehouseScanPrefix(pfxNamespace, wh)
	err := meta.Scan(c.meta, np, meta.PrefixEnd(np), func(k, v []byte) (bool, error) {
		var rec nsRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return false, err
		}
		if rec.Props == nil {
			rec.Props = map[string]string{}
		}
		levels := strings.Split(string(k[len(np):]), levelSep)
		out.Namespaces = append(out.Namespaces, Namespace{Levels: levels, Properties: rec.Props})
		return true, nil
	})
	if err != nil {
		return Export{}, err
	}
	for _, k := range []entryKind{tableKind, viewKind} {
		p := warehouseScanPrefix(k.pfx, wh)
		err := meta.Scan(c.meta, p, meta.PrefixEnd(p), func(key, v []byte) (bool, error) {
			_, id, err := splitEntryKey(k.pfx, key)
			if err != nil {
				return false, err
			}
			var e entry
			if err := json.Unmarshal(v, &e); err != nil {
				return false, err
			}
			out.Entries = append(out.Entries, localOf(k.kind, id, e))
			return true, nil
		})
		if err != nil {
			return Export{}, err
		}
	}
	sort.Slice(out.Entries, func(i, j int) bool {
		a, b := out.Entries[i], out.Entries[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Ident.String() < b.Ident.String()
	})
	return out, nil
}

// EntryMetadata returns the current metadata JSON of a local table or view.
func (c *Catalog) EntryMetadata(wh, kind string, id Ident) ([]byte, error) {
	k, err := kindOf(kind)
	if err != nil {
		return nil, err
	}
	e, err := c.getEntry(k, wh, id)
	if err != nil {
		return nil, err
	}
	return c.entryMetadata(e)
}

// WriteIdentity writes an identity record into the warehouse bucket (the
// backfill writes the records a warehouse created without them lacks).
func (c *Catalog) WriteIdentity(ctx context.Context, wh string, r Record) error {
	return c.putIdentity(ctx, wh, r)
}

// IdentityOf returns the identity record the local catalog implies for a
// table or view.
func (c *Catalog) IdentityOf(le LocalEntry) Record {
	return Record{Kind: le.Kind, Namespace: le.Ident.Namespace, Name: le.Ident.Name, UUID: le.UUID,
		Location: le.Location, MetadataLocation: le.MetadataLocation, Version: le.Version, UpdatedMS: le.UpdatedMS}
}

// Backup copies the whole local catalog under cbak/<label>/ and returns how
// many keys it copied. Restoring is a manual operation.
func (c *Catalog) Backup(ctx context.Context, label string) (int, error) {
	if label == "" || strings.ContainsAny(label, "/\x00") {
		return 0, fmt.Errorf("%w: backup label %q", ErrInvalidRequest, label)
	}
	c.structMu.Lock()
	defer c.structMu.Unlock()
	lo := []byte("c/")
	n := 0
	b := c.meta.NewBatch()
	err := meta.Scan(c.meta, lo, meta.PrefixEnd(lo), func(k, v []byte) (bool, error) {
		b.Set(append([]byte(pfxBackup+label+"/"), k...), append([]byte(nil), v...))
		n++
		if b.Len() >= 1000 {
			if err := b.Commit(false); err != nil {
				return false, err
			}
			b = c.meta.NewBatch()
		}
		return true, nil
	})
	if err != nil {
		return n, err
	}
	return n, b.Commit(true)
}

// Clear deletes the whole local catalog (every warehouse's namespaces,
// tables and views). The warehouse buckets and their objects stay.
func (c *Catalog) Clear(ctx context.Context) error {
	c.structMu.Lock()
	defer c.structMu.Unlock()
	b := c.meta.NewBatch()
	for _, p := range []string{pfxNamespace, pfxTable, pfxView, pfxDeletedTable, pfxDeletedView, pfxMetadata, pfxLocation, pfxIdempotency, pfxIdemExpiry, pfxMaintDue, pfxMaintRev} {
		b.DeleteRange([]byte(p), meta.PrefixEnd([]byte(p)))
	}
	if err := b.Commit(true); err != nil {
		return err
	}
	c.cache.mu.Lock()
	clear(c.cache.m)
	c.cache.mu.Unlock()
	return nil
}
