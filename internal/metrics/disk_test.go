package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestDiskGauges: the data directory's filesystem is reported with free
// space no larger than its size; a directory that cannot be read reports
// nothing rather than zero.
func TestDiskGauges(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := RegisterDisk(reg, t.TempDir(), 1<<30); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		got[mf.GetName()] = mf.GetMetric()[0].GetGauge().GetValue()
	}
	if got[DiskTotalBytes] <= 0 || got[DiskFreeBytes] <= 0 || got[DiskFreeBytes] > got[DiskTotalBytes] || got[DiskReserveBytes] != 1<<30 {
		t.Fatalf("disk gauges %v", got)
	}
	missing := prometheus.NewRegistry()
	if err := RegisterDisk(missing, "/nonexistent/twinlake", 1<<30); err != nil {
		t.Fatal(err)
	}
	if mfs, err := missing.Gather(); err != nil || len(mfs) != 0 {
		t.Fatalf("unreadable directory: %v %v", mfs, err)
	}
}
