package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Row is one measured phase as reported: the human table's line and the
// element of the JSON results array. MB is 10^6 bytes; latencies are
// milliseconds.
type Row struct {
	Op          string  `json:"op"`
	Size        int64   `json:"size"`
	Concurrency int     `json:"concurrency"`
	Ops         int64   `json:"ops"`
	Errors      int64   `json:"errors"`
	Seconds     float64 `json:"seconds"`
	OpsPerSec   float64 `json:"ops_per_sec"`
	MBPerSec    float64 `json:"mb_per_sec"`
	P50Ms       float64 `json:"p50_ms"`
	P90Ms       float64 `json:"p90_ms"`
	P99Ms       float64 `json:"p99_ms"`
	MaxMs       float64 `json:"max_ms"`
	// KeysPerSec is, for a listing, the keys listed per second; for a
	// deletion in multi-object requests, the keys deleted per second; for
	// a table's purge, the files it deleted per second.
	KeysPerSec float64 `json:"keys_per_sec,omitempty"`
	// ServerCPUPerOp is the CPU time the site's servers (every node of a
	// multi-node site) spent per operation, in microseconds, and
	// NodeCPUPerOp the same by node address; absent when not measured.
	ServerCPUPerOp float64            `json:"server_cpu_us_per_op,omitempty"`
	NodeCPUPerOp   map[string]float64 `json:"node_cpu_us_per_op,omitempty"`
	// ServerPeakRSSMiB is the most resident memory any of the site's
	// servers had held since it started, read after the phase, in MiB;
	// absent when not measured.
	ServerPeakRSSMiB float64 `json:"server_peak_rss_mib,omitempty"`
}

// NewRow summarises a run of op on objects of size bytes.
func NewRow(op string, size int64, concurrency int, r Result) Row {
	row := Row{
		Op: op, Size: size, Concurrency: concurrency,
		Ops: r.Ops, Errors: r.Errors, Seconds: r.Elapsed.Seconds(), OpsPerSec: r.OpsPerSec(),
	}
	row.MBPerSec = row.OpsPerSec * float64(size) / 1e6
	if h := r.Latency; h != nil {
		row.P50Ms, row.P90Ms, row.P99Ms = ms(h.Percentile(50)), ms(h.Percentile(90)), ms(h.Percentile(99))
		row.MaxMs = ms(h.Max())
	}
	return row
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// WriteTable prints rows as an aligned table with a header line.
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "OP\tSIZE\tCONC\tOPS\tERRORS\tSECONDS\tOPS/S\tMB/S\tP50 ms\tP90 ms\tP99 ms\tMAX ms\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.2f\t%.1f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n",
			r.Op, FormatSize(r.Size), r.Concurrency, r.Ops, r.Errors, r.Seconds, r.OpsPerSec, r.MBPerSec,
			r.P50Ms, r.P90Ms, r.P99Ms, r.MaxMs)
	}
	return tw.Flush()
}
