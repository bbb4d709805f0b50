package peerwire

import "time"

// The MessagePack keys and JSON names below are the protocol: changing one
// is a new Version. Version 1 sent the storage records themselves; these
// types keep the keys of the fields a peer reads and leave out what is
// local to a site (blob IDs, inline bytes, sealed keys, target status).

// Segment is one part of an object version's data, as a peer checks it.
type Segment struct {
	Number   int               `msgpack:"n,omitempty"`
	Size     int64             `msgpack:"s"` // plaintext size
	ETag     string            `msgpack:"e,omitempty"`
	Checksum map[string]string `msgpack:"c,omitempty"`
	// SealedKey is sent for an SSE-C version only: its data key sealed
	// under the client's key, which the replica needs as much as the
	// ciphertext (a version 2 peer without SSE-C ignores it, and refuses
	// the ciphertext whose MD5 is not the ETag).
	SealedKey []byte `msgpack:"k,omitempty"`
}

// ObjectVersion is an object version (or delete marker) sent to a peer: base64
// MessagePack in the version header of PUT version, or an item of a batch.
type ObjectVersion struct {
	VersionID    string            `msgpack:"id"`
	ModTime      int64             `msgpack:"mt"` // HLC, Unix nanoseconds
	DeleteMarker bool              `msgpack:"dm,omitempty"`
	Size         int64             `msgpack:"sz"`
	ETag         string            `msgpack:"et,omitempty"`
	ContentType  string            `msgpack:"ct,omitempty"`
	UserMeta     map[string]string `msgpack:"um,omitempty"`
	Headers      map[string]string `msgpack:"hd,omitempty"`
	Checksums    map[string]string `msgpack:"ck,omitempty"`
	Tags         map[string]string `msgpack:"tg,omitempty"`
	SSE          string            `msgpack:"se,omitempty"`
	Segments     []Segment         `msgpack:"sg,omitempty"`
	Multipart    bool              `msgpack:"mp,omitempty"`
	Origin       string            `msgpack:"or,omitempty"`
	MetaTime     int64             `msgpack:"mm,omitempty"`
	// KeyCheck marks an SSE-C version (objects.Version.KeyCheck); its data
	// travels as the stored ciphertext.
	KeyCheck []byte `msgpack:"kc,omitempty"`
	// The version's object lock (objects.Version): retention mode,
	// retain-until date (Unix nanoseconds) and legal hold. Added without a
	// version bump: a peer predating object lock ignores them.
	LockMode    string `msgpack:"lm,omitempty"`
	RetainUntil int64  `msgpack:"lu,omitempty"`
	LegalHold   string `msgpack:"lh,omitempty"`
	// ACL is the version's canned ACL ("" private; added without a
	// version bump: a peer predating ACLs ignores it).
	ACL string `msgpack:"acl,omitempty"`
}

// VersionItem is one version of a batch (POST versions, a MessagePack
// array of them), with its whole plaintext data.
type VersionItem struct {
	Bucket  string         `msgpack:"b"`
	Key     string         `msgpack:"k"`
	Version *ObjectVersion `msgpack:"v"`
	Data    []byte         `msgpack:"d,omitempty"`
}

