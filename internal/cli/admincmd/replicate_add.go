package admincmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newAdminReplicateAddCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "add ALIAS1 ALIAS2 [ALIAS3 ...]",
		Short: "Join sites with site replication",
		Long: `Join the sites behind the aliases with site replication. Each site is named by
its alias and reached at the alias URL with the alias credentials, which must
be an administrator's there. The request goes to the first site, which sets
the configuration up on the others.

Only the first site may hold buckets: its buckets, their settings and every
object version are then copied to the others, and versioning is enabled on
every bucket.`,
		Example: `  twinlake admin replicate add site1 site2
  twinlake admin replicate add site1 site2 site3 --json`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			sites := make([]adminclient.ReplicationSite, len(args))
			for i, name := range args {
				a, err := opts.LookupAlias(name)
				if err != nil {
					return err
				}
				sites[i] = adminclient.ReplicationSite{Name: name, Endpoint: a.URL, AccessKey: a.AccessKey, SecretKey: a.SecretKey}
			}
			c, err := opts.AdminClient(args[0])
			if err != nil {
				return err
			}
			info, err := c.ReplicateAdd(cmd.Context(), sites)
			if err != nil {
				return replErr("admin replicate add "+strings.Join(args, " "), err)
			}
			var b strings.Builder
			b.WriteString("Requested sites were configured for replication successfully.\n\n")
			writeSites(&b, info.Sites)
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, info, strings.TrimSuffix(b.String(), "\n"))
		},
	}
}
