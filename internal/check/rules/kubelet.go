package rules

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/platform"
)

// klUnit is one Windows kubelet as the inputs describe it: a command line and/or config files.
type klUnit struct {
	cl   *check.CommandLine
	docs []*check.KubeletConfigDoc
}

func kubeletUnits(ctx *check.Context) []klUnit {
	docs := windowsKubeletConfigs(ctx)
	var out []klUnit
	for _, cl := range windowsCommandLines(ctx, platform.Kubelet) {
		out = append(out, klUnit{cl: cl, docs: docs})
	}
	if len(out) == 0 {
		for _, d := range docs {
			out = append(out, klUnit{docs: []*check.KubeletConfigDoc{d}})
		}
	}
	return out
}

// klValue is a kubelet setting as found.
type klValue struct {
	value string
	found bool
	// unknown: the setting may be in a --config file kubewin was not given.
	unknown bool
	loc     check.Location
	// via says where it came from ("--flag" or "config field").
	via string
	// node is the node the config file that held the value names (kube-proxy's
	// hostnameOverride), when it names one.
	node string
}

// lookup finds a setting: the flag wins over config files (as in the kubelet).
func (u klUnit) lookup(ctx *check.Context, flag, field string, get func(*check.KubeletConfigDoc) string) klValue {
	if v, ok := flagValue(u.cl, flag); ok {
		return v
	}
	for _, d := range u.docs {
		if d.Set[field] {
			l := check.Location{File: d.File, Field: field, Line: d.Pos.Line(field)}
			return klValue{value: get(d), found: true, loc: l, via: field}
		}
	}
	first := ""
	if len(u.docs) > 0 {
		first = u.docs[0].File
	}
	v := notFound(ctx, u.cl, first)
	if u.cl == nil && slices.ContainsFunc(u.docs, func(d *check.KubeletConfigDoc) bool { return d.DropIn }) {
		v.unknown = true
	}
	return v
}

func (u klUnit) usableFlag(flag string) bool { return flagUsable(u.cl, flag) }

// flagValue is the last occurrence of flag on the command line cl (nil: none), which wins over
// config files in the kubelet and kube-proxy alike.
func flagValue(cl *check.CommandLine, flag string) (klValue, bool) {
	if cl == nil {
		return klValue{}, false
	}
	f, ok := cl.Last(flag)
	if !ok {
		return klValue{}, false
	}
	return klValue{value: f.Value, found: true, loc: cl.Loc(&f), via: f.Written}, true
}

// notFound is a setting neither on the command line nor in a config file: located at the
// command line if there is one (and unknown if it names a --config file not given), else at
// the first config file.
func notFound(ctx *check.Context, cl *check.CommandLine, firstDocFile string) klValue {
	v := klValue{}
	if cl != nil {
		v.loc = cl.Loc(nil)
		v.unknown = configFileUnseen(ctx, cl)
	} else if firstDocFile != "" {
		v.loc = check.Location{File: firstDocFile}
	}
	return v
}

// flagUsable: without a command line, or without the flag on it, there is nothing unusable.
func flagUsable(cl *check.CommandLine, flag string) bool {
	if cl == nil {
		return true
	}
	f, ok := cl.Last(flag)
	return !ok || usable(f)
}

