package objcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// rmFlags are the rm command's flags.
type rmFlags struct {
	versionID string
	recursive bool
	force     bool
	versions  bool
	yes       bool
	// Filters, as mc's: by age, only non-current versions, or the
	// incomplete multipart uploads instead of objects.
	olderThan, newerThan string
	nonCurrent           bool
	incomplete           bool
	rewind               string
}

func newRMCmd(opts *cmdutil.Options) *cobra.Command {
	var f rmFlags
	cmd := &cobra.Command{
		Use:   "rm ALIAS/BUCKET/KEY [ALIAS/BUCKET/KEY ...]",
		Short: "Remove objects",
		Long: `Remove objects. On a versioned bucket removing a key adds a delete marker;
--version-id removes one version for good, --versions removes every version.
--recursive removes everything under a prefix and needs --force, which is the
confirmation: as in mc, rm --recursive --force never prompts. --versions alone
asks before removing every version of a key; --force or --yes skips the prompt.

--older-than and --newer-than keep only objects (or versions) last modified
that long ago; --non-current removes only the versions that are not the
latest (implies --versions); --incomplete removes the incomplete multipart
uploads under the prefix instead of objects. --rewind TIME removes, for good,
the version of each key that was current at that time (7d back, or a date).`,
		Example: `  twinlake rm site1/photos/2024/cat.jpg
  twinlake rm --version-id 3f1c... site1/photos/cat.jpg
  twinlake rm --versions --yes site1/photos/cat.jpg
  twinlake rm --recursive --force site1/photos/2024/
  twinlake rm --recursive --versions --force site1/photos/2024/
  twinlake rm --recursive --force --older-than 90d site1/logs/
  twinlake rm --recursive --force --non-current site1/photos/
  twinlake rm --recursive --force --incomplete site1/uploads/`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.recursive && !f.force {
				return errors.New("rm --recursive removes every object under the prefix: add --force to confirm")
			}
			if f.versionID != "" && (f.recursive || f.versions || len(args) > 1) {
				return errors.New("--version-id names one version of one key: it cannot be combined with --recursive, --versions or several targets")
			}
			if f.nonCurrent {
				f.versions = true
			}
			if f.versionID != "" && (f.nonCurrent || f.incomplete || f.olderThan != "" || f.newerThan != "") {
				return errors.New("--version-id names one version: the filters --older-than, --newer-than, --non-current and --incomplete do not apply")
			}
			if f.incomplete && (f.versions || f.olderThan != "" || f.newerThan != "") {
				return errors.New("--incomplete removes uploads in progress: it cannot be combined with --versions, --non-current or the age filters")
			}
			for _, arg := range args {
				if err := removeTarget(cmd, opts, arg, f); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&f.versionID, "version-id", "", "remove this version of the object")
	cmd.Flags().BoolVarP(&f.recursive, "recursive", "r", false, "remove every object under the prefix (needs --force)")
	cmd.Flags().BoolVar(&f.force, "force", false, "allow a recursive remove; never prompt")
	cmd.Flags().BoolVar(&f.versions, "versions", false, "remove every version (and delete marker), not just the latest")
	cmd.Flags().BoolVarP(&f.yes, "yes", "y", false, "do not prompt before a bulk remove")
	cmd.Flags().StringVar(&f.olderThan, "older-than", "", "remove only objects older than this (7d, 12h, 1w2d)")
	cmd.Flags().StringVar(&f.newerThan, "newer-than", "", "remove only objects newer than this (7d, 12h, 1w2d)")
	cmd.Flags().BoolVar(&f.nonCurrent, "non-current", false, "remove only versions that are not the latest (implies --versions)")
	cmd.Flags().BoolVar(&f.incomplete, "incomplete", false, "remove incomplete multipart uploads instead of objects")
	cmd.Flags().StringVar(&f.rewind, "rewind", "", "remove the version of each key that was current at this time (7d, 2024-05-01)")
	return cmd
}

// rmResult is one removed object (or version) as printed.
type rmResult struct {
	Status                string `json:"status"`
	Key                   string `json:"key"`
	VersionID             string `json:"versionId,omitempty"`
	DeleteMarker          bool   `json:"deleteMarker,omitempty"`
	DeleteMarkerVersionID string `json:"deleteMarkerVersionId,omitempty"`
}

func (r rmResult) human() string {
	s := fmt.Sprintf("Removed `%s`", r.Key)
	if r.VersionID != "" {
		s += fmt.Sprintf(" (versionId=%s)", r.VersionID)
	}
	if r.DeleteMarker && r.DeleteMarkerVersionID != "" {
		s += fmt.Sprintf(" (delete marker %s)", r.DeleteMarkerVersionID)
	}
	return s + "."
}

func removeTarget(cmd *cobra.Command, opts *cmdutil.Options, arg string, f rmFlags) error {
	t, err := cmdutil.RequireBucket(arg)
	if err != nil {
		return err
	}
	if t.Key == "" && !f.recursive {
		return fmt.Errorf("%q: want ALIAS/BUCKET/KEY (use rb to remove a bucket, or --recursive --force for all its objects)", arg)
	}
	c, err := opts.S3Client(t.Alias)
	if err != nil {
		return err
	}
	ctx, w := cmd.Context(), cmd.OutOrStdout()
	age, err := newAgeFilter(f.olderThan, f.newerThan)
	if err != nil {
		return err
	}
	if f.incomplete {
		return removeIncomplete(cmd, opts, c, t, f)
	}
	at, err := rewindFlag(f.rewind)
	if err != nil {
		return err
	}
	if !at.IsZero() && (f.versions || f.versionID != "" || f.incomplete) {
		return errors.New("--rewind picks one version of each key: it cannot be combined with --versions, --non-current, --version-id or --incomplete")
	}
	filtered := f.olderThan != "" || f.newerThan != "" || !at.IsZero()
	if !f.recursive && !f.versions && !filtered {
		err := c.RemoveObject(ctx, t.Bucket, t.Key, minio.RemoveObjectOptions{VersionID: f.versionID})
		if err != nil {
			return cmdutil.S3Err("remove "+cmdutil.FmtTarget(t), err)
		}
		r := rmResult{Status: "success", Key: cmdutil.FmtTarget(t), VersionID: f.versionID}
		return cmdutil.PrintResult(w, opts, r, r.human())
	}
	what := "every version of `" + cmdutil.FmtTarget(t) + "`"
	if !f.versions {
		what = "`" + cmdutil.FmtTarget(t) + "`"
	}
	if f.recursive {
		what = "every object under `" + cmdutil.FmtTarget(t) + "`"
		if f.versions {
			what = "every version of every object under `" + cmdutil.FmtTarget(t) + "`"
		}
	}
	if err := cmdutil.Confirm(cmd, f.yes || f.force, "Remove "+what+"?"); err != nil {
		return err
	}
	sel := ObjSelection{Prefix: t.Key, Exact: !f.recursive, AllVersions: f.versions, NonCurrent: f.nonCurrent, age: age, at: at}
	prog := cmdutil.StartProgress(cmd, opts, "rm")
	defer prog.Finish()
	_, err = RemoveObjects(ctx, c, t.Bucket, sel, func(r minio.RemoveObjectResult) error {
		prog.ObjectDone()
		prog.Clear()
		out := rmResult{Status: "success", Key: cmdutil.FmtTarget(cmdutil.Target{Alias: t.Alias, Bucket: t.Bucket, Key: r.ObjectName}),
			VersionID: r.ObjectVersionID, DeleteMarker: r.DeleteMarker, DeleteMarkerVersionID: r.DeleteMarkerVersionID}
		return cmdutil.PrintResult(w, opts, out, out.human())
	})
	return err
}

// rmUpload is one removed incomplete upload as printed.
type rmUpload struct {
	Status   string `json:"status"`
	Key      string `json:"key"`
	UploadID string `json:"uploadId"`
}

// removeIncomplete aborts the multipart uploads in progress under t (the
// exact key without --recursive).
func removeIncomplete(cmd *cobra.Command, opts *cmdutil.Options, c *minio.Client, t cmdutil.Target, f rmFlags) error {
	ctx := cmd.Context()
	for u := range c.ListIncompleteUploads(ctx, t.Bucket, t.Key, f.recursive) {
		if u.Err != nil {
			return cmdutil.S3Err("list uploads in "+cmdutil.FmtTarget(t), u.Err)
		}
		if !f.recursive && u.Key != t.Key {
			continue
		}
		if err := abortUpload(ctx, c, t.Bucket, u.Key, u.UploadID); err != nil {
			return cmdutil.S3Err("abort upload of "+u.Key, err)
		}
		r := rmUpload{Status: "success", Key: cmdutil.FmtTarget(cmdutil.Target{Alias: t.Alias, Bucket: t.Bucket, Key: u.Key}), UploadID: u.UploadID}
		if err := cmdutil.PrintResult(cmd.OutOrStdout(), opts, r, fmt.Sprintf("Removed incomplete upload `%s` (uploadId=%s).", r.Key, r.UploadID)); err != nil {
			return err
		}
	}
	return nil
}

// abortUpload aborts one multipart upload by its ID.
func abortUpload(ctx context.Context, c *minio.Client, bucket, key, uploadID string) error {
	core := minio.Core{Client: c}
	return core.AbortMultipartUpload(ctx, bucket, key, uploadID)
}

// ObjSelection picks the objects RemoveObjects deletes.
type ObjSelection struct {
	// Prefix selects keys starting with it, or exactly it when Exact.
	Prefix string
	Exact  bool
	// AllVersions removes every version and delete marker by version ID;
	// otherwise each latest object is removed (a delete marker on a
	// versioned bucket).
	AllVersions bool
	// NonCurrent keeps only versions that are not the latest.
	NonCurrent bool
	// age keeps only what was last modified within its bounds.
	age ageFilter
	// at, when set, selects the version of each key current at that time
	// (removed by its version ID).
	at time.Time
}

// RemoveObjects lists the selection and removes it in batches (S3
// multi-object delete), calling onRemoved for each success. It returns how
// many were removed and the first failure, listing or removing.
func RemoveObjects(ctx context.Context, c *minio.Client, bucket string, sel ObjSelection, onRemoved func(minio.RemoveObjectResult) error) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var listErr error
	objs := selectObjects(ctx, c, bucket, sel, &listErr)
	results, err := c.RemoveObjectsWithIter(ctx, bucket, objs, minio.RemoveObjectsOptions{})
	if err != nil {
		return 0, cmdutil.S3Err("remove objects in "+bucket, err)
	}
	n := 0
	for r := range results {
		if r.Err != nil {
			return n, cmdutil.S3Err(fmt.Sprintf("remove %s/%s", bucket, r.ObjectName), r.Err)
		}
		n++
		if onRemoved != nil {
			if err := onRemoved(r); err != nil {
				return n, err
			}
		}
	}
	if listErr != nil {
		return n, cmdutil.S3Err("list "+bucket, listErr)
	}
	return n, nil
}

