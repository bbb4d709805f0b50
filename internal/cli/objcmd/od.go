package objcmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// odArgs are od's dd-style operands.
type odArgs struct {
	in, out            string
	size               int64 // bytes per part; 0: one part of everything
	count, skip, parts int64
}

// odResult is what od prints when done.
type odResult struct {
	Status      string  `json:"status"`
	Source      string  `json:"source"`
	Target      string  `json:"target"`
	Bytes       int64   `json:"bytes"`
	Parts       int64   `json:"parts"`
	Seconds     float64 `json:"seconds"`
	BytesPerSec float64 `json:"bytesPerSec"`
}

func newODCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "od if=SOURCE of=TARGET [size=SIZE] [count=N] [skip=N] [parts=N]",
		Short: "Copy between files and objects in parts of a given size, as dd does",
		Long: `Copy SOURCE (a file, an object, or standard input without if=) to TARGET
(a file or an object) in parts of size bytes, as dd copies blocks: skip=N
leaves out the first N parts of the source, count=N copies N parts at most;
parts=N, instead of size=, cuts the source (a file or an object, whose size is
known) into N parts. An object target is written as a multipart upload of
those parts (5MiB at least each, as S3 requires, except the last), one part
when size= is not given. It ends with the bytes, parts, time and speed.`,
		Example: `  twinlake od if=./disk.img of=site1/backups/disk.img size=64MiB
  twinlake od if=site1/backups/disk.img of=./first-gib.img size=64MiB count=16
  cat data.bin | twinlake od of=site1/bkt/data.bin size=16MiB`,
		Args: cobra.RangeArgs(1, 6),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := parseODArgs(args)
			if err != nil {
				return err
			}
			return runOD(cmd, opts, a)
		},
	}
}

// parseODArgs reads the key=value operands.
func parseODArgs(args []string) (odArgs, error) {
	var a odArgs
	seen := map[string]bool{}
	for _, arg := range args {
		k, v, ok := strings.Cut(arg, "=")
		if !ok || v == "" {
			return a, fmt.Errorf("od: %q: want if=, of=, size=, count=, skip= or parts= with a value", arg)
		}
		if seen[k] {
			return a, fmt.Errorf("od: %s= given twice", k)
		}
		seen[k] = true
		var err error
		switch k {
		case "if":
			a.in = v
		case "of":
			a.out = v
		case "size":
			a.size, err = parseByteSize(v)
			if err == nil && a.size <= 0 {
				err = errors.New("want a positive size")
			}
		case "count":
			a.count, err = odCount(v, 1)
		case "skip":
			a.skip, err = odCount(v, 0)
		case "parts":
			a.parts, err = odCount(v, 1)
		default:
			return a, fmt.Errorf("od: unknown operand %s= (want if=, of=, size=, count=, skip= or parts=)", k)
		}
		if err != nil {
			return a, fmt.Errorf("od: %s=%s: %v", k, v, err)
		}
	}
	switch {
	case a.out == "":
		return a, errors.New("od needs of=TARGET")
	case a.parts > 0 && a.size > 0:
		return a, errors.New("od: give size= or parts=, not both")
	case (a.count > 0 || a.skip > 0) && a.size == 0 && a.parts == 0:
		return a, errors.New("od: count= and skip= count parts: give size= too")
	}
	return a, nil
}

// odCount reads a count of parts: min (0 or 1) to 10000.
func odCount(v string, min int64) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < min || n > 10000 {
		return 0, errors.New("want 1 to 10000 (skip: 0 to 10000)")
	}
	return n, nil
}

func runOD(cmd *cobra.Command, opts *cmdutil.Options, a odArgs) error {
	cfg, err := opts.LoadConfig()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	src, dst := classifyCPArg(cfg, a.in), classifyCPArg(cfg, a.out)
	srcName := a.in
	var r io.Reader
	total := int64(-1)
	switch {
	case a.in == "":
		r, srcName = cmd.InOrStdin(), "stdin"
	case src.remote != nil:
		c, err := cmdutil.NewS3Client(src.alias, cmdutil.S3ClientConfig{})
		if err != nil {
			return err
		}
		obj, err := c.GetObject(ctx, src.remote.Bucket, src.remote.Key, minio.GetObjectOptions{})
		if err != nil {
			return cmdutil.S3Err("od: read "+a.in, err)
		}
		defer obj.Close()
		info, err := obj.Stat()
		if err != nil {
			return cmdutil.S3Err("od: read "+a.in, err)
		}
		r, total = obj, info.Size
	default:
		f, err := os.Open(src.local)
		if err != nil {
			return fmt.Errorf("od: %w", err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return fmt.Errorf("od: %w", err)
		}
		r, total = f, st.Size()
	}
	if a.parts > 0 {
		if total < 0 {
			return errors.New("od: parts= needs a source of known size (a file or an object)")
		}
		a.size = max((total+a.parts-1)/a.parts, 1)
	}
	if a.skip > 0 {
		if _, err := io.CopyN(io.Discard, r, a.skip*a.size); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("od: skip: %w", err)
		}
		if total >= 0 {
			total = max(total-a.skip*a.size, 0)
		}
	}
	if a.count > 0 {
		r = io.LimitReader(r, a.count*a.size)
		if total >= 0 {
			total = min(total, a.count*a.size)
		}
	}
	start := time.Now()
	var n int64
	if dst.remote != nil {
		c, err := cmdutil.NewS3Client(dst.alias, cmdutil.S3ClientConfig{})
		if err != nil {
			return err
		}
		po := minio.PutObjectOptions{}
		if a.size > 0 {
			if a.size < 5<<20 {
				return fmt.Errorf("od: size=%d: an object's parts are 5MiB at least (S3's minimum)", a.size)
			}
			po.PartSize = uint64(a.size)
		}
		info, err := c.PutObject(ctx, dst.remote.Bucket, dst.remote.Key, r, total, po)
		if err != nil {
			return cmdutil.S3Err("od: write "+a.out, err)
		}
		n = info.Size
	} else {
		f, err := os.Create(dst.local)
		if err != nil {
			return fmt.Errorf("od: %w", err)
		}
		if n, err = io.Copy(f, r); err != nil {
			f.Close()
			return fmt.Errorf("od: %w", err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("od: %w", err)
		}
	}
	el := time.Since(start)
	res := odResult{Status: "success", Source: srcName, Target: a.out, Bytes: n, Parts: 1, Seconds: el.Seconds()}
	if a.size > 0 {
		res.Parts = max((n+a.size-1)/a.size, 1)
	}
	if el > 0 {
		res.BytesPerSec = float64(n) / el.Seconds()
	}
	return cmdutil.PrintResult(cmd.OutOrStdout(), opts, res, fmt.Sprintf("Transferred: %s, Parts: %d, Time: %s, Speed: %s/s",
		cmdutil.FmtBytes(n), res.Parts, el.Round(time.Millisecond), cmdutil.FmtBytes(int64(res.BytesPerSec))))
}
