package objcmd

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// quotaResult is a bucket's quota as printed.
type quotaResult struct {
	Status string `json:"status"`
	adminclient.BucketQuota
}

func newQuotaCmd(opts *cmdutil.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quota",
		Short: "Set, show and clear bucket quotas",
		Long: `A bucket's hard quota bounds the bytes of its live objects (the latest
version of each key, delete markers aside): a client write (PUT, copy, upload
part) that would take the bucket past it is refused with
XMinioAdminBucketQuotaExceeded. The quota is checked against the bucket's usage
as of at most a second before, so concurrent writes can pass it by what they
write in that second. Objects arriving from a replication peer are never
refused: the quota replicates with the bucket and each site checks its own
clients' writes. Setting a quota needs admin:SetBucketQuota, reading it
admin:GetBucketQuota.`,
	}
	var size string
	set := &cobra.Command{
		Use:     "set ALIAS/BUCKET --size SIZE",
		Short:   "Set a bucket's hard quota",
		Example: "  twinlake quota set site1/uploads --size 10GiB",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if size == "" {
				return errors.New("quota set needs --size (for example --size 10GiB; quota clear removes a quota)")
			}
			n, err := parseByteSize(size)
			if err != nil || n <= 0 {
				return fmt.Errorf("quota set --size %q: want a positive size such as 500MiB or 10GiB", size)
			}
			t, c, err := quotaClient(opts, args[0])
			if err != nil {
				return err
			}
			if err := c.SetBucketQuota(cmd.Context(), t.Bucket, n); err != nil {
				return fmt.Errorf("quota set %s: %w", args[0], err)
			}
			r := quotaResult{Status: "success", BucketQuota: adminclient.BucketQuota{Bucket: t.Bucket, Quota: n, QuotaType: adminclient.QuotaTypeHard}}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, r,
				fmt.Sprintf("Successfully set bucket quota of %s on `%s`", cmdutil.FmtBytes(n), args[0]))
		},
	}
	set.Flags().StringVar(&size, "size", "", "the most bytes of live objects the bucket may hold (KiB, MiB, GiB, TiB)")
	info := &cobra.Command{
		Use:     "info ALIAS/BUCKET",
		Short:   "Show a bucket's quota and what it holds against it",
		Example: "  twinlake quota info site1/uploads",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, c, err := quotaClient(opts, args[0])
			if err != nil {
				return err
			}
			q, err := c.BucketQuota(cmd.Context(), t.Bucket)
			if err != nil {
				return fmt.Errorf("quota info %s: %w", args[0], err)
			}
			human := fmt.Sprintf("Bucket `%s` has no quota; it holds %s in %d objects", args[0], cmdutil.FmtBytes(q.Used), q.Objects)
			if q.Quota > 0 {
				human = fmt.Sprintf("Bucket `%s` has a hard quota of %s; it holds %s (%.1f%%) in %d objects", args[0],
					cmdutil.FmtBytes(q.Quota), cmdutil.FmtBytes(q.Used), 100*float64(q.Used)/float64(q.Quota), q.Objects)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, quotaResult{Status: "success", BucketQuota: q}, human)
		},
	}
	clear := &cobra.Command{
		Use:     "clear ALIAS/BUCKET",
		Short:   "Remove a bucket's quota",
		Example: "  twinlake quota clear site1/uploads",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, c, err := quotaClient(opts, args[0])
			if err != nil {
				return err
			}
			if err := c.SetBucketQuota(cmd.Context(), t.Bucket, 0); err != nil {
				return fmt.Errorf("quota clear %s: %w", args[0], err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, quotaResult{Status: "success", BucketQuota: adminclient.BucketQuota{Bucket: t.Bucket}},
				fmt.Sprintf("Successfully cleared bucket quota configuration on `%s`", args[0]))
		},
	}
	cmd.AddCommand(set, info, clear)
	return cmd
}

// quotaClient parses ALIAS/BUCKET and opens an admin client for its alias.
func quotaClient(opts *cmdutil.Options, arg string) (cmdutil.Target, *adminclient.Client, error) {
	t, err := cmdutil.RequireBucket(arg)
	if err != nil {
		return t, nil, err
	}
	if t.Key != "" {
		return t, nil, fmt.Errorf("%q: a quota is a bucket's: want ALIAS/BUCKET", arg)
	}
	c, err := opts.AdminClient(t.Alias)
	return t, c, err
}
