package discover

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// Windows on the clusters people run (issue 26): Calico for Windows through the Tigera operator
// and flannel, both with HostProcess DaemonSets, and kube-proxy as one. discover reads what
// those designs depend on, picks the design, and lists what the cluster lacks for Windows with
// the fix (Result.WindowsPrerequisites). Sources:
//   - Installation default (operator.tigera.io/v1): spec.calicoNetwork.windowsDataplane (HNS
//     makes the operator deploy calico-node-windows; "Disabled" is its default),
//     spec.calicoNetwork.bgp, spec.calicoNetwork.ipPools[].encapsulation, spec.serviceCIDRs
//     (tigera/operator api/v1/installation_types.go). The operator refuses Windows without the
//     ConfigMap tigera-operator/kubernetes-services-endpoint, without serviceCIDRs, or with an
//     IPv4 pool encapsulated other than VXLAN or None (pkg/controller/installation/validation.go).
//   - IPAMConfig default: strictAffinity must be true for Calico for Windows (docs.tigera.io,
//     Calico for Windows, "Install using Operator"); read as crd.projectcalico.org/v1 ipamconfigs
//     (Kubernetes datastore) or projectcalico.org/v3 ipamconfigurations (Calico API server).
//     Absent means Calico's default, false.
//   - flannel's net-conf.json: on Windows the VXLAN VNI must be 4096 or more and the port 4789
//     (flannel-io/flannel Documentation/backends.md; pkg/backend/vxlan/vxlan_windows.go refuses
//     others), while Linux defaults to VNI 1 and the kernel's port 8472; Linux and Windows nodes
//     must agree, so the cluster's net-conf.json has to say 4096 and 4789.
//   - DaemonSets scheduled on Windows: which component, and whether HostProcess
//     (spec.template.spec.securityContext.windowsOptions.hostProcess, or every container's).

// Prerequisite is something a cluster lacks for Windows nodes of its design, with the fix.
type Prerequisite struct {
	// ID is stable for scripts and check: calico-strict-affinity, calico-windows-dataplane,
	// calico-service-cidrs, calico-services-endpoint, calico-encapsulation,
	// flannel-vxlan-vni, flannel-vxlan-port, flannel-backend, flannel-windows-daemonset,
	// kube-proxy-windows-daemonset, legacy-windows-daemonset.
	ID      string `json:"id"`
	Problem string `json:"problem"`
	Fix     string `json:"fix"`
	Source  string `json:"source"`
}

// Resources read for the HostProcess designs.
var (
	calicoIPAMConfigV1 = calicoGVR("ipamconfigs")
	calicoIPAMConfigV3 = schema.GroupVersionResource{Group: "projectcalico.org", Version: "v3", Resource: "ipamconfigurations"}
)

// Names the Tigera operator uses (tigera/operator pkg/render: K8sSvcEndpointConfigMapName in
// the operator's namespace).
const (
	tigeraOperatorNamespace = "tigera-operator"
	servicesEndpointMap     = "kubernetes-services-endpoint"
)

// windowsDaemonSet classifies a DaemonSet that runs on Windows nodes.
func windowsDaemonSet(ds *appsv1.DaemonSet) v1alpha1.WindowsDaemonSet {
	out := v1alpha1.WindowsDaemonSet{Namespace: ds.Namespace, Name: ds.Name, Component: "other"}
	name := strings.ToLower(ds.Name)
	switch {
	case strings.Contains(name, "kube-proxy"):
		out.Component = "kube-proxy"
	case strings.Contains(name, "flannel"):
		out.Component = "flannel"
	case strings.Contains(name, "calico-node"):
		out.Component = "calico-node"
	}
	ps := ds.Spec.Template.Spec
	if sc := ps.SecurityContext; sc != nil && sc.WindowsOptions != nil && sc.WindowsOptions.HostProcess != nil && *sc.WindowsOptions.HostProcess {
		out.HostProcess = true
	} else if len(ps.Containers) > 0 {
		// Pod-level unset: HostProcess when every container says so (all containers of a pod
		// must agree; kubernetes.io/docs/tasks/configure-pod-container/create-hostprocess-pod).
		all := true
		for _, c := range ps.Containers {
			if c.SecurityContext == nil || c.SecurityContext.WindowsOptions == nil || c.SecurityContext.WindowsOptions.HostProcess == nil || !*c.SecurityContext.WindowsOptions.HostProcess {
				all = false
			}
		}
		out.HostProcess = all
	}
	return out
}

// hostProcessFacts is what the HostProcess step learned, for the design choice.
type hostProcessFacts struct {
	installation *unstructured.Unstructured
	flannel      *flannelNetConf
	flannelSrc   string
}

