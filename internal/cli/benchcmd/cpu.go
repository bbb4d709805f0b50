package benchcmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// cpuMeter reads the CPU time the servers of a site have used, to tell
// what a phase cost them per operation, and the most memory they have
// held. A site that cannot tell (an older server, no admin:ServerInfo
// right) turns it off with one warning: the rates are measured without it.
type cpuMeter struct {
	cmd  *cobra.Command
	opts *cmdutil.Options
	off  bool
	// peakRSS is, by site alias, the most resident memory any of its
	// servers had held since it started when last read, bytes.
	peakRSS map[string]int64
}

// read returns the CPU time the servers of the site alias reaches have
// used, by server; nil once the meter is off.
func (m *cpuMeter) read(ctx context.Context, alias string) map[string]float64 {
	if m == nil || m.off {
		return nil
	}
	byServer, peak, err := serversCPU(ctx, m.opts, alias)
	if err != nil {
		fmt.Fprintf(m.cmd.ErrOrStderr(), "bench: not measuring CPU per operation: %s: %v\n", alias, err)
		m.off = true
		return nil
	}
	if m.peakRSS == nil {
		m.peakRSS = map[string]int64{}
	}
	m.peakRSS[alias] = peak
	return byServer
}

// peakRSSMiB is the most resident memory any server of the site alias had
// held when last read, in MiB; 0 if not read or not told.
func (m *cpuMeter) peakRSSMiB(alias string) float64 {
	if m == nil {
		return 0
	}
	return float64(m.peakRSS[alias]) / (1 << 20)
}

// cpuPerOp is the CPU microseconds per operation between two reads of one
// site: in all, and by each server that told both; 0 and nil when either
// read is missing.
func cpuPerOp(before, after map[string]float64, ops int64) (float64, map[string]float64) {
	if before == nil || after == nil || ops <= 0 {
		return 0, nil
	}
	total, byServer := 0.0, map[string]float64{}
	for server, v := range after {
		if v0, ok := before[server]; ok {
			byServer[server] = (v - v0) * 1e6 / float64(ops)
			total += byServer[server]
		}
	}
	return total, byServer
}

// serversCPU reads from admin info the CPU time the servers of the site
// alias reaches have used: each node of a multi-node site by address,
// else the one server under the alias's name; and the most resident
// memory any of them has held.
func serversCPU(ctx context.Context, opts *cmdutil.Options, alias string) (map[string]float64, int64, error) {
	ac, err := opts.AdminClient(alias)
	if err != nil {
		return nil, 0, err
	}
	info, err := ac.ServerInfo(ctx)
	if err != nil {
		return nil, 0, err
	}
	if len(info.Nodes) == 0 {
		if info.CPUSeconds <= 0 {
			return nil, 0, errors.New("the server does not tell its CPU time")
		}
		return map[string]float64{alias: info.CPUSeconds}, info.PeakRSSBytes, nil
	}
	out, peak := map[string]float64{}, int64(0)
	for _, n := range info.Nodes {
		if n.CPUSeconds > 0 {
			out[n.Address] = n.CPUSeconds
		}
		peak = max(peak, n.PeakRSSBytes)
	}
	return out, peak, nil
}
