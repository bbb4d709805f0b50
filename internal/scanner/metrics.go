package scanner

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/metrics"
)

type scanMetrics struct {
	cycles, retryRequests, recordReads prometheus.Counter
	cycleSeconds                       prometheus.Histogram
}

// scanCollector reports the scanner gauges when scraped.
type scanCollector struct {
	s                                          *Scanner
	behind, missing, held, state, last, tables *prometheus.Desc
}

func (c *scanCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.behind, c.missing, c.held, c.state, c.last, c.tables} {
		ch <- d
	}
}

func (c *scanCollector) Collect(ch chan<- prometheus.Metric) {
	window, role := c.s.persisted().Window, c.s.Role()
	c.s.mu.Lock()
	behind, missing, held := c.s.countsLocked()
	perStatus := c.s.statusCountsLocked()
	state, last := reportedState(c.s.state, role, window), c.s.lastOK
	c.s.mu.Unlock()
	for _, st := range tableStatuses {
		ch <- prometheus.MustNewConstMetric(c.tables, prometheus.GaugeValue, float64(perStatus[st]), st)
	}
	ch <- prometheus.MustNewConstMetric(c.behind, prometheus.GaugeValue, float64(behind))
	ch <- prometheus.MustNewConstMetric(c.missing, prometheus.GaugeValue, float64(missing))
	ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, float64(held))
	for _, st := range []string{StateDisabled, StateWaiting, StateActive, StateTracking, StateRebuilding} {
		v := 0.0
		if st == state {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, v, st)
	}
	ts := 0.0
	if !last.IsZero() {
		ts = float64(last.UnixNano()) / 1e9
	}
	ch <- prometheus.MustNewConstMetric(c.last, prometheus.GaugeValue, ts)
}

func newScanMetrics(s *Scanner, reg prometheus.Registerer) (*scanMetrics, error) {
	m := &scanMetrics{
		cycles:        prometheus.NewCounter(prometheus.CounterOpts{Name: metrics.ScannerCyclesTotal, Help: "Replica catalog scanner cycles completed."}),
		retryRequests: prometheus.NewCounter(prometheus.CounterOpts{Name: metrics.ScannerRetryRequestsTotal, Help: "Missing files the scanner asked the primary to re-send."}),
		recordReads: prometheus.NewCounter(prometheus.CounterOpts{Name: metrics.ScannerRecordReadsTotal,
			Help: "Identity record versions the scanner read: an evaluation reads a table's newest versions down to the first complete one."}),
		cycleSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: metrics.ScannerCycleSeconds, Help: "Duration of a scanner cycle.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}),
	}
	if reg == nil {
		return m, nil
	}
	c := &scanCollector{s: s,
		behind:  prometheus.NewDesc(metrics.ScannerTablesBehind, "Tables and views whose verified version trails the latest version seen.", nil, nil),
		missing: prometheus.NewDesc(metrics.ScannerMissingFiles, "Files the latest versions reference that have not arrived.", nil, nil),
		held:    prometheus.NewDesc(metrics.ScannerHeldTransactions, "Tables held back until every member of their multi-table transaction arrives.", nil, nil),
		state:   prometheus.NewDesc(metrics.ScannerState, "1 for the scanner's current state.", []string{"state"}, nil),
		last:    prometheus.NewDesc(metrics.ScannerLastSuccessTimestamp, "Unix time of the last completed scanner cycle (0: none).", nil, nil),
		tables: prometheus.NewDesc(metrics.ScannerTables,
			"Tables and views on the replica per status: ok (verified at the latest version), behind (a newer version is not complete yet), missing (behind, with files missing), held (a transaction member waiting for the others), deleted.",
			[]string{"status"}, nil),
	}
	for _, col := range []prometheus.Collector{m.cycles, m.retryRequests, m.recordReads, m.cycleSeconds, c} {
		if err := reg.Register(col); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// The replica statuses a table or view is counted under, each exactly once.
var tableStatuses = []string{"ok", "behind", "missing", "held", "deleted"}

// statusCountsLocked counts tables and views per replica status (see
// tableStatuses). Callers hold s.mu.
func (s *Scanner) statusCountsLocked() map[string]int {
	out := make(map[string]int, len(tableStatuses))
	for _, e := range s.ents {
		switch {
		case e.kind == catalog.KindNamespace:
		case e.deleted:
			out["deleted"]++
		case e.held:
			out["held"]++
		case e.latest > e.verified && len(e.missing) > 0:
			out["missing"]++
		case e.latest > e.verified:
			out["behind"]++
		default:
			out["ok"]++
		}
	}
	return out
}
