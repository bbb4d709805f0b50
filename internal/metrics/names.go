package metrics

// Label names shared by twinlake's metrics.
const (
	LabelAPI    = "api"    // S3 operation, e.g. PutObject
	LabelCode   = "code"   // HTTP status code
	LabelClass  = "class"  // status class of an error: 4xx, 5xx or unsupported (501)
	LabelTarget = "target" // peer site a replication metric is about
)

// ClassUnsupported is the LabelClass of 501 NotImplemented answers: an S3
// API twinlake does not serve, counted apart from server failures (5xx).
const ClassUnsupported = "unsupported"

// Metric names of all of twinlake, one table so that names stay consistent
// and dashboards have one place to look. The part named in each group's
// comment owns and registers those metrics on the injected Registerer.
const (
	// S3 API (internal/s3api, through S3 in this package).
	S3RequestsTotal          = "twinlake_s3_requests_total"           // counter {api, code}
	S3RequestDurationSeconds = "twinlake_s3_request_duration_seconds" // histogram {api}
	S3ReceivedBytesTotal     = "twinlake_s3_received_bytes_total"     // counter {api}
	S3SentBytesTotal         = "twinlake_s3_sent_bytes_total"         // counter {api}
	S3ErrorsTotal            = "twinlake_s3_errors_total"             // counter {api, class}
	S3RejectedRequestsTotal  = "twinlake_s3_rejected_requests_total"  // counter: 503 SlowDown under api requests_max
	S3WaitingRequests        = "twinlake_s3_waiting_requests"         // gauge: queued for a slot under api requests_max

	// Object replication (internal/replication), per DESIGN §4.
	ReplicationBacklogObjects          = "twinlake_replication_backlog_objects"            // gauge {target}
	ReplicationOldestPendingAgeSeconds = "twinlake_replication_oldest_pending_age_seconds" // gauge {target}: lag
	ReplicationRetryQueueEntries       = "twinlake_replication_retry_queue_entries"        // gauge {target}: MRF size
	ReplicationSentBytesTotal          = "twinlake_replication_sent_bytes_total"           // counter {target}
	ReplicationSentObjectsTotal        = "twinlake_replication_sent_objects_total"         // counter {target}
	ReplicationFailedObjectsTotal      = "twinlake_replication_failed_objects_total"       // counter {target}
	ReplicationDroppedObjectsTotal     = "twinlake_replication_dropped_objects_total"      // counter {target}: past max_retries
	ReplicationReceivedObjectsTotal    = "twinlake_replication_received_objects_total"     // counter
	ReplicationReceivedBytesTotal      = "twinlake_replication_received_bytes_total"       // counter
	ReplicationLinkLatencySeconds      = "twinlake_replication_link_latency_seconds"       // histogram {target}
	ReplicationLinkUp                  = "twinlake_replication_link_up"                    // gauge {target}: 1 up, 0 down
	ReplicationMismatchesTotal         = "twinlake_replication_mismatches_total"           // counter {target}
	ReplicationBacklogBytes            = "twinlake_replication_backlog_bytes"              // gauge {target}
	ReplicationRejectedTotal           = "twinlake_replication_rejected_total"             // counter: stale copies refused
	ReplicationBatchRequestsTotal      = "twinlake_replication_batch_requests_total"       // counter {target}: combined requests of small versions
	ReplicationBatchVersionsTotal      = "twinlake_replication_batch_versions_total"       // counter {target}: versions those requests carried

	// Trace bus (internal/trace, registered by internal/app).
	TraceDroppedEventsTotal = "twinlake_trace_dropped_events_total" // counter

	// The filesystem holding the data directory (disk.go).
	DiskFreeBytes  = "twinlake_disk_free_bytes"  // gauge: bytes available to the server
	DiskTotalBytes = "twinlake_disk_total_bytes" // gauge
	// DiskReserveBytes: the free space the site keeps there (room.go in
	// internal/app; a shard drive's reserve on a multi-node site).
	DiskReserveBytes = "twinlake_disk_reserve_bytes" // gauge

	// Nodes and drives of a multi-node site or a drive set, and the heal
	// scan (registered by internal/app).
	ClusterNodeUp             = "twinlake_cluster_node_up"                     // gauge {node}: 1 leader or online, 0 offline
	ClusterNodeCPU            = "twinlake_cluster_node_cpu_seconds_total"      // counter {node}: CPU time the node's process has used
	ClusterNodeLeader         = "twinlake_cluster_node_leader"                 // gauge {node}: 1 for the leader
	ClusterNodeHeld           = "twinlake_cluster_node_requests_held"          // gauge {node}: requests waiting for a leader to pass them to
	ClusterNodeDeposed        = "twinlake_cluster_node_leaders_deposed_total"  // counter {node}: leaders whose session the node ended, their process gone or stalled, or their machine unreachable
	ClusterNodeReadsHere      = "twinlake_cluster_node_reads_here_total"       // counter {node}: GETs passed to the leader whose data the node read itself
	ClusterNodeReadBytesHere  = "twinlake_cluster_node_read_bytes_here_total"  // counter {node}: their bytes
	ClusterNodeWritesHere     = "twinlake_cluster_node_writes_here_total"      // counter {node}: PUTs passed to the leader whose data the node wrote itself
	ClusterNodeWriteBytesHere = "twinlake_cluster_node_write_bytes_here_total" // counter {node}: their bytes
	DriveUp                   = "twinlake_drive_up"                            // gauge {drive}: 1 when the drive answers
	EtcdDBBytes               = "twinlake_cluster_etcd_db_bytes"               // gauge: the largest etcd member's database file
	EtcdDBInUseBytes          = "twinlake_cluster_etcd_db_in_use_bytes"        // gauge: the most an etcd member uses of its file
	EtcdQuotaBytes            = "twinlake_cluster_etcd_quota_bytes"            // gauge: the smallest etcd member quota
	EtcdNoSpace               = "twinlake_cluster_etcd_nospace"                // gauge: 1 while an etcd member raises NOSPACE (every write refused)
	HealProgressPercent       = "twinlake_heal_progress_percent"               // gauge: the latest heal scan's estimate, 100 when done
	HealDegradedBlobs         = "twinlake_heal_degraded_blobs"                 // gauge: blobs the latest heal scan found short of a shard
	HealShardsRebuilt         = "twinlake_heal_shards_rebuilt"                 // gauge: shards the latest heal scan wrote again

	// Iceberg REST catalog (internal/catalog/rest).
	CatalogRequestsTotal          = "twinlake_catalog_requests_total"           // counter {api, code}
	CatalogErrorsTotal            = "twinlake_catalog_errors_total"             // counter {api, class}
	CatalogRequestDurationSeconds = "twinlake_catalog_request_duration_seconds" // histogram {api}
	CatalogCommitConflictsTotal   = "twinlake_catalog_commit_conflicts_total"   // counter: 409 CommitFailed
	CatalogWarehouses             = "twinlake_catalog_warehouses"               // gauge
	CatalogNamespaces             = "twinlake_catalog_namespaces"               // gauge
	CatalogTables                 = "twinlake_catalog_tables"                   // gauge
	CatalogViews                  = "twinlake_catalog_views"                    // gauge

	// Table maintenance (internal/catalog, registered by internal/app).
	MaintenanceRunsTotal             = "twinlake_tables_maintenance_runs_total"              // counter {trigger, result}
	MaintenanceSnapshotsExpiredTotal = "twinlake_tables_maintenance_snapshots_expired_total" // counter
	MaintenanceFilesRemovedTotal     = "twinlake_tables_maintenance_files_removed_total"     // counter
	MaintenanceBytesRemovedTotal     = "twinlake_tables_maintenance_bytes_removed_total"     // counter

	// Bucket lifecycle (internal/objects, run by internal/app).
	ILMRunsTotal    = "twinlake_ilm_runs_total"           // counter {result}
	ILMActionsTotal = "twinlake_ilm_actions_total"        // counter {action}: expired, noncurrent_purged, delete_markers_removed, uploads_aborted, kept_locked
	ILMKeysTotal    = "twinlake_ilm_keys_evaluated_total" // counter {reason}: due, rebuild
	ILMRunSeconds   = "twinlake_ilm_run_duration_seconds" // histogram

	// Replica catalog scanner (internal/scanner): add its names here,
	// prefixed twinlake_tables_scanner_.

	// Replica catalog scanner (internal/scanner).
	ScannerCyclesTotal          = "twinlake_tables_scanner_cycles_total"                   // counter
	ScannerCycleSeconds         = "twinlake_tables_scanner_cycle_seconds"                  // histogram
	ScannerTablesBehind         = "twinlake_tables_scanner_tables_behind"                  // gauge: tables/views whose verified version trails the latest seen
	ScannerMissingFiles         = "twinlake_tables_scanner_missing_files"                  // gauge
	ScannerRetryRequestsTotal   = "twinlake_tables_scanner_retry_requests_total"           // counter: files asked again from the primary
	ScannerRecordReadsTotal     = "twinlake_tables_scanner_record_reads_total"             // counter: identity record versions read
	ScannerHeldTransactions     = "twinlake_tables_scanner_held_tables"                    // gauge: tables held for a multi-table transaction
	ScannerState                = "twinlake_tables_scanner_state"                          // gauge {state}: 1 for the current state
	ScannerLastSuccessTimestamp = "twinlake_tables_scanner_last_success_timestamp_seconds" // gauge
	ScannerTables               = "twinlake_tables_scanner_tables"                         // gauge {status}: tables and views per replica status
)
