package admincmd

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// Resync job states as the admin API reports them.
const (
	resyncRunning  = "running"
	resyncCanceled = "canceled"
)

func newAdminReplicateResyncCmd(opts *cmdutil.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "resync",
		Short: "Re-send everything a site holds to one peer",
		Long: `A resync re-sends every bucket, its settings and every object version the site
behind ALIAS holds to the peer PEER (its site name in 'admin replicate info',
the alias used when it was added), in the background. The peer keeps what is
newer; what it already has is skipped. A resync survives a restart of the
site and continues where it stopped. Adding sites starts one to every new
peer.`,
		Example: `  twinlake admin replicate resync start site1 site2
  twinlake admin replicate resync status site1 site2
  twinlake admin replicate resync cancel site1 site2`,
		RunE: cmdutil.RequireSubcommand,
	}
	for _, a := range []struct {
		name, method, short string
	}{
		{"start", http.MethodPost, "Start a resync to a peer"},
		{"status", http.MethodGet, "Show the latest resync to a peer"},
		{"cancel", http.MethodDelete, "Stop a running resync to a peer (what it queued is still sent)"},
	} {
		var wait bool
		sub := &cobra.Command{
			Use:     a.name + " ALIAS PEER",
			Short:   a.short,
			Example: fmt.Sprintf("  twinlake admin replicate resync %s site1 site2\n  twinlake admin replicate resync %s site1 site2 --json", a.name, a.name),
			Args:    cobra.ExactArgs(2),
			RunE: func(cmd *cobra.Command, args []string) error {
				c, err := opts.AdminClient(args[0])
				if err != nil {
					return err
				}
				job, err := c.Resync(cmd.Context(), a.method, args[1])
				if err != nil {
					return replErr(fmt.Sprintf("admin replicate resync %s %s %s", a.name, args[0], args[1]), err)
				}
				action := a.name
				if wait {
					err := cmdutil.WaitJob(cmd, opts, "resync", func() (int64, int64, bool, error) {
						job, err = c.Resync(cmd.Context(), http.MethodGet, args[1])
						return job.Queued, job.Bytes, job.State != resyncRunning, err
					})
					if err != nil {
						return replErr(fmt.Sprintf("admin replicate resync status %s %s", args[0], args[1]), err)
					}
					action = "status"
				}
				return cmdutil.PrintResult(cmd.OutOrStdout(), opts, job, resyncHuman(action, args[0], args[1], job))
			},
		}
		if a.name == "start" {
			sub.Flags().BoolVar(&wait, "wait", false, "follow the resync until it has queued everything, showing its progress")
		}
		cmd.AddCommand(sub)
	}
	return cmd
}

// resyncHuman renders a resync job, headed by what the action did.
func resyncHuman(action, from, peer string, job adminclient.ResyncStatus) string {
	var b strings.Builder
	switch {
	case action == "start":
		fmt.Fprintf(&b, "Resync of %s to %s started.\n", from, peer)
	case action == "cancel" && job.State == resyncCanceled:
		fmt.Fprintf(&b, "Resync of %s to %s canceled.\n", from, peer)
	case action == "cancel":
		fmt.Fprintf(&b, "Resync of %s to %s was not running (%s): nothing to cancel.\n", from, peer, job.State)
	default:
		fmt.Fprintf(&b, "Resync of %s to %s:\n", from, peer)
	}
	rows := []struct{ name, value string }{
		{"ID", job.ID},
		{"State", job.State},
		{"Peer", peer + " (" + job.Target + ")"},
		{"Started", cmdutil.FmtTime(job.Started)},
		{"Finished", cmdutil.FmtTime(job.Finished)},
		{"Buckets", fmt.Sprint(job.Buckets)},
		{"Queued", fmt.Sprintf("%d objects, %s", job.Queued, cmdutil.FmtBytes(job.Bytes))},
	}
	if job.State == resyncRunning && job.Bucket != "" {
		rows = append(rows, struct{ name, value string }{"At bucket", job.Bucket})
	}
	if job.LastError != "" {
		rows = append(rows, struct{ name, value string }{"Last error", job.LastError})
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-11s %s\n", r.name+":", r.value)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
