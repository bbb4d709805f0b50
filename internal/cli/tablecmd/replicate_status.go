package tablecmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// Scanner states and entry kinds as the admin API reports them.
const (
	scannerDisabled = "disabled"
	entryKindView   = "view"
)

func newTableReplicateStatusCmd(opts *cmdutil.Options) *cobra.Command {
	var offset, limit int
	cmd := &cobra.Command{
		Use:   "status ALIAS",
		Short: "Show the replica catalog scanner and every table and view it tracks",
		Long: `Show the site's replica catalog scanner, then every table and view grouped by
warehouse and namespace. Run it against the replica: each site reports only
its own state.

Scanner: disabled (replica_catalog=off: a primary, or a promoted replica),
waiting (on, no cycle completed yet, e.g. after a leader change), active (on,
strict consistency), tracking (on, eventual consistency), rebuilding (a
catalog resync window is open). Promotion: in progress follows a failover
until its final scan ends. Rebuild states: Pending, InProgress, FailureRetry,
Failed, Completed.

Per table or view: Status is OK, "N versions behind" (the latest version's
files are still arriving), Held (a multi-table transaction member waiting for
the others; Verified reads -1) or Deleted. Verified is the version the local
catalog serves, Latest the newest version seen, Missing Files the files the
latest version references that have not arrived.`,
		Example: `  twinlake table replicate status dr
  twinlake table replicate status dr --limit 100 --offset 200
  twinlake table replicate status dr --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if offset < 0 || limit < 0 {
				return fmt.Errorf("--offset and --limit must not be negative")
			}
			c, err := opts.AdminClient(args[0])
			if err != nil {
				return err
			}
			st, err := c.TablesReplicationStatus(cmd.Context(), offset, limit)
			if err != nil {
				return tablesReplErr("table replicate status "+args[0], args[0], err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, st, tablesStatusHuman(st))
		},
	}
	cmd.Flags().IntVar(&offset, "offset", 0, "skip this many tables and views")
	cmd.Flags().IntVar(&limit, "limit", 0, "show at most this many tables and views (0: all)")
	return cmd
}

// tablesStatusHuman renders the scanner, then the entries grouped by
// warehouse and namespace (the server sends them in that order).
func tablesStatusHuman(st adminclient.TablesReplicationStatus) string {
	var b strings.Builder
	writeScanner(&b, st)
	b.WriteString("\n")
	if len(st.Entries) == 0 {
		switch {
		case st.Total > 0:
			fmt.Fprintf(&b, "No tables or views from offset %d (%d in all).\n", st.Offset, st.Total)
		case st.State == scannerDisabled:
			b.WriteString("No tables or views tracked: the scanner runs only on the replica (tables replica_catalog=on).\n")
		default:
			b.WriteString("No tables or views tracked yet.\n")
		}
		return strings.TrimSuffix(b.String(), "\n")
	}
	writeEntries(&b, st.Entries)
	if from, to := st.Offset+1, st.Offset+len(st.Entries); from > 1 || to < st.Total {
		fmt.Fprintf(&b, "\nShowing %d-%d of %d.", from, to, st.Total)
		if to < st.Total {
			fmt.Fprintf(&b, " Next: --offset %d", to)
		}
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// writeScanner renders the scanner block: state, then what applies of
// consistency, cycles, promotion, resync window and rebuild.
func writeScanner(b *strings.Builder, st adminclient.TablesReplicationStatus) {
	fmt.Fprintf(b, "Scanner: %s\n", st.State)
	if st.State == scannerDisabled && !st.Window && st.Rebuild.State == "" && !st.Promoting {
		return
	}
	rows := [][2]string{{"Consistency", st.Consistency}}
	if !st.Leader {
		rows = append(rows, [2]string{"Leader", "no (the scanner runs on the site's leader)"})
	}
	rows = append(rows, [2]string{"Cycles", fmt.Sprint(st.Cycles)})
	if !st.LastCycle.IsZero() {
		rows = append(rows, [2]string{"Last cycle", fmt.Sprintf("%s, took %s", cmdutil.FmtTime(st.LastCycle), cmdutil.FmtDuration(st.CycleTime))})
	}
	if st.Promoting {
		rows = append(rows, [2]string{"Promotion", "in progress"})
	}
	if st.Window {
		rows = append(rows, [2]string{"Resync window", "open"})
	}
	writeRows(b, "  ", rows)
	if r := st.Rebuild; r.State != "" {
		b.WriteString("  Rebuild:\n")
		writeRows(b, "    ", rebuildRows(r))
	}
}

// rebuildRows are the fields of a catalog rebuild worth showing.
func rebuildRows(r adminclient.TablesRebuildStatus) [][2]string {
	rows := [][2]string{{"State", r.State}, {"Attempts", fmt.Sprint(r.Attempts)}}
	if r.LastError != "" {
		rows = append(rows, [2]string{"Last error", r.LastError})
	}
	if r.BackupAt != "" {
		rows = append(rows, [2]string{"Backup", r.BackupAt})
	}
	if r.Discarded > 0 {
		rows = append(rows, [2]string{"Discarded", fmt.Sprintf("%d local-only record versions", r.Discarded)})
	}
	if !r.Started.IsZero() {
		rows = append(rows, [2]string{"Started", cmdutil.FmtTime(r.Started)})
	}
	if !r.Finished.IsZero() {
		rows = append(rows, [2]string{"Finished", cmdutil.FmtTime(r.Finished)})
	}
	return rows
}

// writeRows renders name: value rows with the values aligned.
func writeRows(b *strings.Builder, indent string, rows [][2]string) {
	width := 0
	for _, r := range rows {
		width = max(width, len(r[0])+1)
	}
	for _, r := range rows {
		fmt.Fprintf(b, "%s%-*s %s\n", indent, width, r[0]+":", r[1])
	}
}

// writeEntries renders the tables and views, a header at each new warehouse
// and namespace.
func writeEntries(b *strings.Builder, entries []adminclient.TablesEntryStatus) {
	wh, ns := "", ""
	for i, e := range entries {
		ens := strings.Join(e.Namespace, ".")
		if i == 0 || e.Warehouse != wh {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(b, "Warehouse: %s\n", e.Warehouse)
			wh, ns = e.Warehouse, "\x00"
		}
		if ens != ns {
			fmt.Fprintf(b, "  Namespace: %s\n", ens)
			ns = ens
		}
		kind := "Table"
		if e.Kind == entryKindView {
			kind = "View"
		}
		fmt.Fprintf(b, "    %s: %s\n", kind, e.Name)
		writeRows(b, "      ", entryRows(e))
		if len(e.MissingFiles) > 0 {
			fmt.Fprintf(b, "      Missing Files: %d\n", len(e.MissingFiles))
			for _, f := range e.MissingFiles {
				fmt.Fprintf(b, "        %s\n", f)
			}
		}
	}
}

// entryRows are a table's or view's status fields.
func entryRows(e adminclient.TablesEntryStatus) [][2]string {
	status := e.Status
	if e.Behind > 0 && !strings.Contains(status, "behind") {
		status = strings.TrimSpace(fmt.Sprintf("%s (%d versions behind)", status, e.Behind))
	}
	verified := fmt.Sprint(e.Verified)
	if e.Verified < 0 && e.Transaction != "" {
		verified += " (held for multi-table transaction " + e.Transaction + ")"
	}
	rows := [][2]string{{"Status", status}, {"Verified", verified}, {"Latest", fmt.Sprint(e.Latest)}}
	if e.Transaction != "" && e.Verified >= 0 {
		rows = append(rows, [2]string{"Transaction", e.Transaction})
	}
	return rows
}
