package join

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kubewin/kubewin/internal/render"
)

// reconcileLock is held by whoever changes the node's host state from the effects list — a
// join's pod-network step or a pass of the node service — so that a re-join and the running
// node service never create the same HNS network or route at the same moment (one would see
// "already exists" and report a failure). It is an OS file lock (flock on Linux, LockFileEx on
// Windows): a process that dies releases it with its handle.
type reconcileLock struct{ f *os.File }

// ReconcileLockPath is the lock file below the node's data directory.
func ReconcileLockPath(paths render.NodePaths) string {
	return filepath.Join(paths.DataDir, "reconcile.lock")
}

// lockReconcile takes the lock, waiting until ctx ends.
func lockReconcile(ctx context.Context, paths render.NodePaths) (*reconcileLock, error) {
	if err := os.MkdirAll(paths.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("reconcile lock: %w", err)
	}
	f, err := os.OpenFile(ReconcileLockPath(paths), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("reconcile lock: %w", err)
	}
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		ok, err := tryLockFile(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("reconcile lock %s: %w", f.Name(), err)
		}
		if ok {
			return &reconcileLock{f: f}, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("reconcile lock %s: another kubewin (join or the node service) holds it: %w", f.Name(), ctx.Err())
		case <-time.After(wait):
		}
	}
}

// release gives the lock back (closing the handle releases it).
func (l *reconcileLock) release() { _ = l.f.Close() }
