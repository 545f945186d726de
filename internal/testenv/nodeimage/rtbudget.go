package nodeimage

import (
	"fmt"
	"os"
	"path/filepath"
)

// RTBudgetWrapperPackage is the runc wrapper that gives chrt containers a real-time budget.
const RTBudgetWrapperPackage = "github.com/kubewin/kubewin/internal/testenv/nodeimage/rtbudget"

// BuildRTBudgetWrapper builds the rtbudget runc wrapper as dir/rtbudget/runc and returns the
// binary's path. Chain it behind runcwrap by setting RealRuncEnv (KUBEWIN_REAL_RUNC) to it in
// containerd's environment; it executes /usr/sbin/runc.
//
// This is a workaround for a property of the test machine's kernel (real-time group scheduling
// on cgroups v1 gives new cgroups no real-time budget, so chrt --rr fails in every container);
// it is never part of what kubewin installs on a node.
func BuildRTBudgetWrapper(dir string) (string, error) {
	binDir, err := filepath.Abs(filepath.Join(dir, "rtbudget"))
	if err != nil {
		return "", fmt.Errorf("build rtbudget wrapper: %w", err)
	}
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return "", fmt.Errorf("build rtbudget wrapper: %w", err)
	}
	bin := filepath.Join(binDir, "runc")
	if err := goBuild(bin, RTBudgetWrapperPackage); err != nil {
		return "", err
	}
	return bin, nil
}
