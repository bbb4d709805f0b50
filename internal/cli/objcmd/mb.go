package objcmd

import (
	"fmt"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newMBCmd(opts *cmdutil.Options) *cobra.Command {
	var ignoreExisting, withVersioning, withLock bool
	cmd := &cobra.Command{
		Use:   "mb ALIAS/BUCKET [ALIAS/BUCKET ...]",
		Short: "Make buckets",
		Example: `  twinlake mb site1/photos
  twinlake mb --ignore-existing site1/photos
  twinlake mb --with-versioning site1/warehouse
  twinlake mb --with-lock site1/records`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, arg := range args {
				if err := makeBucket(cmd, opts, arg, ignoreExisting, withVersioning, withLock); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&ignoreExisting, "ignore-existing", "p", false, "succeed if the bucket already exists")
	cmd.Flags().BoolVar(&withVersioning, "with-versioning", false, "enable versioning on the new bucket")
	cmd.Flags().BoolVarP(&withLock, "with-lock", "l", false, "create the bucket with object lock (WORM; implies versioning, which then cannot be suspended)")
	return cmd
}

func makeBucket(cmd *cobra.Command, opts *cmdutil.Options, arg string, ignoreExisting, withVersioning, withLock bool) error {
	t, err := cmdutil.RequireBucket(arg)
	if err != nil {
		return err
	}
	if t.Key != "" {
		return fmt.Errorf("%q: mb takes ALIAS/BUCKET, not a key", arg)
	}
	c, err := opts.S3Client(t.Alias)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	name := cmdutil.FmtTarget(t)
	err = c.MakeBucket(ctx, t.Bucket, minio.MakeBucketOptions{Region: cmdutil.S3Region, ObjectLocking: withLock})
	existed := false
	if code := cmdutil.S3Code(err); ignoreExisting && (code == "BucketAlreadyOwnedByYou" || code == "BucketAlreadyExists") {
		err, existed = nil, true
	}
	if err != nil {
		return cmdutil.S3Err("make bucket "+name, err)
	}
	if withVersioning && !withLock {
		if err := c.EnableVersioning(ctx, t.Bucket); err != nil {
			return cmdutil.S3Err("enable versioning on "+name, err)
		}
	}
	human := fmt.Sprintf("Bucket created successfully `%s`.", name)
	if existed {
		human = fmt.Sprintf("Bucket `%s` already exists.", name)
	}
	return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]any{
		"status": "success", "bucket": name, "created": !existed, "versioning": withVersioning || withLock, "objectLock": withLock,
	}, human)
}
