package tablecmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newTableReplicateFailoverCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "failover ALIAS",
		Short: "Promote the replica to primary (returns at once; completes asynchronously)",
		Long: `Promote the Tables replica behind ALIAS when the primary is lost. The scanner
runs a final scan that applies any replicated state still pending, then turns
replica_catalog off: the site accepts client writes to warehouses and refuses
any further inbound warehouse replication, so an old primary that comes back
cannot push stale writes into it. The command returns once promotion is
requested; status shows "Promotion: in progress" until it completes and then
"Scanner: disabled".`,
		Example: `  twinlake table replicate failover dr
  twinlake table replicate status dr`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			alias := args[0]
			c, err := opts.AdminClient(alias)
			if err != nil {
				return err
			}
			st, err := c.TablesFailover(cmd.Context())
			if err != nil {
				return tablesReplErr("table replicate failover "+alias, alias, err)
			}
			human := fmt.Sprintf("Promotion of %s requested: a final scan applies what has arrived, then the site accepts writes.\n"+
				"Promotion completes asynchronously; monitor with twinlake table replicate status %s", alias, alias)
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, st, human)
		},
	}
}