var kubeletRules = []check.Rule{
	{
		ID: "KW1101", Name: "cgroups-per-qos-on-windows", Family: check.FamilyKubelet, Severity: check.Warning,
		// 1.5 had only --experimental-cgroups-per-qos, default false; 1.6 renamed it and made
		// true the default (CHANGELOG-1.6, "Node Allocatable" and "cgroups-per-qos"): nothing to turn off before
		Scope:     check.Scope{Since: "1.6"},
		Summary:   "Windows kubelet without cgroupsPerQOS=false",
		Why:       "Windows has no cgroups: current kubelets ignore the setting with a warning, older ones (as in seed 000, 1.17) refused to start until it was false.",
		Fix:       "--cgroups-per-qos=false (or cgroupsPerQOS: false in the KubeletConfiguration).",
		Reference: refSeed000 + " §2.3; pkg/kubelet/apis/config/validation/validation_windows.go",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, u := range kubeletUnits(ctx) {
				v := u.lookup(ctx, "cgroups-per-qos", "cgroupsPerQOS", func(d *check.KubeletConfigDoc) string {
					return strconv.FormatBool(ptr.Deref(d.Config.CgroupsPerQOS, true))
				})
				switch {
				case v.unknown || !u.usableFlag("cgroups-per-qos"):
				case !v.found:
					emit(check.Finding{Location: v.loc, Message: "cgroupsPerQOS is not set; it defaults to true"})
				case !isFalse(v.value):
					emit(check.Finding{Location: v.loc, Message: fmt.Sprintf("%s is %q", v.via, v.value)})
				}
			}
		},
	},
	{
		ID: "KW1102", Name: "enforce-node-allocatable-on-windows", Family: check.FamilyKubelet, Severity: check.Warning,
		// node allocatable enforcement (--enforce-node-allocatable) arrived in 1.6
		// (CHANGELOG-1.6, "Node Allocatable"): nothing to disable before
		Scope:     check.Scope{Since: "1.6"},
		Summary:   "Windows kubelet enforces node allocatable",
		Why:       "Enforcement needs cgroups; current kubelets ignore it on Windows with a warning and older ones failed, so the line promises limits that do not exist.",
		Fix:       `--enforce-node-allocatable="" (or enforceNodeAllocatable: [] / ["none"]).`,
		Reference: refSeed000 + " §2.3; validation_windows.go",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, u := range kubeletUnits(ctx) {
				v := u.lookup(ctx, "enforce-node-allocatable", "enforceNodeAllocatable", func(d *check.KubeletConfigDoc) string {
					return strings.Join(d.Config.EnforceNodeAllocatable, ",")
				})
				switch {
				case v.unknown || !u.usableFlag("enforce-node-allocatable"):
				case !v.found:
					emit(check.Finding{Location: v.loc, Message: "enforceNodeAllocatable is not set; it defaults to [pods]"})
				default:
					for _, p := range strings.Split(v.value, ",") {
						if p = strings.TrimSpace(p); p != "" && p != "none" {
							emit(check.Finding{Location: v.loc, Message: fmt.Sprintf("%s includes %q", v.via, p)})
							break
						}
					}
				}
			}
		},
	},
	{
		ID: "KW1103", Name: "resolv-conf-on-windows", Family: check.FamilyKubelet, Severity: check.Error,
		Summary:   "Windows kubelet with a Linux resolv.conf path (or none, which defaults to one)",
		Why:       "The kubelet defaults to /etc/resolv.conf, which does not exist on Windows: pod sandboxes fail with \"open /etc/resolv.conf: The system cannot find the file specified\". The Windows kubelet accepts \"\", Host or a path to an existing file (dns_windows.go getHostDNSConfig), so a Windows path is not flagged.",
		Fix:       `resolvConf: Host (the host's DNS settings and suffixes; kubelet pkg/kubelet/network/dns/dns_windows.go) or resolvConf: "".`,
		Reference: refSeed000 + " FAQ 2",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, u := range kubeletUnits(ctx) {
				v := u.lookup(ctx, "resolv-conf", "resolvConf", func(d *check.KubeletConfigDoc) string { return ptr.Deref(d.Config.ResolverConfig, "") })
				switch {
				case v.unknown || !u.usableFlag("resolv-conf"):
				case !v.found:
					emit(check.Finding{Location: v.loc, Message: "resolvConf is not set; it defaults to /etc/resolv.conf"})
				case windowsAbsPath(v.value):
					// a resolv.conf the operator wrote on the node: the Windows kubelet reads an
					// existing file (pkg/kubelet/network/dns/dns_windows.go getHostDNSConfig)
				case strings.TrimSpace(v.value) != "" && strings.TrimSpace(v.value) != "Host":
					emit(check.Finding{Location: v.loc, Message: fmt.Sprintf("%s is %q", v.via, v.value)})
				}
			}
		},
	},
	{
		ID: "KW1104", Name: "missing-cluster-dns", Family: check.FamilyKubelet, Severity: check.Error,
		Summary:   "Neither the kubelet (clusterDNS) nor the CNI conf (dns.Nameservers) names the cluster DNS",
		Why:       "Pods with dnsPolicy ClusterFirst get event MissingClusterDNS and fall back to the host's resolvers, so Service names do not resolve.",
		Fix:       "--cluster-dns=<kube-dns Service IP> (clusterDNS in the KubeletConfiguration), or dns.Nameservers in the CNI conf.",
		Reference: refSeed000 + " FAQ 3",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, c := range ctx.CNIConfs {
				if len(c.Nameservers) > 0 {
					return
				}
			}
			for _, u := range kubeletUnits(ctx) {
				v := u.lookup(ctx, "cluster-dns", "clusterDNS", func(d *check.KubeletConfigDoc) string {
					return strings.Join(d.Config.ClusterDNS, ",")
				})
				if v.unknown || (v.found && strings.TrimSpace(v.value) != "") || !u.usableFlag("cluster-dns") {
					continue
				}
				msg := "no --cluster-dns/clusterDNS"
				if len(ctx.CNIConfs) > 0 {
					msg += " and the CNI conf has no dns.Nameservers"
				} else {
					msg += " and no CNI conf with dns.Nameservers was given"
				}
				fix := ""
				if ctx.Spec != nil && ctx.Spec.Spec.Networking.ClusterDNS != "" {
					fix = "--cluster-dns=" + ctx.Spec.Spec.Networking.ClusterDNS
				}
				emit(check.Finding{Location: v.loc, Message: msg, Fix: fix})
			}
		},
	},
	{
		ID: "KW1105", Name: "removed-flag", Family: check.FamilyKubelet, Severity: check.Error,
		Summary:   "A kubelet or kube-proxy flag that the target Kubernetes release removed",
		Why:       "The binary exits with \"unknown flag\" and the node never comes up. Flags went in different releases: the dockershim flags in 1.24, the legacy klog flags (--log-dir, --log-file, --logtostderr...) in 1.26, --container-runtime in 1.27, --pod-infra-container-image in 1.35; each finding names its flag's release.",
		Fix:       "Remove the flag; each finding names its replacement.",
		Reference: "internal/platform/flaghistory.go (each entry cites the upstream removal)",
		Check:     checkRemovedFlags,
	},
	{
		ID: "KW1106", Name: "deprecated-flag", Family: check.FamilyKubelet, Severity: check.Warning,
		Summary:   "A flag that is deprecated in the target release and will be removed",
		Why:       "It still works, but the release that removes it will stop the binary at start-up.",
		Fix:       "Move to the replacement named in the message before upgrading.",
		Reference: "internal/platform/flaghistory.go; the binaries' own deprecation messages",
		Check:     checkDeprecatedFlags,
	},
	{
		ID: "KW1107", Name: "flags-instead-of-config", Family: check.FamilyKubelet, Severity: check.Info,
		Summary:   "Kubelet settings given as flags that are deprecated in favour of the --config file",
		Why:       "Every KubeletConfiguration flag is deprecated; each start prints a warning per flag and new settings exist only in the file.",
		Fix:       "Move them into a KubeletConfiguration file passed with --config (kubewin render writes one).",
		Reference: "cmd/kubelet/app/options/options.go AddKubeletConfigFlags; " + refKubeletCF,
		Check:     checkConfigFlags,
	},
	{
		ID: "KW1108", Name: "unknown-feature-gate", Family: check.FamilyKubelet, Severity: check.Error,
		Summary:   "A feature gate the target release does not recognise (e.g. HyperVContainer)",
		Why:       "The kubelet and kube-proxy exit with \"unrecognized feature gate\".",
		Fix:       "Remove the gate; the message names what replaced it.",
		Reference: "k8s.io/kubernetes/pkg/features (versioned gate specs); internal/platform/flaghistory.go",
		Check:     checkGates(gateUnknown),
	},
	{
		ID: "KW1109", Name: "locked-feature-gate", Family: check.FamilyKubelet, Severity: check.Error,
		Summary:   "A GA feature gate locked to true is set to false",
		Why:       "A locked gate cannot be changed: the binary exits at start-up (e.g. WinOverlay=false on 1.34+).",
		Fix:       "Remove the setting.",
		Reference: "k8s.io/kubernetes/pkg/features (LockToDefault)",
		Check:     checkGates(gateLocked),
	},
	{
		ID: "KW1110", Name: "redundant-feature-gate", Family: check.FamilyKubelet, Severity: check.Info,
		Summary:   "A GA feature gate is set to its default",
		Why:       "The gate does nothing and will be deleted in a later release, which then refuses it as unrecognised.",
		Fix:       "Remove the setting.",
		Reference: "k8s.io/kubernetes/pkg/features",
		Check:     checkGates(gateRedundant),
	},
	{
		ID: "KW1111", Name: "system-reserved-too-low", Family: check.FamilyKubelet, Severity: check.Warning,
		// the memory reservation is the Windows GA release's best practice (1.14: "These will be
		// documented as best practices for v1.14", kubernetes/enhancements#848,
		// keps/sig-windows/20190103-windows-node-support.md "Memory Overprovisioning"); before
		// it no upstream guidance asked for one
		Scope:     check.Scope{Since: "1.14"},
		Summary:   "Windows kubelet reserves less than 2Gi of memory for the system",
		Why:       "Windows has no OOM killer and pages instead: without a reservation pods can overcommit the node and the kubelet, runtime and OS slow to a crawl.",
		Fix:       "--system-reserved=memory=2Gi (systemReserved: {memory: 2Gi}).",
		Reference: refSeed001 + " (memory reservation: at least 2GB)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			min := resource.MustParse("2Gi")
			for _, u := range kubeletUnits(ctx) {
				v := u.lookup(ctx, "system-reserved", "systemReserved", func(d *check.KubeletConfigDoc) string {
					var parts []string
					for k, q := range d.Config.SystemReserved {
						parts = append(parts, k+"="+q)
					}
					return strings.Join(parts, ",")
				})
				if v.unknown || !u.usableFlag("system-reserved") {
					continue
				}
				mem := ""
				for _, kv := range strings.Split(v.value, ",") {
					if k, q, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k == "memory" {
						mem = q
					}
				}
				if mem == "" {
					emit(check.Finding{Location: v.loc, Message: "no memory is reserved for the system (systemReserved has no memory)"})
					continue
				}
				q, err := resource.ParseQuantity(mem)
				if err == nil && q.Cmp(min) < 0 {
					emit(check.Finding{Location: v.loc, Message: fmt.Sprintf("%s reserves memory=%s", v.via, mem)})
				}
			}
		},
	},
	{
		ID: "KW1112", Name: "eviction-signal-not-on-windows", Family: check.FamilyKubelet, Severity: check.Info,
		Summary:   "An eviction threshold on a Windows kubelet uses a signal the Windows kubelet does not observe",
		Why:       "The Windows kubelet evicts on memory.available (the node's commit charge, since v1.31) and nodefs.available, but inode and PID signals are Linux-only: a threshold on them never fires and protects nothing.",
		Fix:       "Drop the Linux-only signals; keep memory.available (the Windows default is 500Mi) and nodefs.available (10%), and reserve memory with systemReserved.",
		Reference: "kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction (eviction signals, \"Linux only\" column; Windows memory.available from commit levels); kubernetes/kubernetes#122922 (Windows memory-pressure eviction, v1.31); pkg/kubelet/eviction/defaults_windows.go",
		Check:     checkWindowsEvictionSignals,
	},
	{
		ID: "KW1113", Name: "missing-windows-service", Family: check.FamilyKubelet, Severity: check.Error,
		Summary:   "A kubelet or kube-proxy registered with sc.exe/New-Service without --windows-service",
		Why:       "The Service Control Manager waits for the process to report in; without --windows-service the binary never does and the SCM kills it after 30 s (error 1053).",
		Fix:       "Append --windows-service to the service's binPath (or run it under nssm instead).",
		Reference: refSeed000 + " §2.7 (sc create ... --windows-service); cmd/kubelet/app/options/osflags_windows.go",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, cl := range ctx.CommandLines {
				if cl.Service == check.ServiceSC && !cl.Has("windows-service") {
					emit(check.Finding{Location: cl.Loc(nil),
						Message: fmt.Sprintf("%s is registered through %s without --windows-service", cl.Component, cl.Origin)})
				}
			}
		},
	},
	{
		ID: "KW1114", Name: "windows-service-under-nssm", Family: check.FamilyKubelet, Severity: check.Error,
		Summary:   "--windows-service on a binary that nssm runs",
		Why:       "nssm is the service; the child process started with --windows-service tries to connect to the Service Control Manager itself, fails, and exits.",
		Fix:       "Remove --windows-service from the nssm AppParameters.",
		Reference: refSeed001 + " (nssm examples have no --windows-service); pkg/windows/service/service.go (svc.Run fails outside the SCM and the binary returns the error)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, cl := range ctx.CommandLines {
				if f, ok := cl.Last("windows-service"); ok && cl.Service == check.ServiceNSSM && isTrue(f) {
					host := "nssm"
					if _, via, ok := strings.Cut(cl.Origin, " via "); ok {
						host = "the service host " + via
					}
					emit(check.Finding{Location: cl.Loc(&f), Message: fmt.Sprintf("%s under %s has %s", cl.Component, host, f.Written)})
				}
			}
		},
	},
	{
		ID: "KW1115", Name: "runtime-endpoint-on-windows", Family: check.FamilyKubelet, Severity: check.Error,
		Summary:   "Windows kubelet without a containerd named-pipe endpoint",
		Why:       "The endpoint defaults to unix:///run/containerd/containerd.sock on every OS, and the dockershim pipe is gone since 1.24: the kubelet cannot reach a runtime.",
		Fix:       "--container-runtime-endpoint=npipe:////./pipe/containerd-containerd",
		Reference: "pkg/kubelet/apis/config/v1beta1/defaults.go; KEP-2221 (dockershim removal)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, u := range kubeletUnits(ctx) {
				v := u.lookup(ctx, "container-runtime-endpoint", "containerRuntimeEndpoint", func(d *check.KubeletConfigDoc) string {
					return d.Config.ContainerRuntimeEndpoint
				})
				switch {
				case v.unknown || !u.usableFlag("container-runtime-endpoint"):
				case !v.found && ctx.Version.AtLeast(1, 24):
					// Before 1.24 the default was dockershim, which needed no endpoint.
					emit(check.Finding{Location: v.loc, Message: "no container runtime endpoint; it defaults to unix:///run/containerd/containerd.sock"})
				case !v.found:
				case strings.Contains(strings.ToLower(v.value), "dockershim"):
					emit(check.Finding{Location: v.loc, Message: fmt.Sprintf("%s=%s is the dockershim pipe, removed in 1.24", v.via, v.value)})
				case !strings.HasPrefix(strings.ToLower(v.value), "npipe:"):
					emit(check.Finding{Location: v.loc, Message: fmt.Sprintf("%s=%s is not a named pipe", v.via, v.value)})
				}
			}
		},
	},
	{
		ID: "KW1116", Name: "node-ip-mismatch", Family: check.FamilyKubelet, Severity: check.Error,
		Summary:   "Kubelet --node-ip is not the node's cluster NIC address (or is missing on a multi-NIC node)",
		Why:       "With two NICs the kubelet picks the default-route address (the office network in seed 000), so pods, logs and exec go to an address the cluster cannot route.",
		Fix:       "--node-ip=<IP of the cluster NIC>",
		Reference: refSeed000 + " §2.3 (--node-ip on a dual-NIC node)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, cl := range commandLines(ctx, platform.Kubelet) {
				np, ok := ctx.PlanNode(cl.Node)
				if !ok {
					continue
				}
				f, has := cl.Last("node-ip")
				sn, _ := ctx.SpecNode(cl.Node)
				switch {
				case has && usable(f) && f.Value != np.NodeIP:
					emit(check.Finding{Location: cl.Loc(&f), Message: fmt.Sprintf("--node-ip=%s but %s's cluster NIC %s has %s", f.Value, cl.Node, np.ClusterNIC, np.NodeIP),
						Fix: "--node-ip=" + np.NodeIP})
				case !has && sn != nil && len(sn.NICs) > 1 && !configFileUnseen(ctx, cl):
					emit(check.Finding{Location: cl.Loc(nil), Severity: check.Warning,
						Message: fmt.Sprintf("%s has %d NICs and the kubelet has no --node-ip", cl.Node, len(sn.NICs)), Fix: "--node-ip=" + np.NodeIP})
				}
			}
		},
	},
	{
		ID: "KW1117", Name: "linux-only-kubelet-config-on-windows", Family: check.FamilyKubelet, Severity: check.Error,
		Summary:   "A Windows KubeletConfiguration sets a Linux-only field",
		Why:       "The Windows kubelet's validation rejects singleProcessOOMKill, userNamespaces and defaultPodSysctls and exits.",
		Fix:       "Remove the field from the Windows node's configuration.",
		Reference: "pkg/kubelet/apis/config/validation/validation_windows.go",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, d := range ctx.KubeletConfigs {
				if d.OS != check.OSWindows {
					continue
				}
				for _, field := range []string{"singleProcessOOMKill", "userNamespaces", "defaultPodSysctls"} {
					if d.Set[field] {
						emit(check.Finding{Location: check.Location{File: d.File, Field: field, Line: d.Pos.Line(field)},
							Message: field + " is set in a Windows KubeletConfiguration"})
					}
				}
			}
		},
	},
	{
		ID: "KW1118", Name: "windows-node-not-tainted", Family: check.FamilyKubelet, Severity: check.Info,
		Summary:   "Windows kubelet registers without an os=windows:NoSchedule taint",
		Why:       "Existing Linux workloads without an OS selector (Helm charts, operators) can then be scheduled onto the Windows node and fail.",
		Fix:       "--register-with-taints=os=windows:NoSchedule (registerWithTaints) and tolerations on Windows workloads, or RuntimeClasses that carry them.",
		Reference: refSeed001 + " (taints and tolerations)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, u := range kubeletUnits(ctx) {
				v := u.lookup(ctx, "register-with-taints", "registerWithTaints", func(d *check.KubeletConfigDoc) string {
					var s []string
					for _, t := range d.Config.RegisterWithTaints {
						s = append(s, t.Key+"="+t.Value+":"+string(t.Effect))
					}
					return strings.Join(s, ",")
				})
				if v.unknown || !u.usableFlag("register-with-taints") {
					continue
				}
				if !strings.Contains(v.value, "NoSchedule") && !strings.Contains(v.value, "NoExecute") {
					emit(check.Finding{Location: v.loc, Message: "the Windows kubelet registers without a NoSchedule taint"})
				}
			}
		},
	},
	{
		ID: "KW1119", Name: "pause-image-not-windows", Family: check.FamilyKubelet, Severity: check.Error,
		Summary:   "Windows kubelet with an empty or Linux-only --pod-infra-container-image",
		Why:       "The sandbox (pause) image named here is pulled for every pod; an empty value or a pause image without a Windows variant (registry.k8s.io/pause before 3.4, the old *-amd64 Linux repositories) fails every pod sandbox with \"no matching manifest for windows/amd64\".",
		Fix:       "registry.k8s.io/pause:3.10.2 (multi-arch, with Windows images since pause 3.4) or mcr.microsoft.com/oss/kubernetes/pause:3.6+; on containerd drop the flag and set the sandbox image in containerd's config.",
		Reference: "k8s.io/kubernetes build/pause/CHANGELOG.md (3.4: \"Support for Windows container images ... was added\")",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, cl := range windowsCommandLines(ctx, platform.Kubelet) {
				f, ok := cl.Last("pod-infra-container-image")
				if !ok || !usable(f) {
					continue
				}
				if why := linuxOnlyPause(f.Value); why != "" {
					emit(check.Finding{Location: cl.Loc(&f), Message: fmt.Sprintf("%s: %s", f.Display(), why)})
				}
			}
		},
	},
}

