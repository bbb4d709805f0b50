package rest

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/metrics"
)

// latencyBuckets are the catalog request histogram's bounds, in seconds: a
// load is sub-millisecond, a commit a few milliseconds.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}

// serverMetrics are the catalog's collectors, registered on the injected
// Registerer.
type serverMetrics struct {
	requests  *prometheus.CounterVec
	errors    *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	conflicts prometheus.Counter
}

func newServerMetrics(reg prometheus.Registerer, cat *catalog.Catalog) (*serverMetrics, error) {
	m := &serverMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metrics.CatalogRequestsTotal, Help: "Iceberg REST catalog requests, by operation and HTTP status code.",
		}, []string{metrics.LabelAPI, metrics.LabelCode}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metrics.CatalogErrorsTotal, Help: "Iceberg REST catalog requests answered with an error, by operation and status class.",
		}, []string{metrics.LabelAPI, metrics.LabelClass}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: metrics.CatalogRequestDurationSeconds, Help: "Time to serve an Iceberg REST catalog request, by operation.",
			Buckets: latencyBuckets,
		}, []string{metrics.LabelAPI}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: metrics.CatalogCommitConflictsTotal, Help: "Commits refused because a requirement failed (409 CommitFailedException).",
		}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.errors, m.duration, m.conflicts, &sizeCollector{cat: cat}} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *serverMetrics) observe(api string, status int, dur time.Duration, conflict bool) {
	m.requests.WithLabelValues(api, strconv.Itoa(status)).Inc()
	switch {
	case status >= 500:
		m.errors.WithLabelValues(api, "5xx").Inc()
	case status >= 400:
		m.errors.WithLabelValues(api, "4xx").Inc()
	}
	m.duration.WithLabelValues(api).Observe(dur.Seconds())
	if conflict {
		m.conflicts.Inc()
	}
}

// sizeCollector reports the gauges of what the catalog holds. Counting
// reads every namespace, table and view key, so a count serves the scrapes
// of the next sizeTTL (the console reads the metrics every 2 s for each
// open Sites page, and the endpoint may be public).
type sizeCollector struct {
	cat *catalog.Catalog
	now func() time.Time // time.Now when nil

	mu      sync.Mutex
	last    catalog.Stats
	counted time.Time
}

// sizeTTL is how long a count of the catalog serves scrapes.
const sizeTTL = 30 * time.Second

// stats returns a count of the catalog at most sizeTTL old.
func (c *sizeCollector) stats() (catalog.Stats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if c.now != nil {
		now = c.now()
	}
	if !c.counted.IsZero() && now.Sub(c.counted) < sizeTTL {
		return c.last, nil
	}
	st, err := c.cat.Stats(context.Background())
	if err != nil {
		return st, err
	}
	c.last, c.counted = st, now
	return st, nil
}

var (
	descWarehouses = prometheus.NewDesc(metrics.CatalogWarehouses, "Warehouses on this site.", nil, nil)
	descNamespaces = prometheus.NewDesc(metrics.CatalogNamespaces, "Namespaces in all warehouses.", nil, nil)
	descTables     = prometheus.NewDesc(metrics.CatalogTables, "Tables in all warehouses.", nil, nil)
	descViews      = prometheus.NewDesc(metrics.CatalogViews, "Views in all warehouses.", nil, nil)
)

func (c *sizeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descWarehouses, descNamespaces, descTables, descViews} {
		ch <- d
	}
}

func (c *sizeCollector) Collect(ch chan<- prometheus.Metric) {
	st, err := c.stats()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descTables, err)
		return
	}
	for _, g := range []struct {
		d *prometheus.Desc
		v int64
	}{{descWarehouses, st.Warehouses}, {descNamespaces, st.Namespaces}, {descTables, st.Tables}, {descViews, st.Views}} {
		ch <- prometheus.MustNewConstMetric(g.d, prometheus.GaugeValue, float64(g.v))
	}
}
