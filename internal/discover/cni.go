package discover

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// cniFacts is what the DaemonSets and CNI objects say about the Linux CNI.
type cniFacts struct {
	calicoNode  *appsv1.DaemonSet
	flannel     *appsv1.DaemonSet
	canal       *appsv1.DaemonSet
	calicoPools bool // IPPool objects were read
	// nicName is the interface the CNI is pinned to on Linux nodes (calico-node
	// IP_AUTODETECTION_METHOD=interface=NAME, flanneld --iface=NAME), the cluster NIC.
	nicName, nicSource string
	windows            []string // DaemonSets that run on Windows nodes
	windowsDS          []v1alpha1.WindowsDaemonSet
}

// Calico's Kubernetes-datastore resources (group crd.projectcalico.org, version v1).
func calicoGVR(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "crd.projectcalico.org", Version: "v1", Resource: resource}
}

// otherCNIs names DaemonSets of CNIs kubewin does not configure (linuxCNI.type other).
func otherCNI(name string) string {
	switch {
	case name == "cilium":
		return "cilium"
	case name == "weave-net":
		return "weave"
	case name == "kube-router":
		return "kube-router"
	case name == "antrea-agent":
		return "antrea"
	case name == "aws-node":
		return "aws-vpc-cni"
	case name == "azure-cns":
		return "azure-cni"
	case name == "kube-ovn-cni":
		return "kube-ovn"
	case name == "ovnkube-node":
		return "ovn-kubernetes"
	case strings.HasPrefix(name, "gke-") && strings.Contains(name, "netd") || name == "netd":
		return "gke-netd"
	}
	return ""
}

func (r *reader) readDaemonSets(ctx context.Context) error {
	opts := metav1.ListOptions{Limit: r.opts.PageSize}
	for {
		list, err := r.cs.AppsV1().DaemonSets(metav1.NamespaceAll).List(ctx, opts)
		if gone, err := r.absent(err, "list", "daemonsets.apps", "", ""); gone {
			return err
		}
		for i := range list.Items {
			r.daemonSet(&list.Items[i])
		}
		if list.Continue == "" {
			return nil
		}
		opts.Continue = list.Continue
	}
}

func (r *reader) daemonSet(ds *appsv1.DaemonSet) {
	ref := fmt.Sprintf("DaemonSet %s/%s", ds.Namespace, ds.Name)
	if runsOnWindows(ds) {
		r.cni.windows = append(r.cni.windows, ds.Namespace+"/"+ds.Name)
		r.cni.windowsDS = append(r.cni.windowsDS, windowsDaemonSet(ds))
		return
	}
	name := ds.Name
	switch {
	case name == "calico-node":
		r.cni.calicoNode = ds
		r.add("spec.linuxCNI.type", rankCNIConfig-10, "calico", ref)
		if ds.Namespace == "calico-system" {
			r.note("%s is managed by the Tigera operator (Installation resource)", ref)
		}
	case name == "canal":
		r.cni.canal = ds
		r.add("spec.linuxCNI.type", rankCNIConfig-10, "flannel", ref+" (Canal: flannel networking, Calico policy)")
	case strings.Contains(name, "flannel"):
		r.cni.flannel = ds
		r.add("spec.linuxCNI.type", rankCNIConfig-10, "flannel", ref)
	case name == "kube-proxy":
		for _, c := range ds.Spec.Template.Spec.Containers {
			flags := componentArgs("kube-proxy", c.Command, c.Args)
			if v, ok := flags["cluster-cidr"]; ok {
				r.addCIDRs("spec.networking.podCIDRs", rankKubeProxyPod, v, ref+" --cluster-cidr", false)
			}
		}
	case name == "nodelocaldns":
		r.evidence("kubespray", "%s (node-local DNS cache)", ref)
	case name == "kops-controller":
		r.evidence("kops", "%s", ref)
	default:
		if other := otherCNI(name); other != "" {
			r.add("spec.linuxCNI.type", rankCNIConfig-10, "other", fmt.Sprintf("%s (%s)", ref, other))
			switch other {
			case "aws-vpc-cni":
				r.evidence("eks", "%s", ref)
			case "azure-cni":
				r.evidence("aks", "%s", ref)
			case "gke-netd":
				r.evidence("gke", "%s", ref)
			}
			if other == "cilium" {
				r.note("%s: Cilium does not run on Windows; Windows nodes need one of kubewin's designs beside it", ref)
			}
		}
	}
}

