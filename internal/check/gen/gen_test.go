package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The committed tables of internal/platform must be what the generator makes of the pinned
// k8s.io/kubernetes: after a version bump this fails until `go generate ./internal/platform/`
// is run and the diff reviewed.
func TestCheckTablesAreCurrent(t *testing.T) {
	files, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "..", "platform", name))
		if err != nil {
			t.Fatalf("%v (run go generate ./internal/platform/)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("internal/platform/%s differs from the generator's output for the pinned k8s.io/kubernetes: run go generate ./internal/platform/ and review the diff", name)
		}
	}
}

// The generator stops on a flag value type it does not know rather than writing a table entry
// kubewin cannot parse.
func TestUnknownFlagValueTypeStopsGeneration(t *testing.T) {
	fs, err := RealKubeletFlagSet()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"max-pods", "register-with-taints", "feature-gates", "v", "version", "housekeeping-interval"} {
		if _, err := parserOf(fs.Lookup(name)); err != nil {
			t.Errorf("--%s: %v", name, err)
		}
	}
	fs.Lookup("max-pods").Value = &unknownValue{}
	if _, err := parserOf(fs.Lookup("max-pods")); err == nil || !strings.Contains(err.Error(), "unknown value type") {
		t.Errorf("an unknown value type was accepted: %v", err)
	}
}

type unknownValue struct{}

func (*unknownValue) String() string   { return "" }
func (*unknownValue) Set(string) error { return nil }
func (*unknownValue) Type() string     { return "int32" }

// kubewin's own binary must not link the kubelet, kube-proxy or feature-gate packages of
// k8s.io/kubernetes (their dependency graph costs every command tens of MB of RSS), nor
// component-base's verflag, which adds a global --version flag to every command's help.
func TestKubewinDoesNotLinkComponentPackages(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/kubewin/kubewin/cmd/kubewin").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := regexp.MustCompile(`^(k8s\.io/kubernetes/(cmd/kubelet|pkg/kubelet|pkg/proxy|pkg/features|pkg/apis/core/validation)|k8s\.io/component-base/version/verflag)(/|$)`)
	n := 0
	for _, p := range strings.Fields(string(out)) {
		n++
		if forbidden.MatchString(p) {
			t.Errorf("cmd/kubewin links %s", p)
		}
	}
	if n < 100 {
		t.Fatalf("go list -deps listed only %d packages", n)
	}
}
