package tablecmd

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// Backfill job states as the admin API reports them.
const (
	backfillRunning  = "running"
	backfillCanceled = "canceled"
	backfillNone     = "none" // --json state when no backfill has run
)

func newTableReplicateBackfillCmd(opts *cmdutil.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "backfill",
		Short: "Write the catalog identity records that warehouses created before Tables replication lack",
		Long: `The replica's scanner rebuilds tables from catalog identity records, which every
catalog change writes. Warehouses created before Tables replication carry
none; a backfill writes them for every warehouse, namespace, table and view
of the site's catalog. Run it against the primary, before site replication
is configured.

It writes records only: no table data or metadata.json file changes, and
existing object versions and ETags are kept. It skips records already
present, so re-running it is safe; one backfill runs at a time.`,
		Example: `  twinlake table replicate backfill start primary
  twinlake table replicate backfill status primary
  twinlake table replicate backfill cancel primary`,
		RunE: cmdutil.RequireSubcommand,
	}
	for _, a := range []struct {
		name, method, short string
	}{
		{"start", http.MethodPost, "Start a backfill in the background"},
		{"status", http.MethodGet, "Show the latest backfill"},
		{"cancel", http.MethodDelete, "Stop a running backfill (records written so far stay)"},
	} {
		var wait bool
		sub := &cobra.Command{
			Use:     a.name + " ALIAS",
			Short:   a.short,
			Example: fmt.Sprintf("  twinlake table replicate backfill %s primary\n  twinlake table replicate backfill %s primary --json", a.name, a.name),
			Args:    cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				alias := args[0]
				c, err := opts.AdminClient(alias)
				if err != nil {
					return err
				}
				job, err := c.Backfill(cmd.Context(), a.method)
				if a.name != "start" && adminErrorCode(err) == adminclient.CodeNoBackfill {
					human := "No backfill has run."
					if a.name == "cancel" {
						human = "No backfill is running: nothing to cancel."
					}
					return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]string{"state": backfillNone, "message": human}, human)
				}
				if err != nil {
					return tablesReplErr("table replicate backfill "+a.name+" "+alias, alias, err)
				}
				action := a.name
				if wait {
					err := cmdutil.WaitJob(cmd, opts, "backfill", func() (int64, int64, bool, error) {
						job, err = c.Backfill(cmd.Context(), http.MethodGet)
						return int64(job.Written + job.Unchanged), 0, job.State != backfillRunning, err
					})
					if err != nil {
						return tablesReplErr("table replicate backfill status "+alias, alias, err)
					}
					action = "status"
				}
				return cmdutil.PrintResult(cmd.OutOrStdout(), opts, job, backfillHuman(action, alias, job))
			},
		}
		if a.name == "start" {
			sub.Flags().BoolVar(&wait, "wait", false, "follow the backfill until it ends, showing its progress")
		}
		cmd.AddCommand(sub)
	}
	return cmd
}

// backfillHuman renders a backfill job, headed by what the action did.
func backfillHuman(action, alias string, job adminclient.BackfillJob) string {
	var b strings.Builder
	switch {
	case action == "start":
		fmt.Fprintf(&b, "Backfill of %s started; follow it with twinlake table replicate backfill status %s\n", alias, alias)
	case action == "cancel" && job.State == backfillCanceled:
		fmt.Fprintf(&b, "Backfill of %s canceled.\n", alias)
	case action == "cancel":
		fmt.Fprintf(&b, "Backfill of %s was not running (%s): nothing to cancel.\n", alias, job.State)
	default:
		fmt.Fprintf(&b, "Backfill of %s:\n", alias)
	}
	rows := [][2]string{
		{"ID", job.ID},
		{"State", job.State},
		{"Started", cmdutil.FmtTime(job.Started)},
		{"Finished", cmdutil.FmtTime(job.Finished)},
		{"Warehouses", fmt.Sprint(job.Warehouses)},
		{"Namespaces", fmt.Sprint(job.Namespaces)},
		{"Tables", fmt.Sprint(job.Tables)},
		{"Views", fmt.Sprint(job.Views)},
		{"Records written", fmt.Sprint(job.Written)},
		{"Unchanged", fmt.Sprintf("%d (already present)", job.Unchanged)},
		{"Warnings", fmt.Sprint(len(job.Warnings))},
	}
	if job.State == "running" && job.Warehouse != "" {
		rows = append(rows, [2]string{"In hand", job.Warehouse})
	}
	if job.Error != "" {
		rows = append(rows, [2]string{"Error", job.Error})
	}
	writeRows(&b, "  ", rows)
	for _, w := range job.Warnings {
		fmt.Fprintf(&b, "    %s\n", w)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