// windowsAbsPath reports whether v is an absolute Windows path (C:\k\resolv.conf, c:/k/x).
func windowsAbsPath(v string) bool {
	v = strings.TrimSpace(v)
	return len(v) >= 3 && (v[0]|0x20) >= 'a' && (v[0]|0x20) <= 'z' && v[1] == ':' && (v[2] == '\\' || v[2] == '/')
}

// linuxOnlyPause says why a sandbox image cannot run on Windows, or "".
func linuxOnlyPause(image string) string {
	image = strings.Trim(strings.TrimSpace(image), `"'`)
	if image == "" {
		return "the sandbox image is empty"
	}
	repo, tag := image, ""
	if i := strings.LastIndexByte(image, ':'); i > strings.LastIndexByte(image, '/') {
		repo, tag = image[:i], image[i+1:]
	}
	base := repo[strings.LastIndexByte(repo, '/')+1:]
	switch {
	case strings.HasSuffix(base, "-amd64") || strings.HasSuffix(base, "-arm64"):
		return repo + " is a Linux-only repository"
	case base == "pause" && (strings.HasPrefix(repo, "k8s.gcr.io/") || strings.HasPrefix(repo, "registry.k8s.io/") || strings.HasPrefix(repo, "gcr.io/google_containers/")):
		if mj, mn, ok := majorMinor(tag); ok && (mj < 3 || mj == 3 && mn < 4) {
			return "pause " + tag + " has no Windows image (Windows variants exist from pause 3.4)"
		}
	}
	return ""
}

