package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubewin/kubewin/internal/testenv"
)

// The seed 000 cluster recreated as API objects on a real kube-apiserver, planned with
// --from-cluster plus the operator's partial file (only what the API cannot show), must give the
// same plan.json as the embedded example; without the file, planning stops with exit 2 and says
// what is missing.
func TestPlanFromCluster(t *testing.T) {
	clusters := filepath.Join("..", "..", "testdata", "clusters")
	cp := testenv.StartControlPlane(t, testenv.WithServiceCIDR("10.176.0.0/12"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cp.CreateFiles(ctx, filepath.Join(clusters, "crds", "calico.yaml"), filepath.Join(clusters, "seed000", "objects.yaml")); err != nil {
		t.Fatal(err)
	}

	exampleDir := filepath.Join(t.TempDir(), "example")
	if code, _, errOut := runCLI(t, "plan", "-d", exampleDir); code != 0 {
		t.Fatalf("plan of the example: exit %d: %s", code, errOut)
	}
	dir := filepath.Join(t.TempDir(), "discovered")
	code, out, errOut := runCLI(t, "plan", "--from-cluster", "--kubeconfig", cp.KubeconfigPath,
		"-f", filepath.Join(clusters, "seed000", "user.yaml"), "-d", dir)
	if code != 0 {
		t.Fatalf("plan --from-cluster: exit %d\nstderr:\n%s\nstdout:\n%s", code, errOut, out)
	}
	want, err := os.ReadFile(filepath.Join(exampleDir, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("plan.json of the discovered seed cluster differs from the example's")
	}
	spec, err := os.ReadFile(filepath.Join(dir, effectiveSpecFile))
	if err != nil || !bytes.Contains(spec, []byte("overridden by")) || !bytes.Contains(spec, []byte("10.160.11.0/24")) {
		t.Errorf("bundle lacks the effective description: %v\n%s", err, spec)
	}

	// Without the operator's file the design and node009's NICs are unknown.
	empty := filepath.Join(t.TempDir(), "none")
	code, _, errOut = runCLI(t, "plan", "--from-cluster", "--kubeconfig", cp.KubeconfigPath, "-d", empty)
	if code != 2 {
		t.Fatalf("plan --from-cluster without -f: exit %d, want 2\n%s", code, errOut)
	}
	for _, frag := range []string{"<discovered cluster>", "spec.design", "discovery could not find these values"} {
		if !strings.Contains(errOut, frag) {
			t.Errorf("error output lacks %q:\n%s", frag, errOut)
		}
	}
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Errorf("a failed plan wrote %s: %v", empty, err)
	}

	// An unreachable API server is bad input within the timeout.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	start := time.Now()
	code, _, errOut = runCLI(t, "plan", "--from-cluster", "--kubeconfig", writeKubeconfig(t, "https://"+closed), "--timeout", "2s", "-d", empty)
	if code != 2 || !strings.Contains(errOut, "cannot reach the API server") || time.Since(start) > 10*time.Second {
		t.Errorf("unreachable API: exit %d after %s: %s", code, time.Since(start), errOut)
	}
}
