package objcmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// undoFlags are the undo command's flags, as mc undo has them.
type undoFlags struct {
	recursive, force, dryRun bool
	last                     int
	action                   string
}

// undoResult is one reverted change as printed.
type undoResult struct {
	Status    string `json:"status"`
	Key       string `json:"key"`
	VersionID string `json:"versionId"`
	// Action is the change reverted: PUT (a version removed, the one
	// before it current again) or DELETE (a delete marker removed).
	Action string `json:"action"`
	DryRun bool   `json:"dryRun,omitempty"`
}

func newUndoCmd(opts *cmdutil.Options) *cobra.Command {
	f := undoFlags{last: 1}
	cmd := &cobra.Command{
		Use:   "undo ALIAS/BUCKET/KEY | ALIAS/BUCKET[/PREFIX] --recursive --force",
		Short: "Revert the last uploads and removals of objects in a versioned bucket",
		Long: `Revert an object's last changes on a versioned bucket by removing its newest
versions for good: removing a version undoes its upload (the version before it
is current again), removing a delete marker undoes a removal. --last N reverts
the N newest changes of each object (default 1). --action PUT or DELETE reverts
only changes of that kind, stopping at an object's first change of the other
kind, so the changes older than it are kept. --dry-run shows what would be
reverted.

--recursive reverts the changes of every object under the prefix and needs
--force, which is the confirmation. A version under retention or a legal hold
is not removed; undo reports it and goes on, and exits 1 at the end.`,
		Example: `  twinlake undo site1/backups/file.zip --last 3
  twinlake undo --recursive --force site1/backups/prefix/
  twinlake undo --recursive --force --action PUT site1/backups/prefix/
  twinlake undo --recursive --force --dry-run site1/backups/prefix/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUndo(cmd, opts, args[0], f)
		},
	}
	cmd.Flags().BoolVarP(&f.recursive, "recursive", "r", false, "revert the changes of every object under the prefix (needs --force)")
	cmd.Flags().BoolVar(&f.force, "force", false, "confirm a recursive undo")
	cmd.Flags().IntVar(&f.last, "last", f.last, "how many of each object's newest changes to revert (1 to 10000)")
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "show what would be reverted; change nothing")
	cmd.Flags().StringVar(&f.action, "action", "", "revert only changes of this kind: PUT or DELETE")
	return cmd
}

func runUndo(cmd *cobra.Command, opts *cmdutil.Options, arg string, f undoFlags) error {
	f.action = strings.ToUpper(f.action)
	switch {
	case f.recursive && !f.force:
		return errors.New("undo --recursive reverts changes of every object under the prefix: add --force to confirm")
	case f.last < 1 || f.last > 10000:
		return fmt.Errorf("undo --last %d: want 1 to 10000", f.last)
	case f.action != "" && f.action != "PUT" && f.action != "DELETE":
		return fmt.Errorf("undo --action %q: want PUT or DELETE", f.action)
	}
	t, c, err := opts.BucketClient(arg)
	if err != nil {
		return err
	}
	if !f.recursive && (t.Key == "" || strings.HasSuffix(t.Key, "/")) {
		return fmt.Errorf("%q: want ALIAS/BUCKET/KEY, or --recursive --force for every object under a prefix", arg)
	}
	ctx := cmd.Context()
	vc, err := c.GetBucketVersioning(ctx, t.Bucket)
	if err != nil {
		return cmdutil.S3Err("undo "+arg, err)
	}
	if vc.Status == "" {
		return fmt.Errorf("undo %s: the bucket was never versioned, so there is no earlier version to go back to", arg)
	}
	var (
		key     string // the object whose versions are being read
		seen    int    // its changes looked at so far
		stopped bool   // its first change of another kind was met
		failed  int
	)
	for v := range c.ListObjectsIter(ctx, t.Bucket, minio.ListObjectsOptions{Prefix: t.Key, Recursive: true, WithVersions: true}) {
		if v.Err != nil {
			return cmdutil.S3Err("list the versions of "+arg, v.Err)
		}
		if !f.recursive && v.Key != t.Key {
			continue
		}
		if v.Key != key {
			key, seen, stopped = v.Key, 0, false
		}
		if stopped || seen >= f.last {
			continue
		}
		seen++
		r := undoResult{Status: "success", Key: t.Alias + "/" + t.Bucket + "/" + v.Key, VersionID: v.VersionID, Action: "PUT", DryRun: f.dryRun}
		if v.IsDeleteMarker {
			r.Action = "DELETE"
		}
		if f.action != "" && r.Action != f.action {
			stopped = true
			continue
		}
		if !f.dryRun {
			err := c.RemoveObject(ctx, t.Bucket, v.Key, minio.RemoveObjectOptions{VersionID: v.VersionID})
			if err != nil {
				failed++
				cmdutil.PrintItemErr(cmd, opts, cmdutil.S3Err(fmt.Sprintf("undo %s (version %s)", r.Key, v.VersionID), err))
				continue
			}
		}
		what := map[string]string{"PUT": "upload", "DELETE": "removal"}[r.Action]
		human := fmt.Sprintf("Last %s of `%s` (version %s) reverted.", what, r.Key, r.VersionID)
		if f.dryRun {
			human = fmt.Sprintf("Would revert the last %s of `%s` (version %s).", what, r.Key, r.VersionID)
		}
		if err := cmdutil.PrintResult(cmd.OutOrStdout(), opts, r, human); err != nil {
			return err
		}
	}
	if failed > 0 {
		return cmdutil.ItemsFailed(failed, "version removals")
	}
	return nil
}
