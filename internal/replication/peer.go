package replication

import (
	"context"
	"errors"
	"io"

	"github.com/twinlake/twinlake/internal/objects"
)

// Peer is another site as the engine reaches it. internal/replication/peerhttp
// implements it over the peer API; the engine never speaks HTTP itself.
type Peer interface {
	// SendVersion delivers a version and its plaintext data (size bytes).
	SendVersion(ctx context.Context, bucket, key string, v *objects.Version, body io.Reader, size int64) (objects.ApplyOutcome, error)
	// SendVersions delivers several small versions, with their data, in
	// one call, applied in order; it returns one result per item.
	SendVersions(ctx context.Context, items []VersionItem) ([]ItemResult, error)
	// SendPurge removes a version permanently on the peer.
	// modTime is the purged version's HLC time; how says what the peer
	// removes (objects.ApplyPurge).
	SendPurge(ctx context.Context, bucket, key, versionID string, modTime int64, how objects.PurgeKind) (objects.ApplyOutcome, error)
	// SendBucket delivers a bucket record, or its deletion at time at.
	SendBucket(ctx context.Context, b objects.Bucket, deleted bool, at int64) (objects.ApplyOutcome, error)
	// Health checks the link.
	Health(ctx context.Context) error
	// Info describes the peer site.
	Info(ctx context.Context) (PeerInfo, error)
	// Join installs a site replication configuration on the peer.
	Join(ctx context.Context, st State) error
	// Digests returns the peer's version digest of every bucket.
	Digests(ctx context.Context) (map[string]objects.Digest, error)
	// SlotVersions lists the peer's versions in the given digest slots of
	// a bucket.
	SlotVersions(ctx context.Context, bucket string, slots []int) ([]objects.VersionRef, error)
	// Resend asks the peer to send every version of bucket/key to site
	// again; it answers how many versions it queued.
	Resend(ctx context.Context, site, bucket, key string) (int, error)
	// ResyncTo returns the peer's latest resync job towards site
	// (ErrNoResync wrapped in ErrRefused when it never ran one).
	ResyncTo(ctx context.Context, site string) (ResyncJob, error)
	// CatalogExport returns the peer's Tables catalog export (JSON).
	CatalogExport(ctx context.Context) ([]byte, error)
}

// VersionItem is one version sent in a batch.
type VersionItem struct {
	Bucket  string           `msgpack:"b"`
	Key     string           `msgpack:"k"`
	Version *objects.Version `msgpack:"v"`
	Data    []byte           `msgpack:"d,omitempty"`
}

// ItemResult is the peer's answer for one item of a batch: an outcome, or
// an error (Code as the peer API names errors, e.g. NoSuchBucket).
type ItemResult struct {
	Outcome string `json:"outcome,omitempty"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// Credentials sign requests to a peer.
type Credentials struct {
	AccessKey, SecretKey string
}

// Dialer returns a Peer for an endpoint signed with creds.
type Dialer func(endpoint string, creds Credentials) (Peer, error)

// PeerInfo is what a site says about itself to a joining site.
type PeerInfo struct {
	DeploymentID string   `json:"deploymentID"`
	SiteName     string   `json:"siteName"`
	Buckets      []string `json:"buckets"`
	Warehouses   []string `json:"warehouses"`
	Objects      int64    `json:"objects"`
	// Replication is the peer's current configuration, if any.
	Replication *State `json:"replication,omitempty"`
	// ReplicaCatalog reports that the site is the Tables replica.
	ReplicaCatalog bool `json:"replicaCatalog"`
	// BucketConfig is a fingerprint of each bucket's replicated settings.
	BucketConfig map[string]string `json:"bucketConfig,omitempty"`
	// IAMRecords counts the site's live IAM records (users, groups,
	// policies, attachments, access keys); IAMDigest summarises every
	// record's version, tombstones included. Both are empty from a peer
	// that predates IAM replication.
	IAMRecords int    `json:"iamRecords,omitempty"`
	IAMDigest  string `json:"iamDigest,omitempty"`
}

// Errors.
var (
	// ErrLinkDown: the peer could not be reached. Work waits; no retry is spent.
	ErrLinkDown = errors.New("replication: peer unreachable")
	// ErrNotConfigured: site replication is not set up on this site.
	ErrNotConfigured = errors.New("replication: site replication is not configured")
	// ErrPeerHasData: a joining site other than the first holds buckets.
	ErrPeerHasData = errors.New("replication: only the first site may hold data")
	// ErrInvalidRequest: a bad argument (unknown site, too few sites, ...).
	ErrInvalidRequest = errors.New("replication: invalid request")
	// ErrResyncRunning: a resync to that target is already running.
	ErrResyncRunning = errors.New("replication: a resync is already running")
	// ErrNoResync: no resync to that target is known.
	ErrNoResync = errors.New("replication: no resync for that site")
	// ErrRefused: the peer refused the request (an error it returned).
	ErrRefused = errors.New("replication: refused by peer")
	// ErrIncompatible: the peer speaks a protocol version this site cannot
	// (or the other way round). Sends to it wait in the journal, as for an
	// unreachable peer, spending no retry, until one site is upgraded.
	ErrIncompatible = errors.New("incompatible peer protocol version")
	// ErrUnsupported: the peer does not know a call added to the protocol
	// without a version bump (it is an older build; IAM replication is
	// one). IAM records stay where they are, held back without spending a
	// retry (iamgate.go); other work goes to the retry queue and is never
	// dropped for it. Either is sent once the peer is upgraded.
	ErrUnsupported = errors.New("replication: the peer does not support this call")
)
