package admincmd

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// AddSupportCommands adds `twinlake support`: diagnostics for a site.
func AddSupportCommands(root *cobra.Command, opts *cmdutil.Options) {
	support := &cobra.Command{
		Use:   "support",
		Short: "Diagnose a site: runtime profiles",
		Example: `  twinlake support profile site1 --type cpu --duration 30s
  go tool pprof -top profile-cpu.pprof`,
	}
	support.AddCommand(newSupportProfileCmd(opts))
	root.AddCommand(support)
}

func newSupportProfileCmd(opts *cmdutil.Options) *cobra.Command {
	var typ, output string
	var duration time.Duration
	cmd := &cobra.Command{
		Use:   "profile ALIAS [--type TYPE] [--duration D] [--output FILE]",
		Short: "Take a runtime profile of a site's server, for go tool pprof",
		Long: `Take a runtime profile of the server ALIAS reaches (on a multi-node site, the
leader, which serves every request) and write it to FILE in pprof's format.
Types: ` + strings.Join(adminclient.ProfileTypes, ", ") + `. cpu, block and mutex sample for
--duration (` + adminclient.ProfileMinDuration.String() + ` to ` + adminclient.ProfileMaxDuration.String() + `); heap and goroutine are a snapshot.
Needs admin:Profiling.`,
		Example: `  twinlake support profile site1
  twinlake support profile site1 --type heap --output heap.pprof
  twinlake support profile site1 --type cpu --duration 30s && go tool pprof -top profile-cpu.pprof`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(adminclient.ProfileTypes, typ) {
				return fmt.Errorf("--type %q: want one of %s", typ, strings.Join(adminclient.ProfileTypes, ", "))
			}
			if duration < adminclient.ProfileMinDuration || duration > adminclient.ProfileMaxDuration {
				return fmt.Errorf("--duration %v: want %v to %v", duration, adminclient.ProfileMinDuration, adminclient.ProfileMaxDuration)
			}
			if output == "" {
				output = "profile-" + typ + ".pprof"
			}
			c, err := opts.AdminClient(args[0])
			if err != nil {
				return err
			}
			prof, err := c.Profile(cmd.Context(), typ, duration)
			if err != nil {
				return fmt.Errorf("support profile %s: %w", args[0], err)
			}
			if err := os.WriteFile(output, prof, 0o600); err != nil {
				return err
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, profileResult{Status: "success", Type: typ, File: output, Bytes: len(prof)},
				fmt.Sprintf("%s profile of %s written to %s (%d bytes)", typ, args[0], output, len(prof)))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&typ, "type", adminclient.ProfileCPU, "profile type: "+strings.Join(adminclient.ProfileTypes, ", "))
	fl.DurationVar(&duration, "duration", adminclient.ProfileDefaultDuration, "how long cpu, block and mutex profiles sample")
	fl.StringVarP(&output, "output", "o", "", "file to write (default profile-TYPE.pprof)")
	return cmd
}

type profileResult struct {
	Status string `json:"status"`
	Type   string `json:"type"`
	File   string `json:"file"`
	Bytes  int    `json:"bytes"`
}
