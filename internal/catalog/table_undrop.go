package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/twinlake/twinlake/internal/meta"
)

// Soft delete: in a warehouse whose soft_delete setting is on, a drop
// (purge requested or not) moves the entry from the live keys to the
// deleted keys, keeping its metadata JSON, and writes a tombstone identity
// record that carries the expiry. The files stay. Until the expiry the
// entry can be listed (ListDeleted) and undropped, under its name or
// another; after it, ExpireDeleted purges the files a table referenced and
// forgets the entry. A replica receives the tombstone and keeps the entry
// as deleted too (ApplyTombstone), so an undrop works after a failover.
//
// Deleted keys: c/dt/<wh>\0<ns>\0<name>\0<uuid> (tables), c/dv/... (views);
// the UUID keeps apart two incarnations of one name dropped in turn.

const (
	pfxDeletedTable = "c/dt/"
	pfxDeletedView  = "c/dv/"
)

func (k entryKind) deletedPfx() string {
	if k.kind == KindTable {
		return pfxDeletedTable
	}
	return pfxDeletedView
}

func deletedKey(k entryKind, wh string, id Ident, uuid string) []byte {
	return append(append(entryKey(k.deletedPfx(), wh, id), 0), uuid...)
}

// deletedEntry is the value of a deleted key.
type deletedEntry struct {
	entry
	DroppedMS int64 `json:"dropped"`
	ExpiresMS int64 `json:"expires"`
}

// DeletedEntry is a soft-deleted table or view.
type DeletedEntry struct {
	Kind             string
	Ident            Ident
	UUID             string
	Location         string
	MetadataLocation string
	Version          int64
	Dropped, Expires time.Time
}

// softDropBatch adds to b the move of a live entry to the deleted keys.
func (c *Catalog) softDropBatch(b meta.Batch, k entryKind, wh string, id Ident, d deletedEntry) error {
	c.expiry.note(wh, d.ExpiresMS)
	data, err := json.Marshal(d)
	if err != nil {
		return err
	}
	b.Delete(entryKey(k.pfx, wh, id))
	b.Set(deletedKey(k, wh, id, d.UUID), data)
	k.unindexLocation(b, wh, id, d.Location)
	return nil
}

// softDrop is dropEntry's path in a warehouse with soft delete; the caller
// holds the entry's lock and has read e.
func (c *Catalog) softDrop(ctx context.Context, k entryKind, wh string, id Ident, e entry, retention time.Duration) error {
	now := c.nowMS()
	e.UpdatedMS = now
	rec := k.identity(id, e, true)
	rec.ExpiresMS = now + retention.Milliseconds()
	if err := c.putIdentity(ctx, wh, rec); err != nil {
		return err
	}
	b := c.meta.NewBatch()
	if err := c.softDropBatch(b, k, wh, id, deletedEntry{entry: e, DroppedMS: now, ExpiresMS: rec.ExpiresMS}); err != nil {
		return err
	}
	if err := c.markApplied(ctx, b, wh, "", ""); err != nil {
		return err
	}
	if err := b.Commit(true); err != nil {
		return err
	}
	c.log.Info(k.kind+" soft-deleted", "warehouse", wh, k.kind, id.String(), "expires", time.UnixMilli(rec.ExpiresMS).UTC())
	return nil
}

// scanDeleted calls fn for every deleted entry of kind k under prefix.
func (c *Catalog) scanDeleted(k entryKind, prefix []byte, fn func(id Ident, d deletedEntry) error) error {
	return meta.Scan(c.meta, prefix, meta.PrefixEnd(prefix), func(key, v []byte) (bool, error) {
		_, id, err := splitEntryKey(k.deletedPfx(), key[:bytes.LastIndexByte(key, 0)])
		if err != nil {
			return false, err
		}
		var d deletedEntry
		if err := json.Unmarshal(v, &d); err != nil {
			return false, fmt.Errorf("catalog: decode deleted %s %s: %w", k.kind, id, err)
		}
		return true, fn(id, d)
	})
}

func (d deletedEntry) public(kind string, id Ident) DeletedEntry {
	return DeletedEntry{Kind: kind, Ident: id, UUID: d.UUID, Location: d.Location, MetadataLocation: d.MetadataLocation,
		Version: d.Version, Dropped: time.UnixMilli(d.DroppedMS).UTC(), Expires: time.UnixMilli(d.ExpiresMS).UTC()}
}

