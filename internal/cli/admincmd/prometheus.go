package admincmd

import (
	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// metricsPath is where a site serves its Prometheus metrics.
const metricsPath = "/twinlake/metrics"

// metricsTokenEnv is the server's bearer-token setting for scrapes; the
// client reads the same name as a default for generate's --token.
const metricsTokenEnv = "TWINLAKE_METRICS_TOKEN"

// newAdminPrometheusCmd groups the commands that connect a site to
// Prometheus: a scrape configuration and the metrics themselves.
func newAdminPrometheusCmd(opts *cmdutil.Options) *cobra.Command {
	c := &cobra.Command{
		Use:   "prometheus",
		Short: "Connect a site to Prometheus: print a scrape configuration or the current metrics",
		Example: `  twinlake admin prometheus generate site1 --token "$TWINLAKE_METRICS_TOKEN" >> prometheus.yml
  twinlake admin prometheus metrics site1 | grep replication`,
	}
	c.AddCommand(newAdminPrometheusGenerateCmd(opts), newAdminPrometheusMetricsCmd(opts))
	return c
}
