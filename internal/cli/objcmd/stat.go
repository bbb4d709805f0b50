package objcmd

import (
	"cmp"
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
	"github.com/twinlake/twinlake/internal/iam/policy"
)

func newStatCmd(opts *cmdutil.Options) *cobra.Command {
	var versionID, rewind string
	var recursive bool
	cmd := &cobra.Command{
		Use:   "stat ALIAS/BUCKET[/KEY]",
		Short: "Show an object's or a bucket's metadata",
		Long: `Show an object's size, ETag, content type, last-modified time, version ID,
user metadata and, on a site joined by site replication, the version's
replication state: its status (x-amz-replication-status: PENDING, COMPLETED,
FAILED, or REPLICA on a received copy), the status per peer (by deployment
ID), the site that wrote it, its hybrid logical clock time, and when it was
last replicated and last attempted. For a bucket: its creation date,
versioning, location, anonymous access, lifecycle rules, default encryption,
object lock and tags (a setting the caller may not read says so).

--recursive shows every object under a bucket or prefix, one after another
(with --rewind, each as it was at that time).`,
		Example: `  twinlake stat site1/photos/cat.jpg
  twinlake stat --version-id 3f1c... site1/photos/cat.jpg --json
  twinlake stat --rewind 2024-05-01 site1/photos/cat.jpg
  twinlake stat site1/photos
  twinlake stat --recursive site1/photos/2024/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, c, err := opts.BucketClient(args[0])
			if err != nil {
				return err
			}
			if recursive {
				if versionID != "" {
					return errors.New("--version-id names one version of one object: it cannot be combined with --recursive")
				}
				at, err := rewindFlag(rewind)
				if err != nil {
					return err
				}
				return statTree(cmd, opts, c, t, at)
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
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "show every object under the bucket or prefix")
	return cmd
}

// statTree shows every object under t (as it was at at, when set), one
// HEAD each, a blank line between them as text.
func statTree(cmd *cobra.Command, opts *cmdutil.Options, c *minio.Client, t cmdutil.Target, at time.Time) error {
	first := true
	for o, err := range objectsThen(cmd.Context(), c, t.Bucket, t.Key, at) {
		if err != nil {
			return cmdutil.S3Err("list "+cmdutil.FmtTarget(t), err)
		}
		if strings.HasSuffix(o.Key, "/") && o.Size == 0 {
			continue // folder marker
		}
		if !first && !opts.JSON {
			fmt.Fprintln(cmd.OutOrStdout())
		}
		first = false
		if err := statObject(cmd, opts, c, cmdutil.Target{Alias: t.Alias, Bucket: t.Bucket, Key: o.Key}, o.VersionID); err != nil {
			return err
		}
	}
	return nil
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

// bucketStat is what stat shows for a bucket: its settings, one S3 call
// each. A setting the caller may not read shows the refusal's code.
type bucketStat struct {
	Status     string    `json:"status"`
	Bucket     string    `json:"bucket"`
	Created    time.Time `json:"created,omitzero"`
	Versioning string    `json:"versioning,omitempty"`
	Location   string    `json:"location,omitempty"`
	// Anonymous is the bucket's canned anonymous levels by prefix ("" the
	// whole bucket), empty when anonymous access is off.
	Anonymous  map[string]string `json:"anonymous"`
	ILMRules   int               `json:"ilmRules"`
	Encryption string            `json:"encryption"`           // the default: SSE-S3, SSE-KMS, or "" for none
	ObjectLock string            `json:"objectLock,omitempty"` // Disabled, Enabled, or the default retention
	Tags       map[string]string `json:"tags,omitempty"`
	// Unreadable names the settings the caller could not read, with the code.
	Unreadable map[string]string `json:"unreadable,omitempty"`
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
	// read notes a setting's error: its absence (the codes in none) is
	// the setting off; another refusal is shown as such.
	read := func(name string, err error, none ...string) bool {
		if err == nil {
			return true
		}
		if code := cmdutil.S3Code(err); !slices.Contains(none, code) {
			if s.Unreadable == nil {
				s.Unreadable = map[string]string{}
			}
			s.Unreadable[name] = cmp.Or(code, err.Error())
		}
		return false
	}
	if buckets, err := c.ListBuckets(ctx); read("date", err) {
		for _, b := range buckets {
			if b.Name == t.Bucket {
				s.Created = b.CreationDate
			}
		}
	}
	if vc, err := c.GetBucketVersioning(ctx, t.Bucket); read("versioning", err) {
		s.Versioning = versioningState(vc)
	}
	if loc, err := c.GetBucketLocation(ctx, t.Bucket); read("location", err) {
		s.Location = loc
	}
	if doc, err := c.GetBucketPolicy(ctx, t.Bucket); read("anonymous", err, "NoSuchBucketPolicy") {
		if levels, err := policy.AnonymousLevels([]byte(doc)); read("anonymous", err) {
			s.Anonymous = levels
		}
	}
	if lc, err := c.GetBucketLifecycle(ctx, t.Bucket); read("ilm", err, "NoSuchLifecycleConfiguration") && lc != nil {
		s.ILMRules = len(lc.Rules)
	}
	if enc, err := c.GetBucketEncryption(ctx, t.Bucket); read("encryption", err, "ServerSideEncryptionConfigurationNotFoundError") && enc != nil && len(enc.Rules) > 0 {
		if enc.Rules[0].Apply.SSEAlgorithm == "aws:kms" {
			s.Encryption = "SSE-KMS"
		} else {
			s.Encryption = "SSE-S3"
		}
	}
	s.ObjectLock = "Disabled"
	if on, mode, n, unit, err := c.GetObjectLockConfig(ctx, t.Bucket); read("objectLock", err, "ObjectLockConfigurationNotFoundError") && on == "Enabled" {
		s.ObjectLock = "Enabled"
		if mode != nil && n != nil && unit != nil {
			s.ObjectLock += fmt.Sprintf(" (default %s %s)", *mode, validity{n: *n, years: *unit == minio.Years})
		}
	}
	if tg, err := c.GetBucketTagging(ctx, t.Bucket); read("tags", err, "NoSuchTagSet") && tg != nil && len(tg.ToMap()) > 0 {
		s.Tags = tg.ToMap()
	}
	if _, unread := s.Unreadable["objectLock"]; unread {
		s.ObjectLock = ""
	}
	return cmdutil.PrintResult(cmd.OutOrStdout(), opts, s, s.human())
}

func (s bucketStat) human() string {
	// show is a setting's value, or why it could not be read.
	show := func(name, v string) string {
		if code, ok := s.Unreadable[name]; ok {
			return "? (not readable: " + code + ")"
		}
		return v
	}
	date := "-"
	if !s.Created.IsZero() {
		date = s.Created.UTC().Format("2006-01-02 15:04:05 MST")
	}
	anon := "Disabled"
	if len(s.Anonymous) > 0 {
		var parts []string
		for _, prefix := range slices.Sorted(maps.Keys(s.Anonymous)) {
			parts = append(parts, cmp.Or(prefix, "(bucket)")+"="+s.Anonymous[prefix])
		}
		anon = strings.Join(parts, ", ")
	}
	ilm := "Disabled"
	if s.ILMRules > 0 {
		ilm = fmt.Sprintf("%d rule(s)", s.ILMRules)
	}
	var tags []string
	for _, k := range slices.Sorted(maps.Keys(s.Tags)) {
		tags = append(tags, k+"="+s.Tags[k])
	}
	var b strings.Builder
	for _, line := range [][2]string{
		{"Name", s.Bucket},
		{"Date", show("date", date)},
		{"Versioning", show("versioning", s.Versioning)},
		{"Location", show("location", cmp.Or(s.Location, "-"))},
		{"Anonymous", show("anonymous", anon)},
		{"ILM", show("ilm", ilm)},
		{"Encryption", show("encryption", cmp.Or(s.Encryption, "Disabled"))},
		{"Object lock", show("objectLock", s.ObjectLock)},
		{"Tags", show("tags", cmp.Or(strings.Join(tags, ", "), "-"))},
	} {
		fmt.Fprintf(&b, "%-11s: %s\n", line[0], line[1])
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// versioningState names a bucket's versioning as S3 reports it; a bucket
// that never had versioning has no Status, shown as "Unversioned".
func versioningState(vc minio.BucketVersioningConfiguration) string {
	if vc.Status == "" {
		return "Unversioned"
	}
	return vc.Status
}
