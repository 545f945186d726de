// Command gen regenerates internal/diagnose/srcmsg/index.tsv.gz from the pinned upstream sources
// listed in the tables below. Go modules are read from the module cache (`go env GOMODCACHE`) and
// downloaded with `go mod download` when missing; keepalived's C source is read from Debian's
// .orig tarball and windows-container-networking from a git clone, both checked against the pins.
//
//	go run ./internal/diagnose/srcmsg/gen -keepalived /path/keepalived_2.2.7.orig.tar.gz \
//	    -wcn-git /path/to/windows-container-networking/.git
//
// The same sources always give the same bytes.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/kubewin/kubewin/internal/diagnose/srcmsg/extract"
)

// goModule is one pinned Go module version.
type goModule struct {
	Module  string
	Version string
	Label   string // version recorded in the index ("" = Version); staging modules carry their release
	Comp    func(file string) string
}

// Kubernetes release lines: the newest patch the module proxy served of each, chosen to span the
// wording changes between releases (glog → klog → structured klog.ErrorS, capitalisation).
var k8sReleases = []string{"v1.13.0", "v1.18.20", "v1.21.14", "v1.25.16", "v1.29.6", "v1.33.13", "v1.37.1"}

func goModules() []goModule {
	var ms []goModule
	for _, v := range k8sReleases {
		ms = append(ms, goModule{Module: "k8s.io/kubernetes", Version: v, Comp: k8sComponent})
	}
	staging := func(mod, v string, comp func(string) string) goModule {
		return goModule{Module: mod, Version: v, Label: "v1." + strings.TrimPrefix(v, "v0."), Comp: comp}
	}
	for _, v := range []string{"v0.33.13", "v0.37.1"} {
		ms = append(ms, staging("k8s.io/cri-client", v, all("kubelet")))
	}
	for _, v := range []string{"v0.29.6", "v0.33.13", "v0.37.1"} {
		ms = append(ms, staging("k8s.io/kubelet", v, all("kubelet")))
	}
	ms = append(ms, staging("k8s.io/mount-utils", "v0.37.1", all("kubelet")))
	for _, v := range []string{"v0.21.14", "v0.25.16", "v0.29.6", "v0.32.3", "v0.37.1"} {
		ms = append(ms, staging("k8s.io/client-go", v, prefixes("client-go",
			"tools/cache/", "rest/", "transport/", "tools/clientcmd/", "tools/leaderelection/",
			"util/cert/", "util/certificate/", "tools/watch/", "plugin/pkg/client/auth/exec/")))
	}
	// Shared Kubernetes libraries that kubelet and kube-proxy log through: the node lease
	// controller (kubelet) and apimachinery's panic/crash and wait helpers.
	ms = append(ms, staging("k8s.io/component-helpers", "v0.37.1", prefixes("kubelet", "apimachinery/lease/")))
	for _, v := range []string{"v0.32.3", "v0.37.1"} {
		ms = append(ms, staging("k8s.io/apimachinery", v, prefixes("apimachinery", "pkg/util/runtime/", "pkg/util/wait/", "pkg/util/net/")))
	}
	for _, v := range []string{"v1.4.13", "v1.6.36", "v1.7.35"} {
		ms = append(ms, goModule{Module: "github.com/containerd/containerd", Version: v, Comp: all("containerd")})
	}
	ms = append(ms, goModule{Module: "github.com/containerd/containerd/v2", Version: "v2.4.2", Comp: all("containerd")})
	ms = append(ms, goModule{Module: "github.com/containerd/go-cni", Version: "v1.1.12", Comp: all("containerd")})
	for _, v := range []string{"v0.8.26", "v0.9.12", "v0.13.0", "v0.15.0"} {
		ms = append(ms, goModule{Module: "github.com/Microsoft/hcsshim", Version: v, Comp: all("hcsshim")})
	}
	for _, v := range []string{"v0.8.1", "v1.3.1"} {
		ms = append(ms, goModule{Module: "github.com/containernetworking/cni", Version: v, Comp: all("cni")})
	}
	for _, v := range []string{"v0.8.6", "v1.9.1"} {
		ms = append(ms, goModule{Module: "github.com/containernetworking/plugins", Version: v, Comp: all("cni")})
	}
	for _, v := range []string{"v0.28.4", "v0.28.10"} {
		ms = append(ms, goModule{Module: "github.com/flannel-io/flannel", Version: v, Comp: all("flannel")})
	}
	// The calico monorepo tags (v3.x) are not module versions; the proxy serves its default branch
	// as this pseudo-version (2025-08-13).
	ms = append(ms, goModule{Module: "github.com/projectcalico/calico",
		Version: "v1.11.0-cni-plugin.0.20250813170300-a0db560f0520", Label: "master-20250813",
		Comp: prefixes("calico", "node/", "cni-plugin/", "felix/", "typha/", "libcalico-go/lib/", "confd/")})
	return ms
}