// ItemResult answers one item of a batch (a JSON array of them): an
// outcome, or an error coded as Error codes are.
type ItemResult struct {
	Outcome string `json:"outcome,omitempty"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// Bucket is a bucket's replicated settings.
type Bucket struct {
	Name       string            `msgpack:"n"`
	Created    time.Time         `msgpack:"c"`
	Versioning string            `msgpack:"v,omitempty"`
	Tags       map[string]string `msgpack:"t,omitempty"`
	Policy     []byte            `msgpack:"p,omitempty"`
	Encryption string            `msgpack:"e,omitempty"`
	ModTime    int64             `msgpack:"m,omitempty"`
	Warehouse  bool              `msgpack:"w,omitempty"`
	FieldTimes map[string]int64  `msgpack:"ft,omitempty"`
	// ObjectLock is set on a bucket with object lock (added without a
	// version bump: a peer predating object lock ignores it).
	ObjectLock *LockConfig `msgpack:"ol,omitempty"`
	// CORS is the bucket's CORS configuration as XML (added without a
	// version bump: a peer predating CORS ignores it).
	CORS []byte `msgpack:"cr,omitempty"`
	// ACL is the bucket's canned ACL ("" private; added without a
	// version bump: a peer predating ACLs ignores it).
	ACL string `msgpack:"acl,omitempty"`
	// Lifecycle is the bucket's lifecycle configuration as XML (added
	// without a version bump: a peer predating lifecycle ignores it).
	Lifecycle []byte `msgpack:"lc,omitempty"`
	// Quota is the bucket's hard quota in bytes (added without a version
	// bump: a peer predating quotas ignores it).
	Quota int64 `msgpack:"qt,omitempty"`
}

// LockConfig is a bucket's object lock configuration: its default
// retention, if any.
type LockConfig struct {
	Mode  string `msgpack:"m,omitempty"`
	Days  int    `msgpack:"d,omitempty"`
	Years int    `msgpack:"y,omitempty"`
}

// BucketChange is the body of PUT bucket: a bucket's settings, or its
// deletion at HLC time At.
type BucketChange struct {
	Bucket  Bucket `msgpack:"b"`
	Deleted bool   `msgpack:"d"`
	At      int64  `msgpack:"at"`
}

// Outcome answers a call that applies a change (JSON): "applied",
// "duplicate" or "stale".
type Outcome struct {
	Outcome string `json:"outcome"`
}

// Error is every refusal's body (JSON). Code names the error
// (CodeIncompatible for a refused protocol version).
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Digests answers GET digests (MessagePack): per bucket, the XOR of its
// versions' hashes in each of objects.DigestSlots slots.
type Digests map[string][]uint64

// VersionRef names one version in an answer to GET slot (a MessagePack
// array of them).
type VersionRef struct {
	Key          string `msgpack:"k"`
	VersionID    string `msgpack:"v"`
	ModTime      int64  `msgpack:"t"`
	MetaTime     int64  `msgpack:"m,omitempty"`
	Origin       string `msgpack:"o,omitempty"`
	DeleteMarker bool   `msgpack:"d,omitempty"`
	Size         int64  `msgpack:"s,omitempty"`
}

// Site is a member of a site replication configuration.
type Site struct {
	ID       string `json:"deploymentID"`
	Name     string `json:"name"`
	Endpoint string `json:"endpoint"`
}

// State is a site replication configuration: the body of POST join.
type State struct {
	Sites            []Site `json:"sites"`
	ServiceAccessKey string `json:"serviceAccessKey"`
	ServiceSecretKey string `json:"serviceSecretKey"`
	Updated          int64  `json:"updated"`
}

// Info answers GET info (JSON): what a site says about itself to a site
// that wants to join it.
type Info struct {
	DeploymentID   string            `json:"deploymentID"`
	SiteName       string            `json:"siteName"`
	Buckets        []string          `json:"buckets"`
	Warehouses     []string          `json:"warehouses"`
	Objects        int64             `json:"objects"`
	Replication    *State            `json:"replication,omitempty"`
	ReplicaCatalog bool              `json:"replicaCatalog"`
	BucketConfig   map[string]string `json:"bucketConfig,omitempty"`
	// IAMRecords and IAMDigest were added without a version bump: a peer
	// that predates IAM replication leaves them out.
	IAMRecords int    `json:"iamRecords,omitempty"`
	IAMDigest  string `json:"iamDigest,omitempty"`
}

// Resend answers POST resend (JSON): how many versions were queued again.
type Resend struct {
	Queued int `json:"queued"`
}

// ResyncJob answers GET resync (JSON): a site's latest resync towards a
// peer.
type ResyncJob struct {
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