// selectObjects iterates the selection; a listing error stops it and is
// stored in *listErr.
func selectObjects(ctx context.Context, c *minio.Client, bucket string, sel ObjSelection, listErr *error) iter.Seq[minio.ObjectInfo] {
	if !sel.at.IsZero() {
		return func(yield func(minio.ObjectInfo) bool) {
			for obj, err := range objectsAt(ctx, c, bucket, sel.Prefix, sel.at, sel.Exact) {
				if err != nil {
					*listErr = err
					return
				}
				if sel.age.keep(obj.LastModified) && !yield(obj) {
					return
				}
			}
		}
	}
	return func(yield func(minio.ObjectInfo) bool) {
		lo := minio.ListObjectsOptions{Prefix: sel.Prefix, Recursive: true, WithVersions: sel.AllVersions}
		for obj := range c.ListObjectsIter(ctx, bucket, lo) {
			if obj.Err != nil {
				if !errors.Is(obj.Err, io.EOF) {
					*listErr = obj.Err
				}
				return
			}
			if sel.Exact && obj.Key != sel.Prefix {
				continue
			}
			if (sel.NonCurrent && obj.IsLatest) || !sel.age.keep(obj.LastModified) {
				continue
			}
			if !sel.AllVersions {
				obj.VersionID = ""
			}
			if !yield(obj) {
				return
			}
		}
	}
}
