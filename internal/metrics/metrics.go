// Package metrics owns twinlake's Prometheus registry, the table of metric
// names, and the exposition endpoint /twinlake/metrics with its
// authentication. Each part owns its collectors and registers them on the
// Registerer it is given; the S3 request collector lives here because the
// S3 edge is a thin caller of it.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Registry is a site's metric registry, preloaded with the Go runtime and
// process collectors. It is safe for concurrent use.
type Registry struct {
	reg *prometheus.Registry
}

// New returns a Registry with the Go runtime and process collectors.
func New() *Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return &Registry{reg: reg}
}

// Registerer is where parts register their collectors.
func (r *Registry) Registerer() prometheus.Registerer { return r.reg }

// Gatherer reads every registered metric, for tests and the handler.
func (r *Registry) Gatherer() prometheus.Gatherer { return r.reg }
