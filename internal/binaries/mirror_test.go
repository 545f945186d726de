package binaries

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/binaries/binariestest"
)

func official(s *binariestest.Server) Official {
	return Official{Kubernetes: binariestest.Kubernetes, Containerd: binariestest.Containerd, CNI: binariestest.CNI,
		KubernetesURL: s.URL + "/k8s", ContainerdURL: s.URL + "/containerd", CNIURL: s.URL + "/cni"}
}

// readTree returns every file below dir by slash path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// onlyEntry says that parent holds exactly names (no temporary directory left behind).
func onlyEntries(t *testing.T, parent string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	sort.Strings(names)
	if fmt.Sprint(got) != fmt.Sprint(names) {
		t.Errorf("%s holds %v, want %v", parent, got, names)
	}
}

func TestBuildMirror(t *testing.T) {
	s := binariestest.Serve(t)
	ctx := context.Background()
	parent := t.TempDir()
	req := Request{Official: official(s), OSes: []string{"linux", "windows"}, Arch: "amd64", Client: s.Client()}
	files, err := Build(ctx, req, filepath.Join(parent, "a"))
	if err != nil {
		t.Fatal(err)
	}
	tree := readTree(t, filepath.Join(parent, "a"))
	want := map[string]string{
		"kubelet":                       binariestest.Content("kubelet", "linux", binariestest.Kubernetes),
		"kube-proxy.exe":                binariestest.Content("kube-proxy.exe", "windows", binariestest.Kubernetes),
		"kube-log-runner.exe":           binariestest.Content("kube-log-runner.exe", "windows", binariestest.Kubernetes),
		"containerd":                    binariestest.Content("containerd", "linux", binariestest.Containerd),
		"containerd-shim-runc-v2":       binariestest.Content("containerd-shim-runc-v2", "linux", binariestest.Containerd),
		"containerd-shim-runhcs-v1.exe": binariestest.Content("containerd-shim-runhcs-v1.exe", "windows", binariestest.Containerd),
		"cni/bridge":                    binariestest.Content("bridge", "linux", binariestest.CNI),
		"cni/host-local":                binariestest.Content("host-local", "linux", binariestest.CNI),
		"cni/host-local.exe":            binariestest.Content("host-local.exe", "windows", binariestest.CNI),
		"cni/win-overlay.exe":           binariestest.Content("win-overlay.exe", "windows", binariestest.CNI),
	}
	for name, content := range want {
		if tree[name] != content {
			t.Errorf("%s = %q, want %q", name, tree[name], content)
		}
	}
	for _, absent := range []string{"cni/README.md", "cni/LICENSE", "README.md"} {
		if _, ok := tree[absent]; ok {
			t.Errorf("%s is in the mirror", absent)
		}
	}
	// 3 Kubernetes programs, 3 containerd programs and 4 or 3 plugins per OS.
	if len(files) != 19 || len(tree) != 21 {
		t.Errorf("%d files, %d in the tree: %v", len(files), len(tree), files)
	}
	// SHA256SUMS is what join reads, and lists every file with its digest.
	sums, err := ReadSums(filepath.Join(parent, "a"))
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range tree {
		if name == SumsFile || name == SourcesFile {
			continue
		}
		if sums[name] != sum256([]byte(content)) {
			t.Errorf("SHA256SUMS lists %s as %q", name, sums[name])
		}
	}
	if !strings.Contains(tree[SourcesFile], "containerd-shim-runhcs-v1.exe  "+s.URL+"/containerd/v2.1.4/containerd-2.1.4-windows-amd64.tar.gz!bin/containerd-shim-runhcs-v1.exe  "+s.URL+"/containerd/v2.1.4/containerd-2.1.4-windows-amd64.tar.gz.sha256sum\n") {
		t.Errorf("SOURCES:\n%s", tree[SourcesFile])
	}
	if !strings.Contains(tree[SourcesFile], "kubelet  "+s.URL+"/k8s/v1.33.1/bin/linux/amd64/kubelet  "+s.URL+"/k8s/v1.33.1/bin/linux/amd64/kubelet.sha256 "+s.URL+"/k8s/v1.33.1/bin/linux/amd64/kubelet.sha512\n") {
		t.Errorf("SOURCES:\n%s", tree[SourcesFile])
	}
	// Same input, same bytes; a second build over a mirror replaces it.
	if _, err := Build(ctx, req, filepath.Join(parent, "b")); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(ctx, req, filepath.Join(parent, "a")); err != nil {
		t.Fatal(err)
	}
	if a, b := readTree(t, filepath.Join(parent, "a")), readTree(t, filepath.Join(parent, "b")); fmt.Sprint(a) != fmt.Sprint(b) || fmt.Sprint(a) != fmt.Sprint(tree) {
		t.Errorf("two builds differ")
	}
	onlyEntries(t, parent, "a", "b")
}

