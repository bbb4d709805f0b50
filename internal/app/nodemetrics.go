package app

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/twinlake/twinlake/internal/metrics"
)

// nodeCollector reports, when scraped, a multi-node site's nodes (up, and
// which leads), each drive of a drive set (whether it answers), and the
// latest heal scan's progress.
type nodeCollector struct {
	s                                      *Server
	nodeUp, nodeCPU, leader, driveUp       *prometheus.Desc
	held, deposed                          *prometheus.Desc
	readsHere, readBytesHere               *prometheus.Desc
	writesHere, writeBytesHere             *prometheus.Desc
	healPercent, healDegraded, healShard   *prometheus.Desc
	etcdDB, etcdInUse, etcdQuota, etcdFull *prometheus.Desc
}

func newNodeCollector(s *Server) *nodeCollector {
	return &nodeCollector{s: s,
		nodeUp:         prometheus.NewDesc(metrics.ClusterNodeUp, "1 for a node of the site that is the leader or online, 0 offline.", []string{"node"}, nil),
		nodeCPU:        prometheus.NewDesc(metrics.ClusterNodeCPU, "CPU time, user and system, the node's process has used since it started; absent for a node that did not tell it within a second.", []string{"node"}, nil),
		leader:         prometheus.NewDesc(metrics.ClusterNodeLeader, "1 for the node that leads the site.", []string{"node"}, nil),
		held:           prometheus.NewDesc(metrics.ClusterNodeHeld, "Requests the node holds, waiting for a leader to pass them to (a change of leader under way); absent for a node that did not answer within a second.", []string{"node"}, nil),
		deposed:        prometheus.NewDesc(metrics.ClusterNodeDeposed, "Leaders whose session the node ended since it started, their process found gone (its address refusing connections) or stalled (taking connections and answering nothing for 3 s), or their machine unreachable (connections to it timing out for 3 s at most of the other nodes, which this node's vote completed).", []string{"node"}, nil),
		readsHere:      prometheus.NewDesc(metrics.ClusterNodeReadsHere, "GETs the node passed to the leader and whose data it read from the drives itself (the leader sent the headers, the node the bytes) since it started.", []string{"node"}, nil),
		readBytesHere:  prometheus.NewDesc(metrics.ClusterNodeReadBytesHere, "Bytes of the GETs counted by "+metrics.ClusterNodeReadsHere+" that the node read from the drives and sent.", []string{"node"}, nil),
		writesHere:     prometheus.NewDesc(metrics.ClusterNodeWritesHere, "PUTs the node passed to the leader and whose data it wrote to the drives itself (the leader checked and committed them) since it started.", []string{"node"}, nil),
		writeBytesHere: prometheus.NewDesc(metrics.ClusterNodeWriteBytesHere, "Bytes of the PUTs counted by "+metrics.ClusterNodeWritesHere+" that the node read from its client and wrote.", []string{"node"}, nil),
		driveUp:        prometheus.NewDesc(metrics.DriveUp, "1 when a drive of the site's drive set answers, 0 when it cannot be reached.", []string{"drive"}, nil),
		healPercent:    prometheus.NewDesc(metrics.HealProgressPercent, "The latest heal scan's progress estimate; 100 when done.", nil, nil),
		healDegraded:   prometheus.NewDesc(metrics.HealDegradedBlobs, "Blobs the latest heal scan found short of a shard.", nil, nil),
		healShard:      prometheus.NewDesc(metrics.HealShardsRebuilt, "Shards the latest heal scan wrote again.", nil, nil),
		etcdDB:         prometheus.NewDesc(metrics.EtcdDBBytes, "The largest database file of the site's etcd members, in bytes.", nil, nil),
		etcdInUse:      prometheus.NewDesc(metrics.EtcdDBInUseBytes, "The most any of the site's etcd members uses of its database file, in bytes.", nil, nil),
		etcdQuota:      prometheus.NewDesc(metrics.EtcdQuotaBytes, "The smallest quota of the site's etcd members, in bytes: past it etcd refuses every write.", nil, nil),
		etcdFull:       prometheus.NewDesc(metrics.EtcdNoSpace, "1 while a member of the site's etcd raises the NOSPACE alarm and refuses every write.", nil, nil),
	}
}

func (c *nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.nodeUp, c.nodeCPU, c.leader, c.held, c.deposed, c.readsHere, c.readBytesHere, c.writesHere, c.writeBytesHere, c.driveUp, c.healPercent, c.healDegraded, c.healShard,
		c.etcdDB, c.etcdInUse, c.etcdQuota, c.etcdFull} {
		ch <- d
	}
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func boolGauge(d *prometheus.Desc, b bool, labels ...string) prometheus.Metric {
	v := 0.0
	if b {
		v = 1
	}
	return gauge(d, v, labels...)
}

func (c *nodeCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	switch {
	case s.cfg.Nodes != nil:
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		nodes, e := s.nodesAndEtcd(ctx)
		for _, n := range nodes {
			ch <- boolGauge(c.nodeUp, n.State != "offline", n.Address)
			ch <- boolGauge(c.leader, n.State == "leader", n.Address)
			ch <- boolGauge(c.driveUp, n.Drive == "ok", n.Address)
			if n.CPUSeconds > 0 {
				ch <- prometheus.MustNewConstMetric(c.nodeCPU, prometheus.CounterValue, n.CPUSeconds, n.Address)
				ch <- gauge(c.held, float64(n.HeldRequests), n.Address)
				ch <- prometheus.MustNewConstMetric(c.deposed, prometheus.CounterValue, float64(n.LeadersDeposed), n.Address)
				ch <- prometheus.MustNewConstMetric(c.readsHere, prometheus.CounterValue, float64(n.ReadsHere), n.Address)
				ch <- prometheus.MustNewConstMetric(c.readBytesHere, prometheus.CounterValue, float64(n.ReadBytesHere), n.Address)
				ch <- prometheus.MustNewConstMetric(c.writesHere, prometheus.CounterValue, float64(n.WritesHere), n.Address)
				ch <- prometheus.MustNewConstMetric(c.writeBytesHere, prometheus.CounterValue, float64(n.WriteBytesHere), n.Address)
			}
		}
		if e != nil && len(e.Unreachable) < e.Endpoints {
			ch <- gauge(c.etcdDB, float64(e.DBSize))
			ch <- gauge(c.etcdInUse, float64(e.DBSizeInUse))
			ch <- gauge(c.etcdQuota, float64(e.Quota))
			ch <- boolGauge(c.etcdFull, slices.ContainsFunc(e.Alarms, func(a string) bool { return strings.Contains(a, "NOSPACE") }))
		}
	case s.blobs.Drives() > 1:
		for i, err := range s.blobs.DriveErrors() {
			ch <- boolGauge(c.driveUp, err == nil, s.cfg.Drives[i])
		}
	}
	if p := s.objects.HealProgress(); p != nil {
		ch <- gauge(c.healPercent, float64(p.Percent()))
		ch <- gauge(c.healDegraded, float64(p.Degraded))
		ch <- gauge(c.healShard, float64(p.ShardsRebuilt))
	}
}
