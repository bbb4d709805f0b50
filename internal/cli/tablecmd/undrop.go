package tablecmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// newTableWarehouseSetCmd is `table warehouse set ALIAS WAREHOUSE k=v...`.
func newTableWarehouseSetCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "set ALIAS WAREHOUSE SETTING=VALUE...",
		Short: "Change warehouse settings (soft_delete, maintenance policy)",
		Long: `Change warehouse settings. soft_delete keeps dropped tables and views, with
their files, for the retention (1s to 3650d, units s, m, h, d) so that
'table undrop' can bring them back; off (the default) forgets them at once.

The table maintenance policy (see 'table maintenance'): maintenance=on|off
(scheduled maintenance of the warehouse's tables, default off), expire_older_than
(default 5d), retain_last (1 to 100000, default 1) and orphans_older_than (default
3d, or off). A table's properties override them.`,
		Example: `  twinlake table warehouse set site1 lake soft_delete=7d
  twinlake table warehouse set site1 lake soft_delete=off
  twinlake table warehouse set site1 lake maintenance=on expire_older_than=7d retain_last=3 orphans_older_than=3d`,
		Args: cobra.MinimumNArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			settings, err := parseProps(args[2:])
			if err != nil {
				return err
			}
			c, err := opts.AdminClient(args[0])
			if err != nil {
				return err
			}
			w, err := c.SetWarehouseSettings(cmd.Context(), args[1], settings)
			if err != nil {
				return fmt.Errorf("set warehouse %s: %w", args[1], err)
			}
			human := fmt.Sprintf("Warehouse `%s`: soft_delete=%s", w.Name, w.SoftDelete)
			if w.Maintenance != "" {
				human += " " + w.Maintenance
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, w, human)
		},
	}
}

// listDeleted prints the soft-deleted tables or views of ALIAS WAREHOUSE
// NAMESPACE (args).
func listDeleted(cmd *cobra.Command, opts *cmdutil.Options, kind string, args []string) error {
	levels, err := parseNamespace(args[2])
	if err != nil {
		return err
	}
	c, err := opts.AdminClient(args[0])
	if err != nil {
		return err
	}
	es, err := c.ListDeleted(cmd.Context(), args[1], kind, levels)
	if err != nil {
		return fmt.Errorf("list deleted %ss of %s: %w", kind, args[2], err)
	}
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "%s  dropped %s  expires %s  %s\n", fmtIdent(adminclient.CatalogIdent{Namespace: e.Namespace, Name: e.Name}),
			cmdutil.FmtListTime(e.Dropped), cmdutil.FmtListTime(e.Expires), e.UUID)
	}
	return cmdutil.PrintResult(cmd.OutOrStdout(), opts, adminclient.DeletedList{Entries: es}, strings.TrimSuffix(b.String(), "\n"))
}

// newUndropCmd is `table undrop` (kind table) and `table view undrop`.
func newUndropCmd(opts *cmdutil.Options, kind string) *cobra.Command {
	var as, uuid string
	upper := strings.ToUpper(kind)
	prefix := "table"
	if kind == adminclient.KindView {
		prefix = "table view"
	}
	cmd := &cobra.Command{
		Use:   "undrop ALIAS WAREHOUSE NAMESPACE " + upper,
		Short: "Bring back a soft-deleted " + kind + " with its whole history",
		Example: fmt.Sprintf(`  twinlake %[1]s list --deleted site1 lake sales
  twinlake %[1]s undrop site1 lake sales orders
  twinlake %[1]s undrop site1 lake sales orders --as orders_restored`, prefix),
		Args: cobra.ExactArgs(4),
		RunE: func(cmd *cobra.Command, args []string) error {
			levels, err := parseNamespace(args[2])
			if err != nil {
				return err
			}
			c, err := opts.AdminClient(args[0])
			if err != nil {
				return err
			}
			res, err := c.Undrop(cmd.Context(), args[1], adminclient.UndropRequest{Kind: kind, Namespace: levels, Name: args[3], As: as, UUID: uuid})
			id := adminclient.CatalogIdent{Namespace: levels, Name: args[3]}
			if err != nil {
				return fmt.Errorf("undrop %s %s: %w", kind, fmtIdent(id), err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, res, fmt.Sprintf("%s `%s` restored as `%s` at %s.", strings.ToUpper(kind[:1])+kind[1:],
				fmtIdent(id), fmtIdent(adminclient.CatalogIdent{Namespace: res.Namespace, Name: res.Name}), res.MetadataLocation))
		},
	}
	cmd.Flags().StringVar(&as, "as", "", "restore under this name (same namespace)")
	cmd.Flags().StringVar(&uuid, "uuid", "", "restore this dropped incarnation (see list --deleted); default the newest")
	return cmd
}
