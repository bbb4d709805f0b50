package objcmd

import (
	"fmt"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// pipePartSize is the part size of a stream of unknown length. minio-go
// buffers one part at a time, so it bounds memory; with S3's 10,000 parts it
// also bounds the stream at about 156GiB.
const pipePartSize = 16 << 20

// pipeFlags are the pipe command's flags (cp - takes --attr only).
type pipeFlags struct {
	attrs []string
	tags  string
}

func newPipeCmd(opts *cmdutil.Options) *cobra.Command {
	var f pipeFlags
	cmd := &cobra.Command{
		Use:   "pipe ALIAS/BUCKET/KEY",
		Short: "Stream standard input to an object",
		Long: `Read standard input to its end and store it as one object. The length need
not be known: input larger than one part (16MiB) is uploaded as a multipart
upload, one part in memory at a time, up to about 156GiB. Nothing is printed
on success unless --json is given. 'twinlake cp - TARGET' does the same.`,
		Example: `  tar czf - ./logs | twinlake pipe site1/backups/logs.tar.gz
  pg_dump app | twinlake pipe --attr Content-Type=application/sql site1/backups/app.sql
  echo hello | twinlake pipe --tags "team=data&env=prod" site1/bkt/hello.txt`,
		Args: cobra.ExactArgs(1),
		RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, args []string) error {
			r, err := pipeUpload(cmd, opts, args[0], f)
			if err != nil {
				return err
			}
			r.Source = "-"
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, r, "")
		}),
	}
	cmd.Flags().StringArrayVar(&f.attrs, "attr", nil, "metadata key=value for the object (repeatable, or k1=v1;k2=v2)")
	cmd.Flags().StringVar(&f.tags, "tags", "", `object tags, "k1=v1&k2=v2"`)
	return cmd
}

// runCPStdin is "cp - TARGET": pipe with cp's output.
func runCPStdin(cmd *cobra.Command, opts *cmdutil.Options, dstArg string, f cpFlags) error {
	if f.recursive || f.versionID != "" {
		return fmt.Errorf("cp -: standard input is one object; --recursive and --version-id do not apply")
	}
	r, err := pipeUpload(cmd, opts, dstArg, pipeFlags{attrs: f.attrs})
	if err != nil {
		return err
	}
	r.Source = "-"
	human := fmt.Sprintf("`-` -> `%s` (%s)", r.Target, cmdutil.FmtBytes(r.Size))
	return cmdutil.PrintResult(cmd.OutOrStdout(), opts, r, human)
}

// pipeUpload streams the command's standard input to the object arg names.
func pipeUpload(cmd *cobra.Command, opts *cmdutil.Options, arg string, f pipeFlags) (cpResult, error) {
	t, err := cmdutil.RequireKey(arg)
	if err != nil {
		return cpResult{}, err
	}
	if strings.HasSuffix(t.Key, "/") {
		return cpResult{}, fmt.Errorf("%q: standard input needs an object name, not a folder", arg)
	}
	meta, ctype, err := parseAttrs(f.attrs)
	if err != nil {
		return cpResult{}, err
	}
	po := minio.PutObjectOptions{UserMetadata: meta, ContentType: ctype, PartSize: pipePartSize}
	if po.UserTags, err = tagsFlag(f.tags); err != nil {
		return cpResult{}, err
	}
	c, err := opts.S3Client(t.Alias)
	if err != nil {
		return cpResult{}, err
	}
	prog := cmdutil.StartProgress(cmd, opts, "pipe")
	info, err := c.PutObject(cmd.Context(), t.Bucket, t.Key, prog.Reader(cmd.InOrStdin()), -1, po)
	if err == nil {
		prog.ObjectDone()
	}
	prog.Finish()
	if err != nil {
		return cpResult{}, cmdutil.S3Err("upload standard input to "+cmdutil.FmtTarget(t), err)
	}
	return cpResult{Status: "success", Target: cmdutil.FmtTarget(t), Size: info.Size,
		ETag: strings.Trim(info.ETag, `"`), VersionID: info.VersionID}, nil
}
