package objcmd

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newStatCmd(opts *cmdutil.Options) *cobra.Command {
	var versionID, rewind string
	cmd := &cobra.Command{
		Use:   "stat ALIAS/BUCKET[/KEY]",
		Short: "Show an object's or a bucket's metadata",
		Long: `Show an object's size, ETag, content type, last-modified time, version ID,
user metadata and, on a site joined by site replication, the version's
replication state: its status (x-amz-replication-status: PENDING, COMPLETED,
FAILED, or REPLICA on a received copy), the status per peer (by deployment
ID), the site that wrote it, its hybrid logical clock time, and when it was
last replicated and last attempted. For a bucket: its creation date and
versioning state.`,
		Example: `  twinlake stat site1/photos/cat.jpg
  twinlake stat --version-id 3f1c... site1/photos/cat.jpg --json
  twinlake stat --rewind 2024-05-01 site1/photos/cat.jpg
  twinlake stat site1/photos`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, c, err := opts.BucketClient(args[0])
			if err != nil {
				return err
			}
			if t.Key == "" {
				if versionID != "" || rewind != "" {
					return fmt.Errorf("--version-id and --rewind need ALIAS/BUCKET/KEY")
				}
				return statBucket(cmd, opts, c, t)
			}
			at, err := rewindFlag(rewind)
			if err != nil {
				return err
			}
			if !at.IsZero() {
				if versionID != "" {
					return errors.New("--rewind and --version-id both pick a version: give one")
				}
				if versionID, err = versionAt(cmd.Context(), c, t, at); err != nil {
					return err
				}
			}
			return statObject(cmd, opts, c, t, versionID)
		},
	}
	cmd.Flags().StringVar(&versionID, "version-id", "", "show this version of the object")
	cmd.Flags().StringVar(&rewind, "rewind", "", rewindHelp)
	return cmd
}

// objectStat is what stat shows for an object.
type ObjectStat struct {
	Status            string            `json:"status"`
	Key               string            `json:"key"`
	Size              int64             `json:"size"`
	ETag              string            `json:"etag"`
	ContentType       string            `json:"contentType,omitempty"`
	LastModified      time.Time         `json:"lastModified"`
	VersionID         string            `json:"versionId,omitempty"`
	Metadata          map[string]string `json:"metadata,omitempty"`
	ReplicationStatus string            `json:"replicationStatus,omitempty"`
	// ReplicationTargets is the per-peer status of this version, by the
	// peer's deployment ID (X-Twinlake-Replication-Targets).
	ReplicationTargets map[string]string `json:"replicationTargets,omitempty"`
	// Origin is the deployment ID of the site that wrote the version.
	Origin string `json:"origin,omitempty"`
	// ModTime is the version's hybrid logical clock time, Unix nanoseconds:
	// the order replication resolves conflicts by.
	ModTime             int64     `json:"modTime,omitempty"`
	ReplicaTimestamp    time.Time `json:"replicaTimestamp,omitzero"`
	ReplicationActivity time.Time `json:"replicationActivity,omitzero"`
}

