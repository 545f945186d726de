package main

import (
	"bytes"
	"context"
	"debug/pe"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubewin/kubewin/internal/release"
)

// TestReleaseBuild builds the release of the current commit as hack/release.sh does and checks
// what a user gets: the same bytes when built again, a Windows binary Windows will load as a
// console program, a version command reporting the stamped version and commit, an SBOM listing
// the modules the binaries link, a krew manifest krew's validator accepts and checksums that
// match the files.
//
// CPU on CI is scarce, so the test builds linux/amd64 (the gateway image's, and the one it can
// run) and windows/amd64 (the Windows nodes'); hack/release.sh adds linux/arm64 and
// windows/arm64 (the image's arm64 half is tested with a small binary in gatewayimage). The
// second build shares the go build cache: it checks that the link and everything after it
// (archives, SBOM, krew manifest, image, sums) are reproducible; the compiler's output is
// reproducible by Go's own guarantee and tests (-trimpath keeps paths out).
func TestReleaseBuild(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const version = "v0.0.0-test.1"
	targets := []release.Target{{OS: "linux", Arch: "amd64"}, {OS: "windows", Arch: "amd64"}}
	build := func(out string) (*Built, time.Duration) {
		began := time.Now()
		b, err := Build(ctx, Config{
			Options: release.Options{Version: version, ModuleDir: root, OutDir: out, Targets: targets,
				BaseURL: "https://example.test/kubewin/" + version},
			Image: true, ImageRef: "example.test/kubewin-gateway:" + version,
		})
		if err != nil {
			t.Fatal(err)
		}
		return b, time.Since(began)
	}
	dirA, dirB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	a, tookA := build(dirA)
	b, tookB := build(dirB)
	t.Logf("release %s of %s: first build %s (binaries %s, image %s), second %s", version, a.Commit,
		tookA.Round(time.Second), a.Took["binaries"].Round(time.Second), a.Took["image"].Round(time.Second), tookB.Round(time.Second))

	// Reproducible: the same files with the same bytes.
	namesA, namesB := listDir(t, dirA), listDir(t, dirB)
	if strings.Join(namesA, " ") != strings.Join(namesB, " ") {
		t.Fatalf("the two builds wrote different files:\n%v\n%v", namesA, namesB)
	}
	for _, n := range namesA {
		x, _ := os.ReadFile(filepath.Join(dirA, n))
		y, _ := os.ReadFile(filepath.Join(dirB, n))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two builds of the same commit (%d and %d bytes)", n, len(x), len(y))
		}
		t.Logf("%-40s %10d bytes", n, len(x))
	}
	if a.Image.Digest != b.Image.Digest {
		t.Errorf("image digests differ: %s, %s", a.Image.Digest, b.Image.Digest)
	}
	want := []string{release.SumsFile, release.KrewManifestName, release.BinaryName(targets[0]), release.BinaryName(targets[1]),
		release.ArchiveName(version, targets[0]), release.ArchiveName(version, targets[1]), release.ImageArchiveName(version), release.SBOMName(version)}
	for _, w := range want {
		if !contains(namesA, w) {
			t.Errorf("release lacks %s: %v", w, namesA)
		}
	}

	// SHA256SUMS lists every other file with its hash.
	sumsData, _ := os.ReadFile(filepath.Join(dirA, release.SumsFile))
	sums, err := release.ParseSums(sumsData)
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != len(namesA)-1 {
		t.Errorf("SHA256SUMS lists %d files, the release has %d besides it", len(sums), len(namesA)-1)
	}
	for _, n := range namesA {
		if n == release.SumsFile {
			continue
		}
		out, err := exec.Command("sha256sum", filepath.Join(dirA, n)).Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Fields(string(out))[0]; sums[n] != got {
			t.Errorf("SHA256SUMS says %s for %s, sha256sum %s", sums[n], n, got)
		}
	}

	// The Windows binary: PE32+ for AMD64, console subsystem (it is run from PowerShell and as
	// a service with its output captured).
	checkPE(t, filepath.Join(dirA, release.BinaryName(targets[1])))

	// The Linux binary reports what was stamped.
	out, err := exec.Command(filepath.Join(dirA, release.BinaryName(targets[0])), "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("kubewin version: %v", err)
	}
	var v struct{ Version, Commit, GoVersion, Platform string }
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if v.Version != version || v.Commit != a.Commit || v.GoVersion != runtime.Version() || v.Platform != "linux/amd64" {
		t.Errorf("kubewin version = %+v, want %s %s %s linux/amd64", v, version, a.Commit, runtime.Version())
	}

	checkSBOM(t, root, filepath.Join(dirA, release.SBOMName(version)), version, targets)
	checkKrew(t, filepath.Join(dirA, release.KrewManifestName), sums, version, targets)
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func checkPE(t *testing.T, path string) {
	t.Helper()
	f, err := pe.Open(path)
	if err != nil {
		t.Fatalf("%s is not a PE file: %v", path, err)
	}
	defer f.Close()
	if f.FileHeader.Machine != pe.IMAGE_FILE_MACHINE_AMD64 {
		t.Errorf("%s: machine %#x, want AMD64 (%#x)", path, f.FileHeader.Machine, pe.IMAGE_FILE_MACHINE_AMD64)
	}
	oh, ok := f.OptionalHeader.(*pe.OptionalHeader64)
	if !ok {
		t.Fatalf("%s: not PE32+", path)
	}
	if oh.Subsystem != pe.IMAGE_SUBSYSTEM_WINDOWS_CUI {
		t.Errorf("%s: subsystem %d, want console (%d)", path, oh.Subsystem, pe.IMAGE_SUBSYSTEM_WINDOWS_CUI)
	}
}

