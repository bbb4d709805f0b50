package adminclient

import (
	"time"

	"github.com/twinlake/twinlake/internal/trace"
)

// Paths of the admin API. The server mounts them under PathPrefix; the
// config path takes the subsystem as its last segment.
const (
	PathPrefix = "/twinlake/admin/v1/"
	PathInfo   = "/twinlake/admin/v1/info"
	PathConfig = "/twinlake/admin/v1/config"
	PathTrace  = "/twinlake/admin/v1/trace"
)

// Query parameters of the trace stream.
const (
	QueryCall     = "call"     // comma-separated trace type names; repeatable
	QueryFuncName = "funcname" // glob on the event's funcname
	QueryPath     = "path"     // glob on the event's path
	QueryStatus   = "status"   // exact HTTP status code
	QueryVerbose  = "verbose"  // "true" keeps msg and attrs
)

// Media types of admin API bodies.
const (
	ContentTypeJSON   = "application/json"
	ContentTypeNDJSON = trace.ContentTypeNDJSON
)

// Error codes carried in the "code" field of an admin API error body.
const (
	CodeUnauthenticated       = "Unauthenticated"           // 401: no valid signature
	CodeAccessDenied          = "AccessDenied"              // 403: signed, but not an administrator
	CodeNotFound              = "NotFound"                  // 404: no such route
	CodeBadRequest            = "BadRequest"                // 400: malformed body or query
	CodeContentSHA256Mismatch = "XAmzContentSHA256Mismatch" // 400: body does not match its signed hash
	CodeUnknownSubsystem      = "UnknownConfigSubsystem"    // 404
	CodeInvalidConfig         = "InvalidConfig"             // 400: unknown keys or bad values
	CodeConfigRefused         = "ConfigChangeRefused"       // 409: a guard refused the change
	CodeInternal              = "InternalError"             // 500
	CodeUnavailable           = "ServiceUnavailable"        // 503: retry (Retry-After)
)

// ErrorBody is the JSON body of every admin API error response.
type ErrorBody struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	RequestID string `json:"requestId,omitempty"`
}

// ServerInfo describes one site, as `twinlake admin info` shows it.
type ServerInfo struct {
	DeploymentID  string `json:"deploymentID"`
	SiteName      string `json:"siteName"`
	Version       string `json:"version"`
	UptimeSeconds int64  `json:"uptimeSeconds"`
	Address       string `json:"address"`
	Buckets       int64  `json:"buckets"`
	Objects       int64  `json:"objects"`
	TotalBytes    int64  `json:"totalBytes"`
	DiskTotal     uint64 `json:"diskTotal"`
	DiskFree      uint64 `json:"diskFree"`
	// DiskReserve is the free space the site keeps on the filesystem of
	// its data directory: with no more free it refuses new object data
	// (507 XMinioStorageFull).
	DiskReserve uint64 `json:"diskReserve,omitempty"`
	// CPUSeconds is the CPU time the answering server's process has used
	// since it started (user and system); on a multi-node site, the
	// leader's (each node's is in Nodes).
	CPUSeconds float64 `json:"cpuSeconds,omitempty"`
	// PeakRSSBytes is the most resident memory the answering server's
	// process has held since it started; on a multi-node site, the
	// leader's (each node's is in Nodes).
	PeakRSSBytes int64 `json:"peakRSSBytes,omitempty"`
	// Nodes lists a multi-node site's nodes; empty on a single server.
	Nodes []NodeInfo `json:"nodes,omitempty"`
	// Etcd is the storage of a multi-node site's etcd, which bounds the
	// site's metadata; absent on a single server.
	Etcd *EtcdInfo `json:"etcd,omitempty"`
	// Heal is the latest heal scan's progress (on demand or in the
	// background), absent if none ran since the server started.
	Heal *HealInfo `json:"heal,omitempty"`
}

