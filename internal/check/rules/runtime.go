package rules

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/platform"
)

var reImageBuild = regexp.MustCompile(`(?i)(ltsc20(16|19|22|25)|1709|1803|1809|1903|1909|2004|20h2|10\.0\.(\d{5}))`)

// imageBuild returns the Windows build an image reference targets, from its tag.
func imageBuild(ref string) (platform.WindowsBuild, bool) {
	tag := ref
	if i := strings.LastIndex(ref, ":"); i >= 0 && !strings.Contains(ref[i:], "/") {
		tag = ref[i+1:]
	} else {
		// No tag: some images carry the build in the path (windowsservercore-1709).
		tag = ref
	}
	m := reImageBuild.FindStringSubmatch(tag)
	if m == nil {
		return platform.WindowsBuild{}, false
	}
	key := m[1]
	if m[3] != "" {
		key = m[3]
	}
	return platform.LookupWindowsBuild(key)
}

// kubeletCgroupDriver finds the kubelet's cgroup driver among the Linux inputs.
func kubeletCgroupDriver(ctx *check.Context) (string, check.Location, bool) {
	for _, cl := range commandLines(ctx, platform.Kubelet) {
		if cl.OS != check.OSLinux {
			continue
		}
		if f, ok := cl.Last("cgroup-driver"); ok && usable(f) {
			return f.Value, cl.Loc(&f), true
		}
	}
	for _, d := range ctx.KubeletConfigs {
		if d.OS != check.OSWindows && d.Set["cgroupDriver"] {
			return d.Config.CgroupDriver, check.Location{File: d.File, Field: "cgroupDriver", Line: d.Pos.Line("cgroupDriver")}, true
		}
	}
	if ctx.Spec != nil && ctx.Spec.Spec.ContainerRuntime.CgroupDriver != "" {
		return ctx.Spec.Spec.ContainerRuntime.CgroupDriver, ctx.SpecLoc("spec.containerRuntime.cgroupDriver"), true
	}
	return "", check.Location{}, false
}

