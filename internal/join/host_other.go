//go:build !linux && !windows

package join

import (
	"fmt"
	"runtime"

	"github.com/kubewin/kubewin/internal/render"
)

// NewHost returns the host layer of this operating system. The Windows one (HNS through hcn,
// services through the service control manager) is not written yet.
func NewHost(paths render.NodePaths, root, init, kubewin string) (Host, error) {
	return nil, fmt.Errorf("kubewin join on %s: no host layer yet (Linux only; Windows is planned); use the bundle from kubewin plan", runtime.GOOS)
}

// DefaultRoot and NodePathsFor follow the Linux layout, so that the commands parse their flags
// and say what is missing.
const DefaultRoot = "/"

func NodePathsFor(root string) render.NodePaths { return render.LinuxPathsUnder(root) }