// HealInfo is a heal scan's progress: its counts so far while running.
type HealInfo struct {
	Running       bool      `json:"running"`
	Percent       int       `json:"percent"` // an estimate while running; 100 when done
	Started       time.Time `json:"started"`
	ElapsedSecond float64   `json:"elapsedSeconds"`
	Versions      int64     `json:"versions"`
	Parts         int64     `json:"parts"`
	BlobFiles     int64     `json:"blobFiles"`
	Degraded      int64     `json:"degraded"`
	ShardsRebuilt int64     `json:"shardsRebuilt"`
	MissingCount  int64     `json:"missingCount"`
}

// EtcdInfo sums up what a multi-node site's etcd endpoints report of their
// storage: the largest database and use, the smallest quota.
type EtcdInfo struct {
	// DBSize is the largest member's database file, in bytes.
	DBSize int64 `json:"dbSize"`
	// DBSizeInUse is the most any member uses of its file, in bytes.
	DBSizeInUse int64 `json:"dbSizeInUse"`
	// Quota is the smallest member quota, in bytes: past it etcd refuses
	// every write of the site.
	Quota int64 `json:"quota"`
	// Alarms are the alarms the members report (NOSPACE: the quota is
	// reached), and a member without a raft leader.
	Alarms []string `json:"alarms,omitempty"`
	// Endpoints is how many endpoints the site uses; Unreachable those
	// that did not answer.
	Endpoints   int      `json:"endpoints"`
	Unreachable []string `json:"unreachable,omitempty"`
}

// NodeInfo is one node of a multi-node site as its leader sees it.
type NodeInfo struct {
	Address string `json:"address"`
	// State is "leader", "online" (registered in the site's etcd) or
	// "offline".
	State string `json:"state"`
	// Drive is "ok" when the leader reaches the node's drive, else why not.
	Drive string `json:"drive"`
	// Voter is set for a node that runs one of the site's etcd voting
	// members (never with an etcd run apart from the site): replace
	// voters one at a time.
	Voter bool `json:"voter,omitempty"`
	// EtcdLeader is set for the voter whose member is etcd's raft
	// leader, as the site's leader's member knows it: the site's leader
	// itself once its member took the raft leadership.
	EtcdLeader bool `json:"etcdLeader,omitempty"`
	// CPUSeconds is the CPU time the node's process has used since it
	// started (user and system); absent when the node did not answer.
	CPUSeconds float64 `json:"cpuSeconds,omitempty"`
	// PeakRSSBytes is the most resident memory the node's process has
	// held since it started; absent when the node did not answer.
	PeakRSSBytes int64 `json:"peakRSSBytes,omitempty"`
	// HeldRequests are the requests the node holds now, waiting for a
	// leader to pass them to (a change of leader under way).
	HeldRequests int64 `json:"heldRequests,omitempty"`
	// LeadersDeposed counts the leaders whose session the node ended
	// since it started, their process found gone or stalled, or their
	// machine unreachable from most of the other nodes.
	LeadersDeposed int64 `json:"leadersDeposed,omitempty"`
	// ReadsHere counts the GETs the node passed to the leader whose data
	// it read from the drives itself since it started (the leader sent
	// the headers, the node the bytes), and ReadBytesHere their bytes.
	ReadsHere     int64 `json:"readsHere,omitempty"`
	ReadBytesHere int64 `json:"readBytesHere,omitempty"`
	// WritesHere counts the PUTs the node passed to the leader whose
	// data it wrote to the drives itself (the leader checked and
	// committed them), and WriteBytesHere their bytes.
	WritesHere     int64 `json:"writesHere,omitempty"`
	WriteBytesHere int64 `json:"writeBytesHere,omitempty"`
}

// ConfigKV is one setting of a subsystem: its effective value and where that
// value comes from ("default", "stored" or "env").
type ConfigKV struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
	Help   string `json:"help,omitempty"`
}

// SubsysConfig is every setting of one subsystem, in display order. It is
// the answer to both GET and PUT on the config path.
type SubsysConfig struct {
	Subsys string     `json:"subsys"`
	Keys   []ConfigKV `json:"keys"`
}
