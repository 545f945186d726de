//go:build !windows

package main

import (
	"runtime"

	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/winnode"
)

// factsHost: the facts are a Windows host's (HNS, the SCM, Windows interfaces).
func factsHost() (winnode.Host, error) {
	return nil, cliutil.BadInputf("kubewin node facts reads a Windows host (HNS networks, vNICs, the SCM); this is %s", runtime.GOOS)
}
