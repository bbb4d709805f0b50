package objcmd

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"
	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// newTagCmd is "tag set|list|remove" for objects (ALIAS/BUCKET/KEY) and
// buckets (ALIAS/BUCKET).
func newTagCmd(opts *cmdutil.Options) *cobra.Command {
	var versionID string
	cmd := &cobra.Command{
		Use:   "tag",
		Short: "Set, list or remove tags on objects and buckets",
		Long: `Tags are key=value pairs kept with an object (up to 10) or a bucket (up to
50); policies and lifecycle rules can match them. A target with a key is an
object, without one a bucket. set replaces the whole tag set.`,
		Example: `  twinlake tag set site1/photos/cat.jpg "owner=ana&project=zoo"
  twinlake tag list site1/photos/cat.jpg
  twinlake tag set site1/photos "cost-center=42"
  twinlake tag remove --version-id 3f1c... site1/photos/cat.jpg`,
	}
	cmd.PersistentFlags().StringVar(&versionID, "version-id", "", "tag this version of the object")
	sub := func(use, short, example string, args cobra.PositionalArgs, run func(*cobra.Command, cmdutil.Target, []string) (tagResult, error)) *cobra.Command {
		return &cobra.Command{
			Use: use, Short: short, Example: example, Args: args,
			RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, a []string) error {
				t, err := cmdutil.RequireBucket(a[0])
				if err != nil {
					return err
				}
				if versionID != "" && t.Key == "" {
					return fmt.Errorf("--version-id applies to an object: %q names a bucket", a[0])
				}
				r, err := run(cmd, t, a[1:])
				if err != nil {
					return err
				}
				r.Status, r.Name, r.VersionID = "success", cmdutil.FmtTarget(t), versionID
				return cmdutil.PrintResult(cmd.OutOrStdout(), opts, r, r.human())
			}),
		}
	}
	cmd.AddCommand(
		sub("set ALIAS/BUCKET[/KEY] TAGS", "Replace the tags of an object or bucket",
			`  twinlake tag set site1/photos/cat.jpg "owner=ana&project=zoo"`, cobra.ExactArgs(2),
			func(cmd *cobra.Command, t cmdutil.Target, a []string) (tagResult, error) {
				return tagResult{op: "set"}, setTags(cmd, opts, t, versionID, a[0])
			}),
		sub("list ALIAS/BUCKET[/KEY]", "List the tags of an object or bucket",
			`  twinlake tag list site1/photos/cat.jpg`, cobra.ExactArgs(1),
			func(cmd *cobra.Command, t cmdutil.Target, _ []string) (tagResult, error) {
				m, err := listTags(cmd, opts, t, versionID)
				return tagResult{op: "list", Tagset: m}, err
			}),
		sub("remove ALIAS/BUCKET[/KEY]", "Remove every tag of an object or bucket",
			`  twinlake tag remove site1/photos/cat.jpg`, cobra.ExactArgs(1),
			func(cmd *cobra.Command, t cmdutil.Target, _ []string) (tagResult, error) {
				return tagResult{op: "remove"}, removeTags(cmd, opts, t, versionID)
			}),
	)
	return cmd
}

// tagResult is one tag command's answer; Tagset only for list.
type tagResult struct {
	Status    string            `json:"status"`
	Name      string            `json:"name"`
	VersionID string            `json:"versionId,omitempty"`
	Tagset    map[string]string `json:"tagset,omitempty"`
	op        string
}

func (r tagResult) human() string {
	switch r.op {
	case "set":
		return fmt.Sprintf("Tags set for %s.", r.Name)
	case "remove":
		return fmt.Sprintf("Tags removed for %s.", r.Name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Name : %s", r.Name)
	if len(r.Tagset) == 0 {
		b.WriteString("\n(no tags)")
	}
	for _, k := range slices.Sorted(maps.Keys(r.Tagset)) {
		fmt.Fprintf(&b, "\n%s : %s", k, r.Tagset[k])
	}
	return b.String()
}

func setTags(cmd *cobra.Command, opts *cmdutil.Options, t cmdutil.Target, versionID, spec string) error {
	c, err := opts.S3Client(t.Alias)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if t.Key == "" {
		tg, err := tags.Parse(spec, false)
		if err != nil {
			return fmt.Errorf("tags %q: %w (want \"k1=v1&k2=v2\")", spec, err)
		}
		return cmdutil.S3Err("set tags on "+cmdutil.FmtTarget(t), c.SetBucketTagging(ctx, t.Bucket, tg))
	}
	tg, err := tags.ParseObjectTags(spec)
	if err != nil {
		return fmt.Errorf("tags %q: %w (want \"k1=v1&k2=v2\")", spec, err)
	}
	return cmdutil.S3Err("set tags on "+cmdutil.FmtTarget(t),
		c.PutObjectTagging(ctx, t.Bucket, t.Key, tg, minio.PutObjectTaggingOptions{VersionID: versionID}))
}

func listTags(cmd *cobra.Command, opts *cmdutil.Options, t cmdutil.Target, versionID string) (map[string]string, error) {
	c, err := opts.S3Client(t.Alias)
	if err != nil {
		return nil, err
	}
	ctx := cmd.Context()
	var tg *tags.Tags
	if t.Key == "" {
		tg, err = c.GetBucketTagging(ctx, t.Bucket)
		if cmdutil.S3Code(err) == "NoSuchTagSet" {
			return map[string]string{}, nil // an untagged bucket
		}
	} else {
		tg, err = c.GetObjectTagging(ctx, t.Bucket, t.Key, minio.GetObjectTaggingOptions{VersionID: versionID})
	}
	if err != nil {
		return nil, cmdutil.S3Err("list tags of "+cmdutil.FmtTarget(t), err)
	}
	return tg.ToMap(), nil
}

func removeTags(cmd *cobra.Command, opts *cmdutil.Options, t cmdutil.Target, versionID string) error {
	c, err := opts.S3Client(t.Alias)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if t.Key == "" {
		return cmdutil.S3Err("remove tags of "+cmdutil.FmtTarget(t), c.RemoveBucketTagging(ctx, t.Bucket))
	}
	return cmdutil.S3Err("remove tags of "+cmdutil.FmtTarget(t),
		c.RemoveObjectTagging(ctx, t.Bucket, t.Key, minio.RemoveObjectTaggingOptions{VersionID: versionID}))
}
