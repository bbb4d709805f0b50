package admincmd

import (
	"bufio"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/cli/cmdutil"
	"github.com/twinlake/twinlake/internal/config"
)

// configSubsystems lists the subsystems of the key table, in its order.
func configSubsystems() []string {
	var out []string
	for _, k := range config.Keys() {
		if !slices.Contains(out, k.Subsys) {
			out = append(out, k.Subsys)
		}
	}
	return out
}

func newAdminConfigResetCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "reset ALIAS SUBSYS [KEY ...]",
		Short: "Reset settings of a subsystem (every key, or the keys named) to their defaults",
		Long: `Reset settings to their defaults: the keys named, or every key of the
subsystem. As with set, the change is checked first and refused as a whole if
any part is wrong; a key an environment variable overrides on the server stays
overridden.`,
		Example: `  twinlake admin config reset site1 replication
  twinlake admin config reset site1 replication workers max_retries`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			aliasName, subsys := args[0], args[1]
			kv := map[string]string{}
			for _, k := range args[2:] {
				kv[strings.ToLower(k)] = ""
			}
			if len(kv) == 0 {
				for _, k := range config.Keys() {
					if k.Subsys == subsys {
						kv[k.Name] = ""
					}
				}
			}
			if len(kv) == 0 {
				return fmt.Errorf("admin config reset: unknown subsystem %q (want one of %s)", subsys, strings.Join(configSubsystems(), ", "))
			}
			c, err := opts.AdminClient(aliasName)
			if err != nil {
				return err
			}
			return applyConfig(cmd, opts, c, aliasName, subsys, kv, "Reset")
		},
	}
}

// configExport is what export prints with --json: each subsystem's stored
// settings.
type configExport struct {
	Subsystems map[string]map[string]string `json:"subsystems"`
}

func newAdminConfigExportCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "export ALIAS",
		Short: "Print the settings an admin set, one line per subsystem, for import",
		Long: `Print the settings stored on the site (those an admin set, not the defaults),
one line per subsystem: SUBSYS KEY=VALUE .... A key an environment variable
overrides on the server is left out, with a comment line saying so. import
reads the output back.`,
		Example: `  twinlake admin config export site1 > site1.conf
  twinlake admin config export site1 | twinlake admin config import site2`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.AdminClient(args[0])
			if err != nil {
				return err
			}
			out := configExport{Subsystems: map[string]map[string]string{}}
			var lines []string
			for _, subsys := range configSubsystems() {
				cfg, err := c.GetConfig(cmd.Context(), subsys)
				if err != nil {
					return fmt.Errorf("admin config export %s: %w", args[0], err)
				}
				line := []string{subsys}
				stored := map[string]string{}
				for _, kv := range cfg.Keys {
					switch config.Source(kv.Source) {
					case config.SourceStored:
						stored[kv.Key] = kv.Value
						line = append(line, kv.Key+"="+kv.Value)
					case config.SourceEnv:
						lines = append(lines, fmt.Sprintf("# %s %s: set by %s on the server, not exported", subsys, kv.Key, config.EnvName(subsys, kv.Key)))
					}
				}
				out.Subsystems[subsys] = stored
				lines = append(lines, strings.Join(line, " "))
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, out, strings.Join(lines, "\n"))
		},
	}
}

func newAdminConfigImportCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "import ALIAS < FILE",
		Short: "Apply settings read from standard input, as export prints them",
		Long: `Read lines of SUBSYS KEY=VALUE ... from standard input (as export prints
them; blank lines and lines starting with '#' are skipped) and apply them. The
whole input is read and its names checked first; then each subsystem's line is
applied all or none, as set does. Keys the input does not name keep their
values: import merges, it does not reset (reset does).`,
		Example: `  twinlake admin config import site2 < site1.conf
  twinlake admin config export site1 | twinlake admin config import site2`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			changes, order, err := readConfigLines(cmd)
			if err != nil {
				return err
			}
			if len(order) == 0 {
				return errors.New("admin config import: standard input holds no settings")
			}
			c, err := opts.AdminClient(args[0])
			if err != nil {
				return err
			}
			for _, subsys := range order {
				if err := applyConfig(cmd, opts, c, args[0], subsys, changes[subsys], "Applied"); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// readConfigLines parses import's input: every subsystem and key must be
// in the key table; a subsystem may appear once.
func readConfigLines(cmd *cobra.Command) (map[string]map[string]string, []string, error) {
	known := map[string]bool{}
	for _, k := range config.Keys() {
		known[k.Subsys+" "+k.Name] = true
	}
	changes := map[string]map[string]string{}
	var order []string
	sc := bufio.NewScanner(cmd.InOrStdin())
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		subsys := fields[0]
		if !slices.Contains(configSubsystems(), subsys) {
			return nil, nil, fmt.Errorf("admin config import: line %d: unknown subsystem %q", n, subsys)
		}
		if _, dup := changes[subsys]; dup {
			return nil, nil, fmt.Errorf("admin config import: line %d: subsystem %s given twice", n, subsys)
		}
		kv, err := config.ParseKV(fields[1:])
		if err != nil {
			return nil, nil, fmt.Errorf("admin config import: line %d: %w", n, err)
		}
		for k := range kv {
			if !known[subsys+" "+k] {
				return nil, nil, fmt.Errorf("admin config import: line %d: %s has no key %q", n, subsys, k)
			}
		}
		if len(kv) > 0 {
			changes[subsys] = kv
			order = append(order, subsys)
		}
	}
	return changes, order, sc.Err()
}