// runsOnWindows reports whether a DaemonSet's pods are scheduled on Windows nodes only.
func runsOnWindows(ds *appsv1.DaemonSet) bool {
	sel := ds.Spec.Template.Spec.NodeSelector
	if sel[corev1.LabelOSStable] == "windows" || sel["beta.kubernetes.io/os"] == "windows" {
		return true
	}
	if a := ds.Spec.Template.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, e := range t.MatchExpressions {
				if e.Key == corev1.LabelOSStable && e.Operator == corev1.NodeSelectorOpIn && len(e.Values) == 1 && e.Values[0] == "windows" {
					return true
				}
			}
		}
	}
	return false
}

func containerEnv(ds *appsv1.DaemonSet, container string) map[string]string {
	env := map[string]string{}
	for _, c := range ds.Spec.Template.Spec.Containers {
		if c.Name != container {
			continue
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				env[e.Name] = e.Value
			}
		}
	}
	return env
}

// ifaceName accepts a plain interface name; regexes, lists and addresses are not one NIC name.
var ifaceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,30}$`)

func plainInterface(v string) (string, bool) {
	if !ifaceName.MatchString(v) {
		return "", false
	}
	if _, err := netip.ParseAddr(v); err == nil {
		return "", false
	}
	return v, true
}

func (r *reader) readCNI(ctx context.Context) error {
	if err := r.readCalicoPools(ctx); err != nil {
		return err
	}
	if err := r.readCalicoReservations(ctx); err != nil {
		return err
	}
	if r.cni.calicoNode != nil || r.cni.calicoPools {
		if err := r.readCalicoRouting(ctx); err != nil {
			return err
		}
	}
	if ds := r.cni.calicoNode; ds != nil {
		env := containerEnv(ds, "calico-node")
		ref := fmt.Sprintf("DaemonSet %s/%s calico-node env", ds.Namespace, ds.Name)
		if m := env["IP_AUTODETECTION_METHOD"]; strings.HasPrefix(m, "interface=") {
			if n, ok := plainInterface(strings.TrimPrefix(m, "interface=")); ok {
				r.cni.nicName, r.cni.nicSource = n, fmt.Sprintf("%s IP_AUTODETECTION_METHOD=%s", ref, m)
			}
		}
		// The usual fix for Felix's loose-RPF fatal is this env on the DaemonSet
		// (kubectl set env daemonset/calico-node FELIX_IGNORELOOSERPF=true).
		if v, err := strconv.ParseBool(env["FELIX_IGNORELOOSERPF"]); err == nil {
			r.add("spec.linuxCNI.calico.ignoreLooseRPF", rankCNIConfig, strconv.FormatBool(v), ref+" FELIX_IGNORELOOSERPF")
		}
		if !r.cni.calicoPools {
			// The env only seeds the first pool; it is read when the pools themselves are not.
			r.addCIDRs("spec.linuxCNI.calico.ipPools", rankCNIConfig, env["CALICO_IPV4POOL_CIDR"], ref+" CALICO_IPV4POOL_CIDR", false)
			if v := env["CALICO_IPV4POOL_IPIP"]; v != "" {
				r.add("spec.linuxCNI.calico.ipipMode", rankCNIConfig, calicoMode(v), ref+" CALICO_IPV4POOL_IPIP")
			}
			if v := env["CALICO_IPV4POOL_BLOCK_SIZE"]; v != "" {
				r.add("spec.linuxCNI.calico.blockSize", rankCNIConfig, v, ref+" CALICO_IPV4POOL_BLOCK_SIZE")
			}
		}
	}
	for _, ds := range []*appsv1.DaemonSet{r.cni.flannel, r.cni.canal} {
		if ds == nil {
			continue
		}
		if err := r.readFlannel(ctx, ds); err != nil {
			return err
		}
	}
	return nil
}

// calicoMode maps the calico-node env spellings (always, cross-subnet, off) to IPPool ones.
func calicoMode(v string) string {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "always":
		return "Always"
	case "crosssubnet", "cross-subnet":
		return "CrossSubnet"
	case "never", "off", "":
		return "Never"
	}
	return v
}

func (r *reader) listCalico(ctx context.Context, resource string, each func(*unstructured.Unstructured)) (bool, error) {
	opts := metav1.ListOptions{Limit: r.opts.PageSize}
	for {
		list, err := r.dyn.Resource(calicoGVR(resource)).List(ctx, opts)
		if gone, err := r.absent(err, "list", resource+".crd.projectcalico.org", "", ""); gone {
			return false, err
		}
		for i := range list.Items {
			each(&list.Items[i])
		}
		if list.GetContinue() == "" {
			return true, nil
		}
		opts.Continue = list.GetContinue()
	}
}

func (r *reader) readCalicoPools(ctx context.Context) error {
	type pool struct {
		name, cidr, ipip, vxlan string
		block                   int64
	}
	var pools []pool
	found, err := r.listCalico(ctx, "ippools", func(u *unstructured.Unstructured) {
		disabled, _, _ := unstructured.NestedBool(u.Object, "spec", "disabled")
		cidr, _, _ := unstructured.NestedString(u.Object, "spec", "cidr")
		p, perr := netip.ParsePrefix(cidr)
		if disabled || perr != nil || !p.Addr().Is4() {
			return
		}
		ipip, _, _ := unstructured.NestedString(u.Object, "spec", "ipipMode")
		vxlan, _, _ := unstructured.NestedString(u.Object, "spec", "vxlanMode")
		block, _, _ := unstructured.NestedInt64(u.Object, "spec", "blockSize")
		pools = append(pools, pool{name: u.GetName(), cidr: p.Masked().String(), ipip: ipip, vxlan: vxlan, block: block})
	})
	if err != nil || !found || len(pools) == 0 {
		return err
	}
	r.cni.calicoPools = true
	sort.Slice(pools, func(i, j int) bool { return pools[i].name < pools[j].name })
	var cidrs, names []string
	for _, p := range pools {
		cidrs = append(cidrs, p.cidr)
		names = append(names, p.name)
	}
	src := "IPPools " + strings.Join(names, ", ") + " (crd.projectcalico.org/v1)"
	r.add("spec.linuxCNI.type", rankAPIObject, "calico", src)
	r.add("spec.linuxCNI.calico.ipPools", rankAPIObject, strings.Join(cidrs, ","), src+" spec.cidr")
	for _, p := range pools {
		psrc := fmt.Sprintf("IPPool %s (crd.projectcalico.org/v1)", p.name)
		// An unset ipipMode is Never (Calico's documented default).
		r.add("spec.linuxCNI.calico.ipipMode", rankAPIObject, calicoMode(p.ipip), psrc+" spec.ipipMode")
		block := p.block
		if block == 0 {
			block = 26 // Calico's documented default for IPv4 pools
		}
		r.add("spec.linuxCNI.calico.blockSize", rankAPIObject, strconv.FormatInt(block, 10), psrc+" spec.blockSize")
		if m := calicoMode(p.vxlan); m != "Never" {
			r.add("spec.linuxCNI.calico.vxlanMode", rankAPIObject, m, psrc+" spec.vxlanMode")
			r.note("%s uses VXLAN (vxlanMode %s); only Calico for Windows (design calico/hostprocess) joins Windows nodes to Calico's VXLAN", psrc, m)
		}
	}
	return nil
}

func (r *reader) readCalicoReservations(ctx context.Context) error {
	var names []string
	var cidrs []string
	found, err := r.listCalico(ctx, "ipreservations", func(u *unstructured.Unstructured) {
		names = append(names, u.GetName())
		rc, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "reservedCIDRs")
		cidrs = append(cidrs, rc...)
	})
	if err != nil || !found || len(names) == 0 {
		return err
	}
	sort.Strings(names)
	src := "IPReservations " + strings.Join(names, ", ") + " (crd.projectcalico.org/v1)"
	r.add("spec.linuxCNI.calico.reservation", rankAPIObject, "IPReservation", src)
	r.note("%s reserve %s", src, strings.Join(cidrs, ", "))
	return nil
}

func (r *reader) readFlannel(ctx context.Context, ds *appsv1.DaemonSet) error {
	ref := fmt.Sprintf("DaemonSet %s/%s", ds.Namespace, ds.Name)
	for _, c := range ds.Spec.Template.Spec.Containers {
		flags := componentArgs("flanneld", c.Command, c.Args)
		if v, ok := flags["iface"]; ok {
			if n, ok := plainInterface(v); ok && r.cni.nicName == "" {
				r.cni.nicName, r.cni.nicSource = n, fmt.Sprintf("%s flanneld --iface=%s", ref, v)
			}
		}
	}
	cmName, key := "kube-flannel-cfg", "net-conf.json"
	if ds == r.cni.canal {
		cmName = "canal-config"
	}
	cm, err := r.getConfigMap(ctx, ds.Namespace, cmName)
	if cm == nil {
		return err
	}
	data, ok := cm.Data[key]
	if !ok {
		r.note("ConfigMap %s/%s has no %s", ds.Namespace, cmName, key)
		return nil
	}
	nc, err := parseFlannelNetConf(data)
	if err != nil {
		r.note("ConfigMap %s/%s: %v; ignored", ds.Namespace, cmName, err)
		return nil
	}
	src := fmt.Sprintf("ConfigMap %s/%s (%s", ds.Namespace, cmName, key)
	if ds == r.cni.flannel {
		r.hp.flannel, r.hp.flannelSrc = nc, fmt.Sprintf("ConfigMap %s/%s %s", ds.Namespace, cmName, key)
	}
	if nc.Network != "" {
		r.add("spec.networking.podCIDRs", rankCNIConfig, nc.Network, src+" Network)")
	}
	r.add("spec.linuxCNI.flannel.backend", rankCNIConfig, nc.Backend.Type, src+" Backend.Type)")
	switch nc.Backend.Type {
	case "host-gw":
		r.add("spec.design", rankCNIConfig, "flannel/host-gw", src+" Backend.Type host-gw)")
	case "vxlan":
		r.add("spec.design", rankCNIConfig, "flannel/vxlan", src+" Backend.Type vxlan)")
		// Absent values are flannel's Linux defaults (VNI 1, port 8472), which Windows nodes
		// cannot use; they are reported as they are so that check flags them.
		vni, vsrc := nc.Backend.VNI, src+" Backend.VNI)"
		if vni == 0 {
			vni, vsrc = 1, src+" has no Backend.VNI: flannel's default 1)"
		}
		port, psrc := nc.Backend.Port, src+" Backend.Port)"
		if port == 0 {
			port, psrc = 8472, src+" has no Backend.Port: the Linux kernel's default 8472)"
		}
		r.add("spec.linuxCNI.flannel.vni", rankCNIConfig, strconv.Itoa(vni), vsrc)
		r.add("spec.linuxCNI.flannel.port", rankCNIConfig, strconv.Itoa(port), psrc)
	default:
		r.note("%s Backend.Type %s) has no Windows counterpart; kubewin's flannel designs need host-gw or vxlan", src, nc.Backend.Type)
	}
	return nil
}
