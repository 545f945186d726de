package rules

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/platform"
)

const (
	labelOS           = "kubernetes.io/os"
	labelBetaOS       = "beta.kubernetes.io/os"
	labelBetaArch     = "beta.kubernetes.io/arch"
	labelWindowsBuild = "node.kubernetes.io/windows-build"
	annoHyperV        = "experimental.windows.kubernetes.io/isolation-type"
)

// windowsImage reports whether an image is a Windows image by its well-known names.
func windowsImage(img string) bool {
	l := strings.ToLower(img)
	for _, s := range []string{"mcr.microsoft.com/windows", "microsoft/iis", "microsoft/nanoserver", "microsoft/windowsservercore",
		"servercore", "nanoserver", "windowsservercore", "mcr.microsoft.com/dotnet/framework", "mcr.microsoft.com/powershell:lts-nanoserver"} {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// podOS classifies a pod template: "windows", "linux" or "" (unpinned), with how.
type podInfo struct {
	o        *check.Object
	t        *check.PodTemplate
	selected string // OS selected by nodeSelector/affinity/os.name/runtimeClass
	windows  bool   // uses Windows images or selects Windows
	rc       *check.RuntimeClassInfo
}

// vendorOSLabel maps a vendor node label's value to the OS it selects: AKS labels each node
// with kubernetes.azure.com/os-sku, its agent pool's OSSKU (Windows2019, Windows2022, …; Ubuntu,
// AzureLinux, CBLMariner for Linux — learn.microsoft.com/rest/api/aks/agent-pools, OSSKU);
// node.kubernetes.io/windows-build exists only on Windows nodes (kubelet sets it;
// kubernetes.io/docs/reference/labels-annotations-taints/#nodekubernetesiowindows-build).
func vendorOSLabel(key, value string) string {
	switch key {
	case "kubernetes.azure.com/os-sku":
		if strings.HasPrefix(strings.ToLower(value), "windows") {
			return "windows"
		}
		if value != "" {
			return "linux"
		}
	case labelWindowsBuild:
		if value != "" {
			return "windows"
		}
	}
	return ""
}

func selectorOS(spec *corev1.PodSpec) string {
	if v := spec.NodeSelector[labelOS]; v != "" {
		return v
	}
	if v := spec.NodeSelector[labelBetaOS]; v != "" {
		return v
	}
	for _, k := range []string{"kubernetes.azure.com/os-sku", labelWindowsBuild} {
		if v := vendorOSLabel(k, spec.NodeSelector[k]); v != "" {
			return v
		}
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, e := range t.MatchExpressions {
				if (e.Key == labelOS || e.Key == labelBetaOS) && e.Operator == corev1.NodeSelectorOpIn && len(e.Values) == 1 {
					return e.Values[0]
				}
				if e.Operator == corev1.NodeSelectorOpIn && len(e.Values) > 0 {
					if v := vendorOSLabel(e.Key, e.Values[0]); v != "" {
						return v
					}
				}
			}
		}
	}
	return ""
}

func runtimeClasses(ctx *check.Context) map[string]*check.RuntimeClassInfo {
	return ctx.Memo("rules.runtimeClasses", func() any { return computeRuntimeClasses(ctx) }).(map[string]*check.RuntimeClassInfo)
}

func computeRuntimeClasses(ctx *check.Context) map[string]*check.RuntimeClassInfo {
	out := map[string]*check.RuntimeClassInfo{}
	if ctx.Plan != nil {
		for _, rc := range ctx.Plan.RuntimeClasses {
			info := &check.RuntimeClassInfo{Handler: rc.Handler, NodeSelector: rc.NodeSelector}
			for _, t := range rc.Tolerations {
				info.Tolerations = append(info.Tolerations, corev1.Toleration{Key: t.Key, Value: t.Value,
					Effect: corev1.TaintEffect(t.Effect), Operator: corev1.TolerationOpEqual})
			}
			out[rc.Name] = info
		}
	}
	for _, o := range ctx.Objects {
		if o.RuntimeClass != nil {
			out[o.Name] = o.RuntimeClass
		}
	}
	return out
}

func pods(ctx *check.Context) []podInfo {
	return ctx.Memo("rules.pods", func() any { return computePods(ctx) }).([]podInfo)
}

func computePods(ctx *check.Context) []podInfo {
	rcs := runtimeClasses(ctx)
	var out []podInfo
	for _, o := range ctx.Objects {
		if o.Template == nil || o.Template.Spec == nil {
			continue
		}
		p := podInfo{o: o, t: o.Template}
		s := o.Template.Spec
		p.selected = selectorOS(s)
		if s.OS != nil && p.selected == "" {
			p.selected = string(s.OS.Name)
		}
		if s.RuntimeClassName != nil {
			p.rc = rcs[*s.RuntimeClassName]
			if p.rc != nil && p.selected == "" {
				p.selected = p.rc.NodeSelector[labelOS]
			}
		}
		for _, c := range allContainers(s) {
			if windowsImage(c.Image) {
				p.windows = true
			}
		}
		if p.selected == "windows" || (s.OS != nil && s.OS.Name == corev1.Windows) {
			p.windows = true
		}
		out = append(out, p)
	}
	return out
}

func allContainers(s *corev1.PodSpec) []corev1.Container {
	out := append([]corev1.Container(nil), s.InitContainers...)
	return append(out, s.Containers...)
}

// containerPath returns the document path of container i of the template.
func containerPath(p podInfo, s *corev1.PodSpec, idx int) string {
	if idx < len(s.InitContainers) {
		return fmt.Sprintf("%s.initContainers[%d]", p.t.SpecPath, idx)
	}
	return fmt.Sprintf("%s.containers[%d]", p.t.SpecPath, idx-len(s.InitContainers))
}

func tolerates(tols []corev1.Toleration, key, value string, effect corev1.TaintEffect) bool {
	for _, t := range tols {
		if t.Operator == corev1.TolerationOpExists && (t.Key == "" || t.Key == key) && (t.Effect == "" || t.Effect == effect) {
			return true
		}
		if t.Key == key && t.Value == value && (t.Effect == "" || t.Effect == effect) {
			return true
		}
	}
	return false
}

// windowsTaint returns the NoSchedule/NoExecute taint of the plan's Windows nodes.
func windowsTaint(ctx *check.Context) (key, value string, effect corev1.TaintEffect, ok bool) {
	for _, n := range ctx.WindowsNodes() {
		for _, t := range n.Taints {
			if t.Effect == "NoSchedule" || t.Effect == "NoExecute" {
				return t.Key, t.Value, corev1.TaintEffect(t.Effect), true
			}
		}
	}
	return "", "", "", false
}

// hyperVPod reports whether the pod runs with Hyper-V isolation (by runtime class handler).
func hyperVPod(p podInfo) bool {
	return p.rc != nil && strings.Contains(strings.ToLower(p.rc.Handler), "hyperv") || p.rc != nil && strings.Contains(strings.ToLower(p.rc.Handler), "hypervisor")
}

var workloadRules = []check.Rule{
	{
		ID: "KW1701", Name: "windows-pod-without-os-selector", Family: check.FamilyWorkloads, Severity: check.Error,
		Summary:   "A Windows workload without a kubernetes.io/os=windows selector or RuntimeClass",
		Why:       "The scheduler may place it on a Linux node, where the Windows image can never start.",
		Fix:       "nodeSelector: {kubernetes.io/os: windows} (plus node.kubernetes.io/windows-build), or runtimeClassName of a Windows RuntimeClass.",
		Reference: refSeed000 + " appendix; " + refWinGuide,
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, p := range pods(ctx) {
				if !p.windows || p.selected == "windows" {
					continue
				}
				emit(check.Finding{Location: p.o.Loc(p.t.SpecPath), Message: fmt.Sprintf("%s runs Windows images and does not select Windows nodes", p.o.Ref())})
			}
		},
	},
	{
		ID: "KW1702", Name: "linux-pod-can-land-on-windows", Family: check.FamilyWorkloads, Severity: check.Warning,
		Summary:   "A Linux workload is not pinned to Linux and the Windows nodes are not tainted",
		Why:       "Without a taint on Windows nodes or an OS selector on the workload, the scheduler can place Linux pods on Windows nodes, where they fail to pull or start.",
		Fix:       "nodeSelector: {kubernetes.io/os: linux}, or taint Windows nodes os=windows:NoSchedule (spec.windows.taint).",
		Reference: refSeed001 + " (taints and tolerations)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			if len(ctx.WindowsNodes()) == 0 {
				return
			}
			if _, _, _, tainted := windowsTaint(ctx); tainted {
				return
			}
			for _, p := range pods(ctx) {
				if p.windows || p.selected != "" {
					continue
				}
				emit(check.Finding{Location: p.o.Loc(p.t.SpecPath), Message: fmt.Sprintf("%s has no OS selector and the Windows nodes are untainted", p.o.Ref())})
			}
		},
	},
	{
		ID: "KW1703", Name: "windows-pod-missing-toleration", Family: check.FamilyWorkloads, Severity: check.Error,
		Summary:   "A Windows workload does not tolerate the Windows nodes' taint",
		Why:       "Windows nodes registered with os=windows:NoSchedule accept only pods that tolerate it; the pods stay Pending.",
		Fix:       `tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}] or a RuntimeClass that carries it.`,
		Reference: refSeed001 + " (taints and tolerations, RuntimeClass)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			key, value, effect, ok := windowsTaint(ctx)
			if !ok {
				return
			}
			for _, p := range pods(ctx) {
				if !p.windows {
					continue
				}
				tols := p.t.Spec.Tolerations
				if p.rc != nil {
					tols = append(append([]corev1.Toleration(nil), tols...), p.rc.Tolerations...)
				}
				if !tolerates(tols, key, value, effect) {
					emit(check.Finding{Location: p.o.Loc(p.t.SpecPath), Message: fmt.Sprintf("%s does not tolerate %s=%s:%s", p.o.Ref(), key, value, effect),
						Fix: fmt.Sprintf("tolerations: [{key: %s, operator: Equal, value: %s, effect: %s}]", key, value, effect)})
				}
			}
		},
	},
	{
		ID: "KW1704", Name: "image-build-mismatch", Family: check.FamilyWorkloads, Severity: check.Error,
		Summary:   "A Windows image's OS build matches no Windows node (process isolation)",
		Why:       "Process-isolated containers need image build = host build (Hyper-V isolation: image build <= host build); otherwise \"The container operating system does not match the host operating system\".",
		Fix:       "Use the image tag of the node's build (e.g. ltsc2019 for 10.0.17763), or run it with a Hyper-V RuntimeClass.",
		Reference: refSeed002 + "; " + refSeed001 + " (OS version compatibility)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			builds := windowsBuilds(ctx)
			for _, p := range pods(ctx) {
				if !p.windows {
					continue
				}
				nodes := builds
				if sel := p.t.Spec.NodeSelector[labelWindowsBuild]; sel != "" {
					if b, ok := platform.LookupWindowsBuild(sel); ok {
						nodes = []int{b.Build}
					}
				}
				if len(nodes) == 0 {
					continue
				}
				hv := hyperVPod(p) || p.t.Annotations[annoHyperV] == "hyperv"
				for i, c := range allContainers(p.t.Spec) {
					ib, ok := imageBuild(c.Image)
					if !ok {
						continue
					}
					match := false
					for _, b := range nodes {
						if ib.Build == b || (hv && ib.Build <= b) {
							match = true
						}
					}
					if !match {
						emit(check.Finding{Location: p.o.Loc(containerPath(p, p.t.Spec, i) + ".image"),
							Message: fmt.Sprintf("%s image %s targets %s (%s); the Windows nodes it can run on have %s", p.o.Ref(), c.Image, ib.Name(), ib.Label(), buildList(nodes))})
					}
				}
			}
		},
	},
	{
		ID: "KW1705", Name: "legacy-hyperv-annotation", Family: check.FamilyWorkloads, Severity: check.Error,
		Summary:   "Hyper-V isolation requested with the pre-1.21 annotation",
		Why:       "experimental.windows.kubernetes.io/isolation-type and the HyperVContainer gate were removed in 1.21 (dockershim only); the annotation is ignored and the pod runs process-isolated, failing on a build mismatch.",
		Fix:       "Remove the annotation; use runtimeClassName with a Hyper-V RuntimeClass (containerd handler with SandboxIsolation=1).",
		Reference: refSeed002 + "; " + refSeed001 + " (Hyper-V isolation); kubernetes/kubernetes#95505",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, p := range pods(ctx) {
				if v, ok := p.t.Annotations[annoHyperV]; ok {
					emit(check.Finding{Location: p.o.Loc(p.t.MetaPath + ".annotations." + annoHyperV),
						Message: fmt.Sprintf("%s has %s: %s", p.o.Ref(), annoHyperV, v)})
				}
			}
		},
	},
	{
		ID: "KW1706", Name: "host-network-on-windows", Family: check.FamilyWorkloads, Severity: check.Error,
		Summary:   "hostNetwork on a Windows pod that is not a HostProcess pod",
		Why:       "Windows pods cannot share the host network namespace; only HostProcess containers run in the host's network.",
		Fix:       "Remove hostNetwork, or make the pod a HostProcess pod (securityContext.windowsOptions.hostProcess: true).",
		Reference: refSeed001 + " (V1.Pod.hostNetwork); kubernetes.io/docs/tasks/configure-pod-container/create-hostprocess-pod",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, p := range pods(ctx) {
				s := p.t.Spec
				if !p.windows || !s.HostNetwork || hostProcess(s) || winsProxy(s) {
					continue
				}
				emit(check.Finding{Location: p.o.Loc(p.t.SpecPath + ".hostNetwork"), Message: fmt.Sprintf("%s sets hostNetwork: true", p.o.Ref())})
			}
		},
	},
	{
		ID: "KW1707", Name: "privileged-on-windows", Family: check.FamilyWorkloads, Severity: check.Error,
		Summary:   "A privileged container in a Windows pod",
		Why:       "Windows has no privileged containers; the API server rejects it for os.name windows and the runtime fails otherwise.",
		Fix:       "Remove privileged; for node management use a HostProcess container.",
		Reference: refSeed001 + " (V1.Container.SecurityContext.privileged)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, p := range pods(ctx) {
				if !p.windows {
					continue
				}
				for i, c := range allContainers(p.t.Spec) {
					if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
						emit(check.Finding{Location: p.o.Loc(containerPath(p, p.t.Spec, i) + ".securityContext.privileged"),
							Message: fmt.Sprintf("%s container %s is privileged", p.o.Ref(), c.Name)})
					}
				}
			}
		},
	},
	{
		ID: "KW1708", Name: "linux-security-field-on-windows", Family: check.FamilyWorkloads, Severity: check.Warning,
		Summary:   "A Windows pod sets security fields Windows does not implement (runAsUser, seLinuxOptions, capabilities, ...)",
		Why:       "Windows has no UIDs, SELinux, capabilities or /proc: the API server rejects these fields when spec.os.name is windows, and ignores them otherwise, so the pod is not protected as written.",
		Fix:       "Remove the field; use securityContext.windowsOptions.runAsUserName for identity.",
		Reference: refSeed001 + " (V1.PodSecurityContext / V1.Container.SecurityContext on Windows)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, p := range pods(ctx) {
				if !p.windows {
					continue
				}
				sev := check.Warning
				if p.t.Spec.OS != nil && p.t.Spec.OS.Name == corev1.Windows {
					sev = check.Error
				}
				if sc := p.t.Spec.SecurityContext; sc != nil {
					for _, f := range podSecurityFields(sc) {
						emit(check.Finding{Location: p.o.Loc(p.t.SpecPath + ".securityContext." + f), Severity: sev,
							Message: fmt.Sprintf("%s sets securityContext.%s", p.o.Ref(), f)})
					}
				}
				for i, c := range allContainers(p.t.Spec) {
					if c.SecurityContext == nil {
						continue
					}
					for _, f := range containerSecurityFields(c.SecurityContext) {
						emit(check.Finding{Location: p.o.Loc(containerPath(p, p.t.Spec, i) + ".securityContext." + f), Severity: sev,
							Message: fmt.Sprintf("%s container %s sets securityContext.%s", p.o.Ref(), c.Name, f)})
					}
				}
			}
		},
	},
	{
		ID: "KW1709", Name: "removed-api-version", Family: check.FamilyWorkloads, Severity: check.Error,
		Summary:   "A manifest uses an API version the target release no longer serves (e.g. apps/v1beta2)",
		Why:       "kubectl apply fails with \"no matches for kind ... in version ...\"; seed 002's Deployment was apps/v1beta2.",
		Fix:       "Change apiVersion to the replacement named in the message (kubectl convert helps).",
		Reference: "kubernetes.io/docs/reference/using-api/deprecation-guide; " + refSeed002,
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, o := range ctx.Objects {
				r, ok := check.LookupRemovedAPI(o.APIVersion, o.Kind)
				if !ok {
					continue
				}
				rv, _ := platform.ParseVersion(r.Removed)
				if !ctx.Version.AtLeast(rv.Major, rv.Minor) {
					continue
				}
				emit(check.Finding{Location: o.Loc("apiVersion"),
					Message: fmt.Sprintf("%s uses %s, removed in %s (target %s)", o.Ref(), o.APIVersion, r.Removed, ctx.Version),
					Fix:     "apiVersion: " + r.Replacement})
			}
		},
	},
	{
		ID: "KW1710", Name: "memory-emptydir-on-windows", Family: check.FamilyWorkloads, Severity: check.Error,
		Summary:   "emptyDir with medium Memory in a Windows pod",
		Why:       "Windows has no RAM disk for pods; the volume cannot be set up and the pod does not start.",
		Fix:       "Use a disk-backed emptyDir (no medium).",
		Reference: refSeed001 + " (v1.emptyDir.volumeSource on Windows)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, p := range pods(ctx) {
				if !p.windows {
					continue
				}
				for i, v := range p.t.Spec.Volumes {
					if v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumMemory {
						emit(check.Finding{Location: p.o.Loc(fmt.Sprintf("%s.volumes[%d].emptyDir.medium", p.t.SpecPath, i)),
							Message: fmt.Sprintf("%s volume %s uses medium Memory", p.o.Ref(), v.Name)})
					}
				}
			}
		},
	},
	{
		ID: "KW1711", Name: "clusterfirstwithhostnet-on-windows", Family: check.FamilyWorkloads, Severity: check.Warning,
		Summary:   "dnsPolicy ClusterFirstWithHostNet on a Windows pod",
		Why:       "Windows pods have no host network mode, so this policy is not supported there.",
		Fix:       "dnsPolicy: ClusterFirst.",
		Reference: refSeed001 + " (DNS limitations)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, p := range pods(ctx) {
				if p.windows && p.t.Spec.DNSPolicy == corev1.DNSClusterFirstWithHostNet && !hostProcess(p.t.Spec) {
					emit(check.Finding{Location: p.o.Loc(p.t.SpecPath + ".dnsPolicy"), Message: fmt.Sprintf("%s uses dnsPolicy ClusterFirstWithHostNet", p.o.Ref())})
				}
			}
		},
	},
	{
		ID: "KW1712", Name: "unknown-runtime-class", Family: check.FamilyWorkloads, Severity: check.Error,
		Summary:   "runtimeClassName names a RuntimeClass that is not defined",
		Why:       "The API server's RuntimeClass admission rejects the pod (\"RuntimeClass not found\").",
		Fix:       "Create the RuntimeClass (kubewin renders one per Windows build) or fix the name.",
		Reference: "kubernetes.io/docs/concepts/containers/runtime-class",
		Check: func(ctx *check.Context, emit check.Emitter) {
			rcs := runtimeClasses(ctx)
			if len(rcs) == 0 && ctx.Plan == nil {
				return
			}
			for _, p := range pods(ctx) {
				if n := p.t.Spec.RuntimeClassName; n != nil && rcs[*n] == nil {
					emit(check.Finding{Location: p.o.Loc(p.t.SpecPath + ".runtimeClassName"), Message: fmt.Sprintf("%s uses RuntimeClass %q, which is not defined", p.o.Ref(), *n)})
				}
			}
		},
	},
	{
		ID: "KW1713", Name: "beta-os-label", Family: check.FamilyWorkloads, Severity: check.Warning,
		Summary:   "nodeSelector or node affinity on the deprecated beta.kubernetes.io/os or /arch labels",
		Why:       "The beta labels are deprecated in favour of kubernetes.io/os and kubernetes.io/arch; selectors on them break once nodes stop carrying them.",
		Fix:       "Use kubernetes.io/os and kubernetes.io/arch.",
		Reference: "kubernetes.io/docs/reference/labels-annotations-taints (beta.kubernetes.io/os deprecated); seed 003",
		Check: func(ctx *check.Context, emit check.Emitter) {
			// kubernetes.io/os and /arch are GA node labels from 1.14; before that the beta
			// labels were the only ones (kubernetes CHANGELOG-1.14, "node.kubernetes.io/os")
			if ctx.Version.Major == 1 && ctx.Version.Minor < 14 {
				return
			}
			for _, p := range pods(ctx) {
				for _, k := range []string{labelBetaOS, labelBetaArch} {
					if v, ok := p.t.Spec.NodeSelector[k]; ok {
						emit(check.Finding{Location: p.o.Loc(p.t.SpecPath + ".nodeSelector." + k), Message: fmt.Sprintf("%s selects %s=%s", p.o.Ref(), k, v),
							Fix: strings.Replace(k, "beta.", "", 1) + ": " + v})
					}
				}
				// the same labels in required node affinity
				aff := p.t.Spec.Affinity
				if aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
					continue
				}
				for i, term := range aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
					for j, e := range term.MatchExpressions {
						if e.Key == labelBetaOS || e.Key == labelBetaArch {
							path := fmt.Sprintf("%s.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[%d].matchExpressions[%d]", p.t.SpecPath, i, j)
							emit(check.Finding{Location: p.o.Loc(path), Message: fmt.Sprintf("%s requires %s %s %v in its node affinity", p.o.Ref(), e.Key, e.Operator, e.Values),
								Fix: "key: " + strings.Replace(e.Key, "beta.", "", 1)})
						}
					}
				}
			}
		},
	},
	{
		ID: "KW1714", Name: "windows-build-selector-unknown", Family: check.FamilyWorkloads, Severity: check.Error,
		Summary:   "node.kubernetes.io/windows-build selects a build no Windows node has",
		Why:       "No node matches, so the pods stay Pending.",
		Fix:       "Select one of the nodes' builds (10.0.<build>), or add a node of that build.",
		Reference: refSeed001 + " (node.kubernetes.io/windows-build)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			builds := windowsBuilds(ctx)
			if len(builds) == 0 {
				return
			}
			for _, p := range pods(ctx) {
				sel, ok := p.t.Spec.NodeSelector[labelWindowsBuild]
				if !ok {
					continue
				}
				found := false
				for _, b := range builds {
					if sel == "10.0."+strconv.Itoa(b) {
						found = true
					}
				}
				if !found {
					emit(check.Finding{Location: p.o.Loc(p.t.SpecPath + ".nodeSelector." + labelWindowsBuild),
						Message: fmt.Sprintf("%s selects %s=%s; the Windows nodes have %s", p.o.Ref(), labelWindowsBuild, sel, buildList(builds))})
				}
			}
		},
	},
	{
		ID: "KW1715", Name: "retired-windows-image", Family: check.FamilyWorkloads, Severity: check.Warning,
		Summary:   "A retired Windows image: a Docker Hub microsoft/* repository or a Semi-Annual Channel tag",
		Why:       "Microsoft moved its images to mcr.microsoft.com and stopped updating the Docker Hub microsoft/* repositories; Semi-Annual Channel builds (1709, 1803, 1903, 1909, 2004, 20H2) are out of support and match no LTSC node build with process isolation, so pulls fail or pods never start.",
		Fix:       "mcr.microsoft.com/windows/servercore:ltsc2022 (or nanoserver, or the app's own mcr image) with the node's LTSC tag.",
		Reference: "k8s.io/kubernetes build/pause/CHANGELOG.md (3.7, 3.9: SAC images removed); learn.microsoft.com Windows container base images (images moved to MCR)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, p := range pods(ctx) {
				s := p.t.Spec
				for i, c := range allContainers(s) {
					if why := retiredWindowsImage(c.Image); why != "" {
						emit(check.Finding{Location: p.o.Loc(containerPath(p, s, i) + ".image"), Message: fmt.Sprintf("%s uses %s: %s", p.o.Ref(), c.Image, why)})
					}
				}
			}
		},
	},
}

