package admincmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newReplicateStatusCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "status ALIAS/BUCKET",
		Short: "Show, per peer, the bucket's changes waiting to be sent",
		Long: `Show, per peer, the bucket's changes waiting to be sent (pending, with their
size), those in the retry queue after a failed send (retrying), the link state
and the lag (age of the oldest change waiting for that peer, any bucket).`,
		Example: `  twinlake replicate status site1/photos
  twinlake replicate status site1/photos --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := replicateBucket(args[0])
			if err != nil {
				return err
			}
			c, err := opts.AdminClient(t.Alias)
			if err != nil {
				return err
			}
			st, err := c.BucketReplicationStatus(cmd.Context(), t.Bucket)
			if err != nil {
				return replErr("replicate status "+cmdutil.FmtTarget(t), err)
			}
			var b strings.Builder
			if len(st.Targets) == 0 {
				fmt.Fprintf(&b, "%s is not replicated: SiteReplication is not enabled", cmdutil.FmtTarget(t))
			} else {
				fmt.Fprintf(&b, "Replication of %s:\n\n", cmdutil.FmtTarget(t))
				writeTargets(&b, st.Targets)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, st, strings.TrimSuffix(b.String(), "\n"))
		},
	}
}
