package nodeimage

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
)

// Packages of the programs in this directory, for BuildStatic.
const (
	// PausePackage blocks until SIGTERM or SIGINT and reaps zombies: the pod sandbox image.
	PausePackage = "github.com/kubewin/kubewin/internal/testenv/nodeimage/pause"
	// CheckPackage prints "ip=ADDR" for each global unicast address of its interfaces and
	// "KUBEWIN_CHECK=VALUE", then exits 0: a pod that runs to completion.
	CheckPackage = "github.com/kubewin/kubewin/internal/testenv/nodeimage/check"
	// RuncWrapperPackage is the runc wrapper built by BuildRuncWrapper.
	RuncWrapperPackage = "github.com/kubewin/kubewin/internal/testenv/nodeimage/runcwrap"
)

// Environment variables read by the runc wrapper (they must match runcwrap/main.go).
const (
	// RealRuncEnv names the runc the wrapper executes; default DefaultRealRunc.
	RealRuncEnv = "KUBEWIN_REAL_RUNC"
	// RuncWrapperLogEnv, when set, names a file the wrapper appends every argv (and each
	// oomScoreAdj rewrite) to, so a test can see that it was used.
	RuncWrapperLogEnv = "KUBEWIN_RUNCWRAP_LOG"
	// DefaultRealRunc is Debian's runc (apt package runc).
	DefaultRealRunc = "/usr/sbin/runc"
)

// BuildStatic builds the Go main package pkg as a static linux binary
// (CGO_ENABLED=0 GOOS=linux go build -trimpath -o dir/<last element of pkg> pkg) and returns the
// binary's path. The go command is the one in PATH (go test puts its own GOROOT/bin first), run in
// the current directory, so pkg resolves within the module under test.
func BuildStatic(dir, pkg string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("build %s: %w", pkg, err)
	}
	out, err := filepath.Abs(filepath.Join(dir, path.Base(pkg)))
	if err != nil {
		return "", fmt.Errorf("build %s: %w", pkg, err)
	}
	if err := goBuild(out, pkg); err != nil {
		return "", err
	}
	return out, nil
}

// BuildRuncWrapper builds the runc wrapper (package runcwrap) as binDir/runc, with binDir a new
// directory dir/runcwrap holding nothing else, and returns binDir. Put binDir first in the PATH of
// containerd: containerd's runc shim inherits that PATH and finds "runc" through it. The wrapper
// executes the runc named by KUBEWIN_REAL_RUNC (default /usr/sbin/runc).
//
// This is a workaround for a property of the test machine (no CAP_SYS_RESOURCE, so runc cannot
// lower oom_score_adj for the pod sandbox); it is never part of what kubewin installs on a node.
func BuildRuncWrapper(dir string) (binDir string, err error) {
	binDir, err = filepath.Abs(filepath.Join(dir, "runcwrap"))
	if err != nil {
		return "", fmt.Errorf("build runc wrapper: %w", err)
	}
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return "", fmt.Errorf("build runc wrapper: %w", err)
	}
	if err := goBuild(filepath.Join(binDir, "runc"), RuncWrapperPackage); err != nil {
		return "", err
	}
	return binDir, nil
}

func goBuild(out, pkg string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("CGO_ENABLED=0 GOOS=linux go build -o %s %s: %w\n%s", out, pkg, err, tail(b, 4000))
	}
	return nil
}
