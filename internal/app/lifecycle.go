package app

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/metrics"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/trace"
)

// startLifecycle runs bucket lifecycle rules in the background, every ilm
// interval, until stopLifecycle. Each run does what is due across the
// site's buckets (objects.RunLifecycle); every site runs its own, and the
// deletes it makes replicate like a client's (objects/lifecycle.go says
// why two sites never disagree).
func (s *Server) startLifecycle() error {
	m, err := newILMMetrics(s.metrics.Registerer())
	if err != nil {
		return err
	}
	applyDay := func() {
		s.objects.SetLifecycleDay(s.settings.Duration(config.SubsysILM, config.ILMDayLength))
	}
	applyDay()
	wake := make(chan struct{}, 1) // a changed interval takes effect at once
	cancelSub := s.settings.Subscribe(func(subsys string) {
		if subsys == config.SubsysILM {
			applyDay()
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-wake:
				continue
			case <-time.After(s.settings.Duration(config.SubsysILM, config.ILMInterval)):
			}
			start := time.Now()
			st, err := s.objects.RunLifecycle(ctx, start.UnixNano(), 0)
			if ctx.Err() != nil {
				return
			}
			m.observe(st, time.Since(start), err)
			if err != nil {
				s.log.Error("bucket lifecycle run", "err", err)
			}
			traceILM(s.trace, st, start, err)
		}
	}()
	s.stopLifecycle = func() { cancel(); cancelSub(); <-done }
	return nil
}

// traceILM publishes a run that evaluated any key as an ilm trace event.
func traceILM(tr *trace.Bus, st objects.LifecycleStats, start time.Time, err error) {
	if st.Keys == 0 && err == nil || !tr.Enabled(trace.ILM) {
		return
	}
	ev := trace.Event{Type: trace.ILM, Time: start, FuncName: "ilm.run", Duration: time.Since(start),
		Msg: fmt.Sprintf("%d keys evaluated (%d by an index rebuild): %d expired, %d noncurrent versions removed, %d delete markers removed, %d uploads aborted, %d kept by object lock",
			st.Keys, st.Indexed, st.Expired, st.Purged, st.Markers, st.Aborted, st.Kept)}
	if err != nil {
		ev.Error = err.Error()
	}
	tr.Publish(ev)
}

// ilmMetrics counts lifecycle runs and their actions.
type ilmMetrics struct {
	runs    *prometheus.CounterVec
	actions *prometheus.CounterVec
	keys    *prometheus.CounterVec
	seconds prometheus.Histogram
}

func newILMMetrics(reg prometheus.Registerer) (*ilmMetrics, error) {
	m := &ilmMetrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metrics.ILMRunsTotal,
			Help: "Bucket lifecycle runs, by result (ok, error)."}, []string{"result"}),
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metrics.ILMActionsTotal,
			Help: "What bucket lifecycle runs did, by action."}, []string{"action"}),
		keys: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metrics.ILMKeysTotal,
			Help: "Object keys bucket lifecycle runs evaluated, by reason: due (the index said so) or rebuild (every key of a bucket whose rules changed)."},
			[]string{"reason"}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: metrics.ILMRunSeconds,
			Help: "How long bucket lifecycle runs took.", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 12)}),
	}
	for _, c := range []prometheus.Collector{m.runs, m.actions, m.keys, m.seconds} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	for _, r := range []string{"ok", "error"} {
		m.runs.WithLabelValues(r)
	}
	m.keys.WithLabelValues("due")
	m.keys.WithLabelValues("rebuild")
	for _, a := range ilmActions {
		m.actions.WithLabelValues(a)
	}
	return m, nil
}

var ilmActions = []string{"expired", "noncurrent_purged", "delete_markers_removed", "uploads_aborted", "kept_locked"}

func (m *ilmMetrics) observe(st objects.LifecycleStats, took time.Duration, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.runs.WithLabelValues(result).Inc()
	m.keys.WithLabelValues("due").Add(float64(st.Keys - st.Indexed))
	m.keys.WithLabelValues("rebuild").Add(float64(st.Indexed))
	m.seconds.Observe(took.Seconds())
	for i, n := range []int{st.Expired, st.Purged, st.Markers, st.Aborted, st.Kept} {
		m.actions.WithLabelValues(ilmActions[i]).Add(float64(n))
	}
}
