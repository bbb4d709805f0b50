package catalog

import (
	"errors"
	"fmt"
	"strings"

	"github.com/twinlake/twinlake/internal/meta"
)

// Table locations. Live tables' locations never overlap — no two are equal
// and none lies inside another on a '/' boundary — so that the files under
// a location belong to one table. Views are not part of the rule: their
// only files are metadata files with unique names.
//
// The location index answers "which tables are at, inside or around this
// path" with a few prefix scans, without reading every entry:
//
//	c/l/<warehouse>\0<path>/\0<ns>\0<table>    (empty value)
//
// <path> is the location's object key without trailing '/'; the '/' before
// the 0x00 makes a prefix scan for "<path>/" find the table at path and
// every table inside it, and nothing beside it (path "a/b" is not inside
// "a/bc"). The index is derived from the table entries: every batch that
// writes or deletes a table entry changes it, and New rebuilds it, so a
// catalog written before it existed has it after the next start.

// locationPath returns the object key a table location names, without
// trailing '/'. Besides keyInWarehouse's rules it refuses the bucket root
// (it would hold every table) and NUL, which separates index key parts.
func locationPath(wh, location string) (string, error) {
	key, err := keyInWarehouse(wh, location)
	if err != nil {
		return "", err
	}
	path := strings.TrimRight(key, "/")
	if path == "" || strings.Contains(path, "\x00") {
		return "", fmt.Errorf("%w: %q is not a location a table may use", ErrInvalidLocation, location)
	}
	return path, nil
}

func locationKey(wh, path string, id Ident) []byte {
	return []byte(pfxLocation + wh + "\x00" + path + "/\x00" + nsPart(id.Namespace) + "\x00" + id.Name)
}

// locatedTable is a table found in the location index.
type locatedTable struct {
	id   Ident
	path string
}

// indexLocation adds to b the index key of an entry at location (tables
// only). A location that is not a valid table location (only a catalog
// written by an older version could hold one) is left out of the index.
func (k entryKind) indexLocation(b meta.Batch, wh string, id Ident, location string) {
	if !k.locations {
		return
	}
	if path, err := locationPath(wh, location); err == nil {
		b.Set(locationKey(wh, path, id), []byte{})
	}
}

// unindexLocation adds to b the removal of an entry's index key.
func (k entryKind) unindexLocation(b meta.Batch, wh string, id Ident, location string) {
	if !k.locations {
		return
	}
	if path, err := locationPath(wh, location); err == nil {
		b.Delete(locationKey(wh, path, id))
	}
}

// moveLocation adds to b the index change of an entry that was at prev
// under prevID ("" if it did not exist) and is now at location under id.
func (k entryKind) moveLocation(b meta.Batch, wh string, prevID Ident, prev string, id Ident, location string) {
	if prev != "" && (prev != location || !prevID.equal(id)) {
		k.unindexLocation(b, wh, prevID, prev)
	}
	k.indexLocation(b, wh, id, location)
}

// tablesWithPrefix returns the tables whose index key, after the
// warehouse, starts with prefix.
func (c *Catalog) tablesWithPrefix(wh, prefix string) ([]locatedTable, error) {
	lo := []byte(pfxLocation + wh + "\x00" + prefix)
	var out []locatedTable
	err := meta.Scan(c.meta, lo, meta.PrefixEnd(lo), func(k, _ []byte) (bool, error) {
		rest := string(k[len(pfxLocation)+len(wh)+1:])
		path, tail, ok1 := strings.Cut(rest, "/\x00")
		ns, name, ok2 := strings.Cut(tail, "\x00")
		if !ok1 || !ok2 {
			return false, fmt.Errorf("catalog: bad location index key %q", k)
		}
		out = append(out, locatedTable{id: Ident{Namespace: strings.Split(ns, levelSep), Name: name}, path: path})
		return true, nil
	})
	return out, err
}

// tablesAround returns the tables whose location holds path: path itself
// and each of its parent directories.
func (c *Catalog) tablesAround(wh, path string) ([]locatedTable, error) {
	var out []locatedTable
	for end := len(path); end > 0; end = strings.LastIndexByte(path[:end], '/') {
		found, err := c.tablesWithPrefix(wh, path[:end]+"/\x00")
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}

// overlapping returns the live tables whose location overlaps path: at it,
// inside it or around it.
func (c *Catalog) overlapping(wh, path string) ([]locatedTable, error) {
	inside, err := c.tablesWithPrefix(wh, path+"/")
	if err != nil {
		return nil, err
	}
	around, err := c.tablesAround(wh, path)
	if err != nil {
		return nil, err
	}
	return append(inside, around...), nil
}

// checkLocation fails with ErrLocationInUse if the location of a live
// table other than id overlaps location. The caller holds c.locMu until
// the write that takes the location is committed, so that two creates
// cannot both pass the check.
func (c *Catalog) checkLocation(wh string, id Ident, location string) error {
	path, err := locationPath(wh, location)
	if err != nil {
		return err
	}
	found, err := c.overlapping(wh, path)
	if err != nil {
		return err
	}
	for _, t := range found {
		if !t.id.equal(id) {
			return fmt.Errorf("%w: %s overlaps s3://%s/%s, the location of table %s", ErrLocationInUse, location, wh, t.path, t.id)
		}
	}
	return nil
}

// checkClaims checks the tables of one commit that take a new location
// (a staged create or a set-location) against the live tables and against
// each other.
func (c *Catalog) checkClaims(wh string, claims []*pendingTable) error {
	for i, p := range claims {
		if err := c.checkLocation(wh, p.id, p.e.Location); err != nil {
			return err
		}
		for _, q := range claims[:i] {
			a, _ := locationPath(wh, p.e.Location)
			b, _ := locationPath(wh, q.e.Location)
			if a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/") {
				return fmt.Errorf("%w: %s of table %s overlaps %s of table %s in the same commit",
					ErrLocationInUse, p.e.Location, p.id, q.e.Location, q.id)
			}
		}
	}
	return nil
}

// keyLocationsBuilt marks a catalog whose location index has been derived
// from its table entries; every write keeps it current from then on.
const keyLocationsBuilt = "c/format/locations"

// rebuildLocations derives the whole location index from the table
// entries, in one batch, once: for a catalog written before the index
// existed. Later opens read only the marker, so opening costs the same
// whatever the catalog holds.
func (c *Catalog) rebuildLocations() error {
	if _, err := c.meta.Get([]byte(keyLocationsBuilt)); err == nil {
		return nil
	} else if !errors.Is(err, meta.ErrNotFound) {
		return err
	}
	b := c.meta.NewBatch()
	b.Set([]byte(keyLocationsBuilt), []byte("1"))
	b.DeleteRange([]byte(pfxLocation), meta.PrefixEnd([]byte(pfxLocation)))
	err := meta.Scan(c.meta, []byte(pfxTable), meta.PrefixEnd([]byte(pfxTable)), func(k, v []byte) (bool, error) {
		wh, id, err := splitEntryKey(pfxTable, k)
		if err != nil {
			return false, err
		}
		e, err := tableKind.decode(id, v)
		if err != nil {
			return false, err
		}
		tableKind.indexLocation(b, wh, id, e.Location)
		return true, nil
	})
	if err != nil {
		return err
	}
	return b.Commit(true)
}