// checkSBOM: the SBOM lists exactly the modules the go command says the targets' kubewin links
// (go list -deps), each at the version go.mod selects (replacements applied) with its go.sum
// hash; every requirement of go.mod is either listed so or linked into no target.
func checkSBOM(t *testing.T, root, path, version string, targets []release.Target) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc release.SPDXDocument
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("SBOM: %v", err)
	}
	if doc.SPDXVersion != "SPDX-2.3" || doc.DataLicense != "CC0-1.0" || doc.Packages[0].VersionInfo != version {
		t.Errorf("SBOM header: %s %s %+v", doc.SPDXVersion, doc.DataLicense, doc.Packages[0])
	}
	listed := map[string]release.SPDXPackage{}
	for _, p := range doc.Packages[2:] {
		listed[p.Name] = p
	}
	if len(doc.Relationships) != len(doc.Packages) {
		t.Errorf("%d relationships for %d packages", len(doc.Relationships), len(doc.Packages))
	}

	// The modules linked, by the go command.
	linked := map[string]string{}
	for _, tg := range targets {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}} {{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}{{end}}{{end}}", "./cmd/kubewin")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS="+tg.OS, "GOARCH="+tg.Arch, "CGO_ENABLED=0", "GOFLAGS=")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps for %s: %v", tg, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) == 2 {
				linked[f[0]] = f[1]
			}
		}
	}
	if len(linked) != len(listed) {
		t.Errorf("SBOM lists %d modules, the binaries link %d", len(listed), len(linked))
	}
	goSum := readGoSum(t, filepath.Join(root, "go.sum"))
	for p, ver := range linked {
		pkg, ok := listed[p]
		if !ok {
			t.Errorf("SBOM lacks linked module %s %s", p, ver)
			continue
		}
		if pkg.VersionInfo != ver || pkg.Comment != release.GoSumPrefix+goSum[p+" "+ver] || goSum[p+" "+ver] == "" {
			t.Errorf("SBOM %s: version %s comment %q; go list %s, go.sum %q", p, pkg.VersionInfo, pkg.Comment, ver, goSum[p+" "+ver])
		}
		if len(pkg.ExternalRefs) != 1 || pkg.ExternalRefs[0].ReferenceLocator != "pkg:golang/"+p+"@"+ver {
			t.Errorf("SBOM %s: purl %+v", p, pkg.ExternalRefs)
		}
	}
	// go.mod's requirements.
	cmd := exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var mod struct {
		Require []struct {
			Path     string
			Indirect bool
		}
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	direct, inSBOM := 0, 0
	for _, r := range mod.Require {
		_, isLinked := linked[r.Path]
		_, isListed := listed[r.Path]
		if isLinked != isListed {
			t.Errorf("go.mod requires %s: linked %v, in the SBOM %v", r.Path, isLinked, isListed)
		}
		if !r.Indirect {
			direct++
			if isListed {
				inSBOM++
			}
		}
	}
	t.Logf("SBOM: %d modules; %d of go.mod's %d direct requirements are linked and listed (the others serve tests or the release builder)", len(listed), inSBOM, direct)
}

// readGoSum maps "path version" to the h1: hash of the module's content.
func readGoSum(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && !strings.HasSuffix(f[1], "/go.mod") {
			m[f[0]+" "+f[1]] = f[2]
		}
	}
	return m
}

// checkKrew: each platform of the krew manifest points at its archive with the checksum
// SHA256SUMS lists, and krew's validator accepts the manifest.
func checkKrew(t *testing.T, path string, sums map[string]string, version string, targets []release.Target) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Spec struct {
			Version   string
			Platforms []struct {
				URI, Sha256 string
				Selector    struct{ MatchLabels map[string]string }
			}
		}
	}
	if err := yaml.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	if p.Spec.Version != version || len(p.Spec.Platforms) != len(targets) {
		t.Fatalf("krew manifest: version %s, %d platforms", p.Spec.Version, len(p.Spec.Platforms))
	}
	for _, pl := range p.Spec.Platforms {
		name := pl.URI[strings.LastIndex(pl.URI, "/")+1:]
		if sums[name] == "" || sums[name] != pl.Sha256 {
			t.Errorf("krew platform %v: %s sha256 %s, SHA256SUMS %s", pl.Selector.MatchLabels, name, pl.Sha256, sums[name])
		}
	}
	bin := t.TempDir()
	cmd := exec.Command("go", "install", "sigs.k8s.io/krew/cmd/validate-krew-manifest@v0.4.3")
	cmd.Env = append(os.Environ(), "GOBIN="+bin, "GOFLAGS=", "GOTOOLCHAIN=local", "CGO_ENABLED=0")
	cmd.Dir = bin
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install krew's validator: %v\n%s", err, out)
	}
	if out, err := exec.Command(filepath.Join(bin, "validate-krew-manifest"), "-manifest", path, "-skip-install").CombinedOutput(); err != nil {
		t.Errorf("krew's validator rejects %s: %v\n%s", path, err, out)
	}
}