// Keep chooses files; a Kubernetes program not kept is not even downloaded.
func TestBuildKeep(t *testing.T) {
	s := binariestest.Serve(t)
	dir := filepath.Join(t.TempDir(), "m")
	keep := func(n string) bool {
		return n == "kubelet" || n == "containerd" || n == "containerd-shim-runc-v2" || n == "cni/host-local"
	}
	if _, err := Build(context.Background(), Request{Official: official(s), OSes: []string{"linux"}, Arch: "amd64", Client: s.Client(), Keep: keep}, dir); err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range readTree(t, dir) {
		names = append(names, n)
	}
	sort.Strings(names)
	if got := strings.Join(names, " "); got != "SHA256SUMS SOURCES cni/host-local containerd containerd-shim-runc-v2 kubelet" {
		t.Errorf("mirror holds %s", got)
	}
	if n := s.Requests("/k8s/v1.33.1/bin/linux/amd64/kube-proxy"); n != 0 {
		t.Errorf("kube-proxy downloaded %d times", n)
	}
}

// Each way a release can be wrong fails the whole mirror and leaves nothing behind: not the
// directory, not a temporary one, not a file outside it.
func TestBuildRefuses(t *testing.T) {
	k8s := "/k8s/v1.33.1/bin/linux/amd64/kubelet"
	ctrd := "/containerd/v2.1.4/containerd-2.1.4-linux-amd64.tar.gz"
	cni := "/cni/v1.7.1/cni-plugins-linux-amd64-v1.7.1.tgz"
	for _, tc := range []struct {
		name   string
		change func(s *binariestest.Server, o *Official, lim *Limits)
		err    string
		is     error
	}{
		{"kubelet sha256 mismatch", func(s *binariestest.Server, _ *Official, _ *Limits) {
			s.Set(k8s, []byte("kubelet, tampered"))
		}, "kubelet has sha256 ", nil},
		{"kubelet sha512 mismatch only", func(s *binariestest.Server, _ *Official, _ *Limits) {
			s.Set(k8s+".sha512", []byte(strings.Repeat("ab", 64)))
		}, "has sha512 ", nil},
		{"containerd archive mismatch", func(s *binariestest.Server, _ *Official, _ *Limits) {
			s.Set(ctrd, binariestest.TarGz(t, []binariestest.Entry{{Name: "bin/containerd", Data: "other"}}))
		}, "containerd-2.1.4-linux-amd64.tar.gz has sha256 ", nil},
		{"cni sha512 mismatch", func(s *binariestest.Server, _ *Official, _ *Limits) {
			s.Set(cni+".sha512", []byte(strings.Repeat("0", 128)+"  cni-plugins-linux-amd64-v1.7.1.tgz\n"))
		}, "cni-plugins-linux-amd64-v1.7.1.tgz has sha512 ", nil},
		{"missing kubelet.sha512", func(s *binariestest.Server, _ *Official, _ *Limits) { s.Set(k8s+".sha512", nil) }, "kubelet.sha512: 404", ErrNotFound},
		{"missing containerd .sha256sum", func(s *binariestest.Server, _ *Official, _ *Limits) { s.Set(ctrd+".sha256sum", nil) }, "sha256 checksum of containerd-2.1.4-linux-amd64.tar.gz", ErrNotFound},
		{"missing cni .sha256", func(s *binariestest.Server, _ *Official, _ *Limits) { s.Set(cni+".sha256", nil) }, ".tgz.sha256: 404", ErrNotFound},
		{"checksum file of another archive", func(s *binariestest.Server, _ *Official, _ *Limits) {
			data := s.Get(ctrd + ".sha256sum")
			s.Set(ctrd+".sha256sum", bytes.Replace(data, []byte("2.1.4"), []byte("2.1.3"), 1))
		}, `is the checksum of "containerd-2.1.3-linux-amd64.tar.gz", not of containerd-2.1.4-linux-amd64.tar.gz`, nil},
		{"archive with a ../ entry", func(s *binariestest.Server, _ *Official, _ *Limits) {
			s.SetArchive(cni, binariestest.TarGz(t, []binariestest.Entry{{Name: "./host-local", Data: "x"}, {Name: "./../../evil", Data: "x"}}), ".sha256", ".sha512")
		}, `entry "./../../evil" leaves the archive's directory`, nil},
		{"archive with an absolute entry", func(s *binariestest.Server, _ *Official, _ *Limits) {
			s.SetArchive(ctrd, binariestest.TarGz(t, []binariestest.Entry{{Name: "/bin/containerd", Data: "x"}}), ".sha256sum")
		}, `entry "/bin/containerd": not a relative slash path`, nil},
		{"program that is a symlink", func(s *binariestest.Server, _ *Official, _ *Limits) {
			s.SetArchive(ctrd, binariestest.TarGz(t, []binariestest.Entry{{Name: "bin/containerd", Typeflag: tar.TypeSymlink, Linkname: "/etc/shadow"}}), ".sha256sum")
		}, `entry "bin/containerd": not a regular file`, nil},
		{"containerd archive without the shim", func(s *binariestest.Server, _ *Official, _ *Limits) {
			s.SetArchive(ctrd, binariestest.TarGz(t, []binariestest.Entry{{Name: "bin/containerd", Data: "x"}}), ".sha256sum")
		}, "has no containerd-shim-runc-v2", nil},
		{"kubernetes version not published", func(_ *binariestest.Server, o *Official, _ *Limits) { o.Kubernetes = "v1.33.2" }, "/k8s/v1.33.2/bin/linux/amd64/kubelet.sha256: 404", ErrNotFound},
		{"containerd version not published", func(_ *binariestest.Server, o *Official, _ *Limits) { o.Containerd = "2.1.5" }, "containerd-2.1.5-linux-amd64.tar.gz.sha256sum: 404", ErrNotFound},
		{"partial version", func(_ *binariestest.Server, o *Official, _ *Limits) { o.CNI = "1.7" }, `cni version "1.7": expected a release version`, nil},
		{"latest", func(_ *binariestest.Server, o *Official, _ *Limits) { o.Kubernetes = "latest" }, `kubernetes version "latest"`, nil},
		{"plain http host", func(s *binariestest.Server, o *Official, _ *Limits) { o.KubernetesURL = "http://127.0.0.1:1/k8s" }, "expected an https:// base URL", nil},
		{"program larger than the limit", func(_ *binariestest.Server, _ *Official, l *Limits) { l.Download = 10 }, "larger than 10 bytes", nil},
		{"archive entry larger than the limit", func(_ *binariestest.Server, _ *Official, l *Limits) { l.Entry = 10 }, "more than the limit of 10", nil},
		{"archive larger in all than the limit", func(_ *binariestest.Server, _ *Official, l *Limits) { l.Total = 60 }, "unpacks to more than the limits", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := binariestest.Serve(t)
			o, lim := official(s), DefaultLimits()
			tc.change(s, &o, &lim)
			parent := t.TempDir()
			_, err := Build(context.Background(), Request{Official: o, OSes: []string{"linux"}, Arch: "amd64", Client: s.Client(), Limits: &lim}, filepath.Join(parent, "sub", "mirror"))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v does not wrap %v", err, tc.is)
			}
			if tree := readTree(t, parent); len(tree) != 0 {
				t.Errorf("left %v", tree)
			}
			if _, err := os.Stat(filepath.Join(parent, "sub")); err == nil {
				onlyEntries(t, filepath.Join(parent, "sub"))
			}
		})
	}
}

