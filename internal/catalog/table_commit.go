package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/apache/iceberg-go/table"
)

// TableCommit is one table's part of a commit: requirements checked against
// its current metadata, then updates applied in order.
type TableCommit struct {
	Ident        Ident
	Requirements []table.Requirement
	Updates      []table.Update
}

// pendingTable is a table change being prepared under the table's lock.
type pendingTable struct {
	id      Ident
	prev    entry // current entry; zero when the table does not exist yet
	prevMD  table.Metadata
	existed bool
	e       entry          // entry after the change
	md      table.Metadata // metadata after the change (nil: not created yet)
	data    []byte
	changed bool
	// applied counts changes folded in; the metadata log records the
	// previous file only once per new version.
	applied int
	// registered: the metadata file already exists; do not write one.
	registered bool
}

func (p *pendingTable) table() *Table {
	return &Table{Ident: p.id, UUID: p.e.UUID, Location: p.e.Location, MetadataLocation: p.e.MetadataLocation,
		Version: p.e.Version, Metadata: p.md, MetadataJSON: p.data}
}

// CommitTable checks a commit's requirements against the table's current
// metadata and applies its updates, under the table's lock. A failed
// requirement is ErrCommitFailed (reload and retry); a commit to a missing
// table is ErrNoSuchTable unless it asserts create, which creates the table
// (the second phase of a staged create).
func (c *Catalog) CommitTable(ctx context.Context, wh string, tc TableCommit) (*Table, error) {
	tables, err := c.commit(ctx, wh, []TableCommit{tc}, false)
	if err != nil {
		return nil, err
	}
	return tables[0], nil
}

// CommitTransaction commits changes to several tables atomically: every
// table changes or none does. All tables are locked (in a fixed order),
// every requirement is checked, every metadata file and identity record is
// written, and one meta batch swaps every pointer. Several changes to one
// table apply in order and produce one new version.
func (c *Catalog) CommitTransaction(ctx context.Context, wh string, commits []TableCommit) ([]*Table, error) {
	if len(commits) == 0 {
		return nil, fmt.Errorf("%w: a transaction needs at least one table change", ErrInvalidRequest)
	}
	return c.commit(ctx, wh, commits, true)
}

func (c *Catalog) commit(ctx context.Context, wh string, commits []TableCommit, txn bool) ([]*Table, error) {
	keys := make([][]byte, 0, 2*len(commits))
	for _, tc := range commits {
		if err := ValidateIdent(tc.Ident); err != nil {
			return nil, err
		}
		keys = append(keys, entryKey(pfxTable, wh, tc.Ident), entryKey(pfxView, wh, tc.Ident))
	}
	if _, err := c.Warehouse(ctx, wh); err != nil {
		return nil, err
	}
	c.structMu.RLock()
	defer c.structMu.RUnlock()
	unlock := c.lockSet(keys...)
	defer unlock()

	var order []*pendingTable
	byKey := map[string]*pendingTable{}
	for _, tc := range commits {
		k := string(entryKey(pfxTable, wh, tc.Ident))
		p, ok := byKey[k]
		if !ok {
			var err error
			if p, err = c.loadPending(wh, tc); err != nil {
				return nil, err
			}
			byKey[k] = p
			order = append(order, p)
		}
		if err := c.apply(wh, p, tc); err != nil {
			return nil, err
		}
	}
	var changed, claims []*pendingTable
	for _, p := range order {
		if p.changed {
			if err := c.finish(wh, p); err != nil {
				return nil, err
			}
			changed = append(changed, p)
			if !p.existed || p.e.Location != p.prev.Location {
				claims = append(claims, p)
			}
		}
	}
	if len(claims) > 0 {
		c.locMu.Lock()
		defer c.locMu.Unlock()
		if err := c.checkClaims(wh, claims); err != nil {
			return nil, err
		}
	}
	var info *TxnInfo
	if txn && len(changed) > 0 {
		info = &TxnInfo{ID: newUUID()}
		for _, p := range changed {
			info.Members = append(info.Members, TxnMember{Namespace: p.id.Namespace, Name: p.id.Name, Version: p.e.Version})
		}
	}
	if err := c.writeCommits(ctx, wh, changed, info); err != nil {
		return nil, err
	}
	out := make([]*Table, len(order))
	for i, p := range order {
		out[i] = p.table()
	}
	return out, nil
}

