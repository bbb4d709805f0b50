package objcmd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newDiffCmd(opts *cmdutil.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "diff SOURCE TARGET",
		Short: "List the differences between two folders, buckets or prefixes",
		Long: `Compare what is under SOURCE and TARGET (ALIAS/BUCKET[/PREFIX] or a local
directory; at least one remote) by relative name, size and content, and print
one line per difference:

  < PATH   only in SOURCE
  > PATH   only in TARGET
  ! PATH   in both, but the size or the content (ETag, or a local file's MD5) differs

Nothing is printed when they hold the same objects. As in mc, finding
differences is not an error: the exit code is 0 unless the comparison failed.`,
		Example: `  twinlake diff site1/photos site2/photos
  twinlake diff ./backup site1/backup
  twinlake diff --json site1/data/2024 site1/archive/2024`,
		Args: cobra.ExactArgs(2),
		RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, args []string) error {
			src, err := openWalkRoot(opts, args[0])
			if err != nil {
				return err
			}
			dst, err := openWalkRoot(opts, args[1])
			if err != nil {
				return err
			}
			if src.end.remote == nil && dst.end.remote == nil {
				return errors.New("diff needs an ALIAS/BUCKET[/PREFIX] on at least one side")
			}
			return runDiff(cmd, opts, src, dst)
		}),
	}
	return cmd
}

// diffResult is one difference as printed; Diff is "only-in-first",
// "only-in-second", "size" or "content".
type diffResult struct {
	Status string `json:"status"`
	First  string `json:"first,omitempty"`
	Second string `json:"second,omitempty"`
	Diff   string `json:"diff"`
}

func (r diffResult) human() string {
	switch r.Diff {
	case "only-in-first":
		return "< " + r.First
	case "only-in-second":
		return "> " + r.Second
	}
	return "! " + r.Second
}

func runDiff(cmd *cobra.Command, opts *cmdutil.Options, src, dst walkRoot) error {
	a, err := src.collect(cmd.Context())
	if err != nil {
		return err
	}
	b, err := dst.collect(cmd.Context())
	if err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(a))
	for rel := range b {
		if _, ok := a[rel]; !ok {
			names = append(names, rel)
		}
	}
	slices.Sort(names)
	for _, rel := range names {
		r, err := diffOne(cmd.Context(), src, dst, a, b, rel)
		if err != nil {
			return err
		}
		if r.Diff == "" {
			continue
		}
		r.Status = "success"
		if err := cmdutil.PrintResult(cmd.OutOrStdout(), opts, r, r.human()); err != nil {
			return err
		}
	}
	return nil
}

// diffOne compares one name of both sides; Diff is "" when they agree.
func diffOne(ctx context.Context, src, dst walkRoot, a, b map[string]walkEntry, rel string) (diffResult, error) {
	x, inA := a[rel]
	y, inB := b[rel]
	r := diffResult{First: src.join(rel), Second: dst.join(rel)}
	switch {
	case !inB:
		r.Second, r.Diff = "", "only-in-first"
	case !inA:
		r.First, r.Diff = "", "only-in-second"
	case x.Size != y.Size:
		r.Diff = "size"
	default:
		same, err := sameObject(ctx, src, dst, x, y)
		if err != nil {
			return r, fmt.Errorf("compare %s: %w", rel, err)
		}
		if !same {
			r.Diff = "content"
		}
	}
	return r, nil
}