// winsProxy: the pod drives rancher/wins through its named pipe, which runs the real process
// on the host (the pre-HostProcess flannel and kube-proxy DaemonSets of sig-windows-tools); the
// pod's own network is irrelevant there.
func winsProxy(s *corev1.PodSpec) bool {
	for _, v := range s.Volumes {
		if v.HostPath != nil && strings.Contains(strings.ToLower(v.HostPath.Path), `pipe\rancher_wins`) {
			return true
		}
	}
	return false
}

// sacTags are Windows Semi-Annual Channel releases, all out of support.
var sacTags = map[string]bool{"1709": true, "1803": true, "1903": true, "1909": true, "2004": true, "20h2": true}

func retiredWindowsImage(image string) string {
	repo, tag := image, ""
	if i := strings.LastIndexByte(image, ':'); i > strings.LastIndexByte(image, '/') {
		repo, tag = image[:i], strings.ToLower(image[i+1:])
	}
	lr := strings.ToLower(strings.TrimPrefix(repo, "docker.io/"))
	switch lr {
	case "microsoft/windowsservercore", "microsoft/nanoserver", "microsoft/iis", "microsoft/aspnet", "microsoft/dotnet-framework",
		"microsoft/dotnet-framework-samples", "microsoft/mssql-server-windows-developer", "microsoft/powershell":
		return "Docker Hub microsoft/* images are retired (moved to mcr.microsoft.com)"
	}
	if !windowsImage(image) {
		return ""
	}
	for _, part := range strings.FieldsFunc(tag, func(r rune) bool { return r == '-' || r == '_' }) {
		if sacTags[part] {
			return "Windows Semi-Annual Channel " + part + " is out of support"
		}
	}
	return ""
}

