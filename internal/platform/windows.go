// Package platform holds the facts about Kubernetes releases and Windows Server builds that the
// spec validation, the planner, the renderer and the rule catalogue all need to agree on.
// Everything here is data; nothing performs I/O.
package platform

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// WindowsBuild describes one Windows Server release as Kubernetes sees it: the
// node.kubernetes.io/windows-build label value is "10.0.<Build>".
type WindowsBuild struct {
	// Build is the OS build number (17763 for Windows Server 2019 / 1809).
	Build int
	// Names are the product names and channel aliases users write (first one is canonical).
	Names []string
	// ImageTag is the tag Microsoft publishes base images under (nanoserver/servercore).
	ImageTag string
	// LTSC is true for Long-Term Servicing Channel releases.
	LTSC bool
	// SupportedByKubernetes is true when SIG-Windows lists the build as supported for some of
	// the Kubernetes versions kubewin targets (see KubernetesVersions); LastKubernetesMinor, when
	// set, is the last minor release whose documentation still lists it.
	SupportedByKubernetes bool
	LastKubernetesMinor   int
	// CNIs whose Windows support covers the build, by LinuxCNI type; a CNI absent from the map
	// states nothing about it.
	CNISupport map[string]bool
	// KubeProxyRestrictedAccount: kube-proxy must not run as LocalSystem on this build (win-bridge
	// endpoints flip to IsRemoteEndpoint, seed 000 FAQ 6); it runs as NT AUTHORITY\NetworkService.
	KubeProxyRestrictedAccount bool
	// HostProcessContainers, DSR and overlay are feature facts used by the rule catalogue.
	DSR      bool
	Overlay  bool
	Comments string
}

// Label returns the node.kubernetes.io/windows-build label value.
func (b WindowsBuild) Label() string { return "10.0." + strconv.Itoa(b.Build) }

// Name returns the canonical product name.
func (b WindowsBuild) Name() string { return b.Names[0] }

// windowsBuilds is ordered by build number.
var windowsBuilds = []WindowsBuild{
	{Build: 14393, Names: []string{"Windows Server 2016", "ltsc2016", "1607"}, ImageTag: "ltsc2016", LTSC: true,
		Comments: "no L2Bridge/overlay fixes needed by Kubernetes; never supported as a node"},
	{Build: 16299, Names: []string{"Windows Server version 1709", "1709"}, ImageTag: "1709"},
	{Build: 17134, Names: []string{"Windows Server version 1803", "1803"}, ImageTag: "1803",
		Comments: "kube-proxy service bugs, kubernetes/kubernetes#62029"},
	// Kubernetes v1.36+ documentation lists Windows Server 2022 and 2025 only
	// (kubernetes.io/docs/concepts/windows/intro, "Compatibility and limitations"); Calico for
	// Windows supports 2019 and 2022 (docs.tigera.io, Calico for Windows requirements).
	{Build: 17763, Names: []string{"Windows Server 2019", "ltsc2019", "1809"}, ImageTag: "ltsc2019", LTSC: true,
		SupportedByKubernetes: true, LastKubernetesMinor: 35, CNISupport: map[string]bool{"calico": true}, Overlay: true,
		Comments: "DSR needs KB4580390 or later; overlay needs KB4489899"},
	{Build: 18362, Names: []string{"Windows Server version 1903", "1903"}, ImageTag: "1903", DSR: true, Overlay: true},
	{Build: 18363, Names: []string{"Windows Server version 1909", "1909"}, ImageTag: "1909", DSR: true, Overlay: true,
		KubeProxyRestrictedAccount: true,
		Comments:                   "win-bridge endpoints flip to IsRemoteEndpoint when kube-proxy runs as LocalSystem (seed 000 FAQ 6)"},
	{Build: 19041, Names: []string{"Windows Server version 2004", "2004"}, ImageTag: "2004", DSR: true, Overlay: true},
	{Build: 19042, Names: []string{"Windows Server version 20H2", "20H2"}, ImageTag: "20H2", DSR: true, Overlay: true},
	{Build: 20348, Names: []string{"Windows Server 2022", "ltsc2022"}, ImageTag: "ltsc2022", LTSC: true,
		SupportedByKubernetes: true, CNISupport: map[string]bool{"calico": true}, DSR: true, Overlay: true},
	{Build: 26100, Names: []string{"Windows Server 2025", "ltsc2025"}, ImageTag: "ltsc2025", LTSC: true,
		SupportedByKubernetes: true, CNISupport: map[string]bool{"calico": false}, DSR: true, Overlay: true},
}

// SupportGaps says why build b is not supported for Kubernetes minor release minor with the
// Linux CNI cni: one sentence per gap, none when both support it. kubewin warns, it does not
// refuse: such nodes often work, but nobody tests or fixes them.
func (b WindowsBuild) SupportGaps(minor int, cni string) []string {
	var out []string
	if !b.SupportedByKubernetes || (b.LastKubernetesMinor > 0 && minor > b.LastKubernetesMinor) {
		out = append(out, fmt.Sprintf("Kubernetes 1.%d does not list %s (%s) as a supported Windows node OS", minor, b.Name(), b.Label()))
	}
	if ok, stated := b.CNISupport[cni]; stated && !ok {
		out = append(out, fmt.Sprintf("%s for Windows does not support %s (%s)", cni, b.Name(), b.Label()))
	}
	return out
}

// WindowsBuilds returns every known build, ordered by build number.
func WindowsBuilds() []WindowsBuild {
	out := make([]WindowsBuild, len(windowsBuilds))
	copy(out, windowsBuilds)
	return out
}

// LookupWindowsBuild accepts "10.0.17763", "10.0.17763.973", "17763", "ltsc2019", "1809" or
// "Windows Server 2019" (case-insensitive) and returns the build.
func LookupWindowsBuild(s string) (WindowsBuild, bool) {
	n := strings.TrimSpace(strings.ToLower(s))
	if n == "" {
		return WindowsBuild{}, false
	}
	if num, ok := parseBuildNumber(n); ok {
		for _, b := range windowsBuilds {
			if b.Build == num {
				return b, true
			}
		}
		return WindowsBuild{}, false
	}
	for _, b := range windowsBuilds {
		for _, name := range b.Names {
			if strings.ToLower(name) == n {
				return b, true
			}
		}
	}
	return WindowsBuild{}, false
}

// parseBuildNumber reads "17763", "10.0.17763" or "10.0.17763.973". Four-digit SAC names such as
// "1809" are release names, not build numbers, and are left to the name table.
func parseBuildNumber(s string) (int, bool) {
	parts := strings.Split(s, ".")
	switch {
	case len(parts) == 1 && len(s) == 5:
		n, err := strconv.Atoi(s)
		return n, err == nil
	case len(parts) >= 3 && parts[0] == "10" && parts[1] == "0":
		n, err := strconv.Atoi(parts[2])
		return n, err == nil
	}
	return 0, false
}

// KnownWindowsBuildNames lists the accepted spellings, for error messages.
func KnownWindowsBuildNames() string {
	var names []string
	for _, b := range windowsBuilds {
		names = append(names, fmt.Sprintf("%s (%s)", b.Label(), b.Names[1]))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
