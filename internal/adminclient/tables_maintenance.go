package adminclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// PathWarehouseMaintenanceSuffix follows a warehouse's path: POST runs
// maintenance on one of its tables.
const PathWarehouseMaintenanceSuffix = "/maintenance"

// MaintenanceRequest runs snapshot expiry and/or orphan removal on a table.
// Without ExpireSnapshots and RemoveOrphans the table's policy decides
// (both, unless its orphan removal is off). Empty ages and a zero
// RetainLast come from the table's policy too.
type MaintenanceRequest struct {
	Namespace        []string `json:"namespace"`
	Name             string   `json:"name"`
	ExpireSnapshots  bool     `json:"expireSnapshots,omitempty"`
	OlderThan        string   `json:"olderThan,omitempty"` // "5d", "12h"
	RetainLast       int      `json:"retainLast,omitempty"`
	RemoveOrphans    bool     `json:"removeOrphans,omitempty"`
	OrphansOlderThan string   `json:"orphansOlderThan,omitempty"`
	DryRun           bool     `json:"dryRun,omitempty"`
}

// MaintenanceEvent is one line of a maintenance answer (NDJSON): a
// progress step, then the summary, or an error if the run failed after it
// started.
type MaintenanceEvent struct {
	Step    string              `json:"step,omitempty"`
	Msg     string              `json:"msg,omitempty"`
	Done    bool                `json:"done,omitempty"`
	Summary *MaintenanceSummary `json:"summary,omitempty"`
	Error   *ErrorBody          `json:"error,omitempty"`
}

// MaintenanceSummary is what a maintenance run did (with DryRun: would do).
type MaintenanceSummary struct {
	Warehouse        string        `json:"warehouse"`
	Namespace        []string      `json:"namespace"`
	Name             string        `json:"name"`
	DryRun           bool          `json:"dryRun"`
	Skipped          string        `json:"skipped,omitempty"`
	SnapshotsBefore  int           `json:"snapshotsBefore"`
	SnapshotsExpired int           `json:"snapshotsExpired"`
	ExpiredIDs       []int64       `json:"expiredSnapshotIds,omitempty"`
	CommitAttempts   int           `json:"commitAttempts"`
	MetadataLocation string        `json:"metadataLocation"`
	Version          int64         `json:"version"`
	FilesRemoved     int           `json:"filesRemoved"`
	BytesRemoved     int64         `json:"bytesRemoved"`
	OrphansFound     int           `json:"orphansFound"`
	OrphansTooYoung  int           `json:"orphansTooYoung"`
	Files            []string      `json:"files,omitempty"`
	Duration         time.Duration `json:"duration"`
}

// MaintainTable runs maintenance on a table, calling progress (if set) for
// each step the server reports, and returns the summary. An error answered
// before the run starts (no such table, a replica, a bad age) is an *Error;
// one reported after it started is an *Error with the status 200 the
// stream had.
func (c *Client) MaintainTable(ctx context.Context, warehouse string, req MaintenanceRequest, progress func(MaintenanceEvent)) (MaintenanceSummary, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return MaintenanceSummary{}, fmt.Errorf("adminclient: encode request: %w", err)
	}
	resp, err := c.do(ctx, http.MethodPost, warehousePath(warehouse)+PathWarehouseMaintenanceSuffix, nil, body)
	if err != nil {
		return MaintenanceSummary{}, err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var ev MaintenanceEvent
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return MaintenanceSummary{}, fmt.Errorf("admin maintenance of %s: the answer ended without a summary: %w", req.Name, err)
		}
		switch {
		case ev.Error != nil:
			return MaintenanceSummary{}, &Error{Code: ev.Error.Code, Message: ev.Error.Message, StatusCode: resp.StatusCode}
		case ev.Summary != nil:
			return *ev.Summary, nil
		case progress != nil:
			progress(ev)
		}
	}
}
