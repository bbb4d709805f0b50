package tablecmd

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// AddTableCommands attaches the table command tree: warehouses, namespaces,
// tables, views and warehouse encryption, over the admin API (warehouses)
// and the Iceberg REST API (everything in a warehouse).
func AddTableCommands(root *cobra.Command, opts *cmdutil.Options) {
	table := &cobra.Command{
		Use:   "table",
		Short: "Manage Iceberg warehouses, namespaces, tables and views",
		Long: `Manage the built-in Iceberg REST catalog. A warehouse is a versioned bucket
flagged as warehouse; namespaces nest (write levels separated by '.').`,
		Example: `  twinlake table warehouse create site1 lake
  twinlake table namespace create site1 lake sales.eu --property owner=ops
  twinlake table create site1 lake sales.eu orders --schema 'id:long,name:string' --partition 'bucket(8,id)'
  twinlake table show site1 lake sales.eu orders`,
	}
	for _, newCmd := range []func(*cmdutil.Options) *cobra.Command{
		newTableWarehouseCmd, newTableNamespaceCmd, newTableCreateCmd, newTableListCmd, newTableShowCmd,
		newTableRenameCmd, newTableRemoveCmd, newTableUndropCmd, newTableViewCmd, newTableEncryptCmd, newTableReplicateCmd,
		newTableMaintenanceCmd,
	} {
		table.AddCommand(newCmd(opts))
	}
	root.AddCommand(table)
}

// parseNamespace splits a dotted namespace into levels.
func parseNamespace(s string) ([]string, error) {
	levels := strings.Split(s, ".")
	for _, l := range levels {
		if l == "" {
			return nil, fmt.Errorf("namespace %q: empty level", s)
		}
	}
	return levels, nil
}

// parseProps parses k=v pairs.
func parseProps(kvs []string) (map[string]string, error) {
	props := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("property %q: want key=value", kv)
		}
		props[k] = v
	}
	return props, nil
}

// fmtProps renders properties sorted, one k=v per line with an indent.
func fmtProps(props map[string]string) string {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %s=%s", k, props[k])
	}
	return b.String()
}

func newTableWarehouseCmd(opts *cmdutil.Options) *cobra.Command {
	wh := &cobra.Command{Use: "warehouse", Short: "Create, list and remove warehouses"}
	var ignore, upgrade, yes bool
	create := &cobra.Command{
		Use:   "create ALIAS NAME",
		Short: "Create a warehouse: a versioned bucket flagged as warehouse",
		Example: `  twinlake table warehouse create site1 lake
  twinlake table warehouse create --upgrade-existing site1 oldbucket`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.AdminClient(args[0])
			if err != nil {
				return err
			}
			w, err := c.CreateWarehouse(cmd.Context(), args[1], adminclient.WarehouseCreateRequest{IgnoreExisting: ignore, UpgradeExisting: upgrade})
			if err != nil {
				return fmt.Errorf("create warehouse %s: %w", args[1], err)
			}
			human := fmt.Sprintf("Warehouse `%s` created.", w.Name)
			if !w.Changed {
				human = fmt.Sprintf("Warehouse `%s` already exists.", w.Name)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, w, human)
		},
	}
	create.Flags().BoolVarP(&ignore, "ignore-existing", "p", false, "succeed if the warehouse already exists")
	create.Flags().BoolVar(&upgrade, "upgrade-existing", false, "turn an existing bucket into a warehouse (enables versioning)")
	list := &cobra.Command{
		Use: "list ALIAS", Short: "List warehouses", Example: "  twinlake table warehouse list site1", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.AdminClient(args[0])
			if err != nil {
				return err
			}
			ws, err := c.ListWarehouses(cmd.Context())
			if err != nil {
				return fmt.Errorf("list warehouses: %w", err)
			}
			var b strings.Builder
			for _, w := range ws {
				fmt.Fprintf(&b, "%s %s", cmdutil.FmtListTime(w.Created), w.Name)
				if w.Encryption != "" {
					fmt.Fprintf(&b, " (encryption %s)", w.Encryption)
				}
				b.WriteString("\n")
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, adminclient.WarehouseList{Warehouses: ws}, strings.TrimSuffix(b.String(), "\n"))
		},
	}
	remove := &cobra.Command{
		Use:     "remove ALIAS NAME",
		Short:   "Remove a warehouse's flag (it must hold no namespaces); the bucket and its objects stay",
		Example: `  twinlake table warehouse remove --yes site1 lake`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.Confirm(cmd, yes, fmt.Sprintf("Remove warehouse %s/%s?", args[0], args[1])); err != nil {
				return err
			}
			c, err := opts.AdminClient(args[0])
			if err != nil {
				return err
			}
			if err := c.RemoveWarehouse(cmd.Context(), args[1]); err != nil {
				return fmt.Errorf("remove warehouse %s: %w", args[1], err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]any{"status": "success", "warehouse": args[1], "removed": true},
				fmt.Sprintf("Warehouse `%s` removed.", args[1]))
		},
	}
	remove.Flags().BoolVarP(&yes, "yes", "y", false, "do not prompt")
	wh.AddCommand(create, list, remove, newTableWarehouseSetCmd(opts))
	return wh
}

func newTableUndropCmd(opts *cmdutil.Options) *cobra.Command {
	return newUndropCmd(opts, adminclient.KindTable)
}

func newTableEncryptCmd(opts *cmdutil.Options) *cobra.Command {
	enc := &cobra.Command{Use: "encrypt", Short: "Set, show or clear a warehouse's default encryption"}
	var alg string
	run := func(name string, algorithm *string) func(cmd *cobra.Command, args []string) error {
		return func(cmd *cobra.Command, args []string) error {
			c, err := opts.AdminClient(args[0])
			if err != nil {
				return err
			}
			var w adminclient.Warehouse
			if algorithm == nil {
				w, err = c.GetWarehouse(cmd.Context(), args[1])
			} else {
				w, err = c.SetWarehouseEncryption(cmd.Context(), args[1], *algorithm)
			}
			if err != nil {
				return fmt.Errorf("%s encryption of %s: %w", name, args[1], err)
			}
			human := fmt.Sprintf("Warehouse `%s` encryption: %s", w.Name, w.Encryption)
			if w.Encryption == "" {
				human = fmt.Sprintf("Warehouse `%s` has no default encryption.", w.Name)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]any{"warehouse": w.Name, "encryption": w.Encryption}, human)
		}
	}
	clear := ""
	set := &cobra.Command{Use: "set ALIAS WAREHOUSE", Short: "Encrypt new warehouse objects (SSE-S3, AES256)",
		Example: "  twinlake table encrypt set site1 lake", Args: cobra.ExactArgs(2), RunE: run("set", &alg)}
	set.Flags().StringVar(&alg, "algorithm", "AES256", "encryption algorithm (AES256)")
	enc.AddCommand(set,
		&cobra.Command{Use: "info ALIAS WAREHOUSE", Short: "Show a warehouse's default encryption",
			Example: "  twinlake table encrypt info site1 lake", Args: cobra.ExactArgs(2), RunE: run("show", nil)},
		&cobra.Command{Use: "clear ALIAS WAREHOUSE", Short: "Clear a warehouse's default encryption",
			Example: "  twinlake table encrypt clear site1 lake", Args: cobra.ExactArgs(2), RunE: run("clear", &clear)},
	)
	return enc
}