// loadPending reads a table's current state for a commit.
func (c *Catalog) loadPending(wh string, tc TableCommit) (*pendingTable, error) {
	p := &pendingTable{id: tc.Ident}
	e, err := c.getEntry(tableKind, wh, tc.Ident)
	switch {
	case err == nil:
		md, err := c.parsedTable(e)
		if err != nil {
			return nil, err
		}
		p.prev, p.prevMD, p.existed, p.e, p.md = e, md, true, e, md
		p.data, err = c.entryMetadata(e)
		return p, err
	case !errors.Is(err, ErrNoSuchTable):
		return nil, err
	case !assertsCreate(tc.Requirements):
		return nil, err
	}
	if _, err := c.getNamespace(wh, tc.Ident.Namespace); err != nil {
		return nil, err
	}
	if err := c.checkFree(tableKind, wh, tc.Ident); err != nil {
		return nil, err
	}
	return p, nil
}

func assertsCreate(reqs []table.Requirement) bool {
	return slices.ContainsFunc(reqs, func(r table.Requirement) bool { return r.GetType() == "assert-create" })
}

// apply checks one change's requirements against the pending metadata and
// applies its updates.
func (c *Catalog) apply(wh string, p *pendingTable, tc TableCommit) error {
	for _, r := range tc.Requirements {
		if err := r.Validate(p.md); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrCommitFailed, tc.Ident, err)
		}
	}
	if len(tc.Updates) == 0 {
		return nil
	}
	var md table.Metadata
	var err error
	if p.md == nil {
		md, err = buildFresh(tc.Updates)
	} else {
		prevLoc := ""
		if p.existed && p.applied == 0 {
			prevLoc = p.prev.MetadataLocation
		}
		md, err = updateMetadata(p.md, tc.Updates, prevLoc)
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalidRequest, tc.Ident, err)
	}
	p.md, p.changed = md, true
	p.applied++
	return nil
}

// updateMetadata applies updates to base and, as Iceberg writers do, keeps
// at most write.metadata.previous-versions-max entries in the metadata log,
// so that metadata does not grow with every commit.
func updateMetadata(base table.Metadata, updates []table.Update, prevLoc string) (table.Metadata, error) {
	b, err := table.MetadataBuilderFromBase(base, prevLoc)
	if err != nil {
		return nil, err
	}
	for _, u := range updates {
		if err := u.Apply(b); err != nil {
			return nil, err
		}
	}
	keep := base.Properties().GetInt(table.MetadataPreviousVersionsMaxKey, table.MetadataPreviousVersionsMaxDefault)
	if prevLoc != "" {
		keep-- // Build appends the previous file after trimming
	}
	b.TrimMetadataLogs(max(keep, 0))
	return b.Build()
}

// buildFresh builds the first metadata of a table created by a commit (a
// staged create), starting at the format version its updates ask for.
func buildFresh(updates []table.Update) (table.Metadata, error) {
	version := table.DefaultFormatVersion
	for _, u := range updates {
		if u.Action() == table.UpdateUpgradeFormatVersion {
			data, err := json.Marshal(u)
			if err != nil {
				return nil, err
			}
			var w struct {
				V int `json:"format-version"`
			}
			if err := json.Unmarshal(data, &w); err != nil {
				return nil, err
			}
			version = w.V
			break
		}
	}
	b, err := table.NewMetadataBuilder(version)
	if err != nil {
		return nil, err
	}
	for _, u := range updates {
		if err := u.Apply(b); err != nil {
			return nil, err
		}
	}
	return b.Build()
}

