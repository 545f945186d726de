//go:build unix

package srcmsg

import (
	"syscall"
	"time"
)

// processCPU is the user+system CPU time of this process: on a shared machine the benchmark
// reports rates per CPU second as well as per wall second, since other work steals the cores.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
