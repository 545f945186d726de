package platform

import (
	"sort"
	"strings"
)

// Component names a node binary whose command line kubewin checks.
type Component string

const (
	Kubelet   Component = "kubelet"
	KubeProxy Component = "kube-proxy"
)

// FlagKind is how a flag takes its value; only KindBool may stand alone ("--flag" = true).
type FlagKind string

const (
	KindBool     FlagKind = "bool"
	KindString   FlagKind = "string"
	KindInt      FlagKind = "int"
	KindFloat    FlagKind = "float"
	KindDuration FlagKind = "duration"
	KindList     FlagKind = "list"
	KindMap      FlagKind = "map"
	KindIP       FlagKind = "ip"
	KindIPPort   FlagKind = "ipport"
)

// FlagInfo describes one flag a component accepts in the newest supported release.
type FlagInfo struct {
	Name      string
	Kind      FlagKind
	Shorthand string
	// Deprecated is the deprecation message the binary prints, empty when not deprecated.
	Deprecated string
	// WindowsOnly flags are registered only by the Windows build of the binary.
	WindowsOnly bool
	// ConfigFile marks kubelet flags that set a KubeletConfiguration field (registered by
	// AddKubeletConfigFlags): the setting belongs in the --config file. All but five of them
	// (logging and provider flags) also carry kubeletConfigFileDeprecation, which KW1107 reads.
	ConfigFile bool
	// Parser names the parser of the flag's real value type (kubelet table only; see
	// internal/check/flagvalues.go). Empty means "by Kind".
	Parser string
}

// kubeletConfigFileDeprecation is the deprecation message of every kubelet flag that has a
// KubeletConfiguration field.
const kubeletConfigFileDeprecation = "This parameter should be set via the config file specified by the Kubelet's --config flag. See https://kubernetes.io/docs/tasks/administer-cluster/kubelet-config-file/ for more information."

//go:generate go run ../check/gen -dir .

// KubeletFlags returns the flag set of the kubelet of the newest supported release (Linux build;
// WindowsKubeletFlags adds the Windows-only ones), generated from
// k8s.io/kubernetes/cmd/kubelet/app/options into flaghistory_kubelet_generated.go. Sorted by name.
func KubeletFlags() []FlagInfo { return append([]FlagInfo(nil), kubeletFlags...) }

// FeatureGateStage is a feature gate's state from one release on (featuregate.FeatureSpec).
type FeatureGateStage struct {
	// Version is the release this stage starts at ("1.33"); "0.0" means always.
	Version       string
	Default       bool
	LockToDefault bool
	// PreRelease is ALPHA, BETA, "" (GA), DEPRECATED or PRE-ALPHA, as featuregate spells it.
	PreRelease              string
	MinCompatibilityVersion string
}

// FeatureGateSpec is one gate of the Kubernetes feature gate registry.
type FeatureGateSpec struct {
	Name string
	// Stages in registry order (ascending versions).
	Stages []FeatureGateStage
	// DependsOn lists gates that must be enabled when this one is.
	DependsOn []string
}

// FeatureGates returns the feature gate registry of the newest supported release, generated from
// k8s.io/kubernetes/pkg/features into flaghistory_gates_generated.go. Sorted by name. Gates
// already deleted from it are in FeatureGateChanges.
func FeatureGates() []FeatureGateSpec { return append([]FeatureGateSpec(nil), featureGates...) }

// FeatureGatesRelease is the release ("1.37") whose registry FeatureGates is.
func FeatureGatesRelease() string { return featureGatesRelease }

// FlagChange is one entry of the history of a kubelet or kube-proxy flag that was deprecated
// or removed. Versions are "1.24"; an empty Removed means the flag still exists in the newest
// release (it is only deprecated).
type FlagChange struct {
	Component  Component
	Name       string
	Kind       FlagKind
	Deprecated string
	Removed    string
	// Replacement says what to use instead, as a user would write it.
	Replacement string
	// Reference is the upstream change or release note that records the removal.
	Reference string
}

// RemovedIn reports whether the flag no longer exists in release v.
func (c FlagChange) RemovedIn(v Version) bool { return versionReached(c.Removed, v) }

// DeprecatedIn reports whether the flag is deprecated (and still present) in release v.
func (c FlagChange) DeprecatedIn(v Version) bool {
	return versionReached(c.Deprecated, v) && !c.RemovedIn(v)
}