// ListDeleted lists the soft-deleted tables or views (kind) of a namespace
// that have not expired, sorted by name and then newest drop first. The
// namespace itself may have been dropped since.
func (c *Catalog) ListDeleted(ctx context.Context, wh, kind string, ns []string) ([]DeletedEntry, error) {
	k, err := kindOf(kind)
	if err != nil {
		return nil, err
	}
	if err := ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if _, err := c.Warehouse(ctx, wh); err != nil {
		return nil, err
	}
	now := c.nowMS()
	var out []DeletedEntry
	err = c.scanDeleted(k, entryScanPrefix(k.deletedPfx(), wh, ns), func(id Ident, d deletedEntry) error {
		if d.ExpiresMS > now {
			out = append(out, d.public(kind, id))
		}
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Ident.Name != out[j].Ident.Name {
			return out[i].Ident.Name < out[j].Ident.Name
		}
		return out[i].Dropped.After(out[j].Dropped)
	})
	return out, err
}

// UndropOptions adjust Undrop.
type UndropOptions struct {
	// As restores the table or view under this name (same namespace)
	// instead of its own.
	As string
	// UUID picks one of several dropped incarnations of the name; "" means
	// the most recently dropped.
	UUID string
}

// Undrop brings back a soft-deleted table or view that has not expired,
// with its whole history: the entry points at its last metadata file
// again. The target name must be free and, for a table, its location must
// not overlap a live table's.
func (c *Catalog) Undrop(ctx context.Context, wh, kind string, id Ident, opts UndropOptions) (LocalEntry, error) {
	k, err := kindOf(kind)
	if err != nil {
		return LocalEntry{}, err
	}
	to := id
	if opts.As != "" {
		to = Ident{Namespace: id.Namespace, Name: opts.As}
	}
	if err := ValidateIdent(id); err != nil {
		return LocalEntry{}, err
	}
	if err := ValidateIdent(to); err != nil {
		return LocalEntry{}, err
	}
	if _, err := c.Warehouse(ctx, wh); err != nil {
		return LocalEntry{}, err
	}
	c.structMu.RLock()
	defer c.structMu.RUnlock()
	unlock := c.lockSet(entryKey(k.pfx, wh, id), entryKey(k.pfx, wh, to), entryKey(k.otherPfx, wh, to))
	defer unlock()
	d, err := c.findDeleted(k, wh, id, opts.UUID)
	if err != nil {
		return LocalEntry{}, err
	}
	if _, err := c.getNamespace(wh, to.Namespace); err != nil {
		return LocalEntry{}, err
	}
	if err := c.checkFree(k, wh, to); err != nil {
		return LocalEntry{}, err
	}
	c.locMu.Lock()
	defer c.locMu.Unlock()
	if k.locations {
		if err := c.checkLocation(wh, to, d.Location); err != nil {
			return LocalEntry{}, err
		}
	}
	e := d.entry
	e.UpdatedMS = c.nowMS()
	if err := c.putIdentity(ctx, wh, k.identity(to, e, false)); err != nil {
		return LocalEntry{}, err
	}
	if !to.equal(id) {
		// The old name's record still says "soft-deleted": end it with a
		// plain tombstone unless a live entry holds the name now.
		if _, err := c.getEntry(k, wh, id); errors.Is(err, k.notFound) {
			if err := c.putIdentity(ctx, wh, k.identity(id, e, true)); err != nil {
				return LocalEntry{}, err
			}
		}
	}
	b := c.meta.NewBatch()
	b.Delete(deletedKey(k, wh, id, d.UUID))
	if err := setEntry(b, k, wh, to, e, nil); err != nil {
		return LocalEntry{}, err
	}
	k.indexLocation(b, wh, to, e.Location)
	if err := b.Commit(true); err != nil {
		return LocalEntry{}, err
	}
	c.cache.drop(e.ID)
	c.log.Info(kind+" undropped", "warehouse", wh, kind, id.String(), "as", to.String())
	return localOf(kind, to, e), nil
}

