package tablecmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// newTableMaintenanceCmd is `table maintenance ALIAS WAREHOUSE NAMESPACE
// TABLE`: snapshot expiry and orphan removal run by the site, with
// progress as the server reports it and a summary.
func newTableMaintenanceCmd(opts *cmdutil.Options) *cobra.Command {
	var req adminclient.MaintenanceRequest
	cmd := &cobra.Command{
		Use:   "maintenance ALIAS WAREHOUSE NAMESPACE TABLE",
		Short: "Expire old snapshots and remove orphan files of a table, on the server",
		Long: `Run table maintenance on the site (the primary; a Tables replica refuses and
receives the primary's maintenance by replication).

--expire-snapshots commits, like any Iceberg commit, the removal of the snapshots
older than --older-than, keeping on every branch at least the last --retain-last
and every snapshot a branch or tag points to; then it deletes the files only the
expired snapshots referenced. --remove-orphans deletes the files under the
table's location that no retained metadata references and that are older than
--orphans-older-than, so that files a writer has not committed yet are kept.
Without either flag, the table's policy decides (both, unless its orphan removal
is off). Ages and --retain-last default to the table's policy: its properties
(history.expire.max-snapshot-age-ms, history.expire.min-snapshots-to-keep,
twinlake.maintenance.orphans-older-than-ms) over the warehouse's settings
('table warehouse set ... expire_older_than=5d retain_last=1 orphans_older_than=3d').
--dry-run reports what would be expired and removed without changing anything.

Scheduled maintenance runs the same on every table whose policy enables it
('table warehouse set ALIAS WH maintenance=on', or the table property
twinlake.maintenance.enabled=true), every 'tables maintenance_interval'.`,
		Example: `  twinlake table maintenance site1 lake sales orders --dry-run
  twinlake table maintenance site1 lake sales orders --expire-snapshots --older-than 5d --retain-last 3
  twinlake table maintenance site1 lake sales orders --remove-orphans --orphans-older-than 3d
  twinlake table maintenance site1 lake sales orders --json`,
		Args: cobra.ExactArgs(4),
		RunE: func(cmd *cobra.Command, args []string) error {
			levels, err := parseNamespace(args[2])
			if err != nil {
				return err
			}
			if req.RetainLast < 0 {
				return fmt.Errorf("--retain-last %d: want 1 or more", req.RetainLast)
			}
			c, err := opts.AdminClient(args[0])
			if err != nil {
				return err
			}
			req.Namespace, req.Name = levels, args[3]
			out := cmd.OutOrStdout()
			sum, err := c.MaintainTable(cmd.Context(), args[1], req, func(ev adminclient.MaintenanceEvent) {
				if opts.JSON {
					_ = cmdutil.WriteJSON(out, ev)
					return
				}
				fmt.Fprintf(out, "%-16s %s\n", ev.Step, ev.Msg)
			})
			id := adminclient.CatalogIdent{Namespace: levels, Name: args[3]}
			if err != nil {
				return fmt.Errorf("maintenance of %s: %w", fmtIdent(id), err)
			}
			if opts.JSON {
				return cmdutil.WriteJSON(out, adminclient.MaintenanceEvent{Summary: &sum})
			}
			printMaintenanceSummary(out, fmtIdent(id), sum)
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&req.ExpireSnapshots, "expire-snapshots", false, "expire old snapshots (an Iceberg commit)")
	f.StringVar(&req.OlderThan, "older-than", "", "expire snapshots older than this (1s to 3650d; default: the table's policy, 5d)")
	f.IntVar(&req.RetainLast, "retain-last", 0, "keep at least this many of each branch's newest snapshots (default: the table's policy, 1)")
	f.BoolVar(&req.RemoveOrphans, "remove-orphans", false, "delete unreferenced files under the table's location")
	f.StringVar(&req.OrphansOlderThan, "orphans-older-than", "", "remove only orphans older than this (default: the table's policy, 3d)")
	f.BoolVar(&req.DryRun, "dry-run", false, "report what would be expired and removed; change nothing")
	return cmd
}

// printMaintenanceSummary writes the human summary of a run.
func printMaintenanceSummary(w io.Writer, table string, s adminclient.MaintenanceSummary) {
	if s.Skipped != "" {
		fmt.Fprintf(w, "Table `%s`: maintenance skipped: %s\n", table, s.Skipped)
		return
	}
	verb, removed := "expired", "removed"
	if s.DryRun {
		verb, removed = "would expire", "would remove"
	}
	fmt.Fprintf(w, "Table `%s`%s:\n", table, map[bool]string{true: " (dry run)", false: ""}[s.DryRun])
	fmt.Fprintf(w, "  snapshots: %s %d of %d\n", verb, s.SnapshotsExpired, s.SnapshotsBefore)
	fmt.Fprintf(w, "  files:     %s %d (%s)\n", removed, s.FilesRemoved, cmdutil.FmtBytes(s.BytesRemoved))
	if s.OrphansFound > 0 {
		fmt.Fprintf(w, "  orphans:   %d unreferenced, %d younger than the window kept\n", s.OrphansFound, s.OrphansTooYoung)
	}
	fmt.Fprintf(w, "  metadata:  %s (version %d)\n", s.MetadataLocation, s.Version)
	fmt.Fprintf(w, "  took:      %s\n", cmdutil.FmtDuration(s.Duration))
	if s.DryRun && len(s.Files) > 0 {
		fmt.Fprintf(w, "  files %s:\n    %s\n", removed, strings.Join(s.Files, "\n    "))
	}
}
