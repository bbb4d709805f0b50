package objcmd

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// pingFlags are the ping command's flags.
type pingFlags struct {
	count    int
	interval time.Duration
	exit     bool
}

func newPingCmd(opts *cmdutil.Options) *cobra.Command {
	var f pingFlags
	cmd := &cobra.Command{
		Use:   "ping ALIAS",
		Short: "Probe a site's liveness repeatedly and show round-trip times",
		Long: `Send a liveness probe (` + healthPath + `live, no credentials needed) every
--interval and print each round trip with the running min, max and average,
as mc ping does. --count stops after N probes (0, the default, runs until
interrupted); --exit stops at the first successful one. Exits 1 when any
probe failed.`,
		Example: `  twinlake ping site1
  twinlake ping --count 5 --interval 200ms site1
  twinlake ping --exit site1
  twinlake ping --count 3 --json site1`,
		Args: cobra.ExactArgs(1),
		RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, args []string) error {
			if f.count < 0 || f.interval <= 0 {
				return fmt.Errorf("ping: --count must be 0 or more and --interval positive")
			}
			a, err := opts.LookupAlias(args[0])
			if err != nil {
				return err
			}
			return runPing(cmd, opts, args[0], a.URL, f)
		}),
	}
	cmd.Flags().IntVarP(&f.count, "count", "c", 0, "stop after this many probes (0: until interrupted)")
	cmd.Flags().DurationVarP(&f.interval, "interval", "i", time.Second, "time between probes")
	cmd.Flags().BoolVar(&f.exit, "exit", false, "stop at the first successful probe")
	return cmd
}

// pingResult is one probe as printed, with the running statistics.
type pingResult struct {
	Status      string                 `json:"status"`
	Seq         int                    `json:"seq"`
	Endpoint    string                 `json:"endpoint"`
	Roundtrip   string                 `json:"roundtrip"`
	RoundtripS  float64                `json:"roundtripSeconds"`
	Min         string                 `json:"min"`
	Max         string                 `json:"max"`
	Average     string                 `json:"average"`
	AverageS    float64                `json:"averageSeconds"`
	ErrorsCount int                    `json:"errorCount"`
	Error       *cmdutil.JSONErrorBody `json:"error,omitempty"`
}

// pingStats accumulates successful round trips and counts failures.
type pingStats struct {
	n, errs       int
	min, max, sum time.Duration
}

func (s *pingStats) add(p probe) {
	if p.err != nil {
		s.errs++
		return
	}
	if s.n == 0 || p.took < s.min {
		s.min = p.took
	}
	s.max = max(s.max, p.took)
	s.sum += p.took
	s.n++
}

func (s *pingStats) avg() time.Duration {
	if s.n == 0 {
		return 0
	}
	return s.sum / time.Duration(s.n)
}

func runPing(cmd *cobra.Command, opts *cmdutil.Options, alias, base string, f pingFlags) error {
	ctx := cmd.Context()
	var st pingStats
	for seq := 1; f.count == 0 || seq <= f.count; seq++ {
		p := probeHealth(ctx, base, "live")
		if ctx.Err() != nil {
			break // interrupted: the summary so far stands
		}
		st.add(p)
		r := pingResult{Status: "success", Seq: seq, Endpoint: p.endpoint, Roundtrip: fmtDur(p.took), RoundtripS: p.took.Seconds(),
			Min: fmtDur(st.min), Max: fmtDur(st.max), Average: fmtDur(st.avg()), AverageS: st.avg().Seconds(), ErrorsCount: st.errs}
		human := fmt.Sprintf("%3d: %s  min=%s  max=%s  average=%s  errors=%d  roundtrip=%s",
			seq, p.endpoint, r.Min, r.Max, r.Average, st.errs, r.Roundtrip)
		if p.err != nil {
			r.Status, r.Error = "error", &cmdutil.JSONErrorBody{Message: p.err.Error()}
			human = fmt.Sprintf("%3d: %s  errors=%d  %v", seq, p.endpoint, st.errs, p.err)
		}
		if err := cmdutil.PrintResult(cmd.OutOrStdout(), opts, r, human); err != nil {
			return err
		}
		if f.exit && p.err == nil {
			break
		}
		if f.count != 0 && seq == f.count {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(f.interval):
		}
	}
	if st.errs > 0 {
		return fmt.Errorf("%w: %d of the probes to %s failed", cmdutil.ErrItemsFailed, st.errs, alias)
	}
	return nil
}

// fmtDur renders a duration as mc does, to two decimals of its unit.
func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.2fµs", float64(d)/float64(time.Microsecond))
	}
}
