package catalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync/atomic"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/par"
)

// A purge (DROP TABLE with purgeRequested) deletes the files the dropped
// table's own metadata references and nothing else: it never lists a
// prefix, because a location may hold files that are not the table's (a
// table placed there before locations were kept apart, an engine's stray
// files). Files another live table also references are kept.

// purge deletes the files the dropped table's metadata references,
// deleteWorkers at a time and the current metadata file last, as delete
// markers (in a versioned warehouse) through the object layer, so that
// replication carries them. It reads everything before it deletes
// anything; a read error stops it then, a failed delete stops it too.
func (c *Catalog) purge(ctx context.Context, wh string, id Ident, e entry, metadata []byte) error {
	md, err := table.ParseMetadataBytes(metadata)
	if err != nil {
		return fmt.Errorf("catalog: purge %s: parse metadata %s: %w", id, e.MetadataLocation, err)
	}
	fsys := ObjectIO{Ctx: ctx, Read: c.readLocation}
	files, missing, err := referencedFiles(fsys, e.MetadataLocation, md,
		md.Properties().GetBool(table.GCEnabledKey, true))
	if err != nil {
		return fmt.Errorf("catalog: purge %s: %w", id, err)
	}
	shared, err := c.sharedFiles(ctx, wh, e.MetadataLocation, md, files)
	if err != nil {
		return fmt.Errorf("catalog: purge %s: %w", id, err)
	}
	// The current metadata file goes last, once every other is gone.
	cur := slices.IndexFunc(files, func(loc string) bool { return objectName(loc) == objectName(e.MetadataLocation) })
	var deleted atomic.Int64
	del := func(ctx context.Context, loc string) error {
		key, err := keyInWarehouse(wh, loc)
		if err != nil || shared[objectName(loc)] {
			return nil // outside the warehouse, or another table's too
		}
		if _, err := c.obj.HeadObject(ctx, wh, key, ""); errors.Is(err, objects.ErrObjectNotFound) {
			return nil // already gone: no delete marker for it
		}
		if _, err := c.obj.DeleteObject(ctx, wh, key, ""); err != nil {
			return fmt.Errorf("catalog: purge %s: delete %s: %w", id, loc, err)
		}
		deleted.Add(1)
		return nil
	}
	err = deleteEach(ctx, len(files), func(ctx context.Context, i int) error {
		if i == cur {
			return nil
		}
		return del(ctx, files[i])
	})
	if err == nil && cur >= 0 {
		err = del(ctx, files[cur])
	}
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		c.log.Warn("purge: manifest lists or manifests of the table are missing; the files they name stay",
			"warehouse", wh, "table", id.String(), "missing", missing)
	}
	c.log.Info("table purged", "warehouse", wh, "table", id.String(), "deleted", deleted.Load(), "kept_shared", len(shared))
	return nil
}

// deleteWorkers is how many files a purge or a maintenance run deletes at
// once. Each delete is a synced commit (etcd rounds on a multi-node site,
// and a shard removal on each node): one after another, each waited for its
// own; side by side, the metadata store's group commit makes one of several.
const deleteWorkers = 32

// deleteEach runs fn for 0..n-1, deleteWorkers at a time, and returns the
// first error (or ctx's): after one, no new call starts (par.EachErr).
func deleteEach(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	return par.EachErr(ctx, n, deleteWorkers, fn)
}

// referencedFiles returns every file a table's metadata references, each
// once: data and delete files (only withData: gc.enabled=false says the
// table does not own them), manifests, manifest lists, statistics and
// partition-statistics files, earlier metadata files, and the current
// metadata file last (a purge deletes it after the others, so that an
// interrupted purge still leaves the file that leads to the rest). It reads
// every snapshot's manifest list and each manifest once; the manifest lists
// and manifests that do not exist are returned in missing.
func referencedFiles(fsys iceio.IO, metadataLocation string, md table.Metadata, withData bool) (files, missing []string, err error) {
	var data, manifests, lists, rest []string
	seen := map[string]bool{}
	for _, snap := range md.Snapshots() {
		if snap.ManifestList != "" {
			lists = append(lists, snap.ManifestList)
		}
		mfs, err := snap.Manifests(fsys)
		if errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, snap.ManifestList)
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read manifest list %s: %w", snap.ManifestList, err)
		}
		for _, mf := range mfs {
			if seen[mf.FilePath()] {
				continue
			}
			seen[mf.FilePath()] = true
			manifests = append(manifests, mf.FilePath())
			if !withData {
				continue
			}
			for en, err := range mf.Entries(fsys, false) {
				if errors.Is(err, fs.ErrNotExist) {
					missing = append(missing, mf.FilePath())
					break
				}
				if err != nil {
					return nil, nil, fmt.Errorf("read manifest %s: %w", mf.FilePath(), err)
				}
				data = append(data, en.DataFile().FilePath())
			}
		}
	}
	for s := range md.Statistics() {
		rest = append(rest, s.StatisticsPath)
	}
	for s := range md.PartitionStatistics() {
		rest = append(rest, s.StatisticsPath)
	}
	for l := range md.PreviousFiles() {
		rest = append(rest, l.MetadataFile)
	}
	rest = append(rest, metadataLocation)
	return distinct(data, manifests, lists, rest), missing, nil
}

