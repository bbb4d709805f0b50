// Package cli assembles the twinlake command line from its command families,
// one package each: servercmd (the server), democmd (a two-site demo),
// objcmd (aliases, objects, anonymous access, health), admincmd (admin and
// bucket replication), tablecmd (the Tables catalog and its DR) and benchcmd
// (benchmarks). What they share (flags, aliases, clients, output) is in
// cmdutil. Every command takes --json and returns errors to main, which
// prints one line and exits non-zero. The families reach sites only through
// the public HTTP APIs; only servercmd and democmd start servers.
package cli

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/admincmd"
	"github.com/twinlake/twinlake/internal/cli/benchcmd"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
	"github.com/twinlake/twinlake/internal/cli/democmd"
	"github.com/twinlake/twinlake/internal/cli/objcmd"
	"github.com/twinlake/twinlake/internal/cli/servercmd"
	"github.com/twinlake/twinlake/internal/cli/tablecmd"
)

// NewRoot builds the root command with every subcommand attached.
func NewRoot() *cobra.Command {
	opts := &cmdutil.Options{}
	root := &cobra.Command{
		Use:           "twinlake",
		Short:         "twinlake: S3-compatible object store with multi-site replication and an Iceberg catalog",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       cmdutil.Version,
	}
	root.PersistentFlags().BoolVar(&opts.JSON, "json", false, "print machine-readable JSON")
	root.PersistentFlags().BoolVarP(&opts.Quiet, "quiet", "q", false, "show no progress (bars or periodic lines)")
	root.PersistentFlags().StringVar(&opts.ConfigDir, "config-dir", "", "client config directory (default $TWINLAKE_CONFIG_DIR or ~/.twinlake)")
	for _, add := range []func(*cobra.Command, *cmdutil.Options){
		servercmd.AddServerCommands,
		democmd.AddDemoCommand,
		objcmd.AddAliasCommands,
		objcmd.AddObjectCommands,
		admincmd.AddAdminCommands,
		admincmd.AddSupportCommands,
		objcmd.AddAnonymousCommands,
		admincmd.AddReplicateCommands,
		tablecmd.AddTableCommands,
		benchcmd.AddBenchCommands,
	} {
		add(root, opts)
	}
	return root
}

// Execute runs root and returns its error made readable: one line, with a
// hint for the common failures. With --json the error is also printed on
// standard output as mc does, {"status":"error","error":{...}}, unless the
// command printed it already.
func Execute(ctx context.Context, root *cobra.Command) error {
	err := cmdutil.Explain(root.ExecuteContext(ctx))
	if err == nil {
		return nil
	}
	if asJSON, _ := root.PersistentFlags().GetBool("json"); asJSON && !cmdutil.AlreadyPrinted(err) {
		cmdutil.WriteJSON(root.OutOrStdout(), cmdutil.NewJSONError(err))
	}
	return err
}
