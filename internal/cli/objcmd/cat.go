package objcmd

import (
	"errors"
	"io"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newCatCmd(opts *cmdutil.Options) *cobra.Command {
	var versionID, rewind string
	var win catWindow
	cmd := &cobra.Command{
		Use:   "cat ALIAS/BUCKET/KEY [ALIAS/BUCKET/KEY ...]",
		Short: "Write object contents to standard output",
		Long: `Write object contents to standard output, one after another. The bytes
are written as stored; --json does not change the output. --offset N starts at
byte N; --tail N writes the last N bytes. Only those bytes are read (a ranged
GET).`,
		Example: `  twinlake cat site1/config/app.yaml
  twinlake cat --version-id 3f1c... site1/config/app.yaml > old.yaml
  twinlake cat --rewind 2d site1/config/app.yaml
  twinlake cat --tail 4096 site1/logs/app.log`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if versionID != "" && len(args) > 1 {
				return errors.New("--version-id names one version of one object: give one target")
			}
			at, err := rewindFlag(rewind)
			if err != nil {
				return err
			}
			if !at.IsZero() && versionID != "" {
				return errors.New("--rewind and --version-id both pick a version: give one")
			}
			if win.offset < 0 || win.tail < 0 || (win.offset > 0 && win.tail > 0) {
				return errors.New("--offset and --tail take a byte count of 0 or more, and not both")
			}
			for _, arg := range args {
				if err := catObject(cmd, opts, arg, versionID, at, win); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&versionID, "version-id", "", "read this version of the object")
	cmd.Flags().StringVar(&rewind, "rewind", "", rewindHelp)
	cmd.Flags().Int64Var(&win.offset, "offset", 0, "start at this byte")
	cmd.Flags().Int64Var(&win.tail, "tail", 0, "write only the last this many bytes")
	return cmd
}

// catWindow is the part of an object cat writes: from offset, or the last
// tail bytes; zero values mean all of it.
type catWindow struct{ offset, tail int64 }

func catObject(cmd *cobra.Command, opts *cmdutil.Options, arg, versionID string, at time.Time, win catWindow) error {
	t, err := cmdutil.RequireKey(arg)
	if err != nil {
		return err
	}
	c, err := opts.S3Client(t.Alias)
	if err != nil {
		return err
	}
	if !at.IsZero() {
		if versionID, err = versionAt(cmd.Context(), c, t, at); err != nil {
			return err
		}
	}
	o := minio.GetObjectOptions{VersionID: versionID}
	switch {
	case win.offset > 0:
		err = o.SetRange(win.offset, 0)
	case win.tail > 0:
		err = o.SetRange(0, -win.tail)
	}
	if err != nil {
		return err
	}
	obj, err := c.GetObject(cmd.Context(), t.Bucket, t.Key, o)
	if err != nil {
		return cmdutil.S3Err("read "+cmdutil.FmtTarget(t), err)
	}
	defer obj.Close()
	// minio-go sends the GET on first read, so S3 errors surface here.
	if _, err := io.Copy(cmd.OutOrStdout(), obj); err != nil {
		return cmdutil.S3Err("read "+cmdutil.FmtTarget(t), err)
	}
	return nil
}