func majorMinor(tag string) (int, int, bool) {
	a, b, ok := strings.Cut(tag, ".")
	if !ok {
		return 0, 0, false
	}
	b, _, _ = strings.Cut(b, ".")
	mj, err1 := strconv.Atoi(a)
	mn, err2 := strconv.Atoi(b)
	return mj, mn, err1 == nil && err2 == nil
}

// flagSources yields every flag of every kubelet and kube-proxy command line.
// linuxOnlyEvictionSignals are the signals the node-pressure eviction docs mark "Linux only":
// Windows reports no inode or PID statistics, so the kubelet never observes them there.
var linuxOnlyEvictionSignals = map[string]bool{
	"nodefs.inodesFree": true, "imagefs.inodesFree": true, "containerfs.inodesFree": true, "pid.available": true,
}

// The Windows kubelet evicts on memory.available from v1.31 (kubernetes/kubernetes#122922).
const windowsMemoryEvictionMinor = 31

// evictionSignals returns the signals of "memory.available<500Mi,nodefs.available<10%".
func evictionSignals(v string) []string {
	var out []string
	for _, part := range strings.Split(v, ",") {
		sig, _, _ := strings.Cut(strings.TrimSpace(part), "<")
		if sig = strings.TrimSpace(sig); sig != "" {
			out = append(out, sig)
		}
	}
	return out
}

