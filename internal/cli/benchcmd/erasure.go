package benchcmd

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/cpuid/v2"
	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/bench"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
	"github.com/twinlake/twinlake/internal/erasure"
)

type benchErasureFlags struct {
	nodes       string
	size        string
	block       string
	concurrency int
	duration    time.Duration
	noSIMD      bool
}

func newBenchErasureCmd(opts *cmdutil.Options) *cobra.Command {
	var f benchErasureFlags
	cmd := &cobra.Command{
		Use:   "erasure",
		Short: "Measure erasure coding on this machine: encode, decode, degraded decode and heal",
		Long: `Codes objects of --size in memory with the layout of a site of each of --nodes
nodes (see the operator's guide for the layouts) and reports MB/s of object bytes
for four phases: encode (cut into data and parity shards, with a CRC-32C per
shard block), decode (read back from the data shards), decode-degraded (read
back with as many data shards lost as the layout tolerates, so every block is
reconstructed) and heal (rebuild that many shards from the others). No server
is involved: this is the coding cost a node pays per byte. With --no-simd each
phase runs again on the library's portable Go paths, to show what the CPU's
SIMD instructions (reported in the JSON as cpu) are worth.`,
		Example: `  twinlake bench erasure
  twinlake bench erasure --nodes 4,8,16 --size 64MiB --duration 5s --no-simd --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchErasure(cmd, opts, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.nodes, "nodes", "4,8,16", "comma-separated site sizes (1 to 16 nodes) whose layouts to measure")
	fl.StringVar(&f.size, "size", "16MiB", "object size")
	fl.StringVar(&f.block, "block", "1MiB", "erasure block size (4KiB to 16MiB)")
	fl.IntVar(&f.concurrency, "concurrency", 2, "objects coded at once")
	fl.DurationVar(&f.duration, "duration", 3*time.Second, "length of each phase")
	fl.BoolVar(&f.noSIMD, "no-simd", false, "also run every phase without SIMD")
	return cmd
}

// benchErasureReport is the --json output of bench erasure.
type benchErasureReport struct {
	CPU       string      `json:"cpu"`
	SIMD      []string    `json:"simd"`
	Size      int64       `json:"size"`
	BlockSize int         `json:"block_size"`
	Results   []bench.Row `json:"results"`
}

func runBenchErasure(cmd *cobra.Command, opts *cmdutil.Options, f benchErasureFlags) error {
	size, err := bench.ParseSize(f.size)
	if err != nil || size < 1 || size > 1<<30 {
		return fmt.Errorf("--size %q: want 1B to 1GiB", f.size)
	}
	block, err := bench.ParseSize(f.block)
	if err != nil || block < erasure.MinBlockSize || block > erasure.MaxBlockSize {
		return fmt.Errorf("--block %q: want %d to %d bytes", f.block, erasure.MinBlockSize, erasure.MaxBlockSize)
	}
	var layouts []erasure.Layout
	for _, s := range strings.Split(f.nodes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("--nodes %q: %q is not a number", f.nodes, s)
		}
		l, err := erasure.ForNodes(n)
		if err != nil {
			return fmt.Errorf("--nodes: %w", err)
		}
		layouts = append(layouts, l)
	}
	data := make([]byte, size)
	_, _ = rand.Read(data)
	rep := benchErasureReport{CPU: cpuid.CPU.BrandName, SIMD: simdFeatures(), Size: size, BlockSize: int(block)}
	cfg := bench.Config{Concurrency: f.concurrency, Duration: f.duration, StopOnError: true}
	variants := [][]erasure.Option{nil}
	if f.noSIMD {
		variants = append(variants, []erasure.Option{erasure.WithoutSIMD()})
	}
	for _, l := range layouts {
		for _, v := range variants {
			c, err := erasure.New(l, int(block), v...)
			if err != nil {
				return err
			}
			suffix := ""
			if v != nil {
				suffix = " nosimd"
			}
			rows, err := benchLayout(cmd.Context(), cfg, c, data, suffix)
			rep.Results = append(rep.Results, rows...)
			if err != nil {
				return err
			}
		}
	}
	w := cmd.OutOrStdout()
	if opts.JSON {
		return cmdutil.PrintResult(w, opts, rep, "")
	}
	fmt.Fprintf(w, "bench erasure: %s, SIMD %s, object %s, block %s\n", rep.CPU, strings.Join(rep.SIMD, " "),
		bench.FormatSize(size), bench.FormatSize(block))
	return bench.WriteTable(w, rep.Results)
}

// benchLayout runs the four phases for one code.
func benchLayout(ctx context.Context, cfg bench.Config, c *erasure.Code, data []byte, suffix string) ([]bench.Row, error) {
	l := c.Layout()
	shards, err := encodeShards(c, data)
	if err != nil {
		return nil, err
	}
	// The degraded reads and the heal lose the first Parity shards: data
	// shards, so every block has to be reconstructed.
	lost := min(l.Parity, l.Data)
	phases := []struct {
		name string
		op   bench.Op
	}{
		{"encode", func(context.Context, int64) error { return encodeDiscard(c, data) }},
		{"decode", func(context.Context, int64) error { return decodeShards(c, shards, 0, len(data)) }},
		{"decode-degraded", func(context.Context, int64) error { return decodeShards(c, shards, lost, len(data)) }},
		{"heal", func(context.Context, int64) error { return healShards(c, shards, lost, len(data)) }},
	}
	var rows []bench.Row
	for _, p := range phases {
		if lost == 0 && p.name != "encode" && p.name != "decode" {
			continue
		}
		res, err := bench.Run(ctx, cfg, p.op)
		rows = append(rows, bench.NewRow(fmt.Sprintf("%s %s%s", p.name, l, suffix), int64(len(data)), cfg.Concurrency, res))
		if err != nil {
			return rows, err
		}
		if res.FirstErr != nil {
			return rows, fmt.Errorf("%s %s: %w", p.name, l, res.FirstErr)
		}
	}
	return rows, nil
}

func encodeShards(c *erasure.Code, data []byte) ([][]byte, error) {
	n := c.Layout().Shards()
	bufs := make([]*bytes.Buffer, n)
	dst := make([]io.Writer, n)
	for i := range bufs {
		bufs[i] = bytes.NewBuffer(make([]byte, 0, c.ShardSize(int64(len(data)))))
		dst[i] = bufs[i]
	}
	if err := encodeTo(c, data, dst); err != nil {
		return nil, err
	}
	out := make([][]byte, n)
	for i, b := range bufs {
		out[i] = b.Bytes()
	}
	return out, nil
}

// encodeDiscard codes data to shard destinations that keep nothing: the
// phase measures the coding, not the memory the shards would take.
func encodeDiscard(c *erasure.Code, data []byte) error {
	dst := make([]io.Writer, c.Layout().Shards())
	for i := range dst {
		dst[i] = io.Discard
	}
	return encodeTo(c, data, dst)
}

func encodeTo(c *erasure.Code, data []byte, dst []io.Writer) error {
	w, err := c.NewWriter(dst)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	_, _, err = w.Close()
	return err
}

func shardSources(shards [][]byte, lost int) []io.ReaderAt {
	src := make([]io.ReaderAt, len(shards))
	for i, s := range shards {
		if i >= lost {
			src[i] = bytes.NewReader(s)
		}
	}
	return src
}

func decodeShards(c *erasure.Code, shards [][]byte, lost, size int) error {
	r, err := c.NewReader(shardSources(shards, lost), int64(size))
	if err != nil {
		return err
	}
	n, err := io.Copy(io.Discard, r)
	if err == nil && n != int64(size) {
		err = fmt.Errorf("decoded %d of %d bytes", n, size)
	}
	return err
}

func healShards(c *erasure.Code, shards [][]byte, lost, size int) error {
	dst := make(map[int]io.Writer, lost)
	for i := range lost {
		dst[i] = io.Discard
	}
	return c.Rebuild(shardSources(shards, lost), int64(size), dst)
}

// simdFeatures lists the SIMD instruction sets the coding library can use
// on this CPU.
func simdFeatures() []string {
	var out []string
	for _, f := range []struct {
		id   cpuid.FeatureID
		name string
	}{{cpuid.SSSE3, "ssse3"}, {cpuid.AVX2, "avx2"}, {cpuid.AVX512F, "avx512"}, {cpuid.GFNI, "gfni"}, {cpuid.ASIMD, "neon"}} {
		if cpuid.CPU.Supports(f.id) {
			out = append(out, f.name)
		}
	}
	if out == nil {
		out = []string{"none"}
	}
	return out
}
