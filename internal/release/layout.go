// Package release builds kubewin's release: the kubewin binary for each target, archives of
// them, SHA256SUMS, an SPDX SBOM of the Go modules linked into the binaries and a krew plugin
// manifest (hack/release.sh runs it; the gateway image is built by the gatewayimage
// subpackage). It also names the files of a release layout, so that kubewin token create
// --release-url finds the binaries a node downloads without a second copy of the naming rules.
//
// A release directory (the files published under one base URL) holds, for version V:
//
//	kubewin-<os>-<arch>[.exe]            the binaries, as the node user-data downloads them
//	kubewin-V-<os>-<arch>.tar.gz | .zip  archives (tar.gz for linux, zip for windows), for krew
//	kubewin-V.spdx.json                  SBOM (SPDX 2.3) of the Go modules in the binaries
//	kubewin.yaml                         krew plugin manifest (kubectl kubewin)
//	kubewin-gateway-V.oci.tar            the gateway image (OCI image layout, tar)
//	SHA256SUMS                           sha256sum(1) lines for every other file
package release

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kubewin/kubewin/internal/binaries"
)

// SumsFile is the checksum file of a release directory.
const SumsFile = "SHA256SUMS"

// Target is a platform kubewin is built for.
type Target struct {
	OS, Arch string
}

func (t Target) String() string { return t.OS + "/" + t.Arch }

// DefaultTargets are the platforms a release holds: the Linux nodes and admin machines on both
// architectures, and Windows nodes (amd64; Windows Server for containers ships for amd64, and
// windows/arm64 is built too so that admins on ARM laptops get a binary).
var DefaultTargets = []Target{
	{"linux", "amd64"}, {"linux", "arm64"}, {"windows", "amd64"}, {"windows", "arm64"},
}

// BinaryName is the release file name of the bare binary for t.
func BinaryName(t Target) string {
	name := "kubewin-" + t.OS + "-" + t.Arch
	if t.OS == "windows" {
		name += ".exe"
	}
	return name
}

// ArchiveName is the release file name of the archive for t: tar.gz for linux (and other
// Unixes), zip for windows, as kubectl plugins and release archives of kind or k9s are shipped.
func ArchiveName(version string, t Target) string {
	name := "kubewin-" + version + "-" + t.OS + "-" + t.Arch
	if t.OS == "windows" {
		return name + ".zip"
	}
	return name + ".tar.gz"
}

// ExeName is the name of the executable inside an archive.
func ExeName(t Target) string {
	if t.OS == "windows" {
		return "kubewin.exe"
	}
	return "kubewin"
}

// SBOMName is the SBOM's file name.
func SBOMName(version string) string { return "kubewin-" + version + ".spdx.json" }

// KrewManifestName is the krew manifest's file name; krew's validator requires the file name to
// be the plugin's name (sigs.k8s.io/krew cmd/validate-krew-manifest/main.go).
const KrewManifestName = PluginName + ".yaml"

// ImageArchiveName is the gateway image's file name.
func ImageArchiveName(version string) string { return "kubewin-gateway-" + version + ".oci.tar" }

// ParseSums parses sha256sum(1) output: one "<64 hex>  <name>" (text mode) or
// "<64 hex> *<name>" (binary mode) a line; blank lines are skipped. Names must be unique.
// It returns lower-case hex digests by name.
func ParseSums(data []byte) (map[string]string, error) {
	sums := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if len(line) < 67 || line[64] != ' ' || (line[65] != ' ' && line[65] != '*') {
			return nil, fmt.Errorf("%s line %d: want \"<sha256 hex>  <name>\", got %q", SumsFile, n, clip(line))
		}
		sum, name := strings.ToLower(line[:64]), line[66:]
		if _, err := hex.DecodeString(sum); err != nil {
			return nil, fmt.Errorf("%s line %d: %q is not a hex SHA-256", SumsFile, n, line[:64])
		}
		if _, dup := sums[name]; dup {
			return nil, fmt.Errorf("%s line %d: %q is listed twice", SumsFile, n, name)
		}
		sums[name] = sum
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", SumsFile, err)
	}
	return sums, nil
}

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}

// FormatSums renders sums as sha256sum(1) text-mode lines sorted by name, so that
// `sha256sum -c SHA256SUMS` verifies a downloaded release.
func FormatSums(sums map[string]string) []byte {
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		fmt.Fprintf(&b, "%s  %s\n", sums[n], n)
	}
	return b.Bytes()
}

// WriteSums writes SHA256SUMS for every regular file directly in dir (SHA256SUMS itself
// excepted) and returns the sums.
func WriteSums(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", SumsFile, err)
	}
	sums := map[string]string{}
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == SumsFile {
			continue
		}
		sum, err := binaries.FileSHA256(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("write %s: %w", SumsFile, err)
		}
		sums[e.Name()] = sum
	}
	if err := os.WriteFile(filepath.Join(dir, SumsFile), FormatSums(sums), 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", SumsFile, err)
	}
	return sums, nil
}