func checkWindowsEvictionSignals(ctx *check.Context, emit check.Emitter) {
	for _, u := range kubeletUnits(ctx) {
		for _, fl := range []struct{ flag, field string }{{"eviction-hard", "evictionHard"}, {"eviction-soft", "evictionSoft"}} {
			v := u.lookup(ctx, fl.flag, fl.field, func(d *check.KubeletConfigDoc) string {
				m := d.Config.EvictionHard
				if fl.field == "evictionSoft" {
					m = d.Config.EvictionSoft
				}
				var parts []string
				for k, q := range m {
					parts = append(parts, k+"<"+q)
				}
				// Map order is random; the report must not be.
				sort.Strings(parts)
				return strings.Join(parts, ",")
			})
			if !v.found {
				continue
			}
			for _, sig := range evictionSignals(v.value) {
				switch {
				case linuxOnlyEvictionSignals[sig]:
					emit(check.Finding{Location: v.loc,
						Message: fmt.Sprintf("%s sets %s, a Linux-only eviction signal: the Windows kubelet never observes it", v.via, sig)})
				case sig == "memory.available" && !ctx.Version.AtLeast(1, windowsMemoryEvictionMinor):
					emit(check.Finding{Location: v.loc,
						Message: fmt.Sprintf("%s sets memory.available, but the Windows kubelet evicts on memory only from v1.31 (target %s); before that the threshold only reduces allocatable", v.via, ctx.Version),
						Fix:     "upgrade to v1.31 or later, or rely on systemReserved and container memory limits"})
				}
			}
		}
	}
}