func (r *reader) prereq(id, source, problem, fix string) {
	r.res.WindowsPrerequisites = append(r.res.WindowsPrerequisites, Prerequisite{ID: id, Problem: problem, Fix: fix, Source: source})
}

// readHostProcess runs after the CNI and the Nodes are read.
func (r *reader) readHostProcess(ctx context.Context) error {
	s := &r.res.Cluster.Spec
	sort.Slice(r.cni.windowsDS, func(i, j int) bool {
		a, b := r.cni.windowsDS[i], r.cni.windowsDS[j]
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	if len(r.cni.windowsDS) > 0 {
		s.Windows.DaemonSets = r.cni.windowsDS
		r.prov("spec.windows.daemonSets", "DaemonSets with nodeSelector kubernetes.io/os=windows (securityContext.windowsOptions.hostProcess)")
	}
	design := ""
	if r.cni.calicoNode != nil || r.cni.calicoPools {
		inst, err := r.getDefault(ctx, operatorGVR("installations"))
		if err != nil {
			return err
		}
		if inst != nil {
			design = string(v1alpha1.DesignCalicoHostProcess)
			if err := r.calicoWindows(ctx, inst); err != nil {
				return err
			}
		} else {
			r.note("Calico without the Tigera operator: Calico for Windows installs only through the operator (docs.tigera.io, Calico for Windows requirements); design calico/hostprocess needs it")
		}
	}
	if f := r.hp.flannel; f != nil && r.cni.flannel != nil {
		design = r.flannelWindows(f)
	}
	if design == "" {
		return nil
	}
	src := "Installation default (operator.tigera.io/v1): Calico for Windows"
	if design == string(v1alpha1.DesignFlannelHostProcess) {
		// The design replaces flannel/<backend>, which readFlannel proposed from the same
		// net-conf.json: the backend stays the cluster's (spec.linuxCNI.flannel.backend).
		src = fmt.Sprintf("%s Backend.Type %s: flanneld on Windows as a HostProcess DaemonSet", r.hp.flannelSrc, r.hp.flannel.Backend.Type)
		var keep []candidate
		for _, c := range r.fields["spec.design"] {
			if !strings.HasPrefix(c.value, "flannel/") {
				keep = append(keep, c)
			}
		}
		r.fields["spec.design"] = keep
	}
	r.add("spec.design", rankCNIConfig-5, design, src)
	r.kubeProxyWindows()
	r.apiServerFallback()
	return nil
}

// calicoWindows reads the Installation's Windows fields, the IPAM strictAffinity setting and the
// services-endpoint ConfigMap.
func (r *reader) calicoWindows(ctx context.Context, inst *unstructured.Unstructured) error {
	src := "Installation default (operator.tigera.io/v1)"
	dp, _, _ := unstructured.NestedString(inst.Object, "spec", "calicoNetwork", "windowsDataplane")
	dpSrc := src + " spec.calicoNetwork.windowsDataplane"
	if dp == "" {
		dp, dpSrc = "Disabled", src+" has no spec.calicoNetwork.windowsDataplane: the operator's default Disabled"
	}
	r.add("spec.linuxCNI.calico.windowsDataplane", rankAPIObject, dp, dpSrc)
	if dp != "HNS" {
		r.prereq("calico-windows-dataplane", dpSrc, fmt.Sprintf("windowsDataplane is %s: the operator does not deploy calico-node-windows", dp),
			"apply kubewin plan's cluster/hostprocess/calico-windows.yaml (spec.calicoNetwork.windowsDataplane: HNS and spec.windowsNodes)")
	}
	if v, ok, _ := unstructured.NestedString(inst.Object, "spec", "calicoNetwork", "bgp"); ok && v != "" {
		r.add("spec.linuxCNI.calico.bgp", rankAPIObject, v, src+" spec.calicoNetwork.bgp")
	}
	pools, _, _ := unstructured.NestedSlice(inst.Object, "spec", "calicoNetwork", "ipPools")
	for _, p := range pools {
		pm, ok := p.(map[string]any)
		if !ok {
			continue
		}
		cidr, _ := pm["cidr"].(string)
		enc, _ := pm["encapsulation"].(string)
		if ip, _, err := net.ParseCIDR(cidr); err != nil || ip.To4() == nil || enc == "" || enc == "VXLAN" || enc == "None" {
			continue
		}
		r.prereq("calico-encapsulation", src+" spec.calicoNetwork.ipPools",
			fmt.Sprintf("IPv4 pool %s uses encapsulation %s; the operator accepts Calico for Windows only with VXLAN or None", cidr, enc),
			"migrate the pool to encapsulation VXLAN (or None with BGP); Windows has no IP-in-IP and no VXLANCrossSubnet")
	}
	if cidrs, _, _ := unstructured.NestedStringSlice(inst.Object, "spec", "serviceCIDRs"); len(cidrs) == 0 {
		r.prereq("calico-service-cidrs", src+" spec.serviceCIDRs", "no serviceCIDRs: the operator refuses Calico for Windows without them",
			"apply kubewin plan's cluster/hostprocess/calico-windows.yaml (spec.serviceCIDRs)")
	}
	if err := r.readStrictAffinity(ctx); err != nil {
		return err
	}
	cm, err := r.getConfigMap(ctx, tigeraOperatorNamespace, servicesEndpointMap)
	if err != nil {
		return err
	}
	if cm == nil {
		r.prereq("calico-services-endpoint", "ConfigMap "+tigeraOperatorNamespace+"/"+servicesEndpointMap,
			"missing: calico-node-windows cannot use the kubernetes Service, and the operator refuses Windows without the API server's address",
			"apply kubewin plan's cluster/hostprocess/calico-windows.yaml (the ConfigMap with KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT)")
		return nil
	}
	host, port := cm.Data["KUBERNETES_SERVICE_HOST"], cm.Data["KUBERNETES_SERVICE_PORT"]
	if host != "" && port != "" {
		r.add("spec.networking.apiServerEndpoint", rankAPIObject+5, net.JoinHostPort(host, port),
			"ConfigMap "+tigeraOperatorNamespace+"/"+servicesEndpointMap+" KUBERNETES_SERVICE_HOST/PORT")
	}
	return nil
}

func (r *reader) readStrictAffinity(ctx context.Context) error {
	// The Calico API server's view first: where it runs it is the interface users patch.
	for _, gvr := range []schema.GroupVersionResource{calicoIPAMConfigV3, calicoIPAMConfigV1} {
		u, err := r.getDefault(ctx, gvr)
		if err != nil {
			return err
		}
		if u == nil {
			continue
		}
		src := fmt.Sprintf("%s default (%s/%s) spec.strictAffinity", u.GetKind(), gvr.Group, gvr.Version)
		v, _, _ := unstructured.NestedBool(u.Object, "spec", "strictAffinity")
		r.add("spec.linuxCNI.calico.strictAffinity", rankAPIObject, strconv.FormatBool(v), src)
		if !v {
			r.prereq("calico-strict-affinity", src, "strictAffinity is false: Linux nodes may borrow addresses from a Windows node's blocks",
				"apply kubewin plan's cluster/hostprocess/calico-windows.yaml (IPAMConfig default spec.strictAffinity: true), or kubectl patch ipamconfigurations default --type merge --patch='{\"spec\": {\"strictAffinity\": true}}'")
		}
		return nil
	}
	src := "no IPAMConfig default (crd.projectcalico.org/v1 or projectcalico.org/v3): Calico's default strictAffinity false"
	r.add("spec.linuxCNI.calico.strictAffinity", rankAPIObject, "false", src)
	r.prereq("calico-strict-affinity", src, "strictAffinity is false: Linux nodes may borrow addresses from a Windows node's blocks",
		"apply kubewin plan's cluster/hostprocess/calico-windows.yaml (IPAMConfig default spec.strictAffinity: true)")
	return nil
}

// flannelWindows checks net-conf.json against what flanneld on Windows accepts and returns the
// design: flannel/hostprocess, the maintained path, unless Windows nodes already run flannel
// another way (no HostProcess flannel DaemonSet), which the existing design then describes.
func (r *reader) flannelWindows(f *flannelNetConf) string {
	src := r.hp.flannelSrc
	switch f.Backend.Type {
	case "vxlan":
		if f.Backend.VNI < 4096 {
			what := fmt.Sprintf("VNI %d", f.Backend.VNI)
			if f.Backend.VNI == 0 {
				what = "no VNI (flannel's Linux default 1; on Windows 4096)"
			}
			r.prereq("flannel-vxlan-vni", src+" Backend.VNI", what+": flanneld on Windows needs 4096 or more, and Linux and Windows nodes must use the same VNI",
				`set "VNI": 4096 in net-conf.json's Backend and restart flannel on the Linux nodes (they recreate their VXLAN device as flannel.4096)`)
		}
		if f.Backend.Port != 4789 {
			what := fmt.Sprintf("port %d", f.Backend.Port)
			if f.Backend.Port == 0 {
				what = "no Port (the Linux kernel's default 8472; on Windows 4789)"
			}
			r.prereq("flannel-vxlan-port", src+" Backend.Port", what+": flanneld on Windows accepts only UDP 4789, and Linux and Windows nodes must use the same port",
				`set "Port": 4789 in net-conf.json's Backend and restart flannel on the Linux nodes`)
		}
	case "host-gw":
	default:
		r.prereq("flannel-backend", src+" Backend.Type", fmt.Sprintf("backend %s has no Windows counterpart", f.Backend.Type),
			"flannel on Windows runs the vxlan or host-gw backend; the cluster's backend must be one of them")
		return ""
	}
	var hpc, legacy bool
	for _, ds := range r.cni.windowsDS {
		if ds.Component != "flannel" {
			continue
		}
		if ds.HostProcess {
			hpc = true
		} else {
			legacy = true
			r.prereq("legacy-windows-daemonset", "DaemonSet "+ds.Namespace+"/"+ds.Name,
				"flannel runs on Windows in a DaemonSet that is not HostProcess (sig-windows-tools' removed, unmaintained examples)",
				"replace it with kubewin plan's cluster/hostprocess/flannel-windows.yaml")
		}
	}
	if !hpc && (legacy || r.windowsNodes > 0) {
		// Windows nodes already run flanneld (as a service, or in a DaemonSet that is not
		// HostProcess): the design kubewin had for them describes what runs.
		r.note("flannel design %s describes the Windows nodes already joined; design %s (flanneld as a HostProcess DaemonSet) is the maintained path",
			"flannel/"+f.Backend.Type, v1alpha1.DesignFlannelHostProcess)
		return ""
	}
	if v := flannelRelease(r.cni.flannel); v != "" {
		// flannel-io/flannel publishes flanneld.exe with every release; Windows and Linux nodes
		// should run the same one (the issue 26 field report: sig-windows-tools pinned v0.21
		// while clusters ran v0.26).
		r.note("the cluster runs flannel %s (DaemonSet %s/%s); flanneld.exe on Windows nodes should be the same release",
			v, r.cni.flannel.Namespace, r.cni.flannel.Name)
	}
	if !hpc {
		r.prereq("flannel-windows-daemonset", "DaemonSets with nodeSelector kubernetes.io/os=windows",
			"no flannel DaemonSet for Windows nodes", "apply kubewin plan's cluster/hostprocess/flannel-windows.yaml")
	}
	return string(v1alpha1.DesignFlannelHostProcess)
}

// kubeProxyWindows names a missing or non-HostProcess Windows kube-proxy.
func (r *reader) kubeProxyWindows() {
	found := false
	for _, ds := range r.cni.windowsDS {
		if ds.Component != "kube-proxy" {
			continue
		}
		if ds.HostProcess {
			found = true
		} else {
			r.prereq("legacy-windows-daemonset", "DaemonSet "+ds.Namespace+"/"+ds.Name,
				"kube-proxy runs on Windows in a DaemonSet that is not HostProcess", "replace it with kubewin plan's cluster/hostprocess/kube-proxy-windows.yaml")
		}
	}
	if !found {
		r.prereq("kube-proxy-windows-daemonset", "DaemonSets with nodeSelector kubernetes.io/os=windows",
			"no HostProcess kube-proxy DaemonSet for Windows nodes: Services do not work on them",
			"apply kubewin plan's cluster/hostprocess/kube-proxy-windows.yaml")
	}
}

// apiServerFallback: the HostProcess designs need the API server's address; without a better
// source it is the one discover itself talked to.
func (r *reader) apiServerFallback() {
	u, err := url.Parse(r.host)
	if err != nil || u.Hostname() == "" {
		return
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	r.add("spec.networking.apiServerEndpoint", rankNodes+10, net.JoinHostPort(u.Hostname(), port),
		"the API server URL discover used (check that Windows nodes reach it)")
}

// flannelRelease is the tag of the flanneld image of a flannel DaemonSet ("v0.27.0"), or "".
func flannelRelease(ds *appsv1.DaemonSet) string {
	if ds == nil {
		return ""
	}
	for _, c := range ds.Spec.Template.Spec.Containers {
		img := c.Image
		if i := strings.LastIndex(img, "@"); i >= 0 {
			img = img[:i]
		}
		slash := strings.LastIndex(img, "/")
		colon := strings.LastIndex(img, ":")
		if colon > slash && strings.Contains(img[slash+1:colon], "flannel") && !strings.Contains(img[slash+1:colon], "cni-plugin") {
			return img[colon+1:]
		}
	}
	return ""
}
