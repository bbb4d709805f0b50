package catalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
)

// Table maintenance on the server: snapshot expiry and orphan removal.
//
// Expiry is an ordinary commit through CommitTable — the same requirements
// check, metadata builder, identity record and atomic swap as a REST
// commit — so engines see a new table version, a concurrent writer whose
// requirement it breaks gets the usual 409, and an expiry that loses the
// race to a writer plans again on the new metadata. After it commits, the
// files only the expired snapshots referenced (their manifest lists,
// manifests, data and delete files) are deleted, if they lie under the
// table's location and no other table references them.
//
// Orphan removal deletes files under the table's location that no retained
// metadata references — not the current metadata, not a snapshot it keeps,
// not a metadata file in its log — and that are older than the safety
// window, so that a writer's files that are not committed yet survive. A
// listing of the location is safe because live table locations never
// overlap (location.go); what a view located inside it, a soft-deleted
// table once at it, or another table registered from its files references
// is kept too.
//
// Deletions are delete markers through the object layer, so replication
// carries them to the DR site like any delete. Only the primary runs
// maintenance: the caller checks the role (internal/app).

// errRefsChanged fails an expiry commit whose table moved a ref meanwhile.
var errRefsChanged = errors.New("the table's branches or tags changed since the expiry was planned")

// maxExpiryAttempts bounds the replanning of an expiry that keeps losing
// to concurrent writers.
const maxExpiryAttempts = 10

// maxListedFiles bounds the file names a result lists (counts are exact).
const maxListedFiles = 1000

// MaintenanceOptions selects what MaintainTable does. Zero ages and counts
// come from the table's policy (its properties over its warehouse's
// settings, maintenance_settings.go).
type MaintenanceOptions struct {
	ExpireSnapshots  bool
	OlderThan        time.Duration
	RetainLast       int
	RemoveOrphans    bool
	OrphansOlderThan time.Duration
	// DryRun plans and reports without committing or deleting anything.
	DryRun bool
	// Progress, if set, is called as each step starts and ends.
	Progress func(MaintenanceProgress)
}

// MaintenanceProgress is one step of a run, for the CLI and trace.
type MaintenanceProgress struct {
	Step string // "expire-snapshots", "cleanup-expired", "remove-orphans"
	Msg  string
	Done bool
}

// MaintenanceResult is what a run did (or, with DryRun, would do).
type MaintenanceResult struct {
	Warehouse string
	Ident     Ident
	DryRun    bool
	// Skipped says why nothing ran (gc.enabled=false), else "".
	Skipped          string
	SnapshotsBefore  int
	SnapshotsExpired int
	ExpiredIDs       []int64
	CommitAttempts   int
	// MetadataLocation and Version are the table's after the run.
	MetadataLocation string
	Version          int64
	FilesRemoved     int
	BytesRemoved     int64
	OrphansFound     int
	OrphansTooYoung  int
	// Files are the removed (or, dry, removable) files, at most 1000.
	Files    []string
	Duration time.Duration
}

func (r *MaintenanceResult) removed(loc string, size int64) {
	r.FilesRemoved++
	r.BytesRemoved += size
	if len(r.Files) < maxListedFiles {
		r.Files = append(r.Files, loc)
	}
}