// finish fixes the new entry of a changed table: location check, next
// version, new metadata file name and JSON.
func (c *Catalog) finish(wh string, p *pendingTable) error {
	loc := p.md.Location()
	if _, err := locationPath(wh, loc); err != nil {
		return err
	}
	if p.existed {
		p.e.Version = p.prev.Version + 1
	} else {
		p.e = entry{ID: newID(), Version: 0}
	}
	p.e.UUID, p.e.Location, p.e.UpdatedMS = p.md.TableUUID().String(), loc, c.nowMS()
	p.e.MetadataLocation = metadataFileLocation(loc, p.e.Version)
	data, err := json.Marshal(p.md)
	if err != nil {
		return err
	}
	p.data = data
	return nil
}

// writeCommits makes prepared changes durable: metadata files first, then
// identity records, then one synced meta batch — the commit point. A crash
// before the batch leaves unreferenced files and, at worst, an identity
// record ahead of the catalog that the next commit of the table supersedes.
func (c *Catalog) writeCommits(ctx context.Context, wh string, ps []*pendingTable, txn *TxnInfo) error {
	if len(ps) == 0 {
		return nil
	}
	refKind, refLocation := "", ""
	if txn == nil && len(ps) == 1 {
		refKind, refLocation = KindTable, ps[0].e.MetadataLocation
	}
	// The files and records are independent objects: write them at once so
	// that their synced batches share WAL syncs. The replicated mark of a
	// keyed commit is one of them (idempotency_repl.go).
	var writes []func() error
	key, mark, keyed := c.appliedMark(ctx, wh, refKind, refLocation)
	if keyed && refLocation == "" {
		for _, p := range ps {
			mark.Tables = append(mark.Tables, p.e.MetadataLocation)
		}
	}
	if keyed {
		writes = append(writes, func() error { return c.putReplicated(ctx, wh, key, mark) })
	}
	for _, p := range ps {
		if !p.registered {
			writes = append(writes, func() error { return c.putFile(ctx, wh, p.e.MetadataLocation, p.data) })
		}
		rec := tableKind.identity(p.id, p.e, false)
		rec.Txn = txn
		writes = append(writes, func() error { return c.putIdentity(ctx, wh, rec) })
	}
	if err := parallel(writes); err != nil {
		return err
	}
	b := c.meta.NewBatch()
	for _, p := range ps {
		if err := setEntry(b, tableKind, wh, p.id, p.e, p.data); err != nil {
			return err
		}
		tableKind.moveLocation(b, wh, p.id, p.prev.Location, p.id, p.e.Location)
		if p.existed && p.prev.ID != p.e.ID {
			b.Delete(metadataKey(p.prev.ID)) // a register with overwrite replaced the entry
		}
	}
	if keyed {
		if err := putIdempotent(b, wh, key, mark); err != nil {
			return err
		}
	}
	if err := b.Commit(true); err != nil {
		return err
	}
	for _, p := range ps {
		if p.existed && p.prev.ID != p.e.ID {
			c.cache.drop(p.prev.ID)
		}
		c.cache.put(p.e.ID, p.e.Version, p.md)
		c.pruneMetadata(ctx, wh, p)
	}
	return nil
}

// parallel runs fns at once and returns their errors joined.
func parallel(fns []func() error) error {
	if len(fns) == 1 {
		return fns[0]()
	}
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// parsedTable returns an entry's parsed metadata, from the cache when it
// holds the entry's current version.
func (c *Catalog) parsedTable(e entry) (table.Metadata, error) {
	if md, ok := c.cache.get(e.ID, e.Version); ok {
		if tm, ok := md.(table.Metadata); ok {
			return tm, nil
		}
	}
	data, err := c.entryMetadata(e)
	if err != nil {
		return nil, err
	}
	md, err := table.ParseMetadataBytes(data)
	if err != nil {
		return nil, fmt.Errorf("catalog: parse metadata of %s: %w", e.MetadataLocation, err)
	}
	c.cache.put(e.ID, e.Version, md)
	return md, nil
}
