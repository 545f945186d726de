package gateway

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubewin/kubewin/internal/atomicfs"
)

// Reloader makes the running keepalived re-read its configuration.
type Reloader interface {
	Reload() error
}

// ErrNotRunning is returned by a Reloader when there is no keepalived to reload; keepalived
// reads the installed file when it starts, so this is not a failure of the sync.
var ErrNotRunning = errors.New("keepalived is not running")

// Validator checks a candidate keepalived configuration file (render.ValidateKeepalived, or its
// namespace variant in tests).
type Validator func(ctx context.Context, path string) error

// installConfig validates data as a candidate beside path and moves exactly the validated file
// into place. It returns changed=false without touching anything when path already holds data.
// On any error the installed file is unchanged.
func installConfig(ctx context.Context, path string, data []byte, validate Validator) (changed bool, stage string, err error) {
	cur, err := os.ReadFile(path)
	if err == nil && string(cur) == string(data) {
		return false, "", nil
	}
	candidate := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".candidate")
	if err := atomicfs.WriteFile(candidate, data, 0o644); err != nil {
		return false, "install", err
	}
	defer os.Remove(candidate) // gone after a successful rename
	if validate != nil {
		if err := validate(ctx, candidate); err != nil {
			return false, "validate", err
		}
	}
	if err := os.Rename(candidate, path); err != nil {
		return false, "install", fmt.Errorf("install %s: %w", path, err)
	}
	return true, "", nil
}
