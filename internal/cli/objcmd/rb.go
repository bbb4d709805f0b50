package objcmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newRBCmd(opts *cmdutil.Options) *cobra.Command {
	var force, yes bool
	cmd := &cobra.Command{
		Use:   "rb ALIAS/BUCKET [ALIAS/BUCKET ...]",
		Short: "Remove buckets",
		Long: `Remove buckets. A bucket must be empty (no object versions or delete
markers) unless --force, which first removes every version in it; --force asks
for confirmation, --yes skips it.`,
		Example: `  twinlake rb site1/scratch
  twinlake rb --force --yes site1/scratch`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, arg := range args {
				if err := removeBucket(cmd, opts, arg, force, yes); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "remove every object version in the bucket first")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not prompt before --force removes the bucket's contents")
	return cmd
}

func removeBucket(cmd *cobra.Command, opts *cmdutil.Options, arg string, force, yes bool) error {
	t, err := cmdutil.RequireBucket(arg)
	if err != nil {
		return err
	}
	if t.Key != "" {
		return fmt.Errorf("%q: rb takes ALIAS/BUCKET; use rm for objects", arg)
	}
	c, err := opts.S3Client(t.Alias)
	if err != nil {
		return err
	}
	ctx, name := cmd.Context(), cmdutil.FmtTarget(t)
	removed := 0
	if force {
		if err := cmdutil.Confirm(cmd, yes, "Remove bucket `"+name+"` and every object version in it?"); err != nil {
			return err
		}
		removed, err = RemoveObjects(ctx, c, t.Bucket, ObjSelection{AllVersions: true}, nil)
		if err != nil {
			return err
		}
	}
	if err := c.RemoveBucket(ctx, t.Bucket); err != nil {
		if cmdutil.S3Code(err) == "BucketNotEmpty" && !force {
			return fmt.Errorf("remove bucket %s: bucket is not empty (use --force to remove its contents too)", name)
		}
		return cmdutil.S3Err("remove bucket "+name, err)
	}
	return cmdutil.PrintResult(cmd.OutOrStdout(), opts,
		map[string]any{"status": "success", "bucket": name, "objectsRemoved": removed},
		fmt.Sprintf("Removed `%s` successfully.", name))
}
