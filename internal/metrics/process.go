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
