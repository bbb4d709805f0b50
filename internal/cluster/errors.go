package cluster

import "errors"

// Errors of the node list (--cluster), returned by ParseNodes and Voters,
// each wrapped with the offending entry.
var (
	// ErrNoNodes is returned when the node list is empty.
	ErrNoNodes = errors.New("cluster: the node list is empty")
	// ErrTooManyNodes is returned when the node list has more than MaxNodes
	// entries.
	ErrTooManyNodes = errors.New("cluster: too many nodes")
	// ErrDuplicateNode is returned when a node is named twice.
	ErrDuplicateNode = errors.New("cluster: node named twice")
	// ErrBadNode is returned for an entry that is not host:port (empty host,
	// missing or non-numeric port, port outside 1..65535, blanks inside).
	ErrBadNode = errors.New("cluster: node is not host:port")
)

// ErrInvalidConfig is wrapped by every problem that EmbedConfig.Validate and
// Config.Validate report (all at once, joined).
var ErrInvalidConfig = errors.New("cluster: invalid configuration")

// ErrNotReady is returned by StartEmbedded when the member did not become
// ready (joined its cluster, quorum reached) within EmbedConfig.ReadyTimeout.
var ErrNotReady = errors.New("cluster: etcd member not ready in time")

// ErrNoLeader is returned by Coordinator.Leader while no node of the site is
// leader.
var ErrNoLeader = errors.New("cluster: no leader")

// ErrClosed is returned by the Coordinator's methods after Close.
var ErrClosed = errors.New("cluster: coordinator closed")

// ErrOtherSite is returned by Open when the site's records in etcd were
// made by nodes of another node list: another site's, or this one's
// before its list changed, which the placement of its data cannot follow.
var ErrOtherSite = errors.New("cluster: the etcd records belong to another node list")
