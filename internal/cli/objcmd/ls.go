package objcmd

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newLSCmd(opts *cmdutil.Options) *cobra.Command {
	var recursive, versions, summarize, incomplete bool
	var rewind string
	cmd := &cobra.Command{
		Use:   "ls ALIAS[/BUCKET[/PREFIX]]",
		Short: "List buckets, or objects in a bucket",
		Example: `  twinlake ls site1
  twinlake ls site1/photos/2024/
  twinlake ls --recursive --versions site1/photos
  twinlake ls --recursive --rewind 7d site1/photos
  twinlake ls --recursive --summarize site1/photos
  twinlake ls --incomplete --recursive site1/uploads
  twinlake ls --json site1/photos`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// A line per key: written in blocks, not a write each, and
			// all of it before an error is reported; then the command
			// writes where its parent does again.
			out := bufio.NewWriter(cmd.OutOrStdout())
			cmd.SetOut(out)
			defer func() {
				out.Flush()
				cmd.SetOut(nil)
			}()
			t := cmdutil.ParseTarget(args[0])
			c, err := opts.S3Client(t.Alias)
			if err != nil {
				return err
			}
			if t.Bucket == "" {
				if incomplete || versions || rewind != "" {
					return errors.New("--incomplete, --versions and --rewind list a bucket's objects: give ALIAS/BUCKET")
				}
				return listBuckets(cmd, opts, c, t.Alias)
			}
			at, err := rewindFlag(rewind)
			if err != nil {
				return err
			}
			var sum lsSummary
			switch {
			case incomplete:
				if versions || !at.IsZero() {
					return errors.New("--incomplete lists the uploads in progress: it cannot be combined with --versions or --rewind")
				}
				err = listUploads(cmd, opts, c, t, recursive, &sum)
			case !at.IsZero():
				if versions {
					return errors.New("--rewind lists the objects as they were at one time: it cannot be combined with --versions")
				}
				err = listObjectsAt(cmd, opts, c, t, recursive, at, &sum)
			default:
				err = listObjects(cmd, opts, c, t, recursive, versions, &sum)
			}
			if err != nil || !summarize {
				return err
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, sum,
				fmt.Sprintf("\nTotal Size: %s\nTotal Objects: %d", cmdutil.FmtBytes(sum.TotalSize), sum.TotalObjects))
		},
	}
	cmd.Flags().BoolVar(&summarize, "summarize", false, "print the total size and object count at the end")
	cmd.Flags().BoolVarP(&incomplete, "incomplete", "I", false, "list the multipart uploads in progress instead of objects")
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "list every object under the prefix, not one level")
	cmd.Flags().BoolVar(&versions, "versions", false, "list every version and delete marker")
	cmd.Flags().StringVar(&rewind, "rewind", "", rewindHelp)
	return cmd
}

// lsSummary is what --summarize prints after the listing: the objects
// listed (versions with --versions, delete markers and folders aside) and
// their bytes.
type lsSummary struct {
	TotalObjects int64 `json:"totalObjects"`
	TotalSize    int64 `json:"totalSize"`
}

// add counts a listed entry: an object or an upload in progress.
func (s *lsSummary) add(e lsEntry) {
	if (e.Type == "file" || e.Type == "upload") && !e.DeleteMarker {
		s.TotalObjects++
		s.TotalSize += e.Size
	}
}

// lsEntry is one listed bucket, prefix, object or object version.
type lsEntry struct {
	Status       string    `json:"status"`
	Type         string    `json:"type"` // "bucket", "folder", "file" or "upload"
	LastModified time.Time `json:"lastModified,omitzero"`
	Size         int64     `json:"size"`
	Key          string    `json:"key"`
	ETag         string    `json:"etag,omitempty"`
	StorageClass string    `json:"storageClass,omitempty"`
	VersionID    string    `json:"versionId,omitempty"`
	IsLatest     bool      `json:"isLatest,omitempty"`
	DeleteMarker bool      `json:"isDeleteMarker,omitempty"`
	UploadID     string    `json:"uploadId,omitempty"`
	// name is what the human line shows: relative to the listed folder.
	name string
}

func (e lsEntry) human(withVersions bool) string {
	ts := strings.Repeat(" ", 25)
	if !e.LastModified.IsZero() {
		ts = cmdutil.FmtListTime(e.LastModified)
	}
	line := fmt.Sprintf("%s %9s", ts, cmdutil.FmtBytes(e.Size))
	if e.Type == "file" || e.Type == "upload" {
		line += " " + e.StorageClass
	}
	if withVersions && e.Type == "file" {
		op := "PUT"
		if e.DeleteMarker {
			op = "DEL"
		}
		line += fmt.Sprintf(" %s %s", e.VersionID, op)
	}
	line += " " + e.name
	if withVersions && e.IsLatest {
		line += " (latest)"
	}
	return line
}