func hostProcess(s *corev1.PodSpec) bool {
	if s.SecurityContext != nil && s.SecurityContext.WindowsOptions != nil && s.SecurityContext.WindowsOptions.HostProcess != nil {
		return *s.SecurityContext.WindowsOptions.HostProcess
	}
	for _, c := range s.Containers {
		if c.SecurityContext != nil && c.SecurityContext.WindowsOptions != nil && c.SecurityContext.WindowsOptions.HostProcess != nil && *c.SecurityContext.WindowsOptions.HostProcess {
			return true
		}
	}
	return false
}

func podSecurityFields(sc *corev1.PodSecurityContext) []string {
	var out []string
	if sc.RunAsUser != nil {
		out = append(out, "runAsUser")
	}
	if sc.RunAsGroup != nil {
		out = append(out, "runAsGroup")
	}
	if sc.SELinuxOptions != nil {
		out = append(out, "seLinuxOptions")
	}
	if sc.SeccompProfile != nil {
		out = append(out, "seccompProfile")
	}
	if sc.AppArmorProfile != nil {
		out = append(out, "appArmorProfile")
	}
	if sc.FSGroup != nil {
		out = append(out, "fsGroup")
	}
	if len(sc.SupplementalGroups) > 0 {
		out = append(out, "supplementalGroups")
	}
	if len(sc.Sysctls) > 0 {
		out = append(out, "sysctls")
	}
	return out
}

func containerSecurityFields(sc *corev1.SecurityContext) []string {
	var out []string
	if sc.RunAsUser != nil {
		out = append(out, "runAsUser")
	}
	if sc.RunAsGroup != nil {
		out = append(out, "runAsGroup")
	}
	if sc.SELinuxOptions != nil {
		out = append(out, "seLinuxOptions")
	}
	if sc.SeccompProfile != nil {
		out = append(out, "seccompProfile")
	}
	if sc.AppArmorProfile != nil {
		out = append(out, "appArmorProfile")
	}
	if sc.Capabilities != nil {
		out = append(out, "capabilities")
	}
	if sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem {
		out = append(out, "readOnlyRootFilesystem")
	}
	if sc.ProcMount != nil {
		out = append(out, "procMount")
	}
	if sc.AllowPrivilegeEscalation != nil {
		out = append(out, "allowPrivilegeEscalation")
	}
	return out
}