// containerd2Replacements replace the history table's replacement for flags whose setting moved
// into containerd: kubewin renders containerd 2.x configuration (version = 3, the
// io.containerd.cri.v1.images and io.containerd.cri.v1.runtime plugins; internal/render
// containerd.go), so the fix names those keys rather than containerd 1.x's
// io.containerd.grpc.v1.cri ones.
var containerd2Replacements = map[string]string{
	"network-plugin": "nothing: containerd runs CNI; point it at the plugins and configuration with " +
		"[plugins.'io.containerd.cri.v1.runtime'.cni] bin_dirs and conf_dir (containerd 2.x, config version = 3)",
	"cni-bin-dir": "containerd 2.x config (version = 3): [plugins.'io.containerd.cri.v1.runtime'.cni] bin_dirs = ['...'] " +
		"(containerd 2.1+; 2.0 reads bin_dir)",
	"cni-conf-dir": "containerd 2.x config (version = 3): [plugins.'io.containerd.cri.v1.runtime'.cni] conf_dir",
	"image-pull-progress-deadline": "containerd 2.x config (version = 3): [plugins.'io.containerd.cri.v1.images'] " +
		"image_pull_progress_timeout",
	"pod-infra-container-image": "containerd 2.x config (version = 3): [plugins.'io.containerd.cri.v1.images'.pinned_images] " +
		"sandbox = '<pause image>' (containerd 1.x: sandbox_image); the kubelet no longer pins it",
}