var runtimeRules = []check.Rule{
	{
		ID: "KW1601", Name: "cgroup-driver-mismatch", Family: check.FamilyRuntime, Severity: check.Error,
		Summary:   "containerd's SystemdCgroup (or Docker's cgroupdriver) disagrees with the kubelet's cgroupDriver",
		Why:       "Two cgroup managers on one node: pods are created under a hierarchy the kubelet does not account, and nodes become unstable under pressure. Since 1.31 the kubelet asks the CRI for the driver, but containerd before 2.0 does not answer.",
		Fix:       "systemd everywhere: SystemdCgroup = true in containerd's runc options and cgroupDriver: systemd.",
		Reference: refSeed001 + " (container runtimes: cgroup drivers); KEP-4033 (KubeletCgroupDriverFromCRI)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			driver, kloc, ok := kubeletCgroupDriver(ctx)
			if !ok {
				return
			}
			sev := check.Error
			if st := ctx.Gates.State("KubeletCgroupDriverFromCRI", ctx.Version); st.Known && st.Default {
				sev = check.Warning
			}
			for _, c := range ctx.Containerd {
				if c.Windows || c.SystemdCgroup == nil {
					continue
				}
				runtimeDriver := "cgroupfs"
				if *c.SystemdCgroup {
					runtimeDriver = "systemd"
				}
				if runtimeDriver != driver {
					emit(check.Finding{Location: check.Location{File: c.File, Line: c.SystemdCgroupLine, Field: "SystemdCgroup"}, Severity: sev,
						Message: fmt.Sprintf("SystemdCgroup = %t (%s) but the kubelet uses %s (%s)", *c.SystemdCgroup, runtimeDriver, driver, kloc)})
				}
			}
			for _, d := range ctx.DockerDaemons {
				if d.CgroupDriver != "" && d.CgroupDriver != driver {
					emit(check.Finding{Location: check.Location{File: d.File, Field: "exec-opts", Line: d.Pos.Line("exec-opts")}, Severity: sev,
						Message: fmt.Sprintf("native.cgroupdriver=%s but the kubelet uses %s", d.CgroupDriver, driver)})
				}
			}
		},
	},
	{
		ID: "KW1602", Name: "sandbox-image-build-mismatch", Family: check.FamilyRuntime, Severity: check.Error,
		Summary:   "A process-isolated Windows sandbox (pause) image built for another Windows build",
		Why:       "Process isolation needs the image's OS build to equal the host's: sandboxes fail with \"The container operating system does not match the host operating system\" and pods stay in ContainerCreating.",
		Fix:       "Use a multi-arch pause image (registry.k8s.io/pause) or one tagged for the node's build; Hyper-V isolation allows older image builds.",
		Reference: refSeed001 + " troubleshooting (pause image compatible with the OS version); " + refSeed002,
		Check: func(ctx *check.Context, emit check.Emitter) {
			builds := windowsBuilds(ctx)
			for _, c := range ctx.Containerd {
				if !c.Windows || len(builds) == 0 {
					continue
				}
				check1 := func(img string, line int, iso int, what string) {
					ib, ok := imageBuild(img)
					if !ok {
						return
					}
					for _, b := range builds {
						if iso == 1 && ib.Build <= b || ib.Build == b {
							return
						}
					}
					emit(check.Finding{Location: check.Location{File: c.File, Line: line},
						Message: fmt.Sprintf("%s %s targets %s (%s); the Windows nodes run %s", what, img, ib.Name(), ib.Label(), buildList(builds))})
				}
				if c.SandboxImage != "" {
					check1(c.SandboxImage, c.SandboxImageLine, 0, "sandbox image")
				}
				for _, h := range c.Handlers {
					if h.SandboxImage != "" {
						check1(h.SandboxImage, h.Line, h.SandboxIsolation, "handler "+h.Name+" sandbox image")
					}
				}
			}
			for _, n := range ctx.WindowsNodes() {
				for _, h := range n.Windows.RuntimeHandlers {
					ib, ok := imageBuild(h.SandboxImage)
					if !ok {
						continue
					}
					if (h.Isolation == "hyperv" && ib.Build > n.Windows.Build) || (h.Isolation != "hyperv" && ib.Build != n.Windows.Build) {
						emit(check.Finding{Location: ctx.PlanLoc("nodes."+n.Name+".windows.runtimeHandlers", n.Name),
							Message: fmt.Sprintf("handler %s (%s) uses %s for a %s host", h.Name, h.Isolation, h.SandboxImage, n.Windows.BuildLabel)})
					}
				}
			}
		},
	},
	{
		ID: "KW1603", Name: "missing-br-netfilter", Family: check.FamilyRuntime, Severity: check.Error,
		Summary:   "A Linux node is not planned (or its modules-load.d file does not) load br_netfilter",
		Why:       "Without br_netfilter bridged pod traffic bypasses iptables, so kube-proxy's service rules never see it.",
		Fix:       "modprobe br_netfilter and list it in /etc/modules-load.d/k8s.conf.",
		Reference: refSeed001 + " (container runtime prerequisites: br_netfilter)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, m := range ctx.Modules {
				if _, ok := m.Modules["br_netfilter"]; !ok {
					emit(check.Finding{Location: check.Location{File: m.File}, Message: fmt.Sprintf("%s loads %s but not br_netfilter", m.File, sortedInts(m.Modules))})
				}
			}
			if ctx.Plan == nil {
				return
			}
			for _, n := range ctx.Plan.Nodes {
				if n.Linux == nil {
					continue
				}
				found := false
				for _, m := range n.Linux.Modules {
					if m == "br_netfilter" {
						found = true
					}
				}
				if !found {
					emit(check.Finding{Location: ctx.PlanLoc("nodes."+n.Name+".linux.modules", n.Name), Message: fmt.Sprintf("%s modules: %v", n.Name, n.Linux.Modules)})
				}
			}
		},
	},
	{
		ID: "KW1604", Name: "ip-forward-disabled", Family: check.FamilyRuntime, Severity: check.Error,
		Summary:   "net.ipv4.ip_forward is not 1 on a Linux node",
		Why:       "Pod traffic and (for gateway members) Windows pod traffic is routed through the node; with forwarding off it is dropped.",
		Fix:       "net.ipv4.ip_forward = 1 in /etc/sysctl.d/k8s.conf (sysctl --system).",
		Reference: refSeed001 + " (net.ipv4.ip_forward = 1); " + refSeed000 + " §2.6",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, s := range ctx.Sysctls {
				if v, ok := s.Values["net.ipv4.ip_forward"]; ok && strings.TrimSpace(v.Value) != "1" {
					emit(check.Finding{Location: check.Location{File: s.File, Line: v.Line, Field: "net.ipv4.ip_forward"}, Message: "net.ipv4.ip_forward = " + v.Value})
				}
			}
			if ctx.Plan == nil {
				return
			}
			for _, n := range ctx.Plan.Nodes {
				if n.Linux != nil && n.Linux.Sysctls["net.ipv4.ip_forward"] != "1" {
					emit(check.Finding{Location: ctx.PlanLoc("nodes."+n.Name+".linux.sysctls", n.Name),
						Message: fmt.Sprintf("%s: net.ipv4.ip_forward is %q", n.Name, n.Linux.Sysctls["net.ipv4.ip_forward"])})
				}
			}
		},
	},
	{
		ID: "KW1608", Name: "calico-loose-all-rp-filter", Family: check.FamilyRuntime, Severity: check.Error,
		Summary: "net.ipv4.conf.all.rp_filter = 2 (loose) on a node of a Calico cluster",
		Why: "Felix exits fatally at start when all.rp_filter is 2 unless IgnoreLooseRPF is set " +
			"(projectcalico/calico felix/dataplane/linux/int_dataplane.go: \"Kernel's RPF check is set to 'loose'\"), so calico-node " +
			"never becomes ready there and BIRD exports nothing — on a gateway member that is the VIP holder's route to the Windows pod CIDR.",
		Fix: "Set loose mode on the cluster interface only (net.ipv4.conf.<iface>.rp_filter = 2; the kernel uses the maximum of " +
			"all and the interface) and leave all.rp_filter at 0 or 1; or set FELIX_IGNORELOOSERPF=true if spoofing is handled elsewhere.",
		Reference: "projectcalico/calico felix/dataplane/linux/int_dataplane.go; " + refSeed000 + " §2.6",
		Check: func(ctx *check.Context, emit check.Emitter) {
			if !calicoCluster(ctx) {
				return
			}
			for _, s := range ctx.Sysctls {
				if v, ok := s.Values[sysctlAllRPFilter]; ok && strings.TrimSpace(v.Value) == "2" {
					emit(check.Finding{Location: check.Location{File: s.File, Line: v.Line, Field: sysctlAllRPFilter}, Message: sysctlAllRPFilter + " = 2"})
				}
			}
			if ctx.Plan == nil {
				return
			}
			for _, n := range ctx.Plan.Nodes {
				if n.Linux != nil && n.Linux.Sysctls[sysctlAllRPFilter] == "2" {
					emit(check.Finding{Location: ctx.PlanLoc("nodes."+n.Name+".linux.sysctls", n.Name),
						Message: n.Name + ": " + sysctlAllRPFilter + " = 2 stops calico-node"})
				}
			}
		},
	},
	{
		ID: "KW1609", Name: "windows-build-unsupported", Family: check.FamilyRuntime, Severity: check.Warning,
		Summary: "A Windows node's build is not supported by the target Kubernetes release or by the Linux CNI",
		Why: "Kubernetes v1.36+ documents Windows Server 2022 and 2025 only, and Calico for Windows supports 2019 and 2022 only; " +
			"a node outside both lists may work today, but its failures are nobody's to fix.",
		Fix:       "Use a build both support (Windows Server 2022 for Calico clusters on v1.36+), or accept the risk knowingly.",
		Reference: "kubernetes.io/docs/concepts/windows/intro (compatibility); docs.tigera.io Calico for Windows requirements; internal/platform/windows.go",
		Check: func(ctx *check.Context, emit check.Emitter) {
			if ctx.Plan == nil || ctx.Spec == nil {
				return
			}
			for _, n := range ctx.WindowsNodes() {
				b, ok := platform.LookupWindowsBuild(n.Windows.BuildLabel)
				if !ok {
					continue
				}
				for _, gap := range b.SupportGaps(ctx.Version.Minor, ctx.Spec.Spec.LinuxCNI.Type) {
					emit(check.Finding{Location: ctx.PlanLoc("nodes."+n.Name+".windowsBuild", n.Name), Message: n.Name + ": " + gap})
				}
			}
		},
	},
	{
		ID: "KW1605", Name: "docker-as-runtime", Family: check.FamilyRuntime, Severity: check.Error,
		Summary:   "Docker Engine configured as the node's container runtime",
		Why:       "The kubelet lost dockershim in 1.24; Docker Engine needs cri-dockerd, and on Windows containerd is the supported runtime.",
		Fix:       "Install containerd and point the kubelet at npipe:////./pipe/containerd-containerd.",
		Reference: "KEP-2221 (dockershim removed in 1.24); " + refSeed000 + " §2.1.4",
		Check: func(ctx *check.Context, emit check.Emitter) {
			if !ctx.Version.AtLeast(1, 24) {
				return
			}
			for _, d := range ctx.DockerDaemons {
				emit(check.Finding{Location: check.Location{File: d.File}, Severity: check.Warning,
					Message: "a Docker daemon.json: Docker Engine is only usable by the kubelet through cri-dockerd"})
			}
			for _, cl := range commandLines(ctx, platform.Kubelet) {
				if f, ok := cl.Last("container-runtime"); ok && strings.EqualFold(f.Value, "docker") {
					emit(check.Finding{Location: cl.Loc(&f), Message: "--container-runtime=docker"})
				}
			}
		},
	},
	{
		ID: "KW1606", Name: "runtimeclass-handler-unknown", Family: check.FamilyRuntime, Severity: check.Error,
		Summary:   "A RuntimeClass names a handler the runtime does not have (or a template placeholder)",
		Why:       "Pods using the class fail with \"no runtime for <handler> is configured\"; the seed's handler 'docker' does not exist in containerd.",
		Fix:       "Use a handler configured in containerd (runhcs-wcow-process, or a Hyper-V handler kubewin renders).",
		Reference: refSeed001 + " (RuntimeClass windows-2019 with handler 'docker'); kubernetes.io/docs/concepts/containers/runtime-class",
		Check: func(ctx *check.Context, emit check.Emitter) {
			known := map[string]bool{}
			for _, c := range ctx.Containerd {
				for _, h := range c.Handlers {
					known[h.Name] = true
				}
			}
			for _, n := range ctx.WindowsNodes() {
				for _, h := range n.Windows.RuntimeHandlers {
					known[h.Name] = true
				}
			}
			if ctx.Plan != nil {
				known["runc"] = true
			}
			for _, o := range ctx.Objects {
				if o.RuntimeClass == nil {
					continue
				}
				h := o.RuntimeClass.Handler
				switch {
				case check.HasPlaceholder(h) || strings.Contains(h, "${") || strings.Contains(h, "{{") || h != strings.ToLower(h):
					// a template's placeholder; the API server also rejects anything but a
					// lower-case DNS label (RuntimeClass validation, node/v1 handler)
					emit(check.Finding{Location: o.Loc("handler"), Message: fmt.Sprintf("%s uses handler %q, a placeholder rather than a configured handler", o.Ref(), h)})
				case h == "docker" && ctx.Version.AtLeast(1, 24):
					emit(check.Finding{Location: o.Loc("handler"), Message: fmt.Sprintf("%s uses handler %q: dockershim is gone since 1.24", o.Ref(), h)})
				case len(known) > 0 && !known[h]:
					emit(check.Finding{Location: o.Loc("handler"), Message: fmt.Sprintf("%s uses handler %q; configured handlers: %s", o.Ref(), h, sortedKeys(known))})
				}
			}
		},
	},
	{
		ID: "KW1607", Name: "hyperv-handler-missing", Family: check.FamilyRuntime, Severity: check.Error,
		Summary:   "Hyper-V isolation requested but no Hyper-V runtime handler is configured",
		Why:       "Hyper-V isolation is a containerd runtime handler (SandboxIsolation=1) selected by a RuntimeClass; without the handler such pods cannot start.",
		Fix:       "Add a runhcs handler with SandboxIsolation = 1 per image build and a RuntimeClass for it (kubewin renders both with spec.windows.hyperV).",
		Reference: "containerd docs (runhcs SandboxIsolation); " + refSeed002,
		Check: func(ctx *check.Context, emit check.Emitter) {
			if ctx.Spec == nil || !ctx.Spec.Spec.Windows.HyperV {
				return
			}
			for _, n := range ctx.WindowsNodes() {
				ok := false
				for _, h := range n.Windows.RuntimeHandlers {
					if h.Isolation == "hyperv" {
						ok = true
					}
				}
				if !ok {
					emit(check.Finding{Location: ctx.PlanLoc("nodes."+n.Name+".windows.runtimeHandlers", n.Name),
						Message: fmt.Sprintf("spec.windows.hyperV is true but %s has no hyperv handler", n.Name)})
				}
			}
			for _, c := range ctx.Containerd {
				if !c.Windows {
					continue
				}
				ok := false
				for _, h := range c.Handlers {
					if h.SandboxIsolation == 1 {
						ok = true
					}
				}
				if !ok {
					emit(check.Finding{Location: check.Location{File: c.File}, Message: "spec.windows.hyperV is true but no runtime handler has SandboxIsolation = 1"})
				}
			}
		},
	},
}

func buildList(bs []int) string {
	var s []string
	for _, b := range bs {
		s = append(s, "10.0."+strconv.Itoa(b))
	}
	return strings.Join(s, ", ")
}

func sortedInts(m map[string]int) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

func sortedKeys(m map[string]bool) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

const sysctlAllRPFilter = "net.ipv4.conf.all.rp_filter"

// calicoCluster reports whether the inputs describe Calico on the Linux nodes with Felix's loose
// RPF check in force: the spec says so, or a Calico CNI configuration was given.
func calicoCluster(ctx *check.Context) bool {
	if ctx.Spec != nil {
		cni := ctx.Spec.Spec.LinuxCNI
		return cni.Type == "calico" && (cni.Calico == nil || !cni.Calico.IgnoreLooseRPF)
	}
	for _, c := range ctx.CNIConfs {
		if c.Type == "calico" {
			return true
		}
	}
	return false
}
