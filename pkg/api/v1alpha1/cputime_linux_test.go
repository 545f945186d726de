package v1alpha1

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system, all threads) this process has used. Benchmarks
// report it per op beside wall time because the shared test machines are heavily loaded.
func processCPU() time.Duration {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
