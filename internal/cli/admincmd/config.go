package admincmd

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
	"github.com/twinlake/twinlake/internal/config"
)

func newAdminConfigCmd(opts *cmdutil.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Get or set a site's settings (applied without restart)",
		Long: `Get or set a site's settings. An environment variable
TWINLAKE_<SUBSYS>_<KEY> on the server overrides a setting (except tables
replica_catalog); get shows such values as they apply.

` + configKeysHelp(),
		Example: `  twinlake admin config get site1 tables
  twinlake admin config set site1 tables replica_catalog=on
  twinlake admin config set site1 replication max_retries=5 retry_base_delay=500ms`,
	}
	cmd.AddCommand(newAdminConfigGetCmd(opts), newAdminConfigSetCmd(opts), newAdminConfigResetCmd(opts),
		newAdminConfigExportCmd(opts), newAdminConfigImportCmd(opts))
	return cmd
}

func newAdminConfigGetCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "get ALIAS SUBSYS",
		Short: "Print every setting of a subsystem as key=value lines",
		Example: `  twinlake admin config get site1 tables
  twinlake admin config get site1 tables | grep replica_catalog=
  twinlake admin config get site1 replication --json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.AdminClient(args[0])
			if err != nil {
				return err
			}
			cfg, err := c.GetConfig(cmd.Context(), args[1])
			if err != nil {
				return fmt.Errorf("admin config get %s %s: %w", args[0], args[1], err)
			}
			lines := make([]string, len(cfg.Keys))
			for i, kv := range cfg.Keys {
				lines[i] = kv.Key + "=" + kv.Value
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, cfg, strings.Join(lines, "\n"))
		},
	}
}

func newAdminConfigSetCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "set ALIAS SUBSYS KEY=VALUE [KEY=VALUE ...]",
		Short: "Change settings of a subsystem, all or none",
		Long: `Change settings of a subsystem. Every key is checked first and the change is
refused as a whole if any is wrong. KEY= (an empty value) resets a key to its
default.`,
		Example: `  twinlake admin config set site1 tables replica_catalog=on
  twinlake admin config set site1 tables replica_catalog_consistency=eventual replica_catalog_scan_interval=30s
  twinlake admin config set site1 replication workers=`,
		Args: cobra.MinimumNArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			aliasName, subsys := args[0], args[1]
			kv, err := config.ParseKV(args[2:])
			if err != nil {
				return err
			}
			c, err := opts.AdminClient(aliasName)
			if err != nil {
				return err
			}
			return applyConfig(cmd, opts, c, aliasName, subsys, kv, "Applied")
		},
	}
}

// applyConfig sets kv on subsys (all or none) and prints what applied,
// with a note for each key an environment variable keeps overriding; done
// names the change in the printed line ("Applied", "Reset").
func applyConfig(cmd *cobra.Command, opts *cmdutil.Options, c *adminclient.Client, aliasName, subsys string, kv map[string]string, done string) error {
	cfg, err := c.SetConfig(cmd.Context(), subsys, kv)
	if err != nil {
		return fmt.Errorf("admin config %s %s %s: %w", cmd.Name(), aliasName, subsys, err)
	}
	applied, overridden := describeApplied(cfg, kv)
	for _, note := range overridden {
		fmt.Fprintln(cmd.ErrOrStderr(), note)
	}
	return cmdutil.PrintResult(cmd.OutOrStdout(), opts, cfg, fmt.Sprintf("%s %s %s.", done, subsys, strings.Join(applied, " ")))
}

// configKeysHelp lists every subsystem and key with its default, from the
// key table.
func configKeysHelp() string {
	var b strings.Builder
	b.WriteString("Settings (default):")
	subsys := ""
	for _, k := range config.Keys() {
		if k.Subsys != subsys {
			subsys = k.Subsys
			fmt.Fprintf(&b, "\n  %s", subsys)
		}
		fmt.Fprintf(&b, "\n    %s (%s): %s", k.Name, k.Default, k.Help)
	}
	return b.String()
}

// describeApplied renders the keys that were set with their values now in
// effect, and a note for each key an environment variable keeps overriding.
func describeApplied(cfg adminclient.SubsysConfig, set map[string]string) (applied, notes []string) {
	for _, kv := range cfg.Keys {
		if _, ok := set[kv.Key]; !ok {
			continue
		}
		applied = append(applied, kv.Key+"="+kv.Value)
		if kv.Source == string(config.SourceEnv) {
			notes = append(notes, fmt.Sprintf("note: %s stays %s: %s overrides it on the server",
				kv.Key, kv.Value, config.EnvName(cfg.Subsys, kv.Key)))
		}
	}
	sort.Strings(applied)
	return applied, notes
}
