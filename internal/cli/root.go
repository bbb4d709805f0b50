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
	"fmt"
	"slices"
	"strings"

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
	for _, c := range root.Commands() {
		finishGroups(c)
	}
	return root
}

// verbPairs are the spellings mc accepts for the same subcommand: a
// group's ls answers to list as well, rm to remove, and the other way.
var verbPairs = map[string]string{"ls": "list", "list": "ls", "rm": "remove", "remove": "rm"}

// finishGroups walks the commands below the root. A group (a command
// with subcommands and no action of its own) shows its help when called
// alone and refuses an unknown subcommand, with suggestions, instead of
// printing its help and exiting 0: cobra checks only the root's. A
// subcommand named ls, list, rm or remove also answers to its pair,
// unless a sibling already has that name. (The root's own ls and rm are
// the object verbs and keep their one name.)
func finishGroups(c *cobra.Command) {
	subs := c.Commands()
	for _, sub := range subs {
		if other, ok := verbPairs[sub.Name()]; ok && !slices.Contains(sub.Aliases, other) && !hasSub(c, other) {
			sub.Aliases = append(sub.Aliases, other)
		}
		finishGroups(sub)
	}
	if len(subs) == 0 || c.Runnable() {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.DisableFlagsInUseLine = true
	c.SuggestionsMinimumDistance = 2
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if near := cmd.SuggestionsFor(args[0]); len(near) > 0 {
			msg += "; did you mean " + strings.Join(near, " or ") + "?"
		}
		return fmt.Errorf("%s (see '%s --help')", msg, cmd.CommandPath())
	}
}

// hasSub reports whether c has a subcommand called name.
func hasSub(c *cobra.Command, name string) bool {
	for _, sub := range c.Commands() {
		if sub.Name() == name {
			return true
		}
	}
	return false
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