// distinct concatenates the lists, keeping the first of the locations that
// name one object and dropping those that name none.
func distinct(lists ...[]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range lists {
		for _, loc := range l {
			name := objectName(loc)
			if name != "" && !seen[name] {
				seen[name] = true
				out = append(out, loc)
			}
		}
	}
	return out
}

// sharedFiles returns, by object name, the files among files that another
// live table of the warehouse references too. Reading every table's
// manifests would cost a purge the whole warehouse, so it reads the
// references of the tables that may share files with the dropped one: a
// table whose location holds one of the files, and a table whose current
// metadata names a file in a directory of the dropped table's metadata
// files, manifest lists or statistics files (a table registered from a copy
// of its metadata). A table that shares only data files from elsewhere is
// not found (nor by any Iceberg catalog); such a table should set
// gc.enabled=false on the table whose data it borrows, or that table should
// be dropped without purge.
func (c *Catalog) sharedFiles(ctx context.Context, wh, metadataLocation string, md table.Metadata, files []string) (map[string]bool, error) {
	tables, err := c.tablesHolding(wh, files)
	if err != nil {
		return nil, err
	}
	naming, err := c.tablesNaming(wh, metadataDirs(wh, metadataLocation, md))
	if err != nil {
		return nil, err
	}
	for _, id := range naming {
		tables[entryName(id)] = id
	}
	want := map[string]bool{}
	for _, loc := range files {
		want[objectName(loc)] = true
	}
	shared := map[string]bool{}
	fsys := ObjectIO{Ctx: ctx, Read: c.readLocation}
	for _, id := range tables {
		e, err := c.getEntry(tableKind, wh, id)
		if errors.Is(err, ErrNoSuchTable) {
			continue // dropped meanwhile
		}
		if err != nil {
			return nil, err
		}
		other, err := c.parsedTable(e)
		if err != nil {
			return nil, err
		}
		refs, _, err := referencedFiles(fsys, e.MetadataLocation, other, true)
		if err != nil {
			return nil, fmt.Errorf("files of table %s, which may share some: %w", id, err)
		}
		for _, loc := range refs {
			if name := objectName(loc); want[name] {
				shared[name] = true
			}
		}
	}
	return shared, nil
}

// tablesHolding returns the live tables whose location holds one of the
// files, keyed by entryName.
func (c *Catalog) tablesHolding(wh string, files []string) (map[string]Ident, error) {
	out := map[string]Ident{}
	dirs := map[string]bool{}
	for _, loc := range files {
		key, err := keyInWarehouse(wh, loc)
		if err != nil {
			continue
		}
		dir := path.Dir(key)
		if dir == "." || dirs[dir] {
			continue
		}
		dirs[dir] = true
		found, err := c.tablesAround(wh, dir)
		if err != nil {
			return nil, err
		}
		for _, t := range found {
			out[entryName(t.id)] = t.id
		}
	}
	return out, nil
}