// MaintainTable runs snapshot expiry and/or orphan removal on one table.
// Without either option it runs what the table's policy enables (both,
// unless orphan removal is off), whether or not scheduled maintenance is
// on.
func (c *Catalog) MaintainTable(ctx context.Context, wh string, id Ident, opts MaintenanceOptions) (res MaintenanceResult, err error) {
	start := c.cfg.Now()
	res = MaintenanceResult{Warehouse: wh, Ident: id, DryRun: opts.DryRun}
	if opts.OlderThan < 0 || opts.OrphansOlderThan < 0 || opts.RetainLast < 0 || opts.RetainLast > MaxRetainLast {
		return res, fmt.Errorf("%w: negative age or retain-last outside 1..%d", ErrInvalidRequest, MaxRetainLast)
	}
	e, err := c.findEntry(ctx, tableKind, wh, id)
	if err != nil {
		return res, err
	}
	md, err := c.parsedTable(e)
	if err != nil {
		return res, err
	}
	ws, err := c.WarehouseSettings(ctx, wh)
	if err != nil {
		return res, err
	}
	pol := resolvePolicy(ws.Maintenance, md.Properties())
	if !opts.ExpireSnapshots && !opts.RemoveOrphans {
		opts.ExpireSnapshots, opts.RemoveOrphans = true, pol.orphans
	}
	opts.OlderThan = nonZero(opts.OlderThan, pol.expireAge)
	opts.OrphansOlderThan = nonZero(opts.OrphansOlderThan, pol.orphanAge)
	if opts.RetainLast == 0 {
		opts.RetainLast = pol.retainLast
	}
	res.SnapshotsBefore = len(md.Snapshots())
	res.MetadataLocation, res.Version = e.MetadataLocation, e.Version
	defer func() { res.Duration = c.cfg.Now().Sub(start) }()
	if pol.gcDisabled {
		res.Skipped = "gc.enabled=false: the table does not own its files"
		return res, nil
	}
	if opts.ExpireSnapshots {
		if err := c.expireSnapshots(ctx, wh, id, opts, &res); err != nil {
			return res, err
		}
	}
	if opts.RemoveOrphans {
		if err := c.removeOrphans(ctx, wh, id, opts, &res); err != nil {
			return res, err
		}
	}
	level := slog.LevelDebug // a run that changed nothing is not news
	if res.SnapshotsExpired > 0 || res.FilesRemoved > 0 {
		level = slog.LevelInfo
	}
	c.log.Log(ctx, level, "table maintenance", "warehouse", wh, "table", id.String(), "dry_run", opts.DryRun,
		"snapshots_expired", res.SnapshotsExpired, "files_removed", res.FilesRemoved, "bytes_removed", res.BytesRemoved)
	return res, nil
}

func progress(opts MaintenanceOptions, step, msg string, done bool) {
	if opts.Progress != nil {
		opts.Progress(MaintenanceProgress{Step: step, Msg: msg, Done: done})
	}
}

// expireSnapshots plans and commits an expiry, planning again when a
// concurrent commit wins, then deletes the files only expired snapshots
// referenced.
func (c *Catalog) expireSnapshots(ctx context.Context, wh string, id Ident, opts MaintenanceOptions, res *MaintenanceResult) error {
	progress(opts, "expire-snapshots", fmt.Sprintf("expiring snapshots older than %s, keeping the last %d of each branch",
		FormatRetention(opts.OlderThan), opts.RetainLast), false)
	var before, after table.Metadata
	var afterLoc string
	for attempt := 1; ; attempt++ {
		res.CommitAttempts = attempt
		e, err := c.getEntry(tableKind, wh, id)
		if err != nil {
			return err
		}
		md, err := c.parsedTable(e)
		if err != nil {
			return err
		}
		plan := planExpiry(md, c.cfg.Now(), opts.OlderThan, opts.RetainLast)
		res.ExpiredIDs, res.SnapshotsExpired = plan.expire, len(plan.expire)
		if len(plan.expire) == 0 {
			res.CommitAttempts = 0
			progress(opts, "expire-snapshots", fmt.Sprintf("nothing to expire (%d snapshots kept)", plan.kept), true)
			return nil
		}
		update := table.NewRemoveSnapshotsUpdate(plan.expire, false)
		if opts.DryRun {
			next, err := updateMetadata(md, []table.Update{update}, "")
			if err != nil {
				return fmt.Errorf("catalog: plan expiry of %s: %w", id, err)
			}
			before, after, afterLoc = md, next, e.MetadataLocation
			break
		}
		if c.beforeExpiryCommit != nil {
			c.beforeExpiryCommit(attempt)
		}
		t, err := c.CommitTable(ctx, wh, TableCommit{Ident: id,
			Requirements: []table.Requirement{refsUnchanged{uuid: e.UUID, refs: refsOf(md)}},
			Updates:      []table.Update{update}})
		if errors.Is(err, ErrCommitFailed) && attempt < maxExpiryAttempts {
			progress(opts, "expire-snapshots", fmt.Sprintf("a concurrent commit won (attempt %d); planning again", attempt), false)
			continue
		}
		if err != nil {
			return fmt.Errorf("catalog: expire snapshots of %s: %w", id, err)
		}
		before, after, afterLoc = md, t.Metadata, t.MetadataLocation
		res.MetadataLocation, res.Version = t.MetadataLocation, t.Version
		break
	}
	verb := "expired"
	if opts.DryRun {
		verb = "would expire"
	}
	progress(opts, "expire-snapshots", fmt.Sprintf("%s %d of %d snapshots", verb, res.SnapshotsExpired, res.SnapshotsBefore), true)
	return c.cleanupExpired(ctx, wh, id, before, after, afterLoc, opts, res)
}