// flagReplacement is what replaces a removed or deprecated flag.
func flagReplacement(ch platform.FlagChange) string {
	if r, ok := containerd2Replacements[ch.Name]; ok && ch.Component == platform.Kubelet {
		return r
	}
	return ch.Replacement
}

// removedWhy says what the target release does with a removed flag and when it went.
func removedWhy(comp platform.Component, flag, deprecated, removed string, target platform.Version) string {
	when := "removed in " + removed
	if deprecated != "" {
		when = "deprecated in " + deprecated + " and removed in " + removed
	}
	return fmt.Sprintf("%s %s exits with \"unknown flag: %s\" and the node never comes up; %s was %s.", comp, target, flag, flag, when)
}

func checkRemovedFlags(ctx *check.Context, emit check.Emitter) {
	for _, cl := range ctx.CommandLines {
		for i := range cl.Flags {
			f := cl.Flags[i]
			if f.Short {
				continue
			}
			if ch, ok := platform.LookupFlagChange(cl.Component, f.Name); ok && ch.RemovedIn(ctx.Version) {
				emit(check.Finding{Location: cl.Loc(&f),
					Message: fmt.Sprintf("%s was removed from %s in %s (target %s)", f.Written, cl.Component, ch.Removed, ctx.Version),
					Why:     removedWhy(cl.Component, "--"+f.Name, ch.Deprecated, ch.Removed, ctx.Version),
					Fix:     "remove it; instead: " + flagReplacement(ch) + " [" + ch.Reference + "]"})
			}
			if !usable(f) {
				continue
			}
			if vc, ok := platform.LookupValueChange(cl.Component, f.Name, f.Value); ok && vc.RemovedIn(ctx.Version) {
				emit(check.Finding{Location: cl.Loc(&f),
					Message: fmt.Sprintf("%s=%s is no longer accepted since %s (target %s)", f.Written, f.Value, vc.Removed, ctx.Version),
					Why: fmt.Sprintf("%s %s rejects --%s=%s (no longer accepted since %s), so it does not start.",
						cl.Component, ctx.Version, f.Name, f.Value, vc.Removed),
					Fix: vc.Replacement + " [" + vc.Reference + "]"})
			}
		}
	}
}

// guardedBeforeRemoval reports whether a template renders the flag only below a release at
// or before the one that removes it ({% if kube_version is version('1.22', '<') %} around a
// flag removed in 1.24): the template already stops passing it in time.
func guardedBeforeRemoval(ctx *check.Context, cl *check.CommandLine, f check.Flag, ch platform.FlagChange) bool {
	b, ok := ctx.RenderedBelow(cl.File, f.Line)
	if !ok || ch.Removed == "" {
		return false
	}
	r, err := platform.ParseVersion(ch.Removed)
	return err == nil && r.AtLeast(b.Major, b.Minor)
}

// genericConfigDeprecation is the message every KubeletConfiguration flag carries.
const genericConfigDeprecation = "This parameter should be set via the config file"

// deprecatedBy reports whether a flag was deprecated in release v: at its recorded deprecation,
// else within the three releases before its removal (the longest deprecation window
// flaghistory.go's removals without a recorded deprecation had).
func deprecatedBy(ch platform.FlagChange, v platform.Version) bool {
	if ch.Deprecated != "" {
		d, err := platform.ParseVersion(ch.Deprecated)
		return err == nil && !v.Less(d)
	}
	r, err := platform.ParseVersion(ch.Removed)
	if err != nil {
		return true
	}
	return r.Major != v.Major || v.Minor+3 >= r.Minor
}

