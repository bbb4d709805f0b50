package cli

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// newAdminReplicateCmd is `twinlake admin replicate`: joining sites with
// site replication and watching it.
func newAdminReplicateCmd(opts *options) *cobra.Command {
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
		RunE: requireSubcommand,
	}
	for _, newCmd := range []func(*options) *cobra.Command{
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

// requireSubcommand runs a command group: bare, it prints the help; with
// an argument, that argument named no subcommand, which is an error (cobra
// would print the help and succeed).
func requireSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	return fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())
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

// newTable starts an aligned table on b; flush it when done.
func newTable(b *strings.Builder) *tabwriter.Writer {
	return tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
}

// fmtCount renders a backlog as "N (SIZE)".
func fmtCount(n, bytes int64) string {
	return fmt.Sprintf("%d (%s)", n, fmtBytes(bytes))
}

// fmtDuration rounds d to what an operator reads: about three digits.
func fmtDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(10 * time.Microsecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

// fmtLink renders a peer's link state and latency.
func fmtLink(t adminclient.ReplicationTarget) (state, latency string) {
	if !t.Online {
		return "offline", "-"
	}
	return "online", fmtDuration(t.Latency)
}

// fmtTime renders a timestamp in UTC to the second, "-" when unset.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05 MST")
}

// writeSites renders the configured sites as a table.
func writeSites(b *strings.Builder, sites []adminclient.ReplicationPeer) {
	tw := newTable(b)
	fmt.Fprintln(tw, "Site\tDeployment ID\tEndpoint")
	for _, s := range sites {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, s.DeploymentID, s.Endpoint)
	}
	tw.Flush()
}

// writeTargets renders one row per peer: link, waiting work, retry queue
// and lag.
func writeTargets(b *strings.Builder, targets []adminclient.ReplicationTarget) {
	if len(targets) == 0 {
		b.WriteString("Peers: none\n")
		return
	}
	tw := newTable(b)
	fmt.Fprintln(tw, "Peer\tLink\tLatency\tPending\tRetry queue\tLag")
	for _, t := range targets {
		state, latency := fmtLink(t)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, state, latency,
			fmtCount(t.Pending, t.PendingBytes), fmtCount(t.Retrying, t.RetryingBytes), fmtDuration(t.Lag))
	}
	tw.Flush()
}
