package adminclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/twinlake/twinlake/internal/trace"
)

// Paths of the Tables replication calls.
const (
	PathTablesReplication         = "/twinlake/admin/v1/tables/replication"
	PathTablesReplicationStatus   = PathTablesReplication + "/status"
	PathTablesReplicationFailover = PathTablesReplication + "/failover"
	PathTablesReplicationBackfill = PathTablesReplication + "/backfill"
	PathTablesResyncOpen          = PathTablesReplication + "/resync/open"
	PathTablesResyncRebuild       = PathTablesReplication + "/resync/rebuild"
	PathTablesCatalogReset        = PathTablesReplication + "/catalog/reset"
)

// Error codes of the Tables replication calls.
const (
	CodeNotReplica       = "NotTablesReplica"
	CodeReplicaReadOnly  = "TablesReplicaReadOnly"
	CodeRoleConflict     = "TablesRoleConflict"
	CodeNoResyncWindow   = "NoCatalogResyncWindow"
	CodePeerResyncActive = "PrimaryResyncInProgress"
	CodeBackfillRunning  = "BackfillAlreadyRunning"
	CodeNoBackfill       = "NoBackfill"
	CodeNotConfirmed     = "ConfirmationRequired"
)

// TablesEntryStatus is one table or view as the replica sees it.
type TablesEntryStatus struct {
	Warehouse    string   `json:"warehouse"`
	Namespace    []string `json:"namespace"`
	Name         string   `json:"name"`
	Kind         string   `json:"kind"`
	Status       string   `json:"status"`
	Verified     int64    `json:"verified"`
	Latest       int64    `json:"latest"`
	Behind       int64    `json:"behind"`
	MissingFiles []string `json:"missingFiles,omitempty"`
	Transaction  string   `json:"transaction,omitempty"`
}

// TablesRebuildStatus is the state of a catalog resync rebuild.
type TablesRebuildStatus struct {
	State     string    `json:"state,omitempty"`
	Attempts  int       `json:"attempts"`
	LastError string    `json:"lastError,omitempty"`
	Started   time.Time `json:"started,omitzero"`
	Finished  time.Time `json:"finished,omitzero"`
	BackupAt  string    `json:"backup,omitempty"`
	Discarded int       `json:"discarded,omitempty"`
}

// TablesReplicationStatus is table replicate status: the scanner state,
// then every table and view.
type TablesReplicationStatus struct {
	State       string              `json:"state"`
	Consistency string              `json:"consistency"`
	Leader      bool                `json:"leader"`
	Promoting   bool                `json:"promoting,omitempty"`
	Cycles      int64               `json:"cycles"`
	LastCycle   time.Time           `json:"lastCycle,omitzero"`
	CycleTime   time.Duration       `json:"cycleTime"`
	Window      bool                `json:"resyncWindow,omitempty"`
	Rebuild     TablesRebuildStatus `json:"rebuild,omitzero"`
	Total       int                 `json:"total"`
	Offset      int                 `json:"offset"`
	Entries     []TablesEntryStatus `json:"entries"`
	// Events are the scanner's last notable events, newest first, kept
	// since the site started.
	Events []trace.Event `json:"events,omitempty"`
}

// BackfillJob is a run of the catalog identity backfill.
type BackfillJob struct {
	ID         string    `json:"id"`
	State      string    `json:"state"`
	Started    time.Time `json:"started"`
	Finished   time.Time `json:"finished,omitzero"`
	Warehouses int       `json:"warehouses"`
	Namespaces int       `json:"namespaces"`
	Tables     int       `json:"tables"`
	Views      int       `json:"views"`
	Written    int       `json:"written"`
	Unchanged  int       `json:"unchanged"`
	Warnings   []string  `json:"warnings,omitempty"`
	Error      string    `json:"error,omitempty"`
	// Warehouse is the warehouse in hand while the job runs.
	Warehouse string `json:"warehouse,omitempty"`
}

// CatalogResetResult names the backup a catalog reset made.
type CatalogResetResult struct {
	Backup string `json:"backup"`
}

// TablesReplicationStatus returns the replica scanner's report, entries from
// offset, at most limit (0: all).
func (c *Client) TablesReplicationStatus(ctx context.Context, offset, limit int) (TablesReplicationStatus, error) {
	q := url.Values{}
	if offset > 0 {
		q.Set("offset", strconv.Itoa(offset))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out TablesReplicationStatus
	err := c.callQuery(ctx, http.MethodGet, PathTablesReplicationStatus, q, &out)
	return out, err
}

// TablesFailover promotes the replica; it returns at once.
func (c *Client) TablesFailover(ctx context.Context) (TablesReplicationStatus, error) {
	var out TablesReplicationStatus
	err := c.call(ctx, http.MethodPost, PathTablesReplicationFailover, nil, &out)
	return out, err
}

// Backfill starts (POST), reports (GET) or cancels (DELETE) the identity
// backfill.
func (c *Client) Backfill(ctx context.Context, method string) (BackfillJob, error) {
	var out BackfillJob
	err := c.call(ctx, method, PathTablesReplicationBackfill, nil, &out)
	return out, err
}

// TablesResyncOpen opens a catalog resync window.
func (c *Client) TablesResyncOpen(ctx context.Context) (TablesRebuildStatus, error) {
	var out TablesRebuildStatus
	err := c.call(ctx, http.MethodPost, PathTablesResyncOpen, nil, &out)
	return out, err
}

// TablesResyncRebuild starts the catalog rebuild; confirm must be true.
func (c *Client) TablesResyncRebuild(ctx context.Context, confirm bool) (TablesRebuildStatus, error) {
	var out TablesRebuildStatus
	err := c.callQuery(ctx, http.MethodPost, PathTablesResyncRebuild, url.Values{"confirm": {strconv.FormatBool(confirm)}}, &out)
	return out, err
}

// TablesCatalogReset backs up and deletes the replica's catalog; confirm
// must be true.
func (c *Client) TablesCatalogReset(ctx context.Context, confirm bool) (CatalogResetResult, error) {
	var out CatalogResetResult
	err := c.callQuery(ctx, http.MethodPost, PathTablesCatalogReset, url.Values{"confirm": {strconv.FormatBool(confirm)}}, &out)
	return out, err
}
