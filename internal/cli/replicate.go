package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// addReplicateCommands attaches `twinlake replicate`: one bucket's
// replication backlog and retry queue.
func addReplicateCommands(root *cobra.Command, opts *options) {
	cmd := &cobra.Command{
		Use:   "replicate",
		Short: "Show a bucket's replication backlog and retry queue",
		Example: `  twinlake replicate status site1/photos
  twinlake replicate backlog site1/photos --limit 20`,
		RunE: requireSubcommand,
	}
	cmd.AddCommand(newReplicateStatusCmd(opts), newReplicateBacklogCmd(opts))
	root.AddCommand(cmd)
}

// replicateBucket parses ALIAS/BUCKET and rejects an object key.
func replicateBucket(arg string) (target, error) {
	t, err := requireBucket(arg)
	if err != nil {
		return t, err
	}
	if t.Key != "" {
		return t, fmt.Errorf("%q: want ALIAS/BUCKET, not an object", arg)
	}
	return t, nil
}
