package rules

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// Prerequisites of the HostProcess designs (calico/hostprocess, flannel/hostprocess) on a live
// cluster. `kubewin discover` writes what it read into the spec (the IPAMConfig's
// strictAffinity, the Installation's windowsDataplane, the Windows DaemonSets, the API server
// endpoint), so `kubewin discover > cluster.yaml; kubewin check -f cluster.yaml` judges the live
// cluster; flannel's VNI and port on such a spec are KW1312 and KW1313.

const (
	refCalicoWindows = "docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/operator; tigera/operator pkg/controller/installation/validation.go"
	refHostProcess   = "kubernetes-sigs/sig-windows-tools hostprocess/ (kube-proxy and flannel HostProcess DaemonSets); kubernetes.io/docs/tasks/configure-pod-container/create-hostprocess-pod"
)

// hostProcessPlan is the plan's HostProcess part, nil for other designs.
func hostProcessPlan(ctx *check.Context) *plan.HostProcessPlan {
	if ctx.Plan == nil {
		return nil
	}
	return ctx.Plan.HostProcess
}

// calicoWindows is the spec's Calico settings when the design is calico/hostprocess.
func calicoWindows(ctx *check.Context) *v1alpha1.CalicoSettings {
	if ctx.Spec == nil || ctx.Spec.Spec.Design != v1alpha1.DesignCalicoHostProcess {
		return nil
	}
	return ctx.Spec.Spec.LinuxCNI.Calico
}