func listBuckets(cmd *cobra.Command, opts *cmdutil.Options, c *minio.Client, alias string) error {
	buckets, err := c.ListBuckets(cmd.Context())
	if err != nil {
		return cmdutil.S3Err("list buckets on "+alias, err)
	}
	for _, b := range buckets {
		e := lsEntry{Status: "success", Type: "bucket", LastModified: b.CreationDate, Key: b.Name + "/", name: b.Name + "/"}
		if err := cmdutil.PrintResult(cmd.OutOrStdout(), opts, e, e.human(false)); err != nil {
			return err
		}
	}
	return nil
}

func listObjects(cmd *cobra.Command, opts *cmdutil.Options, c *minio.Client, t cmdutil.Target, recursive, versions bool, sum *lsSummary) error {
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	// Names are shown relative to the folder being listed, as mc does.
	folder := t.Key[:strings.LastIndex(t.Key, "/")+1]
	lo := minio.ListObjectsOptions{Prefix: t.Key, Recursive: recursive, WithVersions: versions}
	for obj := range c.ListObjectsIter(ctx, t.Bucket, lo) {
		if obj.Err != nil {
			if errors.Is(obj.Err, io.EOF) {
				break
			}
			return cmdutil.S3Err("list "+cmdutil.FmtTarget(t), obj.Err)
		}
		e := lsEntryFromObject(obj)
		e.name = strings.TrimPrefix(obj.Key, folder)
		sum.add(e)
		if err := cmdutil.PrintResult(cmd.OutOrStdout(), opts, e, e.human(versions)); err != nil {
			return err
		}
	}
	return nil
}

// listUploads lists the multipart uploads in progress under t, one line
// each with its upload ID.
func listUploads(cmd *cobra.Command, opts *cmdutil.Options, c *minio.Client, t cmdutil.Target, recursive bool, sum *lsSummary) error {
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	folder := t.Key[:strings.LastIndex(t.Key, "/")+1]
	for up := range c.ListIncompleteUploads(ctx, t.Bucket, t.Key, recursive) {
		if up.Err != nil {
			return cmdutil.S3Err("list the uploads of "+cmdutil.FmtTarget(t), up.Err)
		}
		e := lsEntry{Status: "success", Type: "upload", Key: up.Key, LastModified: up.Initiated, Size: up.Size,
			UploadID: up.UploadID, StorageClass: cmp.Or(up.StorageClass, "STANDARD"), name: strings.TrimPrefix(up.Key, folder)}
		if strings.HasSuffix(up.Key, "/") && up.UploadID == "" {
			e.Type = "folder"
		}
		sum.add(e)
		human := e.human(false)
		if e.UploadID != "" {
			human += " (upload " + e.UploadID + ")"
		}
		if err := cmdutil.PrintResult(cmd.OutOrStdout(), opts, e, human); err != nil {
			return err
		}
	}
	return nil
}

// listObjectsAt lists the objects under t as they were at at; without
// recursive, deeper keys show as their first folder, as a listing would.
func listObjectsAt(cmd *cobra.Command, opts *cmdutil.Options, c *minio.Client, t cmdutil.Target, recursive bool, at time.Time, sum *lsSummary) error {
	folder := t.Key[:strings.LastIndex(t.Key, "/")+1]
	lastFolder := ""
	for obj, err := range objectsAt(cmd.Context(), c, t.Bucket, t.Key, at, false) {
		if err != nil {
			return cmdutil.S3Err("list "+cmdutil.FmtTarget(t), err)
		}
		e := lsEntryFromObject(obj)
		e.name = strings.TrimPrefix(obj.Key, folder)
		if f := folderOf(obj.Key, folder); !recursive && f != "" {
			if f == lastFolder {
				continue
			}
			lastFolder = f
			e = lsEntry{Status: "success", Type: "folder", Key: f, name: strings.TrimPrefix(f, folder)}
		}
		sum.add(e)
		if err := cmdutil.PrintResult(cmd.OutOrStdout(), opts, e, e.human(false)); err != nil {
			return err
		}
	}
	return nil
}

func lsEntryFromObject(obj minio.ObjectInfo) lsEntry {
	e := lsEntry{Status: "success", Type: "file", Key: obj.Key, Size: obj.Size, LastModified: obj.LastModified,
		ETag: strings.Trim(obj.ETag, `"`), StorageClass: obj.StorageClass, VersionID: obj.VersionID,
		IsLatest: obj.IsLatest, DeleteMarker: obj.IsDeleteMarker}
	if strings.HasSuffix(obj.Key, "/") && obj.LastModified.IsZero() {
		e.Type = "folder"
	}
	if e.Type == "file" && e.StorageClass == "" {
		e.StorageClass = "STANDARD"
	}
	return e
}