// gitSource is a repository that is not served as a module.
type gitSource struct {
	Name, Module, Commit, Label, Component string
}

var wcn = gitSource{Name: "microsoft/windows-container-networking", Module: "github.com/Microsoft/windows-container-networking",
	Commit: "b96345f18f5164575dd12f9d6c8228e6be8e2eaf", Label: "v0.3.1-6-gb96345f", Component: "cni"}

// keepalived from Debian bookworm's source package (keepalived 1:2.2.7-1).
const (
	keepalivedVersion = "2.2.7"
	keepalivedSHA256  = "c61940d874154a560a54627ecf7ef47adebdf832164368d10bf242a4d9b7d49d"
)

func all(c string) func(string) string { return func(string) string { return c } }

func prefixes(c string, ps ...string) func(string) string {
	return func(f string) string {
		for _, p := range ps {
			if strings.HasPrefix(f, p) {
				return c
			}
		}
		return ""
	}
}

func k8sComponent(f string) string {
	for _, r := range []struct{ prefix, comp string }{
		{"cmd/kubelet/", "kubelet"}, {"pkg/kubelet/", "kubelet"}, {"pkg/volume/", "kubelet"},
		{"pkg/credentialprovider/", "kubelet"}, {"pkg/util/mount/", "kubelet"}, {"pkg/util/oom/", "kubelet"},
		{"cmd/kubeadm/", "kubeadm"},
		{"cmd/kube-proxy/", "kube-proxy"}, {"pkg/proxy/", "kube-proxy"}, {"pkg/util/iptables/", "kube-proxy"},
		{"pkg/util/ipset/", "kube-proxy"}, {"pkg/util/ipvs/", "kube-proxy"}, {"pkg/util/conntrack/", "kube-proxy"},
		// v1.13's module zip still carries the staging tree (later ones are separate modules).
		{"staging/src/k8s.io/client-go/tools/cache/", "client-go"}, {"staging/src/k8s.io/client-go/rest/", "client-go"},
		{"staging/src/k8s.io/client-go/transport/", "client-go"}, {"staging/src/k8s.io/client-go/tools/clientcmd/", "client-go"},
		{"staging/src/k8s.io/client-go/util/certificate/", "client-go"},
		{"staging/src/k8s.io/apimachinery/pkg/util/runtime/", "apimachinery"},
	} {
		if strings.HasPrefix(f, r.prefix) {
			return r.comp
		}
	}
	return ""
}

