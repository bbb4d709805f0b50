package cli

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestBenchReplicationBaseline: bench replication with --baseline reports
// the unpaced PUT rate of a site alone and of the source replicating, and
// their ratio, and the CPU each server spent per PUT, besides the paced
// phase's PUT rate and lag percentiles;
// every object written arrives, and the bench leaves no bucket behind.
func TestBenchReplicationBaseline(t *testing.T) {
	e := newReplEnv(t, 3)
	e.must("admin", "replicate", "add", "site1", "site2")
	out := e.must("bench", "replication", "site1", "site2", "--baseline", "site3", "--size", "1KiB",
		"--concurrency", "2", "--duration", "300ms", "--rate", "40", "--json")
	var rep struct {
		Written, Replicated, Missing int64
		Baseline                     string
		BaselineOps                  float64 `json:"baseline_put_ops_per_sec"`
		MaxOps                       float64 `json:"max_put_ops_per_sec"`
		Ratio                        float64 `json:"on_off_ratio"`
		BaselineCPU                  float64 `json:"baseline_cpu_us_per_put"`
		SourceCPU                    float64 `json:"source_cpu_us_per_put"`
		TargetCPU                    float64 `json:"target_cpu_us_per_put"`
		BaselinePeak                 float64 `json:"baseline_peak_rss_mib"`
		SourcePeak                   float64 `json:"source_peak_rss_mib"`
		TargetPeak                   float64 `json:"target_peak_rss_mib"`
		Results                      []struct {
			Op    string  `json:"op"`
			Ops   int64   `json:"ops"`
			P99ms float64 `json:"p99_ms"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Written == 0 || rep.Replicated != rep.Written || rep.Missing != 0 {
		t.Errorf("written %d, replicated %d, missing %d", rep.Written, rep.Replicated, rep.Missing)
	}
	if rep.Baseline != "site3" || rep.BaselineOps <= 0 || rep.MaxOps <= 0 {
		t.Errorf("baseline %q: %v ops/s alone, %v replicating", rep.Baseline, rep.BaselineOps, rep.MaxOps)
	}
	if want := rep.MaxOps / rep.BaselineOps; math.Abs(rep.Ratio-want) > 1e-9 {
		t.Errorf("ratio %v, want %v", rep.Ratio, want)
	}
	// The test's sites share its process, so each figure is that
	// process's CPU per PUT: only that they were read is checked.
	if rep.BaselineCPU <= 0 || rep.SourceCPU <= 0 || rep.TargetCPU <= 0 {
		t.Errorf("CPU per PUT: baseline %vµs, source %vµs, target %vµs", rep.BaselineCPU, rep.SourceCPU, rep.TargetCPU)
	}
	if rep.BaselinePeak <= 1 || rep.SourcePeak <= 1 || rep.TargetPeak <= 1 {
		t.Errorf("peak memory: baseline %v MiB, source %v MiB, target %v MiB", rep.BaselinePeak, rep.SourcePeak, rep.TargetPeak)
	}
	var ops []string
	for _, r := range rep.Results {
		ops = append(ops, r.Op)
		if r.Ops == 0 {
			t.Errorf("row %s: no operations", r.Op)
		}
	}
	if got := strings.Join(ops, ","); got != "PUT(alone,unpaced),PUT(replicating,unpaced),PUT,REPLICATE(lag)" {
		t.Errorf("rows %s", got)
	}
	for _, site := range []string{"site1", "site3"} {
		if ls := e.must("ls", site); strings.Contains(ls, "twinlake-bench-") {
			t.Errorf("bench bucket left on %s:\n%s", site, ls)
		}
	}
	human := e.must("bench", "replication", "site1", "site2", "--baseline", "site3", "--size", "1KiB",
		"--concurrency", "1", "--duration", "100ms")
	if !strings.Contains(human, "unpaced PUT: site3 alone") || !strings.Contains(human, "REPLICATE(lag)") ||
		!strings.Contains(human, "CPU per PUT: site3 alone") || !strings.Contains(human, "peak memory: site3 ") {
		t.Errorf("human output:\n%s", human)
	}
}
