package admincmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newReplicateBacklogCmd(opts *cmdutil.Options) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "backlog ALIAS/BUCKET",
		Short: "List the bucket's retry queue: sends that failed and wait for a retry",
		Long: `List the bucket's retry queue (MRF), oldest due first: per entry the peer, the
operation, the object key and version, how often it was retried, when it last
failed, when it is tried next and the error. Listing does not consume the
queue. With --json, one JSON object per entry and line.`,
		Example: `  twinlake replicate backlog site1/photos
  twinlake replicate backlog site1/photos --limit 20 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 0 {
				return errors.New("--limit must be 0 (the server's default) or more")
			}
			t, err := replicateBucket(args[0])
			if err != nil {
				return err
			}
			c, err := opts.AdminClient(t.Alias)
			if err != nil {
				return err
			}
			entries, err := c.ReplicationBacklog(cmd.Context(), t.Bucket, limit)
			if err != nil {
				return replErr("replicate backlog "+cmdutil.FmtTarget(t), err)
			}
			w := cmd.OutOrStdout()
			if opts.JSON {
				enc := json.NewEncoder(w)
				for _, en := range entries {
					if err := enc.Encode(en); err != nil {
						return err
					}
				}
				return nil
			}
			_, err = fmt.Fprintln(w, backlogHuman(entries, time.Now()))
			return err
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "list at most this many entries (0: the server's default, 1000)")
	return cmd
}

// backlogHuman renders retry queue entries as a table; now makes the next
// retry relative.
func backlogHuman(entries []adminclient.BacklogEntry, now time.Time) string {
	if len(entries) == 0 {
		return "No entries"
	}
	var b strings.Builder
	tw := cmdutil.NewTable(&b)
	fmt.Fprintln(tw, "Peer\tOp\tKey\tVersion\tRetries\tFailed at\tNext retry\tError")
	for _, en := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", en.Target, en.Op, orDash(en.Key), orDash(en.VersionID),
			en.RetryCount, cmdutil.FmtTime(en.FailedAt), fmtNextRetry(en.NextRetry, now), orDash(en.Error))
	}
	tw.Flush()
	if len(entries) == 1 {
		b.WriteString("1 entry")
	} else {
		fmt.Fprintf(&b, "%d entries", len(entries))
	}
	return b.String()
}

// fmtNextRetry renders when an entry is tried next, relative to now.
func fmtNextRetry(at, now time.Time) string {
	if d := at.Sub(now); d > time.Second {
		return "in " + cmdutil.FmtDuration(d.Round(time.Second))
	}
	return "due now"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