// cleanupExpired deletes the files before referenced and after (or, when
// the table moved on, its current metadata) does not, under the table's
// location and not referenced by another table.
func (c *Catalog) cleanupExpired(ctx context.Context, wh string, id Ident, before, after table.Metadata, afterLoc string, opts MaintenanceOptions, res *MaintenanceResult) error {
	progress(opts, "cleanup-expired", "reading the manifests of the expired snapshots", false)
	fsys := ObjectIO{Ctx: ctx, Read: c.readLocation}
	// Only the snapshot files: metadata files follow the metadata log rules.
	old, _, err := snapshotFiles(fsys, before)
	if err != nil {
		return fmt.Errorf("catalog: files of %s before expiry: %w", id, err)
	}
	keep, err := c.retainedFiles(ctx, wh, id, after, afterLoc)
	if err != nil {
		return err
	}
	var cand []string
	for _, loc := range old {
		if !keep[objectName(loc)] {
			cand = append(cand, loc)
		}
	}
	n, err := c.deleteUnder(ctx, wh, id, after.Location(), cand, opts.DryRun, res)
	if err != nil {
		return err
	}
	verb := "removed"
	if opts.DryRun {
		verb = "would remove"
	}
	progress(opts, "cleanup-expired", fmt.Sprintf("%s %d files only expired snapshots referenced", verb, n), true)
	return nil
}

// snapshotFiles returns the manifest lists, manifests, data and delete
// files of every snapshot of md, and the statistics files.
func snapshotFiles(fsys ObjectIO, md table.Metadata) (files, missing []string, err error) {
	all, missing, err := referencedFiles(fsys, "", md, true)
	if err != nil {
		return nil, nil, err
	}
	meta := map[string]bool{}
	for l := range md.PreviousFiles() {
		meta[objectName(l.MetadataFile)] = true
	}
	for _, loc := range all {
		if !meta[objectName(loc)] {
			files = append(files, loc)
		}
	}
	return files, missing, nil
}

// retainedFiles returns, by object name, every file the table's retained
// metadata references: md's (the metadata at mdLoc) and, if the table
// moved on since, its current metadata's too.
func (c *Catalog) retainedFiles(ctx context.Context, wh string, id Ident, md table.Metadata, mdLoc string) (map[string]bool, error) {
	fsys := ObjectIO{Ctx: ctx, Read: c.readLocation}
	keep := map[string]bool{}
	add := func(m table.Metadata, loc string) error {
		files, missing, err := referencedFiles(fsys, loc, m, true)
		if err != nil {
			return fmt.Errorf("catalog: files of %s: %w", id, err)
		}
		if len(missing) > 0 {
			// A retained manifest is unreadable: what it names is unknown,
			// so nothing may be called unreferenced.
			return fmt.Errorf("%w: maintenance of %s: retained manifest lists or manifests are missing, so nothing can be called unreferenced: %s",
				ErrInvalidRequest, id, strings.Join(missing, ", "))
		}
		for _, f := range files {
			keep[objectName(f)] = true
		}
		return nil
	}
	if err := add(md, mdLoc); err != nil {
		return nil, err
	}
	e, err := c.getEntry(tableKind, wh, id)
	if err != nil {
		return nil, err
	}
	if e.MetadataLocation != mdLoc {
		cur, err := c.parsedTable(e)
		if err != nil {
			return nil, err
		}
		if err := add(cur, e.MetadataLocation); err != nil {
			return nil, err
		}
	}
	return keep, nil
}

