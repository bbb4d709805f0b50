package tablecmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// Catalog rebuild states as the admin API reports them.
const (
	rebuildCompleted = "Completed"
	rebuildFailed    = "Failed"
)

func newTableReplicateResyncCmd(opts *cmdutil.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "resync",
		Short: "Demote a former primary to replica after a failover: open a window, then rebuild its catalog",
		Long: `The catalog resync turns the old primary, after a failover promoted the other
site, into the new replica, in two phases:

  1. resync open ALIAS: the site accepts inbound warehouse replication again
     (client writes stay refused); the catalog is left untouched.
  2. 'twinlake admin replicate resync start NEW_PRIMARY ALIAS', and wait until
     'resync status' reports completed.
  3. resync rebuild ALIAS: back up and delete the local catalog, then rebuild
     it from the new primary (local-only versions are discarded, local-only
     tables marked deleted with their files kept, tables dropped only here
     restored). On success the site becomes a full replica.

Watch it with 'twinlake table replicate status ALIAS' (Scanner: rebuilding and
a Rebuild block).`,
		Example: `  twinlake table replicate resync open oldprimary
  twinlake admin replicate resync start dr oldprimary
  twinlake table replicate resync rebuild oldprimary --yes`,
		RunE: cmdutil.RequireSubcommand,
	}
	open := &cobra.Command{
		Use:     "open ALIAS",
		Short:   "Open a catalog resync window: accept inbound warehouse replication, catalog untouched",
		Example: "  twinlake table replicate resync open oldprimary",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			alias := args[0]
			c, err := opts.AdminClient(alias)
			if err != nil {
				return err
			}
			r, err := c.TablesResyncOpen(cmd.Context())
			if err != nil {
				return tablesReplErr("table replicate resync open "+alias, alias, err)
			}
			human := fmt.Sprintf("Catalog resync window open on %s: it accepts inbound warehouse replication and still refuses client writes.\n"+
				"Next: twinlake admin replicate resync start NEW_PRIMARY %s, wait for it to complete, then twinlake table replicate resync rebuild %s",
				alias, alias, alias)
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, r, human+"\n"+rebuildHuman(r))
		},
	}
	var yes, wait bool
	rebuild := &cobra.Command{
		Use:   "rebuild ALIAS",
		Short: "Back up and delete the local catalog, then rebuild it from the primary (prompts)",
		Long: `Back up the local catalog to a timestamped prefix, delete it and rebuild it from
the new primary. Refused unless a resync window is open, and while the
primary still reports an object resync towards this site in progress.
Prompts for confirmation unless --yes.`,
		Example: `  twinlake table replicate resync rebuild oldprimary
  twinlake table replicate resync rebuild oldprimary --yes`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			alias := args[0]
			what := "table replicate resync rebuild " + alias
			c, err := opts.AdminClient(alias)
			if err != nil {
				return err
			}
			question := fmt.Sprintf("This backs up and deletes the local catalog of %s, then rebuilds it from the primary. Continue?", alias)
			if err := tablesConfirm(cmd, yes, what, question); err != nil {
				return err
			}
			r, err := c.TablesResyncRebuild(cmd.Context(), true)
			if err != nil {
				return tablesReplErr(what, alias, err)
			}
			human := fmt.Sprintf("Catalog rebuild of %s started; monitor with twinlake table replicate status %s", alias, alias)
			if wait {
				err := cmdutil.WaitJob(cmd, opts, "rebuild", func() (int64, int64, bool, error) {
					st, err := c.TablesReplicationStatus(cmd.Context(), 0, 1)
					r = st.Rebuild
					return int64(r.Discarded), 0, r.State == rebuildCompleted || r.State == rebuildFailed, err
				})
				if err != nil {
					return tablesReplErr("table replicate status "+alias, alias, err)
				}
				human = fmt.Sprintf("Catalog rebuild of %s ended: %s", alias, r.State)
				if r.State == rebuildFailed {
					return printRebuildFailed(cmd.OutOrStdout(), opts, alias, r, human+"\n"+rebuildHuman(r))
				}
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, r, human+"\n"+rebuildHuman(r))
		},
	}
	rebuild.Flags().BoolVarP(&yes, "yes", "y", false, "do not prompt")
	rebuild.Flags().BoolVar(&wait, "wait", false, "follow the rebuild until it ends, showing its progress")
	cmd.AddCommand(open, rebuild)
	return cmd
}

// rebuildHuman renders a rebuild's state as an indented block.
func rebuildHuman(r adminclient.TablesRebuildStatus) string {
	var b strings.Builder
	b.WriteString("Rebuild:\n")
	writeRows(&b, "  ", rebuildRows(r))
	return strings.TrimSuffix(b.String(), "\n")
}

// rebuildFailure is how a rebuild that ended Failed prints with --json:
// one document, its status with the reason beside it.
type rebuildFailure struct {
	Status string                `json:"status"`
	Error  cmdutil.JSONErrorBody `json:"error"`
	adminclient.TablesRebuildStatus
}

// printRebuildFailed prints the status of a rebuild that failed and
// returns the error the command exits with (with --json, marked printed:
// the document carries it, not a second one after it).
func printRebuildFailed(w io.Writer, opts *cmdutil.Options, alias string, r adminclient.TablesRebuildStatus, human string) error {
	failed := fmt.Errorf("catalog rebuild of %s failed: %s", alias, r.LastError)
	if !opts.JSON {
		if err := cmdutil.PrintResult(w, opts, r, human); err != nil {
			return err
		}
		return failed
	}
	doc := rebuildFailure{Status: "error", Error: cmdutil.JSONErrorBody{Message: failed.Error()}, TablesRebuildStatus: r}
	if err := cmdutil.PrintResult(w, opts, doc, ""); err != nil {
		return err
	}
	return cmdutil.Printed(failed)
}
