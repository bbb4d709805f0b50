package benchcmd

import (
	"os"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
	"github.com/twinlake/twinlake/internal/gctune"
)

// AddBenchCommands attaches the bench command tree.
func AddBenchCommands(root *cobra.Command, opts *cmdutil.Options) {
	bench := &cobra.Command{
		Use:   "bench",
		Short: "Load generators: measure throughput and latency against a site",
		Long: `Load generators. Each runs its phases at a fixed concurrency for a duration or
an operation count and prints ops/s, MB/s (10^6 bytes) and latency percentiles
as a table, or with --json as one machine-readable object.`,
		Example: `  twinlake bench s3 site1 --size 4KiB,1MiB --concurrency 32 --duration 30s
  twinlake bench catalog site1 --tables 10000 --concurrency 16`,
		// A load generator's heap is small and churns fast, as a server's
		// is: the same collector tuning keeps its CPU for the load (unless
		// GOGC is set).
		PersistentPreRun: func(*cobra.Command, []string) {
			if os.Getenv("GOGC") == "" {
				gctune.Start(gctune.DefaultHeadroom)
			}
		},
	}
	bench.AddCommand(newBenchS3Cmd(opts), newBenchCatalogCmd(opts), newBenchReplicationCmd(opts), newBenchScannerCmd(opts), newBenchStartupCmd(opts), newBenchConsoleCmd(opts), newBenchILMCmd(opts), newBenchErasureCmd(opts))
	root.AddCommand(bench)
}