func (s ObjectStat) human() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Name      : %s\n", s.Key)
	fmt.Fprintf(&b, "Date      : %s\n", s.LastModified.UTC().Format("2006-01-02 15:04:05 MST"))
	fmt.Fprintf(&b, "Size      : %s (%d bytes)\n", cmdutil.FmtBytes(s.Size), s.Size)
	fmt.Fprintf(&b, "ETag      : %s\n", s.ETag)
	fmt.Fprintf(&b, "Type      : %s\n", s.ContentType)
	if s.VersionID != "" {
		fmt.Fprintf(&b, "VersionID : %s\n", s.VersionID)
	}
	s.writeReplication(&b)
	if len(s.Metadata) > 0 {
		b.WriteString("Metadata  :\n")
		for _, k := range slices.Sorted(maps.Keys(s.Metadata)) {
			fmt.Fprintf(&b, "  %s: %s\n", k, s.Metadata[k])
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// writeReplication adds the site replication fields the server sent.
func (s ObjectStat) writeReplication(b *strings.Builder) {
	if s.ReplicationStatus != "" {
		fmt.Fprintf(b, "Replication Status : %s\n", s.ReplicationStatus)
	}
	if len(s.ReplicationTargets) > 0 {
		b.WriteString("Replication Targets :\n")
		for _, id := range slices.Sorted(maps.Keys(s.ReplicationTargets)) {
			fmt.Fprintf(b, "  %s: %s\n", id, s.ReplicationTargets[id])
		}
	}
	if s.Origin != "" {
		fmt.Fprintf(b, "Origin Site : %s\n", s.Origin)
	}
	if s.ModTime != 0 {
		fmt.Fprintf(b, "HLC Mod Time : %d (%s)\n", s.ModTime, time.Unix(0, s.ModTime).UTC().Format(time.RFC3339Nano))
	}
	if !s.ReplicaTimestamp.IsZero() {
		fmt.Fprintf(b, "Replica Timestamp : %s\n", s.ReplicaTimestamp.UTC().Format(time.RFC3339Nano))
	}
	if !s.ReplicationActivity.IsZero() {
		fmt.Fprintf(b, "Replication Activity : %s\n", s.ReplicationActivity.UTC().Format(time.RFC3339Nano))
	}
}

// readReplicationHeaders fills the site replication fields from a HEAD
// response; a header that does not parse is left out.
func (s *ObjectStat) readReplicationHeaders(h http.Header) {
	if v := h.Get("X-Amz-Replication-Status"); v != "" {
		s.ReplicationStatus = v
	}
	if v := h.Get("X-Twinlake-Replication-Targets"); v != "" {
		s.ReplicationTargets = map[string]string{}
		for part := range strings.SplitSeq(v, ",") {
			if id, st, ok := strings.Cut(strings.TrimSpace(part), "="); ok {
				s.ReplicationTargets[id] = st
			}
		}
	}
	s.Origin = h.Get("X-Twinlake-Origin")
	s.ModTime, _ = strconv.ParseInt(h.Get("X-Twinlake-Mod-Time"), 10, 64)
	s.ReplicaTimestamp, _ = time.Parse(time.RFC3339Nano, h.Get("X-Twinlake-Replica-Timestamp"))
	s.ReplicationActivity, _ = time.Parse(time.RFC3339Nano, h.Get("X-Twinlake-Replication-Activity"))
}

func statObject(cmd *cobra.Command, opts *cmdutil.Options, c *minio.Client, t cmdutil.Target, versionID string) error {
	info, err := c.StatObject(cmd.Context(), t.Bucket, t.Key, minio.StatObjectOptions{VersionID: versionID})
	if err != nil {
		return cmdutil.S3Err("stat "+cmdutil.FmtTarget(t), err)
	}
	s := ObjectStat{Status: "success", Key: cmdutil.FmtTarget(t), Size: info.Size, ETag: strings.Trim(info.ETag, `"`),
		ContentType: info.ContentType, LastModified: info.LastModified, VersionID: info.VersionID,
		ReplicationStatus: info.ReplicationStatus}
	s.readReplicationHeaders(info.Headers)
	if len(info.UserMetadata) > 0 {
		s.Metadata = map[string]string(info.UserMetadata)
	}
	return cmdutil.PrintResult(cmd.OutOrStdout(), opts, s, s.human())
}

// bucketStat is what stat shows for a bucket.
type bucketStat struct {
	Status     string    `json:"status"`
	Bucket     string    `json:"bucket"`
	Created    time.Time `json:"created,omitzero"`
	Versioning string    `json:"versioning"`
}

func statBucket(cmd *cobra.Command, opts *cmdutil.Options, c *minio.Client, t cmdutil.Target) error {
	ctx := cmd.Context()
	ok, err := c.BucketExists(ctx, t.Bucket)
	if err != nil {
		return cmdutil.S3Err("stat "+cmdutil.FmtTarget(t), err)
	}
	if !ok {
		return fmt.Errorf("stat %s: NoSuchBucket: the bucket does not exist", cmdutil.FmtTarget(t))
	}
	s := bucketStat{Status: "success", Bucket: cmdutil.FmtTarget(t)}
	buckets, err := c.ListBuckets(ctx)
	if err != nil {
		return cmdutil.S3Err("stat "+cmdutil.FmtTarget(t), err)
	}
	for _, b := range buckets {
		if b.Name == t.Bucket {
			s.Created = b.CreationDate
		}
	}
	vc, err := c.GetBucketVersioning(ctx, t.Bucket)
	if err != nil {
		return cmdutil.S3Err("versioning of "+cmdutil.FmtTarget(t), err)
	}
	s.Versioning = versioningState(vc)
	human := fmt.Sprintf("Name       : %s\nDate       : %s\nVersioning : %s", s.Bucket,
		s.Created.UTC().Format("2006-01-02 15:04:05 MST"), s.Versioning)
	return cmdutil.PrintResult(cmd.OutOrStdout(), opts, s, human)
}

// versioningState names a bucket's versioning as S3 reports it; a bucket
// that never had versioning has no Status, shown as "Unversioned".
func versioningState(vc minio.BucketVersioningConfiguration) string {
	if vc.Status == "" {
		return "Unversioned"
	}
	return vc.Status
}
