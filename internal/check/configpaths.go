package check

import (
	"fmt"
	"path"
	"strings"

	imageref "github.com/distribution/reference"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubewin/kubewin/internal/platform"
)

// Path rules of k8s.io/kubernetes/pkg/util/filesystem (IsAbs, IsPathClean) for the operating
// system a configuration is for, independent of the one kubewin runs on (path/filepath would
// apply the host's rules).

// isAbsLinux is filesystem.IsAbs of the Linux build (filepath.IsAbs).
func isAbsLinux(p string) bool { return strings.HasPrefix(p, "/") }

// isPathCleanLinux is filesystem.IsPathClean of the Linux build.
func isPathCleanLinux(p string) bool { return path.Clean(p) == p }

// isAbsWindows is filesystem.IsAbs of the Windows build: filepath.IsAbs (a volume followed by a
// separator, or a UNC path) or a path starting with \ or /.
func isAbsWindows(p string) bool {
	if strings.HasPrefix(p, `\`) || strings.HasPrefix(p, "/") {
		return true
	}
	// filepath's Windows volumeNameLen takes any "X:" as a drive, letter or not.
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

// windowsVolumeLen is the length of the volume name filepath.VolumeName returns on Windows for
// the forms a kubelet path takes: "C:" and \\host\share (either slash).
func windowsVolumeLen(p string) int {
	if len(p) >= 2 && p[1] == ':' {
		return 2
	}
	sep := func(c byte) bool { return c == '\\' || c == '/' }
	if len(p) >= 3 && sep(p[0]) && sep(p[1]) && !sep(p[2]) && p[2] != '.' && p[2] != '?' {
		// \\host\share: up to the separator after the share name.
		n := 2
		for n < len(p) && !sep(p[n]) {
			n++
		}
		if n == len(p) {
			return n
		}
		n++
		for n < len(p) && !sep(p[n]) {
			n++
		}
		return n
	}
	return 0
}

// isPathCleanWindows is filesystem.IsPathClean of the Windows build:
// filepath.ToSlash(filepath.Clean(p)) == filepath.ToSlash(p) with Windows separators.
func isPathCleanWindows(p string) bool {
	slashed := strings.ReplaceAll(p, `\`, "/")
	vol := windowsVolumeLen(p)
	rest := slashed[vol:]
	if rest == "" {
		// filepath.Clean("") is ".", Clean("C:") is "C:." and Clean(`\\h\s`) is `\\h\s\`.
		return false
	}
	return slashed[:vol]+path.Clean(rest) == slashed
}

// showHiddenMetricsError is k8s.io/component-base/metrics/api/v1's check of
// showHiddenMetricsForVersion: only the previous minor release may be named. The binary
// compares with its own version; kubewin with the target release.
func showHiddenMetricsError(target string, v platform.Version, fld *field.Path) error {
	if target == "" {
		return nil
	}
	valid := fmt.Sprintf("%d.%d", v.Major, v.Minor-1)
	if target != valid {
		errs := field.ErrorList{field.Invalid(fld, target, fmt.Sprintf("must be omitted or have the value '%v'; only the previous minor version is allowed", valid))}
		return errs.ToAggregate()
	}
	return nil
}

// validateAllowlistImagesPatterns is
// k8s.io/kubernetes/pkg/kubelet/images/pullmanager.ValidateAllowlistImagesPatterns:
// "registry/path/*" wildcards or image names without tag or digest.
func validateAllowlistImagesPatterns(patterns []string) error {
	for _, p := range patterns {
		if p != strings.TrimSpace(p) {
			return fmt.Errorf("leading/trailing spaces are not allowed: %s", p)
		}
		trimmed, wildcard := p, false
		if strings.HasSuffix(p, "/*") {
			wildcard, trimmed = true, strings.TrimSuffix(p, "*")
		}
		if len(trimmed) == 0 {
			return fmt.Errorf("the supplied pattern is too short: %s", p)
		}
		if strings.ContainsRune(trimmed, '*') {
			return fmt.Errorf("not a valid wildcard pattern, only patterns ending with '/*' are allowed: %s", p)
		}
		if wildcard {
			if len(trimmed) == 1 {
				return fmt.Errorf("at least registry hostname is required")
			}
			continue
		}
		image, err := trimImageTagDigest(trimmed)
		if err != nil {
			return fmt.Errorf("failed to parse as an image name: %w", err)
		}
		if trimmed != image {
			return fmt.Errorf("neither tag nor digest is accepted in an image reference: %s", p)
		}
	}
	return nil
}

// trimImageTagDigest is pullmanager.trimImageTagDigest.
func trimImageTagDigest(image string) (string, error) {
	parsed, err := imageref.Parse(image)
	if err != nil {
		return "", err
	}
	var tag, digest string
	if t, ok := parsed.(imageref.Tagged); ok {
		tag = t.Tag()
	}
	if d, ok := parsed.(imageref.Digested); ok {
		digest = d.Digest().String()
	}
	if len(digest) > 0 {
		var found bool
		if image, found = strings.CutSuffix(image, "@"+digest); !found {
			return "", fmt.Errorf("digest was not specified last, this does not appear to be a valid image spec: %q", image)
		}
	}
	if len(tag) > 0 {
		var found bool
		if image, found = strings.CutSuffix(image, ":"+tag); !found {
			return "", fmt.Errorf("tag %q was not specified last (or before the digest), this does not appear to be a valid image spec: %q", tag, image)
		}
	}
	return image, nil
}
