package admincmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newAdminInfoCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "info ALIAS",
		Short: "Show a site's identity, uptime and usage",
		Example: `  twinlake admin info site1
  twinlake admin info site1 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.AdminClient(args[0])
			if err != nil {
				return err
			}
			info, err := c.ServerInfo(cmd.Context())
			if err != nil {
				return fmt.Errorf("admin info %s: %w", args[0], err)
			}
			var b strings.Builder
			for _, row := range []struct{ name, value string }{
				{"Site", info.SiteName},
				{"Deployment", info.DeploymentID},
				{"Address", info.Address},
				{"Version", info.Version},
				{"Uptime", (time.Duration(info.UptimeSeconds) * time.Second).String()},
				{"Buckets", fmt.Sprint(info.Buckets)},
				{"Objects", fmt.Sprint(info.Objects)},
				{"Usage", cmdutil.FmtBytes(info.TotalBytes)},
				{"Disk", fmt.Sprintf("%s free of %s", cmdutil.FmtBytes(int64(info.DiskFree)), cmdutil.FmtBytes(int64(info.DiskTotal)))},
			} {
				fmt.Fprintf(&b, "%-11s %s\n", row.name+":", row.value)
			}
			if h := info.Heal; h != nil {
				state := "done"
				if h.Running {
					state = fmt.Sprintf("running, about %d%%", h.Percent)
				}
				fmt.Fprintf(&b, "Heal:       %s (started %s): %d versions and %d parts read, %d degraded, %d shards rebuilt, %d missing\n",
					state, h.Started.UTC().Format(time.RFC3339), h.Versions, h.Parts, h.Degraded, h.ShardsRebuilt, h.MissingCount)
			}
			if len(info.Nodes) > 0 {
				fmt.Fprintf(&b, "Nodes:      %d\n", len(info.Nodes))
				for _, n := range info.Nodes {
					fmt.Fprintf(&b, "  %-22s %-8s drive %s\n", n.Address, n.State, n.Drive)
				}
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, info, strings.TrimSuffix(b.String(), "\n"))
		},
	}
}
