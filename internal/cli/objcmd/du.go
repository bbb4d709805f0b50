package objcmd

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newDUCmd(opts *cmdutil.Options) *cobra.Command {
	var (
		depth    int
		versions bool
		rewind   string
	)
	cmd := &cobra.Command{
		Use:   "du ALIAS/BUCKET[/PREFIX]",
		Short: "Summarize the space used under a bucket or prefix",
		Long: `Add up the size and count of the objects under a bucket or prefix. --depth N
also prints every folder down to N levels below it (deepest first, as mc
does). --versions counts every noncurrent version too, delete markers aside.
--rewind counts the objects as they were at a time.`,
		Example: `  twinlake du site1/photos
  twinlake du --depth 1 site1/photos/2024
  twinlake du --rewind 30d site1/photos
  twinlake du --versions --json site1/photos`,
		Args: cobra.ExactArgs(1),
		RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, args []string) error {
			if depth < 0 {
				return fmt.Errorf("--depth %d: want 0 or more", depth)
			}
			t, err := cmdutil.RequireBucket(args[0])
			if err != nil {
				return err
			}
			root, err := openWalkRoot(opts, args[0])
			if err != nil {
				return err
			}
			if root.end.remote == nil {
				return fmt.Errorf("du: %q is not ALIAS/BUCKET[/PREFIX]", cmdutil.FmtTarget(t))
			}
			at, err := rewindFlag(rewind)
			if err != nil {
				return err
			}
			if !at.IsZero() && versions {
				return errors.New("--rewind counts the objects as they were at one time: it cannot be combined with --versions")
			}
			return runDU(cmd, opts, root, depth, versions, at)
		}),
	}
	cmd.Flags().IntVarP(&depth, "depth", "d", 0, "also print folders down to this many levels")
	cmd.Flags().BoolVar(&versions, "versions", false, "count every version, not only the latest")
	cmd.Flags().StringVar(&rewind, "rewind", "", rewindHelp)
	return cmd
}

// duResult is one folder's usage as printed.
type duResult struct {
	Status   string `json:"status"`
	Prefix   string `json:"prefix"`
	Size     int64  `json:"size"`
	Objects  int64  `json:"objects"`
	Versions bool   `json:"isVersions,omitempty"`
}

func runDU(cmd *cobra.Command, opts *cmdutil.Options, root walkRoot, depth int, versions bool, at time.Time) error {
	// Usage by folder (relative, ending in '/'); "" is the root.
	usage := map[string]*duResult{"": {}}
	count := func(rel string, size int64) {
		parts := strings.Split(rel, "/")
		for d := 0; d <= min(depth, len(parts)-1); d++ {
			folder := ""
			if d > 0 {
				folder = strings.Join(parts[:d], "/") + "/"
			}
			u := usage[folder]
			if u == nil {
				u = &duResult{}
				usage[folder] = u
			}
			u.Size += size
			u.Objects++
		}
	}
	var err error
	if versions {
		err = root.walk(cmd.Context(), true, func(e walkEntry) error {
			if !e.DeleteMarker {
				count(e.Rel, e.Size)
			}
			return nil
		})
	} else {
		err = root.walkAt(cmd.Context(), at, func(e walkEntry) error {
			count(e.Rel, e.Size)
			return nil
		})
	}
	if err != nil {
		return err
	}
	// Deepest first: a folder after everything inside it.
	folders := make([]string, 0, len(usage))
	for f := range usage {
		folders = append(folders, f)
	}
	for _, f := range duOrder(folders) {
		u := usage[f]
		u.Status, u.Prefix, u.Versions = "success", root.join(f), versions
		if f == "" {
			u.Prefix = root.String()
		}
		human := fmt.Sprintf("%s\t%d object%s\t%s", cmdutil.FmtBytes(u.Size), u.Objects, plural(u.Objects), u.Prefix)
		if err := cmdutil.PrintResult(cmd.OutOrStdout(), opts, u, human); err != nil {
			return err
		}
	}
	return nil
}

// duOrder sorts folders so that each comes after every folder inside it,
// siblings in name order.
func duOrder(folders []string) []string {
	out := slices.Clone(folders)
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(a+"\xff", b+"\xff") })
	return out
}

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}
