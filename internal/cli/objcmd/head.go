package objcmd

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newHeadCmd(opts *cmdutil.Options) *cobra.Command {
	var (
		lines     int
		versionID string
	)
	cmd := &cobra.Command{
		Use:   "head ALIAS/BUCKET/KEY [ALIAS/BUCKET/KEY ...]",
		Short: "Write the first lines of objects to standard output",
		Long: `Write the first N lines (10 unless -n says otherwise) of each object to
standard output. Only what those lines need is read from the server. The
bytes are written as stored; --json does not change the output.`,
		Example: `  twinlake head site1/logs/app.log
  twinlake head -n 1 site1/data/table.csv
  twinlake head -n 5 --version-id 3f1c... site1/logs/app.log`,
		Args: cobra.MinimumNArgs(1),
		RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, args []string) error {
			if lines < 0 {
				return fmt.Errorf("-n %d: want 0 or more lines", lines)
			}
			if versionID != "" && len(args) > 1 {
				return errors.New("--version-id names one version of one object: give one target")
			}
			for _, arg := range args {
				if err := headObject(cmd, opts, arg, versionID, lines); err != nil {
					return err
				}
			}
			return nil
		}),
	}
	cmd.Flags().IntVarP(&lines, "lines", "n", 10, "how many lines to print")
	cmd.Flags().StringVar(&versionID, "version-id", "", "read this version of the object")
	return cmd
}

func headObject(cmd *cobra.Command, opts *cmdutil.Options, arg, versionID string, lines int) error {
	t, err := cmdutil.RequireKey(arg)
	if err != nil {
		return err
	}
	c, err := opts.S3Client(t.Alias)
	if err != nil {
		return err
	}
	obj, err := c.GetObject(cmd.Context(), t.Bucket, t.Key, minio.GetObjectOptions{VersionID: versionID})
	if err != nil {
		return cmdutil.S3Err("read "+cmdutil.FmtTarget(t), err)
	}
	// Closing early abandons the rest of the body: head of a huge log
	// costs its first lines, not the whole object.
	defer obj.Close()
	if _, err := obj.Stat(); err != nil {
		return cmdutil.S3Err("read "+cmdutil.FmtTarget(t), err)
	}
	r, w := bufio.NewReader(obj), cmd.OutOrStdout()
	for range lines {
		line, err := r.ReadBytes('\n')
		if _, werr := w.Write(line); werr != nil {
			return werr
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return cmdutil.S3Err("read "+cmdutil.FmtTarget(t), err)
		}
	}
	return nil
}
