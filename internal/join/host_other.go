//go:build !linux

package join

import (
	"fmt"
	"runtime"

	"github.com/kubewin/kubewin/internal/render"
)

// NewHost returns the host layer of this operating system. The Windows one (HNS through hcn,
// services through the service control manager) is not written yet.
func NewHost(paths render.LinuxPaths, root, init, kubewin string) (Host, error) {
	return nil, fmt.Errorf("kubewin join on %s: no host layer yet (Linux only; Windows is planned); use the bundle from kubewin plan", runtime.GOOS)
}
