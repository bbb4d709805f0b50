package cli

import (
	"fmt"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"
)

func newMBCmd(opts *options) *cobra.Command {
	var ignoreExisting, withVersioning bool
	cmd := &cobra.Command{
		Use:   "mb ALIAS/BUCKET [ALIAS/BUCKET ...]",
		Short: "Make buckets",
		Example: `  twinlake mb site1/photos
  twinlake mb --ignore-existing site1/photos
  twinlake mb --with-versioning site1/warehouse`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, arg := range args {
				if err := makeBucket(cmd, opts, arg, ignoreExisting, withVersioning); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&ignoreExisting, "ignore-existing", "p", false, "succeed if the bucket already exists")
	cmd.Flags().BoolVar(&withVersioning, "with-versioning", false, "enable versioning on the new bucket")
	return cmd
}

func makeBucket(cmd *cobra.Command, opts *options, arg string, ignoreExisting, withVersioning bool) error {
	t, err := requireBucket(arg)
	if err != nil {
		return err
	}
	if t.Key != "" {
		return fmt.Errorf("%q: mb takes ALIAS/BUCKET, not a key", arg)
	}
	c, err := opts.s3Client(t.Alias)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	name := fmtTarget(t)
	err = c.MakeBucket(ctx, t.Bucket, minio.MakeBucketOptions{Region: s3Region})
	existed := false
	if code := s3Code(err); ignoreExisting && (code == "BucketAlreadyOwnedByYou" || code == "BucketAlreadyExists") {
		err, existed = nil, true
	}
	if err != nil {
		return s3Err("make bucket "+name, err)
	}
	if withVersioning {
		if err := c.EnableVersioning(ctx, t.Bucket); err != nil {
			return s3Err("enable versioning on "+name, err)
		}
	}
	human := fmt.Sprintf("Bucket created successfully `%s`.", name)
	if existed {
		human = fmt.Sprintf("Bucket `%s` already exists.", name)
	}
	return printResult(cmd.OutOrStdout(), opts, map[string]any{
		"status": "success", "bucket": name, "created": !existed, "versioning": withVersioning,
	}, human)
}
