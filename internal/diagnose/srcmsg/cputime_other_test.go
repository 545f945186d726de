//go:build !unix

package srcmsg

import "time"

// processCPU is not measured here; the benchmark then reports wall-clock rates only.
func processCPU() (time.Duration, bool) { return 0, false }
