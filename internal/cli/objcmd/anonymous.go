package objcmd

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/cli/cmdutil"
	"github.com/twinlake/twinlake/internal/iam/policy"
)

// AddAnonymousCommands attaches `anonymous`: mc's canned bucket policies
// for unauthenticated access.
func AddAnonymousCommands(root *cobra.Command, opts *cmdutil.Options) {
	cmd := &cobra.Command{
		Use:   "anonymous",
		Short: "Manage anonymous (unauthenticated) access to buckets and prefixes",
		Long: `Anonymous access is granted by statements with Principal "*" in the bucket policy:
download (list and read), upload (write), public (both) or none. Statements the operator
wrote by other means (PutBucketPolicy, set-json) are kept by set.`,
		Example: `  twinlake anonymous set download site1/media/public/
  twinlake anonymous get site1/media/public/
  twinlake anonymous list site1/media
  twinlake anonymous set none site1/media/public/
  twinlake anonymous set-json ./policy.json site1/media`,
	}
	cmd.AddCommand(newAnonymousSetCmd(opts), newAnonymousGetCmd(opts), newAnonymousListCmd(opts), newAnonymousSetJSONCmd(opts))
	root.AddCommand(cmd)
}

var anonymousLevels = []string{policy.AnonymousNone, policy.AnonymousDownload, policy.AnonymousUpload, policy.AnonymousPublic}

func newAnonymousSetCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "set none|download|upload|public ALIAS/BUCKET[/PREFIX]",
		Short: "Set the anonymous access level of a bucket or prefix",
		Example: `  twinlake anonymous set download site1/media/public/
  twinlake anonymous set none site1/media/public/`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			level, arg := args[0], args[1]
			if slices.Contains(anonymousLevels, arg) { // ALIAS/BUCKET first, as some scripts write it
				level, arg = arg, level
			}
			t, c, err := opts.BucketClient(arg)
			if err != nil {
				return err
			}
			cur, err := c.GetBucketPolicy(cmd.Context(), t.Bucket)
			if err != nil && cmdutil.S3Code(err) != "NoSuchBucketPolicy" {
				return cmdutil.S3Err("anonymous set "+arg, err)
			}
			doc, err := policy.SetAnonymous([]byte(cur), t.Bucket, t.Key, level)
			if err != nil {
				return fmt.Errorf("anonymous set %s: %w", arg, err)
			}
			if err := c.SetBucketPolicy(cmd.Context(), t.Bucket, string(doc)); err != nil {
				return cmdutil.S3Err("anonymous set "+arg, err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]string{"target": arg, "permission": level},
				fmt.Sprintf("Access permission for `%s` is set to `%s`", arg, level))
		},
	}
}

// anonymousLevelsOf reads the bucket's policy and its canned levels.
func anonymousLevelsOf(cmd *cobra.Command, opts *cmdutil.Options, arg string) (cmdutil.Target, map[string]string, error) {
	t, c, err := opts.BucketClient(arg)
	if err != nil {
		return t, nil, err
	}
	cur, err := c.GetBucketPolicy(cmd.Context(), t.Bucket)
	if err != nil && cmdutil.S3Code(err) != "NoSuchBucketPolicy" {
		return t, nil, cmdutil.S3Err("anonymous "+arg, err)
	}
	levels, err := policy.AnonymousLevels([]byte(cur))
	return t, levels, err
}

func newAnonymousGetCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:     "get ALIAS/BUCKET[/PREFIX]",
		Short:   "Show the anonymous access level of a bucket or prefix",
		Example: "  twinlake anonymous get site1/media/public/",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, levels, err := anonymousLevelsOf(cmd, opts, args[0])
			if err != nil {
				return err
			}
			level := levels[t.Key]
			if level == "" {
				level = policy.AnonymousNone
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]string{"target": args[0], "permission": level},
				fmt.Sprintf("Access permission for `%s` is `%s`", args[0], level))
		},
	}
}

func newAnonymousListCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:     "list ALIAS/BUCKET[/PREFIX]",
		Short:   "List the prefixes with anonymous access, and their levels",
		Example: "  twinlake anonymous list site1/media",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, levels, err := anonymousLevelsOf(cmd, opts, args[0])
			if err != nil {
				return err
			}
			var b strings.Builder
			var rows []map[string]string
			for _, p := range policy.SortedPrefixes(levels) {
				if !strings.HasPrefix(p, t.Key) {
					continue
				}
				name := t.Alias + "/" + t.Bucket + "/" + p + "*"
				fmt.Fprintf(&b, "%s => %s\n", name, levels[p])
				rows = append(rows, map[string]string{"target": name, "permission": levels[p]})
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, rows, strings.TrimSuffix(b.String(), "\n"))
		},
	}
}

func newAnonymousSetJSONCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:     "set-json FILE ALIAS/BUCKET",
		Short:   "Set the whole bucket policy from a JSON file",
		Example: "  twinlake anonymous set-json ./policy.json site1/media",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := cmdutil.RequireBucket(args[1])
			if err != nil {
				return err
			}
			doc, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			c, err := opts.S3Client(t.Alias)
			if err != nil {
				return err
			}
			if err := c.SetBucketPolicy(cmd.Context(), t.Bucket, string(doc)); err != nil {
				return cmdutil.S3Err("anonymous set-json "+args[1], err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]string{"target": args[1], "status": "set"},
				fmt.Sprintf("Access permission for `%s` is set from `%s`", args[1], args[0]))
		},
	}
}
