package metrics

import "syscall"

// ProcessCPUSeconds is the CPU time this process has used, user and
// system, to the microsecond (the process collector's
// process_cpu_seconds_total counts in scheduler ticks).
func ProcessCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// ProcessPeakRSSBytes is the most resident memory this process has held
// since it started (Linux counts getrusage's maxrss in KiB); 0 if unknown.
func ProcessPeakRSSBytes() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Maxrss) << 10
}