// deleteUnder deletes (or, dry, counts) the candidates that lie under the
// table's location, that no other table's or view's files include, and
// that exist, deleteWorkers at a time. It returns how many it removed.
func (c *Catalog) deleteUnder(ctx context.Context, wh string, id Ident, location string, cand []string, dry bool, res *MaintenanceResult) (int, error) {
	base, err := locationPath(wh, location)
	if err != nil {
		return 0, nil // a location the catalog does not own: delete nothing
	}
	var inside []string
	for _, loc := range cand {
		if key, err := keyInWarehouse(wh, loc); err == nil && strings.HasPrefix(key, base+"/") {
			inside = append(inside, loc)
		}
	}
	if len(inside) == 0 {
		return 0, nil
	}
	others, err := c.othersFiles(ctx, wh, id, base)
	if err != nil {
		return 0, err
	}
	type outcome struct {
		removed bool
		size    int64
	}
	out := make([]outcome, len(inside))
	err = deleteEach(ctx, len(inside), func(ctx context.Context, i int) error {
		loc := inside[i]
		key, _ := keyInWarehouse(wh, loc)
		if others.holds(key) {
			return nil
		}
		v, err := c.obj.HeadObject(ctx, wh, key, "")
		if errors.Is(err, objects.ErrObjectNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if !dry {
			if _, err := c.obj.DeleteObject(ctx, wh, key, ""); err != nil {
				return fmt.Errorf("catalog: maintenance of %s: delete %s: %w", id, loc, err)
			}
		}
		out[i] = outcome{true, v.Size}
		return nil
	})
	n := 0
	for i, o := range out {
		if o.removed {
			res.removed(inside[i], o.size)
			n++
		}
	}
	return n, err
}

// foreignFiles is what must be kept under a table's location because
// something else refers to it.
type foreignFiles struct {
	names    map[string]bool // bucket/key
	prefixes []string        // keys under these prefixes (view locations) are kept whole
	wh       string
}

func (f foreignFiles) holds(key string) bool {
	if f.names[f.wh+"/"+key] {
		return true
	}
	for _, p := range f.prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// othersFiles gathers, for a table at base, what others keep under it:
// every file under a view located at, inside or around base (views may
// overlap tables; their old metadata files are not all listed anywhere),
// the files of soft-deleted tables once located there (an undrop must find
// them), and the files of live tables whose metadata names a file under
// base (a table registered from this one's metadata).
func (c *Catalog) othersFiles(ctx context.Context, wh string, id Ident, base string) (foreignFiles, error) {
	f := foreignFiles{names: map[string]bool{}, wh: wh}
	vp := warehouseScanPrefix(pfxView, wh)
	err := meta.Scan(c.meta, vp, meta.PrefixEnd(vp), func(k, v []byte) (bool, error) {
		_, vid, err := splitEntryKey(pfxView, k)
		if err != nil {
			return false, err
		}
		e, err := viewKind.decode(vid, v)
		if err != nil {
			return false, err
		}
		if p, err := locationPath(wh, e.Location); err == nil && overlaps(p, base) {
			f.prefixes = append(f.prefixes, p+"/")
		}
		return true, nil
	})
	if err != nil {
		return f, err
	}
	fsys := ObjectIO{Ctx: ctx, Read: c.readLocation}
	addRefs := func(what string, metaLoc string, md table.Metadata) error {
		files, _, err := referencedFiles(fsys, metaLoc, md, true)
		if err != nil {
			return fmt.Errorf("catalog: files of %s, which may share some: %w", what, err)
		}
		for _, loc := range files {
			f.names[objectName(loc)] = true
		}
		return nil
	}
	dp := warehouseScanPrefix(pfxDeletedTable, wh)
	var deleted []deletedEntry
	err = c.scanDeleted(tableKind, dp, func(_ Ident, d deletedEntry) error {
		if p, err := locationPath(wh, d.Location); err == nil && overlaps(p, base) {
			deleted = append(deleted, d)
		}
		return nil
	})
	if err != nil {
		return f, err
	}
	for _, d := range deleted {
		data, err := c.entryMetadata(d.entry)
		if err != nil {
			return f, err
		}
		md, err := table.ParseMetadataBytes(data)
		if err != nil {
			return f, fmt.Errorf("catalog: soft-deleted table at %s: %w", d.Location, err)
		}
		if err := addRefs("soft-deleted table "+d.UUID, d.MetadataLocation, md); err != nil {
			return f, err
		}
	}
	naming, err := c.tablesNaming(wh, [][]byte{[]byte("//" + wh + "/" + base + "/")})
	if err != nil {
		return f, err
	}
	for _, other := range naming {
		if other.equal(id) {
			continue
		}
		e, err := c.getEntry(tableKind, wh, other)
		if errors.Is(err, ErrNoSuchTable) {
			continue
		}
		if err != nil {
			return f, err
		}
		md, err := c.parsedTable(e)
		if err != nil {
			return f, err
		}
		if err := addRefs("table "+other.String(), e.MetadataLocation, md); err != nil {
			return f, err
		}
	}
	return f, nil
}

// overlaps reports whether two location paths are equal or one lies inside
// the other on a '/' boundary.
func overlaps(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

// removeOrphans lists the table's location and deletes the files older
// than the window that no retained metadata references.
func (c *Catalog) removeOrphans(ctx context.Context, wh string, id Ident, opts MaintenanceOptions, res *MaintenanceResult) error {
	e, err := c.getEntry(tableKind, wh, id)
	if err != nil {
		return err
	}
	md, err := c.parsedTable(e)
	if err != nil {
		return err
	}
	base, err := locationPath(wh, e.Location)
	if err != nil {
		return fmt.Errorf("%w: %s is at %s, which the catalog does not manage", ErrInvalidRequest, id, e.Location)
	}
	progress(opts, "remove-orphans", fmt.Sprintf("listing %s for files older than %s that no retained metadata references",
		e.Location, FormatRetention(opts.OrphansOlderThan)), false)
	keep, err := c.retainedFiles(ctx, wh, id, md, e.MetadataLocation)
	if err != nil {
		return err
	}
	now := c.cfg.Now()
	var cand []string
	listed := 0
	lo := objects.ListOptions{Prefix: base + "/", MaxKeys: 1000}
	for {
		page, err := c.obj.ListObjects(ctx, wh, lo)
		if err != nil {
			return fmt.Errorf("catalog: list %s: %w", e.Location, err)
		}
		for _, o := range page.Objects {
			listed++
			loc := "s3://" + wh + "/" + o.Key
			if keep[wh+"/"+o.Key] {
				continue
			}
			res.OrphansFound++
			if !orphanDue(time.Unix(0, o.ModTime), now, opts.OrphansOlderThan) {
				res.OrphansTooYoung++
				continue
			}
			cand = append(cand, loc)
		}
		if !page.IsTruncated {
			break
		}
		lo.After = page.NextAfter
	}
	// A commit since the listing may reference an old file again (a
	// registered or re-added file): keep whatever the table now names.
	cur, err := c.getEntry(tableKind, wh, id)
	if err != nil {
		return err
	}
	if cur.MetadataLocation != e.MetadataLocation {
		curMD, err := c.parsedTable(cur)
		if err != nil {
			return err
		}
		more, err := c.retainedFiles(ctx, wh, id, curMD, cur.MetadataLocation)
		if err != nil {
			return err
		}
		cand = without(cand, more)
	}
	before := res.FilesRemoved
	if _, err := c.deleteUnder(ctx, wh, id, e.Location, cand, opts.DryRun, res); err != nil {
		return err
	}
	verb := "removed"
	if opts.DryRun {
		verb = "would remove"
	}
	progress(opts, "remove-orphans", fmt.Sprintf("listed %d files: %d unreferenced, %d younger than the window kept, %s %d",
		listed, res.OrphansFound, res.OrphansTooYoung, verb, res.FilesRemoved-before), true)
	return nil
}

func without(cand []string, keep map[string]bool) []string {
	out := cand[:0]
	for _, loc := range cand {
		if !keep[objectName(loc)] {
			out = append(out, loc)
		}
	}
	return out
}

// pruneMetadata deletes, after a commit of a table whose properties enable
// write.metadata.delete-after-commit.enabled, the metadata files the
// commit dropped from the metadata log (trimmed to
// write.metadata.previous-versions-max), if they lie under the table's
// location. It runs after the commit point; a failure is logged, the
// commit stands.
func (c *Catalog) pruneMetadata(ctx context.Context, wh string, p *pendingTable) {
	if !p.existed || p.prevMD == nil || p.md == nil ||
		!p.md.Properties().GetBool(table.MetadataDeleteAfterCommitEnabledKey, table.MetadataDeleteAfterCommitEnabledDefault) {
		return
	}
	base, err := locationPath(wh, p.e.Location)
	if err != nil {
		return
	}
	for _, loc := range removedMetadataFiles(p.prev.MetadataLocation, p.prevMD, p.md, p.e.MetadataLocation) {
		key, err := keyInWarehouse(wh, loc)
		if err != nil || !strings.HasPrefix(key, base+"/") || path.Ext(key) != ".json" {
			continue
		}
		if _, err := c.obj.HeadObject(ctx, wh, key, ""); err != nil {
			continue // already gone: no delete marker for it
		}
		if _, err := c.obj.DeleteObject(ctx, wh, key, ""); err != nil {
			c.log.Warn("prune metadata file after commit", "warehouse", wh, "table", p.id.String(), "file", loc, "err", err)
		}
	}
}
