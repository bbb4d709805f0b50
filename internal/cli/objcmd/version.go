package objcmd

import (
	"fmt"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newVersionCmd(opts *cmdutil.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Enable, suspend or show bucket versioning",
		Example: `  twinlake version enable site1/photos
  twinlake version suspend site1/photos
  twinlake version info site1/photos --json`,
	}
	// One table: the action, what it does, and the client call (nil: read only).
	actions := []struct {
		name, short string
		apply       func(c *minio.Client, cmd *cobra.Command, bucket string) error
	}{
		{"enable", "Enable versioning on a bucket", func(c *minio.Client, cmd *cobra.Command, b string) error {
			return c.EnableVersioning(cmd.Context(), b)
		}},
		{"suspend", "Suspend versioning on a bucket (existing versions stay)", func(c *minio.Client, cmd *cobra.Command, b string) error {
			return c.SuspendVersioning(cmd.Context(), b)
		}},
		{"info", "Show a bucket's versioning state", nil},
	}
	for _, a := range actions {
		cmd.AddCommand(&cobra.Command{
			Use:     a.name + " ALIAS/BUCKET",
			Short:   a.short,
			Example: fmt.Sprintf("  twinlake version %s site1/photos", a.name),
			Args:    cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return runVersion(cmd, opts, args[0], a.name, a.apply)
			},
		})
	}
	return cmd
}

func runVersion(cmd *cobra.Command, opts *cmdutil.Options, arg, action string, apply func(*minio.Client, *cobra.Command, string) error) error {
	t, err := cmdutil.RequireBucket(arg)
	if err != nil {
		return err
	}
	if t.Key != "" {
		return fmt.Errorf("%q: versioning is set per bucket: want ALIAS/BUCKET", arg)
	}
	c, err := opts.S3Client(t.Alias)
	if err != nil {
		return err
	}
	name := cmdutil.FmtTarget(t)
	if apply != nil {
		if err := apply(c, cmd, t.Bucket); err != nil {
			return cmdutil.S3Err(action+" versioning on "+name, err)
		}
	}
	vc, err := c.GetBucketVersioning(cmd.Context(), t.Bucket)
	if err != nil {
		return cmdutil.S3Err("versioning of "+name, err)
	}
	state := versioningState(vc)
	human := fmt.Sprintf("%s versioning is %s", name, strings.ToLower(state))
	if vc.Status == "" {
		human = fmt.Sprintf("%s is un-versioned", name)
	}
	return cmdutil.PrintResult(cmd.OutOrStdout(), opts,
		map[string]string{"status": "success", "bucket": name, "versioning": state}, human)
}
