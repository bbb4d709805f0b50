package objcmd

import (
	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// AddObjectCommands attaches the object verbs: mb, rb, ls, cp, mv, cat, rm, undo, stat,
// version, pipe, head, ready, ping, tag, share, du, tree, find, diff, mirror, watch,
// retention, legalhold, cors, ilm, quota, encrypt, od.
func AddObjectCommands(root *cobra.Command, opts *cmdutil.Options) {
	for _, newCmd := range []func(*cmdutil.Options) *cobra.Command{
		newMBCmd,
		newRBCmd,
		newLSCmd,
		newCPCmd,
		newMVCmd,
		newCatCmd,
		newRMCmd,
		newUndoCmd,
		newStatCmd,
		newVersionCmd,
		newPipeCmd,
		newHeadCmd,
		newReadyCmd,
		newPingCmd,
		newTagCmd,
		newShareCmd,
		newDUCmd,
		newTreeCmd,
		newFindCmd,
		newDiffCmd,
		newMirrorCmd,
		newWatchCmd,
		newRetentionCmd,
		newLegalHoldCmd,
		newCORSCmd,
		newILMCmd,
		newQuotaCmd,
		newEncryptCmd,
		newODCmd,
	} {
		root.AddCommand(newCmd(opts))
	}
}