// ValueChange records a flag value that a release stopped accepting.
type ValueChange struct {
	Component   Component
	Flag        string
	Value       string
	Removed     string
	Replacement string
	Reference   string
}

// RemovedIn reports whether the value is rejected (or ignored) by release v.
func (c ValueChange) RemovedIn(v Version) bool { return versionReached(c.Removed, v) }

// FeatureGateChange is the history of a feature gate that matters to Windows nodes and that the
// newest release's gate registry no longer (or not yet) explains by itself.
type FeatureGateChange struct {
	Name       string
	Components []Component
	Deprecated string
	Removed    string
	// LockedGA is the release in which the gate became GA and locked to its default (true):
	// setting it to false from then on makes the binary exit.
	LockedGA    string
	Replacement string
	Reference   string
}

// RemovedIn reports whether release v no longer knows the gate ("unrecognized feature gate").
func (c FeatureGateChange) RemovedIn(v Version) bool { return versionReached(c.Removed, v) }

// LockedIn reports whether the gate is GA and locked to true in release v.
func (c FeatureGateChange) LockedIn(v Version) bool {
	return versionReached(c.LockedGA, v) && !c.RemovedIn(v)
}

func versionReached(release string, v Version) bool {
	if release == "" {
		return false
	}
	r, err := ParseVersion(release)
	if err != nil {
		return false
	}
	return v.AtLeast(r.Major, r.Minor)
}

// The klog flags deprecated by KEP-2845 in 1.23 and removed from every Kubernetes component
// in 1.26 (kubernetes/kubernetes#112120: "Legacy klog flags are no longer available. Only -v
// and -vmodule are still supported."). Seed 000's kubelet and kube-proxy lines use three of them.
var klogFlags = []struct {
	name string
	kind FlagKind
}{
	{"log-dir", KindString}, {"log-file", KindString}, {"log-file-max-size", KindInt},
	{"logtostderr", KindBool}, {"alsologtostderr", KindBool}, {"one-output", KindBool},
	{"stderrthreshold", KindString}, {"skip-headers", KindBool}, {"skip-log-headers", KindBool},
	{"add-dir-header", KindBool}, {"log-backtrace-at", KindString},
}

const (
	refDockershimFlags = "kubernetes/kubernetes#106907 (CHANGELOG-1.24: dockershim-related kubelet flags removed)"
	refKlogFlags       = "kubernetes/kubernetes#112120 (CHANGELOG-1.26: legacy klog flags removed), KEP-2845"
	refInTreeCloud     = "KEP-2395: in-tree cloud providers disabled by default in 1.29 and removed in 1.31 (kubernetes.io blog 2024-08-13, v1.31 release)"
	replKlog           = "redirect the service's stdout/stderr to a file (nssm AppStdout/AppStderr, or the service wrapper's log option); keep only -v / --vmodule"
)

