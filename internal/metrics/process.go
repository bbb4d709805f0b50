package metrics

import "syscall"

// ProcessUsage reads, with one getrusage, the CPU time this process has
// used, user and system, to the microsecond (the process collector's
// process_cpu_seconds_total counts in scheduler ticks), and the most
// resident memory it has held since it started (Linux counts maxrss in
// KiB); zeros if unknown.
func ProcessUsage() (cpuSeconds float64, peakRSSBytes int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9, int64(ru.Maxrss) << 10
}
