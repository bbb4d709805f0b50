// Package cluster owns the coordination of the nodes of one multi-node site
// (1 to 16 nodes): which nodes run an etcd voting member (voters.go), running
// that member in process (embed.go), and, over an etcd client, the site's
// membership and its leader (coord.go). Consensus is etcd's; this package
// writes none of its own.
//
// Everything kept in etcd lives under /twinlake/<site>/:
//
//	members/<nodeID>       one JSON NodeInfo per live node, bound to the node's session lease
//	leader/<lease, hex>    one key per candidate (concurrency.Election); the oldest is the leader
//
// Records there are small; object data and metadata never go through etcd.
package cluster
