//go:build !linux && !windows

package nodecheck

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
)

// Run is Linux only: the Windows probe (an HNS endpoint on the node's network) is not written.
func Run(ctx context.Context, paths render.NodePaths, p *plan.Plan, n plan.NodePlan, timeout time.Duration) (*Report, error) {
	return nil, fmt.Errorf("kubewin node check on %s: not available yet (Linux only)", runtime.GOOS)
}
