package admincmd

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newAdminReplicateStatusCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "status ALIAS",
		Short: "Show whether buckets are in sync and how each peer link is doing",
		Long: `Show, as seen from the site behind ALIAS:
  - per bucket and site, whether the site holds the bucket with the same
    settings (versioning, tags, policy, encryption): ✔ yes, ✘ no, ? not
    compared because the site is unreachable;
  - per peer: the link (online or offline, latency), the backlog of changes
    waiting to be sent, the retry queue (sends that failed and wait for their
    next attempt) and the lag (age of the oldest change still waiting).`,
		Example: `  twinlake admin replicate status site1
  twinlake admin replicate status site1 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.AdminClient(args[0])
			if err != nil {
				return err
			}
			st, err := c.ReplicateStatus(cmd.Context())
			if err != nil {
				return replErr("admin replicate status "+args[0], err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, st, statusHuman(st))
		},
	}
}

// statusHuman renders the site replication status: buckets, then peers.
func statusHuman(st adminclient.ReplicationStatus) string {
	if !st.Enabled {
		return "SiteReplication is not enabled"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Site replication status seen from %s:\n\n", st.Site)
	writeBucketSync(&b, st)
	writeIAMSync(&b, st.IAM)
	if len(st.IAMUnsupported) > 0 {
		fmt.Fprintf(&b, "IAM: not replicable to %s (older build: takes no IAM records; changes wait for its upgrade)\n",
			strings.Join(st.IAMUnsupported, ", "))
	}
	b.WriteString("\n")
	writeTargets(&b, st.Targets)
	if len(st.Unreachable) > 0 {
		fmt.Fprintf(&b, "\nUnreachable: %s\n", strings.Join(st.Unreachable, ", "))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// writeIAMSync renders whether every reachable site holds the same IAM
// records (users, groups, policies, attachments, access keys).
func writeIAMSync(b *strings.Builder, iam map[string]bool) {
	if len(iam) == 0 {
		return
	}
	var differ []string
	for site, same := range iam {
		if !same {
			differ = append(differ, site)
		}
	}
	sort.Strings(differ)
	if len(differ) == 0 {
		fmt.Fprintf(b, "IAM: in sync on %d/%d sites\n", len(iam), len(iam))
		return
	}
	fmt.Fprintf(b, "IAM: %d/%d sites in sync; differing: %s\n", len(iam)-len(differ), len(iam), strings.Join(differ, ", "))
}

// writeBucketSync renders the bucket × site table and its summary.
func writeBucketSync(b *strings.Builder, st adminclient.ReplicationStatus) {
	if len(st.Buckets) == 0 {
		b.WriteString("Buckets: none yet\n")
		return
	}
	names := make([]string, len(st.Sites))
	for i, s := range st.Sites {
		names[i] = s.Name
	}
	tw := cmdutil.NewTable(b)
	fmt.Fprintf(tw, "Bucket\t%s\n", strings.Join(names, "\t"))
	inSync, unknown := 0, false
	for _, bs := range st.Buckets {
		cells := make([]string, len(names))
		all := true
		for i, n := range names {
			ok, compared := bs.Sites[n]
			switch {
			case !compared:
				cells[i], all, unknown = "?", false, true
			case ok:
				cells[i] = "✔"
			default:
				cells[i], all = "✘", false
			}
		}
		if all {
			inSync++
		}
		fmt.Fprintf(tw, "%s\t%s\n", bs.Bucket, strings.Join(cells, "\t"))
	}
	tw.Flush()
	fmt.Fprintf(b, "%d/%d buckets in sync (bucket and settings on every site)\n", inSync, len(st.Buckets))
	if unknown {
		b.WriteString("? not compared: the site is unreachable\n")
	}
}
