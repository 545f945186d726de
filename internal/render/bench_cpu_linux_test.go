//go:build linux

package render

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time. Wall time on the shared 2-core machines mostly
// measures waiting for other jobs; cpu-ns/op is what the work costs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
