package adminclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// PathHeal runs a full check of a site's blob files against its metadata.
const PathHeal = "/twinlake/admin/v1/heal"

// Bounds of a heal scan's pace, in records (metadata records and blob
// files) read per second.
const (
	HealDefaultRate = 10000
	HealMinRate     = 100
	HealMaxRate     = 1000000
)

// HealMissingBlob is a blob file that a version or uploaded part names but
// that is not on disk.
type HealMissingBlob struct {
	Bucket    string `json:"bucket,omitempty"`
	Key       string `json:"key,omitempty"`
	VersionID string `json:"versionId,omitempty"`
	UploadID  string `json:"uploadId,omitempty"`
	BlobID    string `json:"blobId"`
}

// HealOptions are a heal scan's request.
type HealOptions struct {
	// DryRun reports and changes nothing.
	DryRun bool
	// Rate is records read per second (0: the server's default).
	Rate int
	// Deep reads every shard of every blob through its checksums on a
	// site whose data is erasure-coded across drives, instead of
	// checking that each shard file is there with the right length.
	Deep bool
}

// HealReport is what a heal scan found and repaired.
type HealReport struct {
	DryRun         bool              `json:"dryRun,omitempty"`
	Deep           bool              `json:"deep,omitempty"`
	Drives         int               `json:"drives"`
	Layout         string            `json:"layout"`        // erasure layout DATA+PARITY, 1+0 on one drive
	Degraded       int64             `json:"degraded"`      // blobs found with shards missing or corrupt
	ShardsRebuilt  int64             `json:"shardsRebuilt"` // shards written again
	Unanswered     int64             `json:"unanswered"`    // blobs with a shard on a drive that did not answer, not checked there
	BlobFiles      int64             `json:"blobFiles"`
	Checked        int64             `json:"checked"` // referenced blobs checked
	Versions       int64             `json:"versions"`
	Parts          int64             `json:"parts"`
	InFlight       int64             `json:"inFlight"`
	Orphans        int64             `json:"orphans"`
	OrphanBytes    int64             `json:"orphanBytes"`
	Removed        int64             `json:"removed"`
	MissingCount   int64             `json:"missingCount"`
	Missing        []HealMissingBlob `json:"missing,omitempty"`
	Elapsed        string            `json:"elapsed"`
	ElapsedSeconds float64           `json:"elapsedSeconds"`
}

// SetElapsed fills both forms of the scan's duration.
func (r *HealReport) SetElapsed(d time.Duration) {
	r.Elapsed, r.ElapsedSeconds = d.Round(time.Millisecond).String(), d.Seconds()
}

// HealScan runs a heal scan and waits for its report.
func (c *Client) HealScan(ctx context.Context, o HealOptions) (HealReport, error) {
	q := url.Values{"scan": {"true"}, "dry-run": {strconv.FormatBool(o.DryRun)}}
	if o.Rate > 0 {
		q.Set("rate", strconv.Itoa(o.Rate))
	}
	if o.Deep {
		q.Set("deep", "true")
	}
	var out HealReport
	err := c.callQuery(ctx, http.MethodPost, PathHeal, q, &out)
	return out, err
}