// A failed build leaves a previous mirror as it was, and a directory that is not a mirror is
// never replaced.
func TestBuildKeepsWhatIsThere(t *testing.T) {
	s := binariestest.Serve(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "m")
	req := Request{Official: official(s), OSes: []string{"linux"}, Arch: "amd64", Client: s.Client()}
	if _, err := Build(ctx, req, dir); err != nil {
		t.Fatal(err)
	}
	before := readTree(t, dir)
	s.Set("/k8s/v1.33.1/bin/linux/amd64/kubelet", []byte("tampered"))
	if _, err := Build(ctx, req, dir); err == nil {
		t.Fatal("a tampered kubelet was accepted")
	}
	if after := readTree(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Error("a failed build changed the previous mirror")
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(ctx, req, other); err == nil || !strings.Contains(err.Error(), "not empty and not a mirror") {
		t.Errorf("a directory with other files: %v", err)
	}
	for _, bad := range []Request{
		{Official: req.Official, Arch: "amd64"},
		{Official: req.Official, OSes: []string{"windows"}, Arch: "arm64"},
		{Official: req.Official, OSes: []string{"darwin"}, Arch: "amd64"},
		{Official: req.Official, OSes: []string{"linux", "linux"}, Arch: "amd64"},
		{Official: Official{}, OSes: []string{"linux"}, Arch: "amd64"},
	} {
		if _, err := Build(ctx, bad, filepath.Join(t.TempDir(), "x")); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func sum256(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }
