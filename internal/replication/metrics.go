package replication

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/twinlake/twinlake/internal/metrics"
)

type engineMetrics struct {
	sentObjects, sentBytes, failedObjects, dropped, mismatches *prometheus.CounterVec
	batchRequests, batchVersions                               *prometheus.CounterVec
	receivedObjects, receivedBytes, rejected                   prometheus.Counter
	linkLatency                                                *prometheus.HistogramVec
}

// collector reports the per-target gauges, read when scraped.
type collector struct {
	e                                       *Engine
	backlog, backlogBytes, lag, retries, up *prometheus.Desc
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.backlog, c.backlogBytes, c.lag, c.retries, c.up} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for _, t := range *c.e.targets.Load() {
		p, r := t.snapshot()
		n := t.site.Name
		ch <- prometheus.MustNewConstMetric(c.backlog, prometheus.GaugeValue, float64(p.n+r.n), n)
		ch <- prometheus.MustNewConstMetric(c.backlogBytes, prometheus.GaugeValue, float64(p.bytes+r.bytes), n)
		ch <- prometheus.MustNewConstMetric(c.retries, prometheus.GaugeValue, float64(r.n), n)
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, t.oldestPending().Seconds(), n)
		up := 0.0
		if t.online() {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up, n)
	}
}

func newEngineMetrics(e *Engine, reg prometheus.Registerer) (*engineMetrics, error) {
	lbl := []string{metrics.LabelTarget}
	m := &engineMetrics{
		sentObjects:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: metrics.ReplicationSentObjectsTotal, Help: "Changes (versions, deletes, bucket settings) delivered to a peer."}, lbl),
		sentBytes:       prometheus.NewCounterVec(prometheus.CounterOpts{Name: metrics.ReplicationSentBytesTotal, Help: "Object data bytes delivered to a peer."}, lbl),
		failedObjects:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: metrics.ReplicationFailedObjectsTotal, Help: "Sends that failed and went to the retry queue."}, lbl),
		dropped:         prometheus.NewCounterVec(prometheus.CounterOpts{Name: metrics.ReplicationDroppedObjectsTotal, Help: "Retry queue entries dropped after max_retries."}, lbl),
		mismatches:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: metrics.ReplicationMismatchesTotal, Help: "Versions found missing or stale on a peer by mismatch detection."}, lbl),
		batchRequests:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: metrics.ReplicationBatchRequestsTotal, Help: "Requests sent to a peer carrying small versions combined (answered or not)."}, lbl),
		batchVersions:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: metrics.ReplicationBatchVersionsTotal, Help: "Versions carried by those requests: over the requests, the versions a peer syncs at once."}, lbl),
		receivedObjects: prometheus.NewCounter(prometheus.CounterOpts{Name: metrics.ReplicationReceivedObjectsTotal, Help: "Changes received from peers and applied."}),
		receivedBytes:   prometheus.NewCounter(prometheus.CounterOpts{Name: metrics.ReplicationReceivedBytesTotal, Help: "Object data bytes received from peers."}),
		rejected:        prometheus.NewCounter(prometheus.CounterOpts{Name: metrics.ReplicationRejectedTotal, Help: "Received changes rejected as stale."}),
		linkLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: metrics.ReplicationLinkLatencySeconds, Help: "Round trip of the link health probe.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2}}, lbl),
	}
	if reg == nil {
		return m, nil
	}
	c := &collector{e: e,
		backlog:      prometheus.NewDesc(metrics.ReplicationBacklogObjects, "Changes waiting to be sent to a peer (journal and retry queue).", lbl, nil),
		backlogBytes: prometheus.NewDesc(metrics.ReplicationBacklogBytes, "Object bytes waiting to be sent to a peer.", lbl, nil),
		lag:          prometheus.NewDesc(metrics.ReplicationOldestPendingAgeSeconds, "Age of the oldest change waiting for a peer (replication lag).", lbl, nil),
		retries:      prometheus.NewDesc(metrics.ReplicationRetryQueueEntries, "Entries in the retry queue (MRF) of a peer.", lbl, nil),
		up:           prometheus.NewDesc(metrics.ReplicationLinkUp, "1 while the link to a peer answers its health probe, else 0.", lbl, nil),
	}
	for _, col := range []prometheus.Collector{m.sentObjects, m.sentBytes, m.failedObjects, m.dropped, m.mismatches,
		m.batchRequests, m.batchVersions,
		m.receivedObjects, m.receivedBytes, m.rejected, m.linkLatency, c} {
		if err := reg.Register(col); err != nil {
			return nil, err
		}
	}
	return m, nil
}
