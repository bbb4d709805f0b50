package tablecmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newTableReplicateCatalogCmd(opts *cmdutil.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "catalog",
		Short:   "Reset a replica's catalog",
		Example: "  twinlake table replicate catalog reset dr",
		RunE:    cmdutil.RequireSubcommand,
	}
	var yes bool
	reset := &cobra.Command{
		Use:   "reset ALIAS",
		Short: "Back up and delete a replica's catalog; the scanner rebuilds it (prompts)",
		Long: `Back up the replica's live catalog to a timestamped prefix, delete it, and let
the scanner rebuild it from the replicated data on its next cycle. Use it when
a replica's catalog is corrupt or has drifted, and only as the recovery
workflow or support directs. Restoring the backup is a manual step; there is
no automated restore. Refused unless the site is the replica. Prompts for
confirmation unless --yes.`,
		Example: `  twinlake table replicate catalog reset dr
  twinlake table replicate catalog reset dr --yes --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			alias := args[0]
			what := "table replicate catalog reset " + alias
			c, err := opts.AdminClient(alias)
			if err != nil {
				return err
			}
			question := fmt.Sprintf("This backs up and deletes the local catalog of %s, then rebuilds it from the replicated data. Continue?", alias)
			if err := tablesConfirm(cmd, yes, what, question); err != nil {
				return err
			}
			res, err := c.TablesCatalogReset(cmd.Context(), true)
			if err != nil {
				return tablesReplErr(what, alias, err)
			}
			human := fmt.Sprintf("Catalog of %s backed up to %s and deleted; the scanner rebuilds it on its next cycle.\n"+
				"Monitor with twinlake table replicate status %s", alias, res.Backup, alias)
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, res, human)
		},
	}
	reset.Flags().BoolVarP(&yes, "yes", "y", false, "do not prompt")
	cmd.AddCommand(reset)
	return cmd
}