// flagChanges is the history table. Every removal version was checked against the upstream
// change named in Reference (pull request or CHANGELOG entry).
var flagChanges = func() []FlagChange {
	out := []FlagChange{
		// dockershim removal (1.24).
		{Component: Kubelet, Name: "network-plugin", Kind: KindString, Removed: "1.24",
			Replacement: "nothing: the container runtime (containerd) runs CNI; configure its cni conf_dir/bin_dir",
			Reference:   refDockershimFlags},
		{Component: Kubelet, Name: "cni-bin-dir", Kind: KindString, Removed: "1.24",
			Replacement: `containerd config: [plugins."io.containerd.grpc.v1.cri".cni] bin_dir`, Reference: refDockershimFlags},
		{Component: Kubelet, Name: "cni-conf-dir", Kind: KindString, Removed: "1.24",
			Replacement: `containerd config: [plugins."io.containerd.grpc.v1.cri".cni] conf_dir`, Reference: refDockershimFlags},
		{Component: Kubelet, Name: "cni-cache-dir", Kind: KindString, Removed: "1.24",
			Replacement: "nothing (the runtime keeps its own CNI cache)", Reference: refDockershimFlags},
		{Component: Kubelet, Name: "network-plugin-mtu", Kind: KindInt, Removed: "1.24",
			Replacement: "the CNI configuration's MTU", Reference: refDockershimFlags},
		{Component: Kubelet, Name: "image-pull-progress-deadline", Kind: KindDuration, Removed: "1.24",
			Replacement: "containerd config: [plugins.\"io.containerd.grpc.v1.cri\"] image_pull_progress_timeout (containerd 1.7+)",
			Reference:   refDockershimFlags},
		{Component: Kubelet, Name: "docker-endpoint", Kind: KindString, Removed: "1.24",
			Replacement: "--container-runtime-endpoint=npipe:////./pipe/containerd-containerd", Reference: refDockershimFlags},
		{Component: Kubelet, Name: "experimental-dockershim-root-directory", Kind: KindString, Removed: "1.24",
			Replacement: "nothing", Reference: refDockershimFlags},
		{Component: Kubelet, Name: "non-masquerade-cidr", Kind: KindString, Deprecated: "1.7", Removed: "1.24",
			Replacement: "nothing on Windows (OutBoundNAT ExceptionList in the CNI config); ip-masq-agent on Linux",
			Reference:   "kubernetes/kubernetes#107096"},
		{Component: Kubelet, Name: "dynamic-config-dir", Kind: KindString, Removed: "1.24",
			Replacement: "a static --config file",
			Reference:   "Dynamic Kubelet Configuration removed from the kubelet in 1.24 (KEP-281; kubernetes.io blog 2022-10-18)"},
		{Component: Kubelet, Name: "container-runtime", Kind: KindString, Deprecated: "1.24", Removed: "1.27",
			Replacement: "--container-runtime-endpoint alone (remote is the only runtime)",
			Reference:   "kubernetes/kubernetes#114017 (CHANGELOG-1.27)"},
		{Component: Kubelet, Name: "pod-infra-container-image", Kind: KindString, Deprecated: "1.24", Removed: "1.35",
			Replacement: `containerd config: sandbox_image (1.x) / [plugins."io.containerd.cri.v1.images".pinned_images] sandbox (2.x)`,
			Reference:   "kubernetes/kubernetes#108045 (deprecation), #133779 (removal, CHANGELOG-1.35)"},
		{Component: Kubelet, Name: "allow-privileged", Kind: KindBool, Deprecated: "1.10", Removed: "1.15",
			Replacement: "nothing (privileged pods are governed by admission; Windows has no privileged containers)",
			Reference:   "kubernetes/kubernetes#77820 (CHANGELOG-1.15)"},
		{Component: Kubelet, Name: "keep-terminated-pod-volumes", Kind: KindBool, Deprecated: "1.8", Removed: "1.31",
			Replacement: "nothing", Reference: "kubernetes/kubernetes#47539 (deprecation), #122082 (removal, v1.31.0-alpha.2 release notes)"},
		{Component: Kubelet, Name: "azure-container-registry-config", Kind: KindString, Deprecated: "1.28", Removed: "1.30",
			Replacement: "--image-credential-provider-config and --image-credential-provider-bin-dir (acr-credential-provider)",
			Reference:   "kubernetes/kubernetes#118596 (deprecation); in-tree credential providers removed in 1.30"},
		{Component: Kubelet, Name: "cloud-config", Kind: KindString, Removed: "1.34",
			Replacement: "an external cloud-controller-manager (--cloud-provider=external)",
			Reference:   "kubernetes/kubernetes#130161"},
		{Component: Kubelet, Name: "api-servers", Kind: KindString, Removed: "1.8",
			Replacement: "--kubeconfig (the API server address lives in the kubeconfig)",
			Reference:   "CHANGELOG-1.8 (deprecated since 1.6 in favour of --kubeconfig)"},

		// kube-proxy userspace mode and its flags went in 1.26.
		{Component: KubeProxy, Name: "udp-timeout", Kind: KindDuration, Removed: "1.26",
			Replacement: "nothing (userspace proxy removed)", Reference: "kubernetes/kubernetes#112133 (CHANGELOG-1.26)"},
		{Component: KubeProxy, Name: "proxy-port-range", Kind: KindString, Removed: "1.26",
			Replacement: "nothing (userspace proxy removed)", Reference: "kubernetes/kubernetes#112133 (CHANGELOG-1.26)"},
	}
	for _, c := range []Component{Kubelet, KubeProxy} {
		for _, f := range klogFlags {
			out = append(out, FlagChange{Component: c, Name: f.name, Kind: f.kind, Deprecated: "1.23", Removed: "1.26",
				Replacement: replKlog, Reference: refKlogFlags})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Component != out[j].Component {
			return out[i].Component < out[j].Component
		}
		return out[i].Name < out[j].Name
	})
	return out
}()

