//go:build windows

package nodecheck

import (
	"context"
	"fmt"
	"time"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
)

// Run probes from the node's host endpoint (cbr0, .2 of the pod CIDR, attached to the host's
// compartment by the node service): its address is in the pod network, so the probes cross
// the HNS network, its policies and kube-proxy's load balancers as pod traffic does.
// Compiled and vetted for Windows only; RunFrom's logic is tested on Linux.
func Run(ctx context.Context, paths render.NodePaths, p *plan.Plan, n plan.NodePlan, timeout time.Duration) (*Report, error) {
	w := n.Windows
	if w == nil || w.HostEndpointIP == "" {
		return nil, fmt.Errorf("node %s has no host endpoint in its plan", n.Name)
	}
	return RunFrom(ctx, p, n, timeout, w.HostEndpointIP)
}
