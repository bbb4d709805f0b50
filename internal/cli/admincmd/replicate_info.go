package admincmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newAdminReplicateInfoCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "info ALIAS",
		Short: "Show the sites joined by site replication",
		Long: `Show the sites joined by site replication (name, deployment ID, endpoint) and
the service account the sites use between them.`,
		Example: `  twinlake admin replicate info site1
  twinlake admin replicate info site1 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.AdminClient(args[0])
			if err != nil {
				return err
			}
			info, err := c.ReplicateInfo(cmd.Context())
			if err != nil {
				return replErr("admin replicate info "+args[0], err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, info, infoHuman(info))
		},
	}
}

// infoHuman renders the site replication configuration.
func infoHuman(info adminclient.ReplicationInfo) string {
	if !info.Enabled {
		return "SiteReplication is not enabled"
	}
	var b strings.Builder
	b.WriteString("SiteReplication enabled for:\n\n")
	writeSites(&b, info.Sites)
	if info.ServiceAccount != "" {
		fmt.Fprintf(&b, "\nService account: %s\n", info.ServiceAccount)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