var valueChanges = []ValueChange{
	{Component: KubeProxy, Flag: "proxy-mode", Value: "userspace", Removed: "1.26",
		Replacement: "kernelspace (the only mode on Windows)", Reference: "kubernetes/kubernetes#112133 (CHANGELOG-1.26)"},
	{Component: Kubelet, Flag: "container-runtime", Value: "docker", Removed: "1.24",
		Replacement: "containerd via --container-runtime-endpoint", Reference: refDockershimFlags},
	{Component: Kubelet, Flag: "cloud-provider", Value: "azure", Removed: "1.31",
		Replacement: "--cloud-provider=external with cloud-provider-azure", Reference: refInTreeCloud},
	{Component: Kubelet, Flag: "cloud-provider", Value: "aws", Removed: "1.31",
		Replacement: "--cloud-provider=external", Reference: refInTreeCloud},
	{Component: Kubelet, Flag: "cloud-provider", Value: "gce", Removed: "1.31",
		Replacement: "--cloud-provider=external", Reference: refInTreeCloud},
	{Component: Kubelet, Flag: "cloud-provider", Value: "vsphere", Removed: "1.31",
		Replacement: "--cloud-provider=external", Reference: refInTreeCloud},
	{Component: Kubelet, Flag: "cloud-provider", Value: "openstack", Removed: "1.31",
		Replacement: "--cloud-provider=external", Reference: refInTreeCloud},
}

var featureGateChanges = []FeatureGateChange{
	{Name: "HyperVContainer", Components: []Component{Kubelet}, Deprecated: "1.20", Removed: "1.21",
		Replacement: "a containerd runtime handler with SandboxIsolation=1 and a RuntimeClass (runtimeClassName) per Hyper-V image build",
		Reference:   "kubernetes/kubernetes#95505 (deprecated in 1.20, removed in 1.21)"},
	{Name: "WinOverlay", Components: []Component{KubeProxy}, LockedGA: "1.34",
		Replacement: "drop the gate (overlay is always on)", Reference: "kubernetes/kubernetes#133042 (GA in 1.34), KEP-5100"},
	{Name: "WinDSR", Components: []Component{KubeProxy}, LockedGA: "1.34",
		Replacement: "drop the gate; DSR is controlled by --enable-dsr / winkernel.enableDSR",
		Reference:   "kubernetes/kubernetes#132108 (GA in 1.34), KEP-5100"},
}

// FlagChanges returns the whole history table, sorted by component and name.
func FlagChanges() []FlagChange {
	return append([]FlagChange(nil), flagChanges...)
}

// LookupFlagChange returns the history of a flag of component c ("network-plugin", no dashes).
func LookupFlagChange(c Component, name string) (FlagChange, bool) {
	for _, f := range flagChanges {
		if f.Component == c && f.Name == name {
			return f, true
		}
	}
	return FlagChange{}, false
}

// LookupValueChange returns the history of value (case-insensitive) of flag name of component c.
func LookupValueChange(c Component, flag, value string) (ValueChange, bool) {
	for _, v := range valueChanges {
		if v.Component == c && v.Flag == flag && strings.EqualFold(v.Value, value) {
			return v, true
		}
	}
	return ValueChange{}, false
}

// ValueChanges returns the value history table.
func ValueChanges() []ValueChange { return append([]ValueChange(nil), valueChanges...) }

// LookupFeatureGateChange returns the history of a feature gate.
func LookupFeatureGateChange(name string) (FeatureGateChange, bool) {
	for _, g := range featureGateChanges {
		if g.Name == name {
			return g, true
		}
	}
	return FeatureGateChange{}, false
}

// FeatureGateChanges returns the feature gate history table.
func FeatureGateChanges() []FeatureGateChange {
	return append([]FeatureGateChange(nil), featureGateChanges...)
}

// WindowsKubeletFlags are the flags only the Windows build of the kubelet registers
// (cmd/kubelet/app/options/osflags_windows.go in v1.37.1); KubeletFlags is generated from the
// Linux build of the real flag set, which does not have them.
func WindowsKubeletFlags() []FlagInfo {
	return []FlagInfo{
		{Name: "windows-service", Kind: KindBool, WindowsOnly: true},
		{Name: "windows-priorityclass", Kind: KindString, WindowsOnly: true},
	}
}

