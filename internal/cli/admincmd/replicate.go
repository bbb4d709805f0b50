package admincmd

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// newAdminReplicateCmd is `twinlake admin replicate`: joining sites with
// site replication and watching it.
func newAdminReplicateCmd(opts *cmdutil.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "replicate",
		Short: "Join sites with site replication, watch it, resync or remove sites",
		Long: `Site replication keeps every bucket, its settings and every object version the
same on every site joined, in both directions. Sites are named by the alias
used when they were added.`,
		Example: `  twinlake admin replicate add site1 site2 site3
  twinlake admin replicate info site1
  twinlake admin replicate status site1
  twinlake admin replicate resync start site1 site2
  twinlake admin replicate rm site1 site3
  twinlake admin replicate rm site1 --all --force`,
		RunE: cmdutil.RequireSubcommand,
	}
	for _, newCmd := range []func(*cmdutil.Options) *cobra.Command{
		newAdminReplicateAddCmd,
		newAdminReplicateInfoCmd,
		newAdminReplicateStatusCmd,
		newAdminReplicateRmCmd,
		newAdminReplicateResyncCmd,
	} {
		cmd.AddCommand(newCmd(opts))
	}
	return cmd
}

// replicationHints tell the operator what to do about a site replication
// refusal, by admin error code.
var replicationHints = map[string]string{
	adminclient.CodeSiteHasData:     "only the first alias may hold buckets: empty the other sites, or name the site holding the data first",
	adminclient.CodeNotConfigured:   "set it up with 'twinlake admin replicate add'",
	adminclient.CodeResyncRunning:   "watch it with 'resync status' or stop it with 'resync cancel'",
	adminclient.CodeNoResync:        "start one with 'twinlake admin replicate resync start'",
	adminclient.CodePeerUnreachable: "check that the peer is up and reachable from the site",
	adminclient.CodeNotImplemented:  "this server runs without site replication",
}

// replicationError is a failed site replication call, tagged with the
// command that made it and, for a known refusal, a hint. It renders as one
// line even when the server joined several errors.
type replicationError struct {
	what string
	err  error
}

func (e *replicationError) Error() string {
	msg := e.what + ": " + strings.Join(strings.Fields(e.err.Error()), " ")
	var ae *adminclient.Error
	if errors.As(e.err, &ae) {
		if hint := replicationHints[ae.Code]; hint != "" {
			msg += ": " + hint
		}
	}
	return msg
}

func (e *replicationError) Unwrap() error { return e.err }

func replErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return &replicationError{what: what, err: err}
}

// fmtCount renders a backlog as "N (SIZE)".
func fmtCount(n, bytes int64) string {
	return fmt.Sprintf("%d (%s)", n, cmdutil.FmtBytes(bytes))
}

// fmtLink renders a peer's link state and latency.
func fmtLink(t adminclient.ReplicationTarget) (state, latency string) {
	if !t.Online {
		return "offline", "-"
	}
	return "online", cmdutil.FmtDuration(t.Latency)
}

// writeSites renders the configured sites as a table.
func writeSites(b *strings.Builder, sites []adminclient.ReplicationPeer) {
	tw := cmdutil.NewTable(b)
	fmt.Fprintln(tw, "Site\tDeployment ID\tEndpoint")
	for _, s := range sites {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, s.DeploymentID, s.Endpoint)
	}
	tw.Flush()
}

// writeTargets renders one row per peer: link, waiting work, retry queue
// and lag; then, for a peer whose retry queue holds entries, why its last
// send failed.
func writeTargets(b *strings.Builder, targets []adminclient.ReplicationTarget) {
	if len(targets) == 0 {
		b.WriteString("Peers: none\n")
		return
	}
	tw := cmdutil.NewTable(b)
	fmt.Fprintln(tw, "Peer\tLink\tLatency\tPending\tRetry queue\tLag")
	for _, t := range targets {
		state, latency := fmtLink(t)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, state, latency,
			fmtCount(t.Pending, t.PendingBytes), fmtCount(t.Retrying, t.RetryingBytes), cmdutil.FmtDuration(t.Lag))
	}
	tw.Flush()
	for _, t := range targets {
		if t.LastError != "" {
			fmt.Fprintf(b, "Last error to %s (%s): %s\n", t.Name, t.LastErrorTime.UTC().Format(time.DateTime+" UTC"), t.LastError)
		}
	}
}
