//go:build !linux

package v1alpha1

import "time"

// processCPU is not measured outside Linux; benchmarks then report wall time only.
func processCPU() time.Duration { return 0 }