// KubeProxyFlags lists the flags of kube-proxy v1.37.1 for Windows: cmd/kube-proxy/app/options.go
// (Options.AddFlags), init_windows.go (addOSFlags) and the logging flags added by
// k8s.io/component-base/logs/api/v1.AddFlags (read at run time by the check engine, not listed
// here). Importing cmd/kube-proxy/app would pull the Linux proxiers (nftables, ipvs) into
// kubewin, so the list is data; a test compares it with the upstream source.
func KubeProxyFlags() []FlagInfo {
	dep := "This flag is deprecated and will be removed in a future release. Please use --%s-bind-address instead."
	out := []FlagInfo{
		{Name: "config", Kind: KindString}, {Name: "write-config-to", Kind: KindString},
		{Name: "cleanup", Kind: KindBool}, {Name: "feature-gates", Kind: KindMap},
		{Name: "kubeconfig", Kind: KindString}, {Name: "master", Kind: KindString},
		{Name: "kube-api-content-type", Kind: KindString}, {Name: "kube-api-burst", Kind: KindInt},
		{Name: "kube-api-qps", Kind: KindFloat}, {Name: "hostname-override", Kind: KindString},
		{Name: "bind-address", Kind: KindIP}, {Name: "healthz-bind-address", Kind: KindIPPort},
		{Name: "metrics-bind-address", Kind: KindIPPort}, {Name: "bind-address-hard-fail", Kind: KindBool},
		{Name: "profiling", Kind: KindBool}, {Name: "show-hidden-metrics-for-version", Kind: KindString},
		{Name: "init-only", Kind: KindBool}, {Name: "proxy-mode", Kind: KindString},
		{Name: "iptables-masquerade-bit", Kind: KindInt}, {Name: "masquerade-all", Kind: KindBool},
		{Name: "iptables-localhost-nodeports", Kind: KindBool}, {Name: "iptables-sync-period", Kind: KindDuration},
		{Name: "iptables-min-sync-period", Kind: KindDuration}, {Name: "ipvs-sync-period", Kind: KindDuration},
		{Name: "ipvs-min-sync-period", Kind: KindDuration}, {Name: "ipvs-scheduler", Kind: KindString},
		{Name: "ipvs-exclude-cidrs", Kind: KindList}, {Name: "ipvs-strict-arp", Kind: KindBool},
		{Name: "ipvs-tcp-timeout", Kind: KindDuration}, {Name: "ipvs-tcpfin-timeout", Kind: KindDuration},
		{Name: "ipvs-udp-timeout", Kind: KindDuration}, {Name: "detect-local-mode", Kind: KindString},
		{Name: "pod-bridge-interface", Kind: KindString}, {Name: "pod-interface-name-prefix", Kind: KindString},
		{Name: "cluster-cidr", Kind: KindString}, {Name: "nodeport-addresses", Kind: KindList},
		{Name: "oom-score-adj", Kind: KindInt}, {Name: "conntrack-max-per-core", Kind: KindInt},
		{Name: "conntrack-min", Kind: KindInt}, {Name: "conntrack-tcp-timeout-established", Kind: KindDuration},
		{Name: "conntrack-tcp-timeout-close-wait", Kind: KindDuration},
		{Name: "conntrack-tcp-be-liberal", Kind: KindBool}, {Name: "conntrack-udp-timeout", Kind: KindDuration},
		{Name: "conntrack-udp-timeout-stream", Kind: KindDuration}, {Name: "config-sync-period", Kind: KindDuration},
		{Name: "healthz-port", Kind: KindInt, Deprecated: strings.Replace(dep, "%s", "healthz", 1)},
		{Name: "metrics-port", Kind: KindInt, Deprecated: strings.Replace(dep, "%s", "metrics", 1)},

		{Name: "windows-service", Kind: KindBool, WindowsOnly: true},
		{Name: "source-vip", Kind: KindString, WindowsOnly: true},
		{Name: "network-name", Kind: KindString, WindowsOnly: true},
		{Name: "enable-dsr", Kind: KindBool, WindowsOnly: true},
		{Name: "root-hnsendpoint-name", Kind: KindString, WindowsOnly: true},
		{Name: "forward-healthcheck-vip", Kind: KindBool, WindowsOnly: true},
	}
	return out
}
