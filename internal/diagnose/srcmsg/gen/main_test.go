package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEscapePath(t *testing.T) {
	for in, want := range map[string]string{
		"github.com/Microsoft/hcsshim":       "github.com/!microsoft/hcsshim",
		"k8s.io/kubernetes":                  "k8s.io/kubernetes",
		"github.com/BobuSumisu/aho-corasick": "github.com/!bobu!sumisu/aho-corasick",
	} {
		if got := escapePath(in); got != want {
			t.Errorf("escapePath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestK8sComponent(t *testing.T) {
	for file, want := range map[string]string{
		"pkg/kubelet/kubelet.go":                                "kubelet",
		"pkg/kubelet/cm/container_manager_linux.go":             "kubelet",
		"cmd/kubeadm/app/preflight/checks.go":                   "kubeadm",
		"pkg/proxy/winkernel/proxier.go":                        "kube-proxy",
		"pkg/util/iptables/iptables.go":                         "kube-proxy",
		"staging/src/k8s.io/client-go/tools/cache/reflector.go": "client-go",
		"pkg/controller/nodeipam/ipam.go":                       "",
		"cmd/kube-apiserver/app/server.go":                      "",
	} {
		if got := k8sComponent(file); got != want {
			t.Errorf("k8sComponent(%q) = %q, want %q", file, got, want)
		}
	}
}

// TestSourceTable: every pinned module version appears once and names its files' component.
func TestSourceTable(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range goModules() {
		key := m.Module + "@" + m.Version
		if seen[key] {
			t.Errorf("%s pinned twice", key)
		}
		seen[key] = true
		if m.Comp == nil || !strings.HasPrefix(m.Version, "v") {
			t.Errorf("%s: bad entry", key)
		}
	}
	if !seen["k8s.io/kubernetes@v1.37.1"] {
		t.Error("k8s.io/kubernetes v1.37.1 is not pinned")
	}
}

func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestTarFS(t *testing.T) {
	data := tarGz(t, map[string]string{"keepalived-2.2.7/a/b.c": "x", "keepalived-2.2.7/README": "y"})
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := tarFS(zr, ".c", "keepalived-2.2.7/")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := fs.ReadFile(fsys, "a/b.c"); err != nil || string(b) != "x" {
		t.Errorf("a/b.c = %q, %v", b, err)
	}
	if _, err := fs.ReadFile(fsys, "README"); err == nil {
		t.Error("a file without the extension was loaded")
	}
}

// TestKeepalivedDigest: a tarball that is not the pinned one is refused.
func TestKeepalivedDigest(t *testing.T) {
	p := filepath.Join(t.TempDir(), "keepalived_2.2.7.orig.tar.gz")
	if err := os.WriteFile(p, tarGz(t, map[string]string{"keepalived-2.2.7/x.c": "int x;"}), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := keepalivedTree(p); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Errorf("keepalivedTree accepted a tarball with another digest: %v", err)
	}
}

func TestRunNeedsSources(t *testing.T) {
	if err := run(filepath.Join(t.TempDir(), "out.gz"), "", ""); err == nil {
		t.Error("run without -keepalived and -wcn-git succeeded")
	}
}
