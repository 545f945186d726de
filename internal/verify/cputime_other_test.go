//go:build !unix

package verify

import "time"

// cpuTime is not measured on this platform; benchmarks report wall time only.
func cpuTime() time.Duration { return 0 }
