package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Assets returns the directory holding the kube-apiserver and etcd binaries: KUBEWIN_TEST_ASSETS,
// else KUBEBUILDER_ASSETS, else the output of hack/kube-binaries/build.sh (which builds them once
// into the Go cache; the first run takes minutes, later runs are instant).
func Assets() (string, error) {
	for _, env := range []string{"KUBEWIN_TEST_ASSETS", "KUBEBUILDER_ASSETS"} {
		if dir := os.Getenv(env); dir != "" {
			return dir, nil
		}
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	script := filepath.Join(root, "hack", "kube-binaries", "build.sh")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("bash", script)
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build test assets with %s: %w\n%s", script, err, tailString(stderr.String(), 4000))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	dir := strings.TrimSpace(lines[len(lines)-1])
	if dir == "" {
		return "", fmt.Errorf("%s printed no assets directory", script)
	}
	return dir, nil
}

// repoRoot walks up from the working directory (a package directory under go test) to the
// directory holding kubewin's go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module github.com/kubewin/kubewin\n")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("find repository root: no kubewin go.mod above %s; set KUBEWIN_TEST_ASSETS", dir)
		}
	}
}

func tailString(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
