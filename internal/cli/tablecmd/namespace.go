package tablecmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newTableNamespaceCmd(opts *cmdutil.Options) *cobra.Command {
	ns := &cobra.Command{Use: "namespace", Short: "Create, list, show, update and remove namespaces"}
	var props, set, unset []string
	var yes bool
	create := &cobra.Command{
		Use: "create ALIAS WAREHOUSE NAMESPACE", Short: "Create a namespace (levels separated by '.')",
		Example: "  twinlake table namespace create site1 lake sales.eu --property owner=ops", Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, levels, err := nsArgs(opts, args)
			if err != nil {
				return err
			}
			p, err := parseProps(props)
			if err != nil {
				return err
			}
			out, err := c.CreateNamespace(cmd.Context(), levels, p)
			if err != nil {
				return fmt.Errorf("create namespace %s: %w", args[2], err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, out, fmt.Sprintf("Namespace `%s` created.", args[2]))
		},
	}
	create.Flags().StringArrayVar(&props, "property", nil, "namespace property key=value (repeatable)")
	list := &cobra.Command{
		Use: "list ALIAS WAREHOUSE [PARENT]", Short: "List namespaces (children of PARENT, or the top level)",
		Example: "  twinlake table namespace list site1 lake sales", Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.CatalogClient(args[0], args[1])
			if err != nil {
				return err
			}
			var parent []string
			if len(args) == 3 {
				if parent, err = parseNamespace(args[2]); err != nil {
					return err
				}
			}
			nss, err := c.ListNamespaces(cmd.Context(), parent)
			if err != nil {
				return fmt.Errorf("list namespaces: %w", err)
			}
			lines := make([]string, len(nss))
			for i, n := range nss {
				lines[i] = strings.Join(n, ".")
			}
			if nss == nil {
				nss = [][]string{}
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]any{"namespaces": nss}, strings.Join(lines, "\n"))
		},
	}
	info := &cobra.Command{
		Use: "info ALIAS WAREHOUSE NAMESPACE", Short: "Show a namespace and its properties",
		Example: "  twinlake table namespace info site1 lake sales.eu", Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, levels, err := nsArgs(opts, args)
			if err != nil {
				return err
			}
			out, err := c.LoadNamespace(cmd.Context(), levels)
			if err != nil {
				return fmt.Errorf("namespace %s: %w", args[2], err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, out, "Namespace: "+args[2]+"\nProperties:"+fmtProps(out.Properties))
		},
	}
	update := &cobra.Command{
		Use: "update ALIAS WAREHOUSE NAMESPACE", Short: "Set and remove namespace properties",
		Example: "  twinlake table namespace update site1 lake sales --set owner=bi --unset temp", Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, levels, err := nsArgs(opts, args)
			if err != nil {
				return err
			}
			p, err := parseProps(set)
			if err != nil {
				return err
			}
			if len(p) == 0 && len(unset) == 0 {
				return fmt.Errorf("nothing to change: pass --set key=value or --unset key")
			}
			sum, err := c.UpdateNamespace(cmd.Context(), levels, unset, p)
			if err != nil {
				return fmt.Errorf("update namespace %s: %w", args[2], err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, sum, fmt.Sprintf("Namespace `%s` updated: %d set, %d removed, %d missing.",
				args[2], len(sum.Updated), len(sum.Removed), len(sum.Missing)))
		},
	}
	update.Flags().StringArrayVar(&set, "set", nil, "property key=value to set (repeatable)")
	update.Flags().StringArrayVar(&unset, "unset", nil, "property key to remove (repeatable)")
	remove := &cobra.Command{
		Use: "remove ALIAS WAREHOUSE NAMESPACE", Short: "Remove an empty namespace",
		Example: "  twinlake table namespace remove --yes site1 lake sales.eu", Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, levels, err := nsArgs(opts, args)
			if err != nil {
				return err
			}
			if err := cmdutil.Confirm(cmd, yes, fmt.Sprintf("Remove namespace %s in %s/%s?", args[2], args[0], args[1])); err != nil {
				return err
			}
			if err := c.DropNamespace(cmd.Context(), levels); err != nil {
				return fmt.Errorf("remove namespace %s: %w", args[2], err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]any{"status": "success", "namespace": levels},
				fmt.Sprintf("Namespace `%s` removed.", args[2]))
		},
	}
	remove.Flags().BoolVarP(&yes, "yes", "y", false, "do not prompt")
	ns.AddCommand(create, list, info, update, remove)
	return ns
}
