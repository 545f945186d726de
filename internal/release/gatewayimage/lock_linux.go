package gatewayimage

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lock takes an exclusive lock on the apt directory: builds run concurrently (CI tests packages
// in parallel: the release test, this package's and the gateway e2e), and apt-get writes the
// package lists and the .debs in place, so one build must not read what another is writing.
func (a Apt) lock() (func(), error) {
	if err := os.MkdirAll(a.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("apt cache: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(a.Dir, "kubewin.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("apt cache lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("apt cache lock: %w", err)
	}
	return func() { f.Close() }, nil
}
