package adminclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Paths of the site replication calls.
const (
	PathReplication        = "/twinlake/admin/v1/replication"
	PathReplicationSites   = PathReplication + "/sites"
	PathReplicationInfo    = PathReplication + "/info"
	PathReplicationStatus  = PathReplication + "/status"
	PathReplicationResync  = PathReplication + "/resync"  // + "/{peer}"
	PathReplicationBuckets = PathReplication + "/buckets" // + "/{bucket}/status|backlog"
	PathReplicationHistory = PathReplication + "/history"
)

// Error codes of the site replication calls.
const (
	CodeSiteHasData        = "SiteHasData"
	CodeNotConfigured      = "ReplicationNotConfigured"
	CodeResyncRunning      = "ResyncAlreadyRunning"
	CodeNoResync           = "NoSuchResync"
	CodePeerUnreachable    = "PeerUnreachable"
	CodePeerRefused        = "PeerRefused"
	CodeNoSuchBucket       = "NoSuchBucket"
	CodeInvalidReplRequest = "InvalidReplicationRequest"
)

// ReplicationSite names a site to join, with admin credentials valid there.
type ReplicationSite struct {
	Name      string `json:"name"`
	Endpoint  string `json:"endpoint"`
	AccessKey string `json:"accessKey"`
	SecretKey string `json:"secretKey"`
}

// ReplicationAddRequest is the body of a site replication add: the first
// site is the one the request is sent to.
type ReplicationAddRequest struct {
	Sites []ReplicationSite `json:"sites"`
}

// ReplicationPeer is one member of the configuration.
type ReplicationPeer struct {
	Name         string `json:"name"`
	Endpoint     string `json:"endpoint"`
	DeploymentID string `json:"deploymentID"`
}

// ReplicationInfo is the site replication configuration.
type ReplicationInfo struct {
	Enabled        bool              `json:"enabled"`
	Sites          []ReplicationPeer `json:"sites"`
	ServiceAccount string            `json:"serviceAccount,omitempty"`
}

// ReplicationTarget is the link and backlog to one peer.
type ReplicationTarget struct {
	Name          string        `json:"name"`
	DeploymentID  string        `json:"deploymentID"`
	Endpoint      string        `json:"endpoint"`
	Online        bool          `json:"online"`
	Latency       time.Duration `json:"latency"`
	Pending       int64         `json:"pending"`
	PendingBytes  int64         `json:"pendingBytes"`
	Retrying      int64         `json:"retrying"`
	RetryingBytes int64         `json:"retryingBytes"`
	Lag           time.Duration `json:"lag"`
	// LastContact is when the peer last answered the link's health probe.
	LastContact time.Time `json:"lastContact,omitzero"`
	// IAMUnsupported: the peer takes no IAM records (an older build); IAM
	// changes wait for its upgrade, spending no retry.
	IAMUnsupported      bool      `json:"iamUnsupported,omitempty"`
	IAMUnsupportedSince time.Time `json:"iamUnsupportedSince,omitzero"`
	// LastError is why the last send to the peer failed, and
	// LastErrorTime when, while its retry queue holds entries.
	LastError     string    `json:"lastError,omitempty"`
	LastErrorTime time.Time `json:"lastErrorTime,omitzero"`
}

// LinkSample is one point of a link's last hour: sampled every 10 s by the
// site since it started.
type LinkSample struct {
	Time          time.Time     `json:"t"`
	Online        bool          `json:"online"`
	Pending       int64         `json:"pending"`
	PendingBytes  int64         `json:"pendingBytes"`
	Retrying      int64         `json:"retrying"`
	RetryingBytes int64         `json:"retryingBytes"`
	Lag           time.Duration `json:"lag"`
}

// ReplicationHistory returns every link's samples of the last hour, by
// peer site name, oldest first.
func (c *Client) ReplicationHistory(ctx context.Context) (map[string][]LinkSample, error) {
	var out map[string][]LinkSample
	err := c.call(ctx, http.MethodGet, PathReplicationHistory, nil, &out)
	return out, err
}

// ReplicationBucketSync says which sites hold a bucket with equal settings.
type ReplicationBucketSync struct {
	Bucket string          `json:"bucket"`
	Sites  map[string]bool `json:"sites"`
}

