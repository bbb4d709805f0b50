package benchcmd

import (
	"sync"

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
		PersistentPreRun:  func(*cobra.Command, []string) { tuneGC() },
		PersistentPostRun: func(*cobra.Command, []string) { untuneGC() },
	}
	bench.AddCommand(newBenchS3Cmd(opts), newBenchCatalogCmd(opts), newBenchReplicationCmd(opts), newBenchScannerCmd(opts), newBenchStartupCmd(opts), newBenchConsoleCmd(opts), newBenchILMCmd(opts), newBenchErasureCmd(opts), newBenchFailoverCmd(opts))
	root.AddCommand(bench)
}

// The collector's tuner of a bench run: one at a time, however many bench
// commands a process runs (tests run them in process).
var (
	tunerMu sync.Mutex
	tuner   *gctune.Tuner
)

func tuneGC() {
	tunerMu.Lock()
	defer tunerMu.Unlock()
	if tuner == nil {
		tuner = gctune.Start(gctune.DefaultHeadroom) // inactive with GOGC set
	}
}

func untuneGC() {
	tunerMu.Lock()
	defer tunerMu.Unlock()
	if tuner != nil {
		tuner.Stop()
		tuner = nil
	}
}
