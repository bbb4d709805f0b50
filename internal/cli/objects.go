package cli

import (
	"bufio"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// addObjectCommands attaches the object verbs: mb, rb, ls, cp, cat, rm, stat,
// version, pipe, head, ready, ping, tag, share, du, tree, find, diff, mirror.
func addObjectCommands(root *cobra.Command, opts *options) {
	for _, newCmd := range []func(*options) *cobra.Command{
		newMBCmd,
		newRBCmd,
		newLSCmd,
		newCPCmd,
		newCatCmd,
		newRMCmd,
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
	} {
		root.AddCommand(newCmd(opts))
	}
}

// errObjAborted is returned when the operator declines a destructive
// command's prompt (or there is no terminal to answer it and no --yes).
var errObjAborted = errors.New("aborted: nothing removed (pass --yes to skip the prompt)")

// objConfirm asks question on the command's output and reads the answer from
// its input; anything but y/yes aborts. yes skips the prompt.
func objConfirm(cmd *cobra.Command, yes bool, question string) error {
	if yes {
		return nil
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%s [y/N]: ", question)
	line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
	if err != nil && line == "" {
		return errObjAborted
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return errObjAborted
}

// fmtBytes renders a byte count the way mc does: IEC units, one decimal.
func fmtBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f%ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// fmtListTime renders a listing timestamp as mc does: [UTC, to the second].
func fmtListTime(t time.Time) string {
	return "[" + t.UTC().Format("2006-01-02 15:04:05 MST") + "]"
}