// tablesNaming returns the live tables of the warehouse whose current
// metadata JSON holds one of needles, each "//<warehouse>/<dir>/". It
// checks each table against the directories its metadata names
// (dirsNamed), kept per metadata version, so a call reads the table keys
// and only the metadata it has not seen: every maintenance run that deletes
// files calls it, and it read and searched every table's metadata.
func (c *Catalog) tablesNaming(wh string, needles [][]byte) ([]Ident, error) {
	var out []Ident
	prefix := warehouseScanPrefix(pfxTable, wh)
	err := meta.Scan(c.meta, prefix, meta.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		_, id, err := splitEntryKey(pfxTable, k)
		if err != nil {
			return false, err
		}
		e, err := tableKind.decode(id, v)
		if err != nil {
			return false, err
		}
		dirs, err := c.dirsNamed(wh, e)
		if err != nil {
			return false, err
		}
		if namesAny(dirs, needles) {
			out = append(out, id)
		}
		return true, nil
	})
	return out, err
}

// namedDirsMax bounds the directories kept per table (Catalog.named).
const namedDirsMax = 100_000

// dirsNamed returns the directories entry e's metadata JSON names in
// warehouse wh (dirsIn), kept per entry and version in c.named, as parsed
// metadata is in c.cache: an entry's metadata changes only with its version.
func (c *Catalog) dirsNamed(wh string, e entry) ([]string, error) {
	if dirs, ok := c.named.get(e.ID, e.Version); ok {
		return dirs.([]string), nil
	}
	data, err := c.entryMetadata(e)
	if err != nil {
		return nil, err
	}
	dirs := dirsIn(data, "//"+wh+"/")
	c.named.put(e.ID, e.Version, dirs)
	return dirs, nil
}

// dirsIn returns, for each place mark occurs in data, the text from there
// to the last '/' before the next '"' (the directory of the location that
// starts there), sorted, each once. A needle that starts with mark, ends
// with '/' and holds no '"' occurs in data exactly when one of them starts
// with it (namesAny).
func dirsIn(data []byte, mark string) []string {
	var out []string
	for at := 0; ; {
		i := bytes.Index(data[at:], []byte(mark))
		if i < 0 {
			break
		}
		s := data[at+i:]
		if j := bytes.IndexByte(s, '"'); j >= 0 {
			s = s[:j]
		}
		out = append(out, string(s[:bytes.LastIndexByte(s, '/')+1]))
		at += i + 1
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// namesAny reports whether one of dirs (sorted) starts with one of needles:
// the first dir not below a needle does if any does.
func namesAny(dirs []string, needles [][]byte) bool {
	for _, n := range needles {
		i, _ := slices.BinarySearch(dirs, string(n))
		if i < len(dirs) && strings.HasPrefix(dirs[i], string(n)) {
			return true
		}
	}
	return false
}

// metadataDirs returns "//<warehouse>/<dir>/" for each directory of the
// warehouse holding a metadata file, manifest list or statistics file of
// md: the text any location of a file in it contains, whatever its scheme.
func metadataDirs(wh, metadataLocation string, md table.Metadata) [][]byte {
	locs := []string{metadataLocation}
	for l := range md.PreviousFiles() {
		locs = append(locs, l.MetadataFile)
	}
	for _, s := range md.Snapshots() {
		locs = append(locs, s.ManifestList)
	}
	for s := range md.Statistics() {
		locs = append(locs, s.StatisticsPath)
	}
	for s := range md.PartitionStatistics() {
		locs = append(locs, s.StatisticsPath)
	}
	seen := map[string]bool{}
	var out [][]byte
	for _, loc := range locs {
		key, err := keyInWarehouse(wh, loc)
		if err != nil {
			continue
		}
		dir := path.Dir(key)
		if dir == "." || seen[dir] {
			continue
		}
		seen[dir] = true
		out = append(out, []byte("//"+wh+"/"+dir+"/"))
	}
	return out
}

// entryName is a table's entry key as a string, for maps of tables.
func entryName(id Ident) string { return string(entryKey(pfxTable, "", id)) }

// objectName returns "<bucket>/<key>" for an s3:// location (any of the S3
// schemes), so that two spellings of one object compare equal; "" if the
// location names none.
func objectName(location string) string {
	u, err := url.Parse(location)
	if err != nil || !locationSchemes[u.Scheme] || u.Host == "" {
		return ""
	}
	key := strings.TrimPrefix(u.Path, "/")
	if key == "" {
		return ""
	}
	return u.Host + "/" + key
}

// readLocation reads the object a location names, for ObjectIO.
func (c *Catalog) readLocation(ctx context.Context, location string) ([]byte, error) {
	bucket, key, ok := strings.Cut(objectName(location), "/")
	if !ok {
		return nil, ErrNotLocation
	}
	return c.readObject(ctx, bucket, key)
}