// findDeleted returns the unexpired deleted entry of id with uuid, or the
// most recently dropped one when uuid is "".
func (c *Catalog) findDeleted(k entryKind, wh string, id Ident, uuid string) (deletedEntry, error) {
	var found deletedEntry
	now := c.nowMS()
	prefix := append(entryKey(k.deletedPfx(), wh, id), 0)
	err := c.scanDeleted(k, prefix, func(_ Ident, d deletedEntry) error {
		if d.ExpiresMS > now && (uuid == "" || d.UUID == uuid) && d.DroppedMS >= found.DroppedMS {
			found = d
		}
		return nil
	})
	if err != nil {
		return deletedEntry{}, err
	}
	if found.ID == "" {
		return deletedEntry{}, fmt.Errorf("%w: %s is not soft-deleted (or its retention ended)", k.notFound, id)
	}
	return found, nil
}

// ExpireDeleted purges the soft-deleted tables and views of a warehouse
// whose retention ended: a table's referenced files are deleted as a purge
// deletes them (table_purge.go), then the entry is forgotten and a plain
// tombstone replaces the soft-delete one (unless a live entry holds the
// name), so that a replica forgets it too. It returns how many it expired.
// Only the site that owns the catalog (not a replica) should call it.
func (c *Catalog) ExpireDeleted(ctx context.Context, wh string) (int, error) {
	type due struct {
		k  entryKind
		id Ident
		d  deletedEntry
	}
	var dues []due
	now := c.nowMS()
	gen, scan := c.expiry.begin(wh, now)
	if !scan {
		return 0, nil
	}
	next := int64(math.MaxInt64)
	for _, k := range []entryKind{tableKind, viewKind} {
		err := c.scanDeleted(k, warehouseScanPrefix(k.deletedPfx(), wh), func(id Ident, d deletedEntry) error {
			if d.ExpiresMS <= now {
				dues = append(dues, due{k, id, d})
			} else {
				next = min(next, d.ExpiresMS)
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	for i, x := range dues {
		if err := c.expireOne(ctx, x.k, wh, x.id, x.d); err != nil {
			return i, err
		}
	}
	c.expiry.scanned(wh, gen, now, next)
	return len(dues), nil
}

// expiryMemo keeps, per warehouse, the earliest retention end among its
// soft-deleted entries not yet expired, as the last full read found it and
// lowered by every soft delete since: RunExpiry's ticks (every 2 s) read a
// warehouse's soft-deleted entries only once one is due, or after
// expiryRescan, where each tick read and decoded every one.
type expiryMemo struct {
	mu sync.Mutex
	wh map[string]*whExpiry
}

// whExpiry is one warehouse's memo. Until its first full read (read 0) it
// knows nothing; gen counts the soft deletes noted.
type whExpiry struct {
	next, read int64 // earliest expiry still ahead, last full read: Unix ms
	gen        uint64
}

// expiryRescan is how often the soft-deleted entries are read in full
// whatever the memo says: a safety net for entries written some other way.
const expiryRescan = 10 * time.Minute

// of returns a warehouse's memo (the caller holds mu).
func (m *expiryMemo) of(wh string) *whExpiry {
	if m.wh == nil {
		m.wh = map[string]*whExpiry{}
	}
	w := m.wh[wh]
	if w == nil {
		w = &whExpiry{}
		m.wh[wh] = w
	}
	return w
}

// begin reports whether a warehouse's soft-deleted entries must be read at
// now, and the memo's generation for scanned.
func (m *expiryMemo) begin(wh string, now int64) (uint64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.of(wh)
	return w.gen, w.read == 0 || w.next <= now || now-w.read >= expiryRescan.Milliseconds()
}

// scanned records a full read that began at generation gen and found next
// as the earliest expiry still ahead; a soft delete noted meanwhile keeps
// its lower value.
func (m *expiryMemo) scanned(wh string, gen uint64, now, next int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.of(wh)
	if w.gen != gen {
		next = min(next, w.next)
	}
	w.next, w.read = next, now
}

// note lowers a warehouse's earliest expiry to a new soft delete's.
func (m *expiryMemo) note(wh string, expires int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.of(wh)
	w.gen++
	if w.read != 0 {
		w.next = min(w.next, expires)
	}
}

func (c *Catalog) expireOne(ctx context.Context, k entryKind, wh string, id Ident, d deletedEntry) error {
	metadata, err := c.entryMetadata(d.entry)
	if err != nil {
		return err
	}
	if k.kind == KindTable {
		if err := c.purge(ctx, wh, id, d.entry, metadata); err != nil {
			return err
		}
	}
	c.structMu.RLock()
	defer c.structMu.RUnlock()
	unlock := c.lockSet(entryKey(k.pfx, wh, id))
	defer unlock()
	if _, err := c.getEntry(k, wh, id); errors.Is(err, k.notFound) {
		e := d.entry
		e.UpdatedMS = c.nowMS()
		if err := c.putIdentity(ctx, wh, k.identity(id, e, true)); err != nil {
			return err
		}
	}
	b := c.meta.NewBatch()
	b.Delete(deletedKey(k, wh, id, d.UUID))
	b.Delete(metadataKey(d.ID))
	if err := b.Commit(true); err != nil {
		return err
	}
	c.cache.drop(d.ID)
	c.log.Info(k.kind+" soft delete expired", "warehouse", wh, k.kind, id.String(), "uuid", d.UUID)
	return nil
}

// RunExpiry expires soft-deleted tables and views every interval until ctx
// ends, in each warehouse that owns reports as the site's to change (a
// replica's warehouses are not: the primary's expiry replicates to them).
func (c *Catalog) RunExpiry(ctx context.Context, interval time.Duration, owns func(ctx context.Context, wh string) bool) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, w := range c.ListWarehouses(ctx) {
			if owns != nil && !owns(ctx, w.Name) {
				continue
			}
			if _, err := c.ExpireDeleted(ctx, w.Name); err != nil && ctx.Err() == nil {
				c.log.Warn("soft delete expiry failed", "warehouse", w.Name, "err", err)
			}
		}
	}
}

// ApplyTombstone follows a replicated tombstone on a replica: a soft-delete
// tombstone moves the table or view to the deleted keys (reading its last
// metadata file from the bucket when the local catalog does not hold that
// version); a plain one removes it, and forgets the deleted entry of that
// UUID (its retention ended, or it was undropped under another name).
func (c *Catalog) ApplyTombstone(ctx context.Context, wh string, r Record) error {
	k, err := kindOf(r.Kind)
	if err != nil {
		return err
	}
	id := Ident{Namespace: r.Namespace, Name: r.Name}
	if !r.SoftDeleted() {
		if err := c.applyPlainDrop(wh, r.Kind, id); err != nil {
			return err
		}
		return c.forgetDeleted(k, wh, id, r.UUID)
	}
	c.structMu.RLock()
	defer c.structMu.RUnlock()
	unlock := c.lockSet(entryKey(k.pfx, wh, id))
	defer unlock()
	e, err := c.getEntry(k, wh, id)
	if err != nil && !errors.Is(err, k.notFound) {
		return err
	}
	b := c.meta.NewBatch()
	if e.ID == "" || e.UUID != r.UUID || e.MetadataLocation != r.MetadataLocation {
		if e.ID != "" {
			b.Delete(metadataKey(e.ID))
			k.unindexLocation(b, wh, id, e.Location)
		}
		metadata, err := c.readFile(ctx, wh, r.MetadataLocation)
		if err != nil {
			return fmt.Errorf("catalog: soft-deleted %s %s: %w", r.Kind, id, err)
		}
		e = entry{ID: newID(), UUID: r.UUID, Location: r.Location, MetadataLocation: r.MetadataLocation, Version: r.Version}
		b.Set(metadataKey(e.ID), metadata)
	}
	e.UpdatedMS = r.UpdatedMS
	if err := c.softDropBatch(b, k, wh, id, deletedEntry{entry: e, DroppedMS: r.UpdatedMS, ExpiresMS: r.ExpiresMS}); err != nil {
		return err
	}
	if err := b.Commit(true); err != nil {
		return err
	}
	c.cache.drop(e.ID)
	return nil
}

// forgetDeleted removes the deleted entry of id with uuid, if any.
func (c *Catalog) forgetDeleted(k entryKind, wh string, id Ident, uuid string) error {
	v, err := c.meta.Get(deletedKey(k, wh, id, uuid))
	if errors.Is(err, meta.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var d deletedEntry
	if err := json.Unmarshal(v, &d); err != nil {
		return err
	}
	b := c.meta.NewBatch()
	b.Delete(deletedKey(k, wh, id, uuid))
	b.Delete(metadataKey(d.ID))
	return b.Commit(true)
}
