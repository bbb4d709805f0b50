package admincmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newAdminPrometheusMetricsCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "metrics ALIAS",
		Short: "Print a site's current metrics in the Prometheus text format",
		Long: `Print the site's /twinlake/metrics, read with a SigV4-signed request as the alias's
user: root, or a user allowed admin:Prometheus (the built-in diagnostics policy).`,
		Example: `  twinlake admin prometheus metrics site1
  twinlake admin prometheus metrics site1 | grep twinlake_replication_`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := opts.LookupAlias(args[0])
			if err != nil {
				return err
			}
			if err := cmdutil.ScrapeMetrics(cmd.Context(), a, cmd.OutOrStdout()); err != nil {
				return fmt.Errorf("admin prometheus metrics %s: %w", args[0], err)
			}
			return nil
		},
	}
}
