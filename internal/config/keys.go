package config

import (
	"strings"
	"time"
)

// Subsystem names, as typed after `twinlake admin config get|set ALIAS`.
const (
	SubsysTables      = "tables"
	SubsysReplication = "replication"
	SubsysAPI         = "api"
	SubsysILM         = "ilm"
)

// Key names of the tables subsystem.
const (
	TablesReplicaCatalog                = "replica_catalog"
	TablesReplicaCatalogConsistency     = "replica_catalog_consistency"
	TablesReplicaCatalogScanInterval    = "replica_catalog_scan_interval"
	TablesReplicaCatalogRetryInterval   = "replica_catalog_retry_interval"
	TablesReplicaCatalogTxnStaleTimeout = "replica_catalog_txn_stale_timeout"
	TablesMaintenanceInterval           = "maintenance_interval"
)

// Key names of the replication subsystem (the retry queue policy).
const (
	ReplicationMaxRetries       = "max_retries"
	ReplicationRetryBaseDelay   = "retry_base_delay"
	ReplicationRetryMaxDelay    = "retry_max_delay"
	ReplicationWorkers          = "workers"
	ReplicationMismatchInterval = "mismatch_interval"
	// ReplicationResyncBacklog bounds the backlog a resync or a catalog
	// backfill fills before it waits for the peer to take it.
	ReplicationResyncBacklog = "resync_backlog"
)

// Key names of the api subsystem.
const (
	APIRequestsMax      = "requests_max"
	APIRequestsDeadline = "requests_deadline"
	// APIReadHeaderTimeout bounds reading a request's headers.
	APIReadHeaderTimeout = "read_header_timeout"
	// APIBodyIdleTimeout bounds a request body's pauses.
	APIBodyIdleTimeout = "body_idle_timeout"
	// APIBodyDeadline bounds a whole request body.
	APIBodyDeadline = "body_deadline"
	// APISSECAllowHTTP lets SSE-C keys travel over plain HTTP.
	APISSECAllowHTTP = "ssec_allow_http"
)

// Key names of the ilm subsystem (bucket lifecycle).
const (
	// ILMInterval is the pause between lifecycle runs.
	ILMInterval = "interval"
	// ILMDayLength is the length of a lifecycle day.
	ILMDayLength = "day_length"
)

// Values of tables replica_catalog_consistency.
const (
	ConsistencyStrict   = "strict"
	ConsistencyEventual = "eventual"
)

// Kind says how a key's value is parsed and which typed accessor reads it.
type Kind int

// Value kinds.
const (
	KindEnum     Kind = iota + 1 // one of Key.Values; read with String
	KindDuration                 // a Go duration ("500ms", "5m") in [MinDur, MaxDur]; read with Duration
	KindInt                      // a base-10 integer in [Min, Max]; read with Int
	KindBool                     // "on" or "off"; read with Bool
)

// Key describes one setting: its kind, default and help. The table of keys
// is data; adding a setting is adding a row.
type Key struct {
	Subsys  string
	Name    string
	Kind    Kind
	Default string
	Values  []string // KindEnum: the accepted values
	Min     int64    // KindInt: the smallest accepted value
	Max     int64    // KindInt: the largest accepted value
	// MinDur and MaxDur bound a KindDuration value.
	MinDur, MaxDur time.Duration
	Help           string
	// NoEnv disables the TWINLAKE_<SUBSYS>_<KEY> environment override, for
	// settings that must be changed through the API so that its guards run.
	NoEnv bool
}

