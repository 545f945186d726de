package join_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/binaries/binariestest"
	"github.com/kubewin/kubewin/internal/join"
)

// A Windows join (in-memory host, real control plane) with --binaries official:…: the programs
// come from the release layouts served on loopback, checked against their published checksums,
// and land where the mirror's would; a second join changes nothing and downloads nothing.
func TestWindowsJoinFromOfficialReleases(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root like the other join tests (CI runs as root)")
	}
	w := newWindowsJoin(t)
	s := binariestest.Serve(t)
	ctx := context.Background()
	var log strings.Builder
	o := w.options()
	o.Binaries = join.Binaries{Source: s.Spec(), Client: s.Client()}
	o.Log = &log
	if _, err := join.Run(ctx, o, w.host, w.paths); err != nil {
		t.Fatalf("join: %v\n%s", err, log.String())
	}
	for path, want := range map[string]string{
		filepath.Join(w.paths.BinDir, "kubelet.exe"):                          binariestest.Content("kubelet.exe", "windows", binariestest.Kubernetes),
		filepath.Join(w.paths.BinDir, "kube-proxy.exe"):                       binariestest.Content("kube-proxy.exe", "windows", binariestest.Kubernetes),
		filepath.Join(w.paths.RuntimeBinDir, "containerd.exe"):                binariestest.Content("containerd.exe", "windows", binariestest.Containerd),
		filepath.Join(w.paths.RuntimeBinDir, "containerd-shim-runhcs-v1.exe"): binariestest.Content("containerd-shim-runhcs-v1.exe", "windows", binariestest.Containerd),
		filepath.Join(w.paths.CNIBinDir, "host-local.exe"):                    binariestest.Content("host-local.exe", "windows", binariestest.CNI),
	} {
		if got, err := os.ReadFile(path); err != nil || string(got) != want {
			t.Errorf("%s = %q %v, want %q", path, got, err, want)
		}
	}
	kubelet := "/k8s/" + binariestest.Kubernetes + "/bin/windows/amd64/kubelet.exe"
	log.Reset()
	res, err := join.Run(ctx, o, w.host, w.paths)
	if err != nil || res.Changed() || s.Requests(kubelet) != 1 {
		t.Errorf("second join: %v, changed %v, kubelet.exe fetched %d times\n%s", err, res != nil && res.Changed(), s.Requests(kubelet), log.String())
	}
}
