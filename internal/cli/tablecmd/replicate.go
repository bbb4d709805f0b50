package tablecmd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// newTableReplicateCmd is `twinlake table replicate`: the Tables replica
// (its catalog scanner), failover, the catalog resync, catalog reset and the
// catalog identity backfill.
func newTableReplicateCmd(opts *cmdutil.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "replicate",
		Short: "Watch the Tables replica, fail over, resync or reset its catalog, backfill identity",
		Long: `Tables disaster recovery. The replica site (tables replica_catalog=on) runs the
catalog scanner, which rebuilds its Iceberg catalog from the warehouse data
site replication delivers. Each site reports only its own state: run status
against the replica.`,
		Example: `  twinlake table replicate status dr
  twinlake table replicate failover dr
  twinlake table replicate backfill start primary
  twinlake table replicate resync open oldprimary
  twinlake table replicate resync rebuild oldprimary --yes
  twinlake table replicate catalog reset dr`,
		RunE: cmdutil.RequireSubcommand,
	}
	for _, newCmd := range []func(*cmdutil.Options) *cobra.Command{
		newTableReplicateStatusCmd,
		newTableReplicateFailoverCmd,
		newTableReplicateBackfillCmd,
		newTableReplicateResyncCmd,
		newTableReplicateCatalogCmd,
	} {
		cmd.AddCommand(newCmd(opts))
	}
	return cmd
}

// tablesReplHints tell the operator what to do about a Tables replication
// refusal, by admin error code. ALIAS stands for the site the command was
// sent to.
var tablesReplHints = map[string]string{
	adminclient.CodeNotReplica:       "ALIAS has tables replica_catalog=off (check with 'twinlake admin config get ALIAS tables')",
	adminclient.CodeRoleConflict:     "resync open demotes a former primary after a failover; to rebuild a replica's catalog use 'twinlake table replicate catalog reset ALIAS'",
	adminclient.CodeNoResyncWindow:   "a rebuild needs an open window ('twinlake table replicate resync open ALIAS') and a site replication peer to rebuild from",
	adminclient.CodePeerResyncActive: "wait until 'twinlake admin replicate resync status NEW_PRIMARY ALIAS' reports completed, then run the rebuild again",
	adminclient.CodeBackfillRunning:  "only one backfill runs at a time: follow it with 'twinlake table replicate backfill status ALIAS' or stop it with 'backfill cancel'",
	adminclient.CodeNoBackfill:       "start one with 'twinlake table replicate backfill start ALIAS'",
	adminclient.CodeNotConfirmed:     "pass --yes to confirm",
	adminclient.CodeNotImplemented:   "this server runs without Tables replication",
}

// tablesReplError is a failed Tables replication call, tagged with the
// command that made it and, for a known refusal, a hint. It renders as one
// line.
type tablesReplError struct {
	what, alias string
	err         error
}

func (e *tablesReplError) Error() string {
	msg := e.what + ": " + strings.Join(strings.Fields(e.err.Error()), " ")
	if code := adminErrorCode(e.err); code != "" {
		if hint := tablesReplHints[code]; hint != "" {
			msg += ": " + strings.ReplaceAll(hint, "ALIAS", e.alias)
		}
	}
	return msg
}

func (e *tablesReplError) Unwrap() error { return e.err }

// tablesReplErr wraps err (nil stays nil) for the command what run against
// alias.
func tablesReplErr(what, alias string, err error) error {
	if err == nil {
		return nil
	}
	return &tablesReplError{what: what, alias: alias, err: err}
}

// adminErrorCode returns the admin API error code of err, "" if it carries
// none.
func adminErrorCode(err error) string {
	var ae *adminclient.Error
	if errors.As(err, &ae) {
		return ae.Code
	}
	return ""
}

// errTablesAborted is returned when the operator answers a destructive
// command's prompt with anything but yes.
var ErrTablesAborted = errors.New("aborted: nothing changed")

// tablesConfirm asks question on stderr and reads the answer from the
// command's input; only y/yes goes ahead. yes skips the prompt. With no one
// to answer (stdin is a file or pipe rather than a terminal, or it is empty)
// it refuses rather than guess: automation must say --yes.
func tablesConfirm(cmd *cobra.Command, yes bool, what, question string) error {
	if yes {
		return nil
	}
	in := cmd.InOrStdin()
	if !interactive(in) {
		return fmt.Errorf("%s: stdin is not a terminal, so the prompt cannot be answered: pass --yes to confirm", what)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%s [y/N] ", question)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && strings.TrimSpace(line) == "" {
		fmt.Fprintln(cmd.ErrOrStderr())
		return fmt.Errorf("%s: no answer on stdin: pass --yes to confirm", what)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return fmt.Errorf("%s: %w", what, ErrTablesAborted)
}

// interactive reports whether in can answer a prompt: a terminal, or a
// reader that is not a file at all (a test feeding answers).
func interactive(in io.Reader) bool {
	f, ok := in.(*os.File)
	if !ok {
		return true
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
