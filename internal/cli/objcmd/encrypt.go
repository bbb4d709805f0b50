package objcmd

import (
	"fmt"
	"strings"

	"github.com/minio/minio-go/v7/pkg/sse"
	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// encryptResult is a bucket's default encryption as printed.
type encryptResult struct {
	Status string `json:"status"`
	Bucket string `json:"bucket"`
	// Algorithm is "sse-s3", or "" when the bucket has no default.
	Algorithm string `json:"algorithm"`
}

func newEncryptCmd(opts *cmdutil.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "encrypt",
		Short: "Set, show and clear a bucket's default encryption",
		Long: `A bucket's default encryption encrypts every object written to it without
its own encryption header (SSE-S3: AES-256 under a data key per object, sealed by
the site key from TWINLAKE_KMS_SECRET_KEY). It replicates with the bucket. Only
sse-s3 exists: there is no external KMS, so sse-kms is refused. A warehouse's
default is table encrypt's.`,
	}
	set := &cobra.Command{
		Use:     "set sse-s3 ALIAS/BUCKET",
		Short:   "Encrypt new objects of a bucket by default",
		Example: "  twinlake encrypt set sse-s3 site1/secure",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if alg := strings.ToLower(args[0]); alg != "sse-s3" {
				return fmt.Errorf("encrypt set %s: only sse-s3 exists here (no external KMS)", args[0])
			}
			t, c, err := opts.BucketClient(args[1])
			if err != nil {
				return err
			}
			if err := c.SetBucketEncryption(cmd.Context(), t.Bucket, sse.NewConfigurationSSES3()); err != nil {
				return cmdutil.S3Err("encrypt set "+args[1], err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, encryptResult{Status: "success", Bucket: args[1], Algorithm: "sse-s3"},
				fmt.Sprintf("Auto encryption configuration has been set successfully for %s", args[1]))
		},
	}
	info := &cobra.Command{
		Use:     "info ALIAS/BUCKET",
		Short:   "Show a bucket's default encryption",
		Example: "  twinlake encrypt info site1/secure",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, c, err := opts.BucketClient(args[0])
			if err != nil {
				return err
			}
			r := encryptResult{Status: "success", Bucket: args[0]}
			cfg, err := c.GetBucketEncryption(cmd.Context(), t.Bucket)
			switch {
			case cmdutil.S3Code(err) == "ServerSideEncryptionConfigurationNotFoundError":
			case err != nil:
				return cmdutil.S3Err("encrypt info "+args[0], err)
			case len(cfg.Rules) > 0:
				r.Algorithm = "sse-s3"
			}
			human := fmt.Sprintf("Auto encryption is not enabled for %s", args[0])
			if r.Algorithm != "" {
				human = fmt.Sprintf("Auto encryption 'sse-s3' is enabled for %s", args[0])
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, r, human)
		},
	}
	clear := &cobra.Command{
		Use:     "clear ALIAS/BUCKET",
		Short:   "Stop encrypting new objects of a bucket by default",
		Example: "  twinlake encrypt clear site1/secure",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, c, err := opts.BucketClient(args[0])
			if err != nil {
				return err
			}
			if err := c.RemoveBucketEncryption(cmd.Context(), t.Bucket); err != nil {
				return cmdutil.S3Err("encrypt clear "+args[0], err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, encryptResult{Status: "success", Bucket: args[0]},
				fmt.Sprintf("Auto encryption configuration has been cleared successfully for %s", args[0]))
		},
	}
	cmd.AddCommand(set, info, clear)
	return cmd
}
