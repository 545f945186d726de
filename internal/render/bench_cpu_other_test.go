//go:build !linux

package render

import "time"

// cpuTime is not measured outside Linux; cpu-ns/op then reads 0.
func cpuTime() time.Duration { return 0 }
