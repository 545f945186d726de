package platform

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a parsed Kubernetes version (major.minor.patch); Patch is -1 when not given.
type Version struct {
	Major, Minor, Patch int
}

func (v Version) String() string {
	if v.Patch < 0 {
		return fmt.Sprintf("v%d.%d", v.Major, v.Minor)
	}
	return fmt.Sprintf("v%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// MinorString returns "1.37".
func (v Version) MinorString() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// AtLeast reports whether v >= major.minor (patch ignored).
func (v Version) AtLeast(major, minor int) bool {
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// Less orders by major, minor, then patch.
func (v Version) Less(o Version) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor < o.Minor
	}
	return v.Patch < o.Patch
}

// ParseVersion accepts "1.37", "v1.37", "v1.37.1" and "1.37.1".
func ParseVersion(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.Split(t, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("version %q: expected v<major>.<minor>[.<patch>]", s)
	}
	nums := []int{0, 0, -1}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || p == "" || (len(p) > 1 && p[0] == '0') {
			return Version{}, fmt.Errorf("version %q: %q is not a number", s, p)
		}
		nums[i] = n
	}
	return Version{Major: nums[0], Minor: nums[1], Patch: nums[2]}, nil
}

// The Kubernetes project maintains the three newest minor releases. kubewin targets those; the
// newest patch listed is the default and the one the test harness builds kube-apiserver from.
var (
	supportedMinors = []Version{{1, 35, -1}, {1, 36, -1}, {1, 37, -1}}
	newest          = Version{Major: 1, Minor: 37, Patch: 1}
)

// NewestKubernetes is the default target version.
func NewestKubernetes() Version { return newest }

// SupportedKubernetes reports whether v's minor release is maintained.
func SupportedKubernetes(v Version) bool {
	for _, m := range supportedMinors {
		if m.Major == v.Major && m.Minor == v.Minor {
			return true
		}
	}
	return false
}

// SupportedKubernetesRange returns "v1.35–v1.37" for error messages.
func SupportedKubernetesRange() string {
	return supportedMinors[0].String() + "–" + supportedMinors[len(supportedMinors)-1].String()
}
