package benchcmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/bench"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// runPhase is bench.Run with progress: operations done (of the count, when
// the phase has one) and the bytes they moved, perOp each (0 for a phase
// that moves none), on standard error, as every long command reports.
func runPhase(ctx context.Context, cmd *cobra.Command, name string, cfg bench.Config, perOp int64, op bench.Op) (bench.Result, error) {
	p := cmdutil.StartProgress(cmd, nil, "bench "+name)
	defer p.Finish()
	p.SetTotal(cfg.Count, 0)
	return bench.Run(ctx, cfg, func(ctx context.Context, seq int64) error {
		err := op(ctx, seq)
		if err == nil {
			p.AddBytes(perOp)
			p.ObjectDone()
		}
		return err
	})
}
