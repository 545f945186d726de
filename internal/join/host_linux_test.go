package join

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/render"
)

// The node service's unit is accepted by systemd's own checker: no unknown keys, a runnable
// ExecStart (this machine has no running systemd, but systemd-analyze verify reads units
// offline).
func TestSystemdUnitVerifies(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := &LinuxHost{Paths: render.LinuxPathsUnder("/"), Root: "/", Init: "systemd", Kubewin: self}
	path := filepath.Join(t.TempDir(), unitName)
	if err := os.WriteFile(path, h.Unit(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("systemd-analyze", "verify", path).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Fatalf("systemd-analyze verify: %v\n%s\n%s", err, out, h.Unit())
	}
	if !strings.Contains(string(h.Unit()), "ExecStart="+self+" node run --root /") {
		t.Errorf("ExecStart:\n%s", h.Unit())
	}
}