// keyTable is every setting of every subsystem, in display order.
var keyTable = []Key{
	{Subsys: SubsysTables, Name: TablesReplicaCatalog, Kind: KindBool, Default: "off", NoEnv: true,
		Help: "this site is the Tables replica: runs the catalog scanner, accepts inbound warehouse replication, rejects client writes to warehouses"},
	{Subsys: SubsysTables, Name: TablesReplicaCatalogConsistency, Kind: KindEnum, Default: ConsistencyStrict,
		Values: []string{ConsistencyStrict, ConsistencyEventual},
		Help:   "strict accepts a table version only when every file it references is present; eventual once its metadata file is"},
	{Subsys: SubsysTables, Name: TablesReplicaCatalogScanInterval, Kind: KindDuration, Default: "10s",
		MinDur: 10 * time.Millisecond, MaxDur: time.Hour,
		Help: "pause between replica catalog scanner cycles"},
	{Subsys: SubsysTables, Name: TablesReplicaCatalogRetryInterval, Kind: KindDuration, Default: "5m",
		MinDur: 10 * time.Millisecond, MaxDur: 24 * time.Hour,
		Help: "how long a file may be missing before the replica asks the primary to re-send it"},
	{Subsys: SubsysTables, Name: TablesReplicaCatalogTxnStaleTimeout, Kind: KindDuration, Default: "15m",
		MinDur: 10 * time.Millisecond, MaxDur: 7 * 24 * time.Hour,
		Help: "how long members of a multi-table transaction are held back waiting for the others"},
	{Subsys: SubsysTables, Name: TablesMaintenanceInterval, Kind: KindDuration, Default: "6h",
		MinDur: time.Second, MaxDur: 30 * 24 * time.Hour,
		Help: "how often the primary maintains each table whose policy enables maintenance (snapshot expiry, orphan removal)"},

	{Subsys: SubsysReplication, Name: ReplicationMaxRetries, Kind: KindInt, Default: "10", Min: 0, Max: 1000,
		Help: "attempts before a retry queue entry is dropped and logged"},
	{Subsys: SubsysReplication, Name: ReplicationRetryBaseDelay, Kind: KindDuration, Default: "1s",
		MinDur: time.Millisecond, MaxDur: time.Hour,
		Help: "first retry delay, doubled after each failed attempt"},
	{Subsys: SubsysReplication, Name: ReplicationRetryMaxDelay, Kind: KindDuration, Default: "5m",
		MinDur: time.Millisecond, MaxDur: 24 * time.Hour,
		Help: "cap on the retry delay"},
	{Subsys: SubsysReplication, Name: ReplicationWorkers, Kind: KindInt, Default: "16", Min: 1, Max: 256,
		Help: "replication workers sending to each target"},
	{Subsys: SubsysReplication, Name: ReplicationMismatchInterval, Kind: KindDuration, Default: "5m",
		MinDur: 100 * time.Millisecond, MaxDur: 7 * 24 * time.Hour,
		Help: "pause between background comparisons with each peer (version mismatch detection)"},
	{Subsys: SubsysReplication, Name: ReplicationResyncBacklog, Kind: KindInt, Default: "20000", Min: 256, Max: 1000000,
		Help: "entries a resync or a catalog backfill keeps queued to a peer at most: it waits while the backlog to the peer is this deep, so a peer that is down or slow holds the job where it is"},

	{Subsys: SubsysAPI, Name: APIRequestsMax, Kind: KindInt, Default: "0", Min: 0, Max: 100000,
		Help: "S3 requests served at once; 0 means unlimited; others queue up to requests_deadline, then get 503 SlowDown"},
	{Subsys: SubsysAPI, Name: APIRequestsDeadline, Kind: KindDuration, Default: "10s",
		MinDur: 10 * time.Millisecond, MaxDur: 10 * time.Minute,
		Help: "how long an S3 request queues for a slot under requests_max before 503 SlowDown"},
	{Subsys: SubsysAPI, Name: APIReadHeaderTimeout, Kind: KindDuration, Default: "30s",
		MinDur: time.Second, MaxDur: 10 * time.Minute,
		Help: "how long a client may take to send a request's headers (every surface; applies from the next start)"},
	{Subsys: SubsysAPI, Name: APIBodyIdleTimeout, Kind: KindDuration, Default: "1m",
		MinDur: time.Second, MaxDur: time.Hour,
		Help: "how long an S3 request body may go without sending a byte before 400 RequestTimeout and the connection closed"},
	{Subsys: SubsysAPI, Name: APIBodyDeadline, Kind: KindDuration, Default: "24h",
		MinDur: time.Second, MaxDur: 7 * 24 * time.Hour,
		Help: "how long a whole S3 request body may take, however steadily it arrives"},
	{Subsys: SubsysAPI, Name: APISSECAllowHTTP, Kind: KindBool, Default: "off",
		Help: "accept SSE-C customer keys over plain HTTP (only behind a TLS-terminating proxy on a trusted network); off refuses them as S3 does"},

	{Subsys: SubsysILM, Name: ILMInterval, Kind: KindDuration, Default: "1m",
		MinDur: 100 * time.Millisecond, MaxDur: 24 * time.Hour,
		Help: "pause between bucket lifecycle runs; each run acts on what is due (expiry, noncurrent versions, expired delete markers, incomplete uploads)"},
	{Subsys: SubsysILM, Name: ILMDayLength, Kind: KindDuration, Default: "24h",
		MinDur: time.Second, MaxDur: 24 * time.Hour,
		Help: "length of a lifecycle day; keep 24h in production, shorten only to try rules quickly on a test site"},
}

// Keys returns a copy of the key table, in display order.
func Keys() []Key {
	out := make([]Key, len(keyTable))
	copy(out, keyTable)
	return out
}

// EnvName returns the environment variable that overrides subsys key:
// TWINLAKE_<SUBSYS>_<KEY>, upper-cased, with '-' read as '_'.
func EnvName(subsys, key string) string {
	n := "TWINLAKE_" + subsys + "_" + key
	return strings.ToUpper(strings.ReplaceAll(n, "-", "_"))
}
