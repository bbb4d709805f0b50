package admincmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newAdminHealCmd(opts *cmdutil.Options) *cobra.Command {
	var scan, dryRun, deep bool
	var rate int
	cmd := &cobra.Command{
		Use:   "heal ALIAS [--scan]",
		Short: "Show how a site's healing goes; with --scan, check its blob files against its metadata",
		Long: `Without --scan: how the site's healing goes, as it stands. The latest heal
scan's progress (one the leader's drive watcher started in the background, when
a node's drive answers again after missing writes, or one asked for with
--scan) and, on a multi-node site, every node's drive and whether it answers.

A heal scan lists every blob file of the site and reads every version and
uploaded part that references one. It removes the files nothing references
(and no write in progress owns), and reports the files a version or part
references that are missing: that data is lost on this site, and a resync
from a peer ('twinlake admin replicate resync start PEER ALIAS') brings it
back. The site serves meanwhile: the scan takes no lock and reads at most
--rate records a second. Crash recovery at startup does not need it (blob
intents cover every interrupted write); run it after restoring a disk or
when the metrics disagree with the data on disk.

On a site whose data is erasure-coded across several drives (server
--drives), the scan also checks every referenced blob's shards and rebuilds
those missing or of the wrong length (with --deep: also those failing their
checksums) from the sound ones: run it after a drive comes back or is
replaced. A blob with fewer sound shards than the layout needs is reported
missing. A drive that does not answer (its node paused or cut off) is left
out: the blobs with a shard there are counted as unanswered, not checked.

The command exits with an error when data is missing, and when blobs were
left unchecked on a drive that did not answer: only an exit status of 0
means the whole site was checked.`,
		Example: `  twinlake admin heal site1
  twinlake admin heal site1 --scan --dry-run
  twinlake admin heal site1 --scan --rate 50000 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !scan {
				for _, f := range []string{"dry-run", "deep", "rate"} {
					if cmd.Flags().Changed(f) {
						return fmt.Errorf("--%s applies to a heal scan: pass --scan", f)
					}
				}
				return healStatus(cmd, opts, args[0])
			}
			if rate < adminclient.HealMinRate || rate > adminclient.HealMaxRate {
				return fmt.Errorf("--rate %d: want %d to %d records per second", rate, adminclient.HealMinRate, adminclient.HealMaxRate)
			}
			c, err := opts.AdminClient(args[0])
			if err != nil {
				return err
			}
			rep, err := c.HealScan(cmd.Context(), adminclient.HealOptions{DryRun: dryRun, Rate: rate, Deep: deep})
			if err != nil {
				return fmt.Errorf("admin heal %s: %w", args[0], err)
			}
			// A scan that found data missing, or could not check
			// everything, exits with an error (its report still printed,
			// with --json as one document whose status says so).
			res := healResult{Status: "success", HealReport: rep}
			failed := healFailure(args[0], rep)
			if failed != nil {
				res.Status, res.Error = "error", &cmdutil.JSONErrorBody{Message: failed.Error()}
			}
			if err := cmdutil.PrintResult(cmd.OutOrStdout(), opts, res, healHuman(args[0], rep)); err != nil {
				return err
			}
			if failed != nil && opts.JSON {
				return cmdutil.Printed(failed)
			}
			return failed
		},
	}
	cmd.Flags().BoolVar(&scan, "scan", false, "scan the blob files against the metadata (the only kind of heal)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "report what would be repaired, change nothing")
	cmd.Flags().BoolVar(&deep, "deep", false, "on a site whose data is erasure-coded across drives, read every shard through its checksums")
	cmd.Flags().IntVar(&rate, "rate", adminclient.HealDefaultRate, "read at most this many records a second")
	return cmd
}

type healResult struct {
	Status string                 `json:"status"`
	Error  *cmdutil.JSONErrorBody `json:"error,omitempty"`
	adminclient.HealReport
}

// healFailure is why a scan's report is not a clean bill of health: data
// missing, or blobs left unchecked on drives that did not answer (a script's
// "heal --scan && go on" must not take that for clean); nil when neither.
func healFailure(alias string, r adminclient.HealReport) error {
	switch {
	case r.MissingCount > 0:
		return fmt.Errorf("%d blob files that versions or parts reference are missing on %s", r.MissingCount, alias)
	case r.Unanswered > 0:
		return fmt.Errorf("%d blobs were not checked on %s's drives that did not answer: run the scan again once every drive answers (the drive watcher heals them by then)", r.Unanswered, alias)
	}
	return nil
}

func healHuman(alias string, r adminclient.HealReport) string {
	var b strings.Builder
	head := "Heal scan of " + alias
	if r.DryRun {
		head += " (dry run: nothing changed)"
	}
	fmt.Fprintf(&b, "%s in %s:\n", head, r.Elapsed)
	fmt.Fprintf(&b, "  Blob files:  %d (%d versions and %d uploaded parts read)\n", r.BlobFiles, r.Versions, r.Parts)
	fmt.Fprintf(&b, "  Orphans:     %d (%s)", r.Orphans, cmdutil.FmtBytes(r.OrphanBytes))
	switch {
	case r.DryRun && r.Orphans > 0:
		b.WriteString(", would be removed\n")
	case r.Orphans > 0:
		fmt.Fprintf(&b, ", %d removed\n", r.Removed)
	default:
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "  In flight:   %d (owned by writes in progress, left alone)\n", r.InFlight)
	if r.Drives > 1 {
		verb := "rebuilt"
		if r.DryRun {
			verb = "rebuilt (none on a dry run)"
		}
		fmt.Fprintf(&b, "  Drives:      %d, layout %s\n", r.Drives, r.Layout)
		fmt.Fprintf(&b, "  Degraded:    %d blobs, %d shards %s\n", r.Degraded, r.ShardsRebuilt, verb)
		if r.Unanswered > 0 {
			fmt.Fprintf(&b, "  Unanswered:  %d blobs with a shard on a drive that did not answer, not checked there (healed once every drive answers)\n", r.Unanswered)
		}
	}
	fmt.Fprintf(&b, "  Missing:     %d", r.MissingCount)
	for _, m := range r.Missing {
		what := m.Bucket + "/" + m.Key + " version " + m.VersionID
		if m.UploadID != "" {
			what = "upload " + m.UploadID
		}
		fmt.Fprintf(&b, "\n    %s (blob %s)", what, m.BlobID)
	}
	return b.String()
}

// healStatusResult is admin heal without --scan, as JSON.
type healStatusResult struct {
	Status string                `json:"status"`
	Heal   *adminclient.HealInfo `json:"heal"` // null: no scan since the server started
	// Drives lists a multi-node site's nodes' drives ("ok" or why not).
	Drives []healDrive `json:"drives,omitempty"`
}

type healDrive struct {
	Node  string `json:"node"`
	Drive string `json:"drive"`
}

// healStatus reports how the site's healing goes: the latest heal scan
// and, on a multi-node site, which nodes' drives answer.
func healStatus(cmd *cobra.Command, opts *cmdutil.Options, alias string) error {
	c, err := opts.AdminClient(alias)
	if err != nil {
		return err
	}
	info, err := c.ServerInfo(cmd.Context())
	if err != nil {
		return fmt.Errorf("admin heal %s: %w", alias, err)
	}
	res := healStatusResult{Status: "success", Heal: info.Heal}
	for _, n := range info.Nodes {
		res.Drives = append(res.Drives, healDrive{Node: n.Address, Drive: n.Drive})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Healing of %s:\n", alias)
	if info.Heal == nil {
		b.WriteString("  Latest scan: none since the site started\n")
	} else {
		fmt.Fprintf(&b, "  Latest scan: %s\n", healLine(*info.Heal))
	}
	if len(res.Drives) > 0 {
		var silent []string
		for _, d := range res.Drives {
			if d.Drive != "ok" {
				silent = append(silent, fmt.Sprintf("%s (%s)", d.Node, d.Drive))
			}
		}
		if len(silent) == 0 {
			fmt.Fprintf(&b, "  Drives:      all %d answer\n", len(res.Drives))
		} else {
			fmt.Fprintf(&b, "  Drives:      %d of %d do not answer: %s; what they miss is healed once they answer again\n",
				len(silent), len(res.Drives), strings.Join(silent, ", "))
		}
	}
	fmt.Fprintf(&b, "Run 'twinlake admin heal %s --scan' to check every blob now.", alias)
	return cmdutil.PrintResult(cmd.OutOrStdout(), opts, res, b.String())
}

// healLine sums up a heal scan's progress (admin info, admin heal).
func healLine(h adminclient.HealInfo) string {
	state := "done"
	if h.Running {
		state = fmt.Sprintf("running, about %d%%", h.Percent)
	}
	return fmt.Sprintf("%s (started %s): %d versions and %d parts read, %d degraded, %d shards rebuilt, %d missing",
		state, h.Started.UTC().Format(time.RFC3339), h.Versions, h.Parts, h.Degraded, h.ShardsRebuilt, h.MissingCount)
}
