package admincmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
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
				{"Disk", diskLine(info)},
			} {
				fmt.Fprintf(&b, "%-11s %s\n", row.name+":", row.value)
			}
			if h := info.Heal; h != nil {
				fmt.Fprintf(&b, "Heal:       %s\n", healLine(*h))
			}
			if e := info.Etcd; e != nil {
				fmt.Fprintf(&b, "Etcd:       %s", etcdLine(*e))
				for _, a := range e.Alarms {
					fmt.Fprintf(&b, "\n  alarm: %s", a)
				}
				b.WriteString("\n")
			}
			if len(info.Nodes) > 0 {
				fmt.Fprintf(&b, "Nodes:      %d\n", len(info.Nodes))
				for _, n := range info.Nodes {
					var notes []string
					if n.Voter {
						notes = append(notes, "etcd voter")
					}
					if n.EtcdLeader {
						notes = append(notes, "raft leader")
					}
					if n.HeldRequests > 0 {
						notes = append(notes, fmt.Sprintf("requests held for a leader: %d", n.HeldRequests))
					}
					if n.LeadersDeposed > 0 {
						notes = append(notes, fmt.Sprintf("leaders deposed: %d", n.LeadersDeposed))
					}
					if n.ReadsHere > 0 {
						notes = append(notes, fmt.Sprintf("reads served from the drives here: %d", n.ReadsHere))
					}
					if n.WritesHere > 0 {
						notes = append(notes, fmt.Sprintf("writes stored to the drives from here: %d", n.WritesHere))
					}
					role := ""
					if len(notes) > 0 {
						role = "  " + strings.Join(notes, ", ")
					}
					fmt.Fprintf(&b, "  %-22s %-8s drive %s%s\n", n.Address, n.State, n.Drive, role)
				}
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, info, strings.TrimSuffix(b.String(), "\n"))
		},
	}
}

// etcdLine sums up a multi-node site's etcd storage for admin info: how
// much of its quota the metadata uses.
func etcdLine(e adminclient.EtcdInfo) string {
	if len(e.Unreachable) == e.Endpoints {
		return fmt.Sprintf("no endpoint answers (%s)", strings.Join(e.Unreachable, ", "))
	}
	line := fmt.Sprintf("%s in use of a %s quota", cmdutil.FmtBytes(e.DBSizeInUse), cmdutil.FmtBytes(e.Quota))
	if e.Quota > 0 {
		line += fmt.Sprintf(" (%d%%)", e.DBSizeInUse*100/e.Quota)
	}
	line += fmt.Sprintf(", file %s", cmdutil.FmtBytes(e.DBSize))
	if len(e.Unreachable) > 0 {
		line += fmt.Sprintf("; %d of %d endpoints do not answer (%s)", len(e.Unreachable), e.Endpoints, strings.Join(e.Unreachable, ", "))
	}
	return line
}

// diskLine tells the data directory's filesystem: its free space and size,
// the reserve the site keeps, and whether it is down to it.
func diskLine(info adminclient.ServerInfo) string {
	line := fmt.Sprintf("%s free of %s", cmdutil.FmtBytes(int64(info.DiskFree)), cmdutil.FmtBytes(int64(info.DiskTotal)))
	switch {
	case info.DiskReserve == 0:
	case info.DiskFree <= info.DiskReserve:
		line += fmt.Sprintf(", down to the %s kept free: new data is refused", cmdutil.FmtBytes(int64(info.DiskReserve)))
	default:
		line += fmt.Sprintf(" (%s kept free)", cmdutil.FmtBytes(int64(info.DiskReserve)))
	}
	return line
}
