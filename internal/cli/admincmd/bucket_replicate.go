package admincmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// AddReplicateCommands attaches `twinlake replicate`: one bucket's
// replication backlog and retry queue.
func AddReplicateCommands(root *cobra.Command, opts *cmdutil.Options) {
	cmd := &cobra.Command{
		Use:   "replicate",
		Short: "Show a bucket's replication backlog and retry queue",
		Example: `  twinlake replicate status site1/photos
  twinlake replicate backlog site1/photos --limit 20`,
		RunE: cmdutil.RequireSubcommand,
	}
	cmd.AddCommand(newReplicateStatusCmd(opts), newReplicateBacklogCmd(opts))
	root.AddCommand(cmd)
}

// replicateBucket parses ALIAS/BUCKET and rejects an object key.
func replicateBucket(arg string) (cmdutil.Target, error) {
	t, err := cmdutil.RequireBucket(arg)
	if err != nil {
		return t, err
	}
	if t.Key != "" {
		return t, fmt.Errorf("%q: want ALIAS/BUCKET, not an object", arg)
	}
	return t, nil
}