// ReplicationStatus is the site replication status seen from one site.
type ReplicationStatus struct {
	Enabled     bool                    `json:"enabled"`
	Site        string                  `json:"site"`
	Sites       []ReplicationPeer       `json:"sites"`
	Targets     []ReplicationTarget     `json:"targets"`
	Buckets     []ReplicationBucketSync `json:"buckets"`
	Unreachable []string                `json:"unreachable,omitempty"`
	// IAM says, per reachable site, whether it holds the same users,
	// groups, policies, attachments and access keys as this site.
	IAM map[string]bool `json:"iam,omitempty"`
	// IAMUnsupported lists the sites IAM does not replicate to: older
	// builds that take no IAM records.
	IAMUnsupported []string `json:"iamUnsupported,omitempty"`
}

// ResyncStatus is a resync job.
type ResyncStatus struct {
	ID        string    `json:"id"`
	Target    string    `json:"target"`
	State     string    `json:"state"`
	Started   time.Time `json:"started"`
	Finished  time.Time `json:"finished,omitzero"`
	Bucket    string    `json:"bucket,omitempty"`
	Buckets   int       `json:"buckets"`
	Queued    int64     `json:"queued"`
	Bytes     int64     `json:"bytes"`
	LastError string    `json:"lastError,omitempty"`
}

// BucketReplicationStatus is one bucket's backlog per peer.
type BucketReplicationStatus struct {
	Bucket  string              `json:"bucket"`
	Targets []ReplicationTarget `json:"targets"`
}

// BacklogEntry is one retry queue (MRF) entry.
type BacklogEntry struct {
	Target     string    `json:"target"`
	Op         string    `json:"op"`
	Bucket     string    `json:"bucket"`
	Key        string    `json:"key,omitempty"`
	VersionID  string    `json:"versionID,omitempty"`
	Size       int64     `json:"size,omitempty"`
	RetryCount int       `json:"retryCount"`
	FailedAt   time.Time `json:"failedAt"`
	NextRetry  time.Time `json:"nextRetry"`
	Error      string    `json:"error,omitempty"`
}

// ReplicateAdd joins sites (the first is this client's server).
func (c *Client) ReplicateAdd(ctx context.Context, sites []ReplicationSite) (ReplicationInfo, error) {
	var out ReplicationInfo
	err := c.call(ctx, http.MethodPost, PathReplicationSites, ReplicationAddRequest{Sites: sites}, &out)
	return out, err
}

// ReplicateInfo returns the site replication configuration.
func (c *Client) ReplicateInfo(ctx context.Context) (ReplicationInfo, error) {
	var out ReplicationInfo
	err := c.call(ctx, http.MethodGet, PathReplicationInfo, nil, &out)
	return out, err
}

// ReplicateStatus returns the site replication status.
func (c *Client) ReplicateStatus(ctx context.Context) (ReplicationStatus, error) {
	var out ReplicationStatus
	err := c.call(ctx, http.MethodGet, PathReplicationStatus, nil, &out)
	return out, err
}

// ReplicateRemove takes sites out of the configuration (all: every site).
func (c *Client) ReplicateRemove(ctx context.Context, sites []string, all bool) (ReplicationInfo, error) {
	q := url.Values{"site": sites}
	if all {
		q.Set("all", "true")
	}
	var out ReplicationInfo
	err := c.callQuery(ctx, http.MethodDelete, PathReplicationSites, q, &out)
	return out, err
}

// Resync starts (POST), reports (GET) or cancels (DELETE) the resync of
// everything this server holds to peer.
func (c *Client) Resync(ctx context.Context, method, peer string) (ResyncStatus, error) {
	var out ResyncStatus
	err := c.call(ctx, method, PathReplicationResync+"/"+url.PathEscape(peer), nil, &out)
	return out, err
}

// BucketReplicationStatus returns one bucket's backlog per peer.
func (c *Client) BucketReplicationStatus(ctx context.Context, bucket string) (BucketReplicationStatus, error) {
	var out BucketReplicationStatus
	err := c.call(ctx, http.MethodGet, PathReplicationBuckets+"/"+url.PathEscape(bucket)+"/status", nil, &out)
	return out, err
}

// ReplicationBacklog lists one bucket's retry queue without consuming it.
func (c *Client) ReplicationBacklog(ctx context.Context, bucket string, limit int) ([]BacklogEntry, error) {
	var out []BacklogEntry
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	err := c.callQuery(ctx, http.MethodGet, PathReplicationBuckets+"/"+url.PathEscape(bucket)+"/backlog", q, &out)
	return out, err
}

// callQuery sends a body-less request with query parameters and decodes a
// JSON answer into out.
func (c *Client) callQuery(ctx context.Context, method, path string, q url.Values, out any) error {
	resp, err := c.do(ctx, method, path, q, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("admin %s %s: decode answer: %w", method, path, err)
	}
	return nil
}