func checkDeprecatedFlags(ctx *check.Context, emit check.Emitter) {
	for _, cl := range ctx.CommandLines {
		cat := ctx.Catalogs.For(cl.Component)
		for i := range cl.Flags {
			f := cl.Flags[i]
			if f.Short {
				continue
			}
			if ch, ok := platform.LookupFlagChange(cl.Component, f.Name); ok && !ch.RemovedIn(ctx.Version) {
				if !deprecatedBy(ch, ctx.Version) {
					// a 1.9 line is not told about a flag deprecated in 1.24 and removed in 1.35
					continue
				}
				if guardedBeforeRemoval(ctx, cl, f, ch) {
					continue
				}
				if ch.Removed != "" {
					emit(check.Finding{Location: cl.Loc(&f),
						Message: fmt.Sprintf("%s still works in %s but is removed in %s", f.Written, ctx.Version, ch.Removed),
						Fix:     "instead: " + flagReplacement(ch) + " [" + ch.Reference + "]"})
				} else if ch.DeprecatedIn(ctx.Version) {
					emit(check.Finding{Location: cl.Loc(&f), Message: fmt.Sprintf("%s is deprecated since %s", f.Written, ch.Deprecated),
						Fix: "instead: " + flagReplacement(ch)})
				}
				continue
			}
			spec, ok := cat.Lookup(f.Name)
			if ok && spec.Deprecated != "" && !strings.Contains(spec.Deprecated, genericConfigDeprecation) && !ctx.Version.Less(ctx.Newest) {
				emit(check.Finding{Location: cl.Loc(&f), Message: fmt.Sprintf("%s is deprecated: %s", f.Written, spec.Deprecated)})
			}
		}
	}
}

func checkConfigFlags(ctx *check.Context, emit check.Emitter) {
	for _, cl := range commandLines(ctx, platform.Kubelet) {
		var names []string
		for _, f := range cl.Flags {
			if spec, ok := ctx.Catalogs.Kubelet.Lookup(f.Name); ok && !f.Short && strings.Contains(spec.Deprecated, genericConfigDeprecation) &&
				configFieldExists(f.Name, ctx.Version) {
				names = append(names, "--"+f.Name)
			}
		}
		if len(names) > 0 {
			emit(check.Finding{Location: cl.Loc(nil),
				Message: fmt.Sprintf("%s set in flags belong in a KubeletConfiguration: %s", plural(len(names), "setting"), strings.Join(names, " "))})
		}
	}
}

type gateKind int

const (
	gateUnknown gateKind = iota
	gateLocked
	gateRedundant
)

// gateSetting is one name=value from a --feature-gates flag or a featureGates map.
type gateSetting struct {
	name  string
	value bool
	loc   check.Location
	comp  platform.Component
}

func gateSettings(ctx *check.Context) []gateSetting {
	var out []gateSetting
	for _, cl := range ctx.CommandLines {
		for i := range cl.Flags {
			f := cl.Flags[i]
			if f.Name != "feature-gates" || !usable(f) {
				continue
			}
			for _, kv := range strings.Split(f.Value, ",") {
				k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
				b, err := strconv.ParseBool(strings.TrimSpace(v))
				if !ok || err != nil || k == "" {
					continue // KW0006 reports malformed values
				}
				out = append(out, gateSetting{name: strings.TrimSpace(k), value: b, loc: cl.Loc(&f), comp: cl.Component})
			}
		}
	}
	for _, d := range ctx.KubeletConfigs {
		for k, v := range d.Config.FeatureGates {
			out = append(out, gateSetting{name: k, value: v, comp: platform.Kubelet,
				loc: check.Location{File: d.File, Field: "featureGates." + k, Line: d.Pos.Line("featureGates." + k)}})
		}
	}
	for _, d := range ctx.KubeProxyConfigs {
		for k, v := range d.Config.FeatureGates {
			out = append(out, gateSetting{name: k, value: v, comp: platform.KubeProxy,
				loc: check.Location{File: d.File, Field: "featureGates." + k, Line: d.Pos.Line("featureGates." + k)}})
		}
	}
	return out
}

func checkGates(kind gateKind) func(*check.Context, check.Emitter) {
	return func(ctx *check.Context, emit check.Emitter) {
		for _, g := range gateSettings(ctx) {
			vd := ctx.Gates.Judge(g.name, g.value, ctx.Version, ctx.Newest)
			switch {
			case kind == gateUnknown && vd.Unknown:
				msg := fmt.Sprintf("%s (%s) does not recognise feature gate %s", g.comp, ctx.Version, g.name)
				fix := ""
				if vd.HasHist {
					msg += fmt.Sprintf(" (removed in %s)", vd.History.Removed)
					fix = "remove it; instead: " + vd.History.Replacement + " [" + vd.History.Reference + "]"
				}
				emit(check.Finding{Location: g.loc, Message: msg, Fix: fix})
			case kind == gateUnknown && vd.Unverifiable:
				emit(check.Finding{Location: g.loc, Severity: check.Info,
					Message: fmt.Sprintf("feature gate %s is unknown to %s and to kubewin's history; it may not exist in %s", g.name, ctx.Newest, ctx.Version)})
			case kind == gateLocked && vd.LockedConflict:
				emit(check.Finding{Location: g.loc,
					Message: fmt.Sprintf("%s=%t but the gate is GA and locked to %t in %s", g.name, g.value, !g.value, ctx.Version)})
			case kind == gateRedundant && vd.Redundant:
				emit(check.Finding{Location: g.loc,
					Message: fmt.Sprintf("%s=%t is the locked/GA default in %s (since %s)", g.name, g.value, ctx.Version, vd.State.Since)})
			}
		}
	}
}