var hostProcessRules = []check.Rule{
	{
		ID: "KW1320", Name: "calico-windows-strict-affinity", Family: check.FamilyCNI, Severity: check.Error,
		Summary:   "Calico for Windows with IPAM strictAffinity false",
		Why:       "Without strict affinity Linux nodes borrow addresses from blocks affine to a Windows node, and Windows pods then collide with or cannot reach them; the Calico for Windows install requires true.",
		Fix:       "Apply kubewin plan's cluster/hostprocess/calico-windows.yaml (IPAMConfig default spec.strictAffinity: true), or: kubectl patch ipamconfigurations default --type merge --patch='{\"spec\": {\"strictAffinity\": true}}'",
		Reference: refCalicoWindows,
		Check: func(ctx *check.Context, emit check.Emitter) {
			if cs := calicoWindows(ctx); cs != nil && cs.StrictAffinity != nil && !*cs.StrictAffinity {
				emit(check.Finding{Location: ctx.SpecLoc("spec.linuxCNI.calico.strictAffinity"), Message: "strictAffinity is false"})
			}
		},
	},
	{
		ID: "KW1321", Name: "calico-windows-dataplane", Family: check.FamilyCNI, Severity: check.Error,
		Summary:   "Calico for Windows with the Installation's windowsDataplane Disabled",
		Why:       "The Tigera operator deploys calico-node-windows only with spec.calicoNetwork.windowsDataplane HNS; otherwise no pod ever creates the Windows node's network and the node stays NotReady.",
		Fix:       "Apply kubewin plan's cluster/hostprocess/calico-windows.yaml (windowsDataplane HNS, serviceCIDRs, windowsNodes CNI directories) with kubectl apply --server-side.",
		Reference: refCalicoWindows + "; tigera/operator api/v1/installation_types.go WindowsDataplane",
		Check: func(ctx *check.Context, emit check.Emitter) {
			if cs := calicoWindows(ctx); cs != nil && cs.WindowsDataplane == "Disabled" {
				emit(check.Finding{Location: ctx.SpecLoc("spec.linuxCNI.calico.windowsDataplane"), Message: "windowsDataplane is Disabled"})
			}
		},
	},
	{
		ID: "KW1322", Name: "calico-windows-vxlan-crosssubnet", Family: check.FamilyCNI, Severity: check.Error,
		Summary:   "Calico for Windows with a VXLANCrossSubnet pool",
		Why:       "The operator accepts Calico for Windows only with an IPv4 pool encapsulated VXLAN or None; with VXLANCrossSubnet it refuses the Installation and deploys nothing for Windows.",
		Fix:       "Use vxlanMode Always (encapsulation VXLAN) or, with BGP, no encapsulation for the pool Windows pods take addresses from.",
		Reference: "tigera/operator pkg/controller/installation/validation.go (\"IPv4 IPPool encapsulation ... is not supported by Calico for Windows\")",
		Check: func(ctx *check.Context, emit check.Emitter) {
			if cs := calicoWindows(ctx); cs != nil && cs.VXLANMode == "CrossSubnet" {
				emit(check.Finding{Location: ctx.SpecLoc("spec.linuxCNI.calico.vxlanMode"), Message: "vxlanMode is CrossSubnet"})
			}
		},
	},
	{
		ID: "KW1323", Name: "windows-kube-proxy-daemonset", Family: check.FamilyCNI, Severity: check.Warning,
		Summary:   "No HostProcess kube-proxy DaemonSet for Windows nodes in a HostProcess design",
		Why:       "In designs calico/hostprocess and flannel/hostprocess kube-proxy runs on Windows as a HostProcess pod; without the DaemonSet Services, the cluster DNS included, do not work on Windows nodes.",
		Fix:       "Apply kubewin plan's cluster/hostprocess/kube-proxy-windows.yaml (kubectl apply --server-side) before joining Windows nodes.",
		Reference: refHostProcess + " (calico/kube-proxy)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			if hp := hostProcessPlan(ctx); hp != nil && hp.KubeProxy != nil {
				emit(check.Finding{Location: ctx.SpecLoc("spec.windows.daemonSets"),
					Message: fmt.Sprintf("spec.windows.daemonSets lists no HostProcess kube-proxy; the plan renders %s/%s", hp.KubeProxy.Namespace, hp.KubeProxy.Name)})
			}
		},
	},
	{
		ID: "KW1324", Name: "windows-flannel-daemonset", Family: check.FamilyCNI, Severity: check.Warning,
		Summary:   "No HostProcess flannel DaemonSet for Windows nodes in design flannel/hostprocess",
		Why:       "flanneld creates the Windows node's HNS network; without its HostProcess pod the node has no pod network and stays NotReady.",
		Fix:       "Apply kubewin plan's cluster/hostprocess/flannel-windows.yaml (kubectl apply --server-side) before joining Windows nodes.",
		Reference: refHostProcess + " (flannel, removed in sig-windows-tools#385)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			if hp := hostProcessPlan(ctx); hp != nil && hp.Flannel != nil {
				emit(check.Finding{Location: ctx.SpecLoc("spec.windows.daemonSets"),
					Message: fmt.Sprintf("spec.windows.daemonSets lists no HostProcess flannel; the plan renders %s/%s", hp.Flannel.Namespace, hp.Flannel.Name)})
			}
		},
	},
	{
		ID: "KW1325", Name: "windows-legacy-daemonset", Family: check.FamilyCNI, Severity: check.Warning,
		Summary:   "A Windows kube-proxy, flannel or calico-node DaemonSet that is not HostProcess",
		Why:       "Pre-HostProcess Windows DaemonSets (wins-based, from sig-windows-tools' removed examples) do the job of the HostProcess pods kubewin renders; both on one node fight over its HNS network and Service policies.",
		Fix:       "Delete the listed DaemonSets before applying kubewin plan's cluster/hostprocess/ files.",
		Reference: refHostProcess,
		Check: func(ctx *check.Context, emit check.Emitter) {
			if hp := hostProcessPlan(ctx); hp != nil && len(hp.Replace) > 0 {
				emit(check.Finding{Location: ctx.SpecLoc("spec.windows.daemonSets"), Message: "not HostProcess: " + strings.Join(hp.Replace, ", ")})
			}
		},
	},
	{
		ID: "KW1326", Name: "windows-api-endpoint-loopback", Family: check.FamilyCNI, Severity: check.Error,
		Summary:   "The API server endpoint of a HostProcess design is a loopback address",
		Why:       "The HostProcess pods on Windows nodes talk to spec.networking.apiServerEndpoint directly (the kubernetes Service works only once kube-proxy runs); a loopback address, as a kubeconfig through a tunnel or port-forward gives, is the Windows node itself.",
		Fix:       "Set spec.networking.apiServerEndpoint to the host:port Windows nodes reach the API server at (kubeadm's controlPlaneEndpoint).",
		Reference: refHostProcess,
		Check: func(ctx *check.Context, emit check.Emitter) {
			if ctx.Spec == nil || !ctx.Spec.Spec.Design.HostProcess() {
				return
			}
			ep := ctx.Spec.Spec.Networking.APIServerEndpoint
			host, _, err := net.SplitHostPort(ep)
			if err != nil {
				return
			}
			a, aerr := netip.ParseAddr(host)
			if strings.EqualFold(host, "localhost") || aerr == nil && a.IsLoopback() {
				emit(check.Finding{Location: ctx.SpecLoc("spec.networking.apiServerEndpoint"), Message: ep + " is a loopback address"})
			}
		},
	},
}