func main() {
	out := flag.String("o", "internal/diagnose/srcmsg/index.tsv.gz", "index to write")
	kaPath := flag.String("keepalived", "", "keepalived_"+keepalivedVersion+".orig.tar.gz (apt-get source --download-only keepalived)")
	wcnGit := flag.String("wcn-git", "", "git directory of "+wcn.Name+" holding commit "+wcn.Commit)
	flag.Parse()
	if err := run(*out, *kaPath, *wcnGit); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(out, kaPath, wcnGit string) error {
	if kaPath == "" || wcnGit == "" {
		return errors.New("-keepalived and -wcn-git are required (see internal/diagnose/srcmsg/README.md)")
	}
	modCache, err := goEnv("GOMODCACHE")
	if err != nil {
		return err
	}
	set := extract.NewSet()
	var sources []string
	counts := map[string]int{}
	for _, m := range goModules() {
		dir, err := moduleDir(modCache, m.Module, m.Version)
		if err != nil {
			return err
		}
		label := m.Label
		if label == "" {
			label = m.Version
		}
		n, err := extract.ExtractGo(extract.GoSource{FS: os.DirFS(dir), Module: m.Module, Version: label, Component: m.Comp}, set)
		if err != nil {
			return err
		}
		sources = append(sources, m.Module+"@"+m.Version)
		counts[m.Module+"@"+label] += n
	}
	wfs, err := gitTree(wcnGit, wcn.Commit)
	if err != nil {
		return err
	}
	n, err := extract.ExtractGo(extract.GoSource{FS: wfs, Module: wcn.Module, Version: wcn.Label, Component: all(wcn.Component)}, set)
	if err != nil {
		return err
	}
	sources = append(sources, "github:"+wcn.Name+"@"+wcn.Commit)
	counts[wcn.Module+"@"+wcn.Label] = n
	kfs, err := keepalivedTree(kaPath)
	if err != nil {
		return err
	}
	n, err = extract.ExtractC(extract.CSource{FS: kfs, Module: "keepalived", Version: keepalivedVersion, Component: "keepalived", OS: "linux"}, set)
	if err != nil {
		return err
	}
	sources = append(sources, "debian:keepalived_"+keepalivedVersion+".orig.tar.gz sha256:"+keepalivedSHA256)
	counts["keepalived@"+keepalivedVersion] = n

	var buf bytes.Buffer
	rows := set.Rows()
	if err := extract.WriteTSV(&buf, sources, rows); err != nil {
		return err
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(os.Stderr, "%-70s %6d calls\n", k, counts[k])
	}
	perComp := map[string]int{}
	perVersion := map[string]int{}
	for _, r := range rows {
		perComp[r.Component]++
		for _, v := range r.Versions {
			perVersion[r.Component+" "+r.Module+"@"+v]++
		}
	}
	pv := make([]string, 0, len(perVersion))
	for k := range perVersion {
		pv = append(pv, k)
	}
	sort.Strings(pv)
	for _, k := range pv {
		fmt.Fprintf(os.Stderr, "rows in %-80s %6d\n", k, perVersion[k])
	}
	comps := make([]string, 0, len(perComp))
	for c := range perComp {
		comps = append(comps, c)
	}
	sort.Strings(comps)
	for _, c := range comps {
		fmt.Fprintf(os.Stderr, "component %-12s %6d rows\n", c, perComp[c])
	}
	fmt.Fprintf(os.Stderr, "%d rows, %d bytes -> %s\n", len(rows), buf.Len(), out)
	return nil
}

func goEnv(name string) (string, error) {
	b, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w", name, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// escapePath is the module cache's case encoding: each upper-case letter becomes '!' and its
// lower case (golang.org/x/mod/module.EscapePath).
func escapePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('!')
			b.WriteRune(r + ('a' - 'A'))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// moduleDir returns the extracted module in the cache, downloading it first when absent.
func moduleDir(cache, mod, version string) (string, error) {
	dir := filepath.Join(cache, filepath.FromSlash(escapePath(mod))+"@"+version)
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp("", "srcmsg-gen-")
	if err != nil {
		return "", fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "go.mod"), []byte("module srcmsggen\n"), 0o644); err != nil {
		return "", fmt.Errorf("temp go.mod: %w", err)
	}
	cmd := exec.Command("go", "mod", "download", "-json", mod+"@"+version)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	outb, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w: %s", mod, version, err, outb)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(outb, &info); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: decode: %w", mod, version, err)
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", mod, version, info.Error)
	}
	return info.Dir, nil
}

// gitTree reads the Go files of commit from a git directory.
func gitTree(gitDir, commit string) (fs.FS, error) {
	cmd := exec.Command("git", "--git-dir", gitDir, "archive", "--format=tar", commit)
	data, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git archive %s in %s: %w", commit, gitDir, err)
	}
	return tarFS(bytes.NewReader(data), ".go", "")
}

// keepalivedTree reads the C files of the pinned keepalived tarball after checking its digest.
func keepalivedTree(p string) (fs.FS, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("keepalived tarball: %w", err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != keepalivedSHA256 {
		return nil, fmt.Errorf("keepalived tarball %s has sha256 %s, want %s", p, got, keepalivedSHA256)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("keepalived tarball: %w", err)
	}
	return tarFS(zr, ".c", "keepalived-"+keepalivedVersion+"/")
}

// tarFS loads the regular files ending in ext into memory, with strip removed from their names.
func tarFS(r io.Reader, ext, strip string) (fs.FS, error) {
	m := fstest.MapFS{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return m, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read tar: %w", err)
		}
		if h.Typeflag != tar.TypeReg || !strings.HasSuffix(h.Name, ext) {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("read tar %s: %w", h.Name, err)
		}
		m[strings.TrimPrefix(h.Name, strip)] = &fstest.MapFile{Data: b, Mode: 0o644}
	}
}
