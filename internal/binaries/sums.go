package binaries

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// SumsFile is the name of a mirror's checksum list: sha256sum's output for every file the
// mirror holds, by slash path relative to the mirror ("kubelet", "cni/bridge").
const SumsFile = "SHA256SUMS"

// ParseSums parses a mirror's SHA256SUMS (sha256sum's format: "<64 hex>  <name>" or
// "<64 hex> *<name>"; blank lines and # comments are skipped). path names the file in errors.
// The digests come back lower-case.
func ParseSums(path string, data []byte) (map[string]string, error) {
	sums := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sum, name, ok := strings.Cut(line, " ")
		name = strings.TrimPrefix(strings.TrimSpace(name), "*")
		if _, err := hex.DecodeString(sum); !ok || err != nil || len(sum) != 64 || name == "" {
			return nil, fmt.Errorf("%s:%d: expected \"<64 hex digits>  <file name>\"", path, i+1)
		}
		sums[name] = strings.ToLower(sum)
	}
	return sums, nil
}

// ParseDigestFile reads one published checksum file of the algorithm with hexLen digits (64 for
// SHA-256, 128 for SHA-512) for the file named name, and returns its digest (lower-case). Two
// forms are published upstream:
//   - the bare digest, no name, no newline: Kubernetes' per-binary .sha256/.sha512 files
//     (kubernetes/release pkg/release/release.go, WriteChecksums: os.WriteFile(shaFileName,
//     []byte(sha))), as the install guide uses them: `echo "$(cat kubectl.sha256)  kubectl" |
//     sha256sum --check` (https://kubernetes.io/docs/tasks/tools/install-kubectl-linux/);
//   - one sha256sum/sha512sum line "<digest>  <file name>": containerd's .tar.gz.sha256sum
//     (containerd/containerd Makefile, target release: `sha256sum $(RELEASE).tar.gz
//     >$(RELEASE).tar.gz.sha256sum`) and the CNI plugins' .tgz.sha256/.tgz.sha512
//     (containernetworking/plugins .github/workflows/release.yaml: `sha256sum
//     cni-plugins-linux-$GOARCH-$TAG.tgz | tee ….tgz.sha256`, the same with sha512sum).
//
// A named line must name this file: a checksum file of another version or platform is refused.
func ParseDigestFile(path string, data []byte, hexLen int, name string) (string, error) {
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		return "", fmt.Errorf("%s: expected one checksum line, found %d", path, len(lines))
	}
	sum, rest, named := strings.Cut(lines[0], " ")
	if _, err := hex.DecodeString(sum); err != nil || len(sum) != hexLen {
		return "", fmt.Errorf("%s: expected %d hexadecimal digits, got %q", path, hexLen, clip(sum))
	}
	if named {
		got := strings.TrimPrefix(strings.TrimSpace(rest), "*")
		// sha256sum prints the path it was given; the publishers run it in the archive's
		// directory, so only the base name is compared.
		if i := strings.LastIndexAny(got, `/\`); i >= 0 {
			got = got[i+1:]
		}
		if got != name {
			return "", fmt.Errorf("%s is the checksum of %q, not of %s", path, clip(got), name)
		}
	}
	return strings.ToLower(sum), nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
