package discover

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/pager"

	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// Labels and annotations read from Node objects.
const (
	labelWindowsBuild     = "node.kubernetes.io/windows-build"
	labelOSBeta           = "beta.kubernetes.io/os"
	labelArchBeta         = "beta.kubernetes.io/arch"
	labelControlPlane     = "node-role.kubernetes.io/control-plane"
	labelMaster           = "node-role.kubernetes.io/master"
	labelLegacyRole       = "kubernetes.io/role"
	annotationCalicoIPv4  = "projectcalico.org/IPv4Address"
	labelKopsIG           = "kops.k8s.io/instancegroup"
	labelEKSNodegroup     = "eks.amazonaws.com/nodegroup"
	labelEksctlCluster    = "alpha.eksctl.io/cluster-name"
	labelAKSCluster       = "kubernetes.azure.com/cluster"
	labelGKENodepool      = "cloud.google.com/gke-nodepool"
	windowsTaintKey       = "os"
	windowsTaintValue     = "windows"
	nodeFieldSourceLabels = "Node label "
)

// nodeStats aggregates what thousands of nodes say about the cluster, so that per-node facts
// need not be kept.
type nodeStats struct {
	total, windows      int
	windowsNames        []string
	runtimes            map[string]int // containerd, docker, cri-o
	runtimeVersions     map[string]int // containerd://2.1.4
	kubeletVersions     map[string]int
	maskSizes           map[int]int
	tainted, untainted  int
	providers           map[string]int // aws, azure, gce, ...
	labelled            map[string]int // provider label -> nodes
	eksctlCluster       string
	missingNICName      []string
	missingPrefix       []string
	missingIP           []string
	missingWindowsBuild []string
	podCIDRs            []nodeCIDR
	// notAMD64 holds the nodes of every architecture but amd64 (kubernetes.io/arch), by
	// architecture; windowsNotAMD64 the Windows ones among them.
	notAMD64        map[string][]string
	windowsNotAMD64 []string
}

type nodeCIDR struct{ node, cidr string }

func (r *reader) readNodes(ctx context.Context) error {
	st := &nodeStats{runtimes: map[string]int{}, runtimeVersions: map[string]int{}, kubeletVersions: map[string]int{},
		maskSizes: map[int]int{}, providers: map[string]int{}, labelled: map[string]int{}, notAMD64: map[string][]string{}}
	p := pager.New(pager.SimplePageFunc(func(opts metav1.ListOptions) (runtime.Object, error) {
		return r.cs.CoreV1().Nodes().List(ctx, opts)
	}))
	p.PageSize = r.opts.PageSize
	// One page in flight while the previous one is processed, not the default ten.
	p.PageBufferSize = 1
	// Never fall back to one unpaginated list of every node.
	p.FullListIfExpired = false
	err := p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		r.node(obj.(*corev1.Node), st)
		return nil
	})
	if gone, err := r.absent(err, "list", "nodes", "", ""); gone {
		return err
	}
	r.nodeAggregates(st)
	return nil
}

func (r *reader) prov(path, source string) {
	r.res.Provenance[path] = Provenance{Source: source}
}

func (r *reader) node(n *corev1.Node, st *nodeStats) {
	st.total++
	out := v1alpha1.Node{Name: n.Name}
	base := "spec.nodes[" + n.Name + "]."

	switch {
	case n.Labels[corev1.LabelOSStable] != "":
		out.OS = v1alpha1.OS(n.Labels[corev1.LabelOSStable])
		r.prov(base+"os", nodeFieldSourceLabels+corev1.LabelOSStable)
	case n.Labels[labelOSBeta] != "":
		out.OS = v1alpha1.OS(n.Labels[labelOSBeta])
		r.prov(base+"os", nodeFieldSourceLabels+labelOSBeta)
	default:
		out.OS = v1alpha1.OS(n.Status.NodeInfo.OperatingSystem)
		r.prov(base+"os", "Node status.nodeInfo.operatingSystem")
	}

	out.Role = v1alpha1.RoleWorker
	roleSrc := "Node has no control-plane role label"
	for _, l := range []string{labelControlPlane, labelMaster} {
		if _, ok := n.Labels[l]; ok {
			out.Role, roleSrc = v1alpha1.RoleControlPlane, nodeFieldSourceLabels+l
			break
		}
	}
	if out.Role == v1alpha1.RoleWorker && n.Labels[labelLegacyRole] == "master" {
		out.Role, roleSrc = v1alpha1.RoleControlPlane, nodeFieldSourceLabels+labelLegacyRole+"=master"
	}
	r.prov(base+"role", roleSrc)

	if arch := nodeArch(n); arch != "" && arch != "amd64" {
		st.notAMD64[arch] = append(st.notAMD64[arch], n.Name)
		if out.OS == v1alpha1.OSWindows {
			st.windowsNotAMD64 = append(st.windowsNotAMD64, n.Name)
		}
	}

	if out.OS == v1alpha1.OSWindows {
		st.windows++
		st.windowsNames = append(st.windowsNames, n.Name)
		r.windowsNode(n, &out, base, st)
	}

	if cidr := nodePodCIDR(n); cidr != "" {
		out.PodCIDR = cidr
		r.prov(base+"podCIDR", "Node spec.podCIDRs")
		st.podCIDRs = append(st.podCIDRs, nodeCIDR{n.Name, cidr})
		if p, err := netip.ParsePrefix(cidr); err == nil {
			st.maskSizes[p.Bits()]++
		}
	}

	r.nodeNIC(n, &out, base, st)

	if rt := n.Status.NodeInfo.ContainerRuntimeVersion; rt != "" {
		name, _, _ := strings.Cut(rt, "://")
		st.runtimes[name]++
		st.runtimeVersions[rt]++
	}
	if v := n.Status.NodeInfo.KubeletVersion; v != "" {
		st.kubeletVersions[v]++
	}
	if scheme, _, ok := strings.Cut(n.Spec.ProviderID, "://"); ok && scheme != "" {
		st.providers[scheme]++
	}
	for _, l := range []string{labelKopsIG, labelEKSNodegroup, labelAKSCluster, labelGKENodepool} {
		if _, ok := n.Labels[l]; ok {
			st.labelled[l]++
		}
	}
	if c := n.Labels[labelEksctlCluster]; c != "" && st.eksctlCluster == "" {
		st.eksctlCluster = c
	}
	r.res.Cluster.Spec.Nodes = append(r.res.Cluster.Spec.Nodes, out)
}

// nodeArch is the node's architecture: the kubernetes.io/arch label the scheduler matches,
// else the beta label of old kubelets, else what the kubelet reports.
func nodeArch(n *corev1.Node) string {
	for _, l := range []string{corev1.LabelArchStable, labelArchBeta} {
		if a := n.Labels[l]; a != "" {
			return a
		}
	}
	return n.Status.NodeInfo.Architecture
}

// nodePodCIDR is the node's IPv4 pod CIDR (spec.podCIDRs, or spec.podCIDR on old objects).
func nodePodCIDR(n *corev1.Node) string {
	cidrs := n.Spec.PodCIDRs
	if len(cidrs) == 0 && n.Spec.PodCIDR != "" {
		cidrs = []string{n.Spec.PodCIDR}
	}
	for _, c := range cidrs {
		if p, err := netip.ParsePrefix(c); err == nil && p.Addr().Is4() {
			return p.Masked().String()
		}
	}
	return ""
}

func (r *reader) windowsNode(n *corev1.Node, out *v1alpha1.Node, base string, st *nodeStats) {
	label := n.Labels[labelWindowsBuild]
	kernel := windowsBuildOfKernel(n.Status.NodeInfo.KernelVersion)
	switch {
	case label != "":
		out.WindowsBuild = label
		r.prov(base+"windowsBuild", nodeFieldSourceLabels+labelWindowsBuild)
		if kernel != "" && kernel != label {
			r.res.Conflicts = append(r.res.Conflicts, Conflict{Field: base + "windowsBuild", Chosen: label, Values: []SourcedValue{
				{Value: label, Source: nodeFieldSourceLabels + labelWindowsBuild},
				{Value: kernel, Source: "Node status.nodeInfo.kernelVersion " + n.Status.NodeInfo.KernelVersion},
			}})
		}
	case kernel != "":
		out.WindowsBuild = kernel
		r.prov(base+"windowsBuild", "Node status.nodeInfo.kernelVersion")
	default:
		st.missingWindowsBuild = append(st.missingWindowsBuild, n.Name)
	}
	tainted := false
	for _, t := range n.Spec.Taints {
		if t.Key == windowsTaintKey && t.Value == windowsTaintValue && t.Effect == corev1.TaintEffectNoSchedule {
			tainted = true
		}
	}
	if tainted {
		st.tainted++
	} else {
		st.untainted++
	}
}

// windowsBuildOfKernel turns a Windows kernelVersion (10.0.17763.2686) into the build
// (10.0.17763) that the node.kubernetes.io/windows-build label carries.
func windowsBuildOfKernel(k string) string {
	parts := strings.Split(strings.TrimSpace(k), ".")
	if len(parts) < 3 {
		return ""
	}
	for _, p := range parts[:3] {
		if _, err := strconv.Atoi(p); err != nil {
			return ""
		}
	}
	return strings.Join(parts[:3], ".")
}

// nodeNIC describes the NIC that holds the node's InternalIP (kubelet --node-ip), the cluster
// NIC. The API does not carry NIC names or prefix lengths; they come from CNI settings that pin
// an interface and from Calico's node annotation, and are otherwise reported missing.
func (r *reader) nodeNIC(n *corev1.Node, out *v1alpha1.Node, base string, st *nodeStats) {
	var ip netip.Addr
	for _, a := range n.Status.Addresses {
		if a.Type != corev1.NodeInternalIP {
			continue
		}
		if p, err := netip.ParseAddr(a.Address); err == nil && p.Is4() {
			ip = p
			break
		}
	}
	if !ip.IsValid() {
		st.missingIP = append(st.missingIP, n.Name)
		out.NICs = []v1alpha1.NIC{}
		return
	}
	nic := v1alpha1.NIC{IP: ip.String()}
	r.prov(base+"nics[0].ip", "Node status.addresses InternalIP")
	if out.OS == v1alpha1.OSLinux && r.cni.nicName != "" {
		nic.Name = r.cni.nicName
		out.ClusterNIC = r.cni.nicName
		r.prov(base+"nics[0].name", r.cni.nicSource)
		r.prov(base+"clusterNIC", r.cni.nicSource)
	} else {
		st.missingNICName = append(st.missingNICName, n.Name)
	}
	if a := n.Annotations[annotationCalicoIPv4]; a != "" {
		if p, err := netip.ParsePrefix(a); err == nil && p.Addr() == ip {
			nic.Prefix = p.Bits()
			r.prov(base+"nics[0].prefix", "Node annotation "+annotationCalicoIPv4)
		}
	}
	if nic.Prefix == 0 {
		st.missingPrefix = append(st.missingPrefix, n.Name)
	}
	out.NICs = []v1alpha1.NIC{nic}
}

// mostCommon returns the keys of m by descending count, ties by key.
func mostCommon[K comparable](m map[K]int, less func(a, b K) bool) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return less(keys[i], keys[j])
	})
	return keys
}

func strLess(a, b string) bool { return a < b }

func (r *reader) nodeAggregates(st *nodeStats) {
	if st.total == 0 {
		r.note("the cluster has no Node objects")
		return
	}
	of := func(n int) string { return fmt.Sprintf("%d of %d Nodes", n, st.total) }

	for i, name := range mostCommon(st.runtimes, strLess) {
		r.add("spec.containerRuntime.name", rankNodes+i, name, of(st.runtimes[name])+" (status.nodeInfo.containerRuntimeVersion)")
		if name == "docker" {
			r.note("%s run Docker; the kubelet has had no Docker support since 1.24 (dockershim removed)", of(st.runtimes[name]))
		}
	}
	if versions := mostCommon(st.runtimeVersions, strLess); len(versions) > 0 {
		top := versions[0]
		name, ver, _ := strings.Cut(top, "://")
		if name == r.value("spec.containerRuntime.name") {
			r.add("spec.containerRuntime.version", rankNodes, strings.TrimPrefix(ver, "v"), of(st.runtimeVersions[top])+" report "+top)
		}
		if len(versions) > 1 {
			r.note("container runtimes in use: %s", countList(st.runtimeVersions, versions))
		}
	}
	if kv := mostCommon(st.kubeletVersions, strLess); len(kv) > 1 {
		r.note("kubelet versions in use: %s", countList(st.kubeletVersions, kv))
	}
	if sizes := mostCommon(st.maskSizes, func(a, b int) bool { return a < b }); len(sizes) == 1 {
		n := st.maskSizes[sizes[0]]
		r.add("spec.networking.nodeCIDRMaskSize", rankNodes, strconv.Itoa(sizes[0]), fmt.Sprintf("inferred: %s have a /%d spec.podCIDR", of(n), sizes[0]))
	} else if len(sizes) > 1 {
		r.note("Node pod CIDRs have different sizes: %v", sizes)
	}

	// The spec has no architecture field. What kubewin renders for Linux nodes is architecture
	// neutral (sysctls, modules, containerd config, keepalived, routes), while Windows nodes are
	// planned as amd64 (RuntimeClasses, binaries and images are windows/amd64). Other
	// architectures are pointed out; only Windows ones are a problem (next note).
	if len(st.notAMD64) > 0 {
		archs := make([]string, 0, len(st.notAMD64))
		for a := range st.notAMD64 {
			archs = append(archs, a)
		}
		sort.Strings(archs)
		for _, a := range archs {
			names := st.notAMD64[a]
			sort.Strings(names)
			verb := "are"
			if len(names) == 1 {
				verb = "is"
			}
			r.note("%s %s %s (%s): %s", of(len(names)), verb, a, corev1.LabelArchStable, abbreviate(names, 10))
		}
	}
	if len(st.windowsNotAMD64) > 0 {
		sort.Strings(st.windowsNotAMD64)
		r.note("Windows %s not amd64: %s; kubewin supports Windows nodes on amd64 only", pluralNodesIs(len(st.windowsNotAMD64)), abbreviate(st.windowsNotAMD64, 10))
	}

	r.windowsNodes = st.windows
	if st.windows > 0 {
		r.note("%s already joined: %s", cliutil.Plural(st.windows, "Windows node"), abbreviate(st.windowsNames, 10))
		if len(r.cni.windows) > 0 {
			sort.Strings(r.cni.windows)
			r.note("DaemonSets for Windows nodes: %s", strings.Join(r.cni.windows, ", "))
		}
		if st.tainted > 0 {
			r.add("spec.windows.taint", rankNodes, "true", fmt.Sprintf("%d of %d Windows Nodes have the taint os=windows:NoSchedule", st.tainted, st.windows))
		}
		if st.untainted > 0 {
			r.add("spec.windows.taint", rankNodes+1, "false", fmt.Sprintf("%d of %d Windows Nodes lack the taint os=windows:NoSchedule", st.untainted, st.windows))
		}
	}

	if st.eksctlCluster != "" {
		r.add("metadata.name", rankKubeadm+5, st.eksctlCluster, "Node label "+labelEksctlCluster)
	}
	for _, lt := range []struct{ label, tool string }{
		{labelKopsIG, "kops"}, {labelEKSNodegroup, "eks"}, {labelAKSCluster, "aks"}, {labelGKENodepool, "gke"},
	} {
		if n := st.labelled[lt.label]; n > 0 {
			r.evidence(lt.tool, "%s labelled %s", of(n), lt.label)
		}
	}
	for _, scheme := range mostCommon(st.providers, strLess) {
		tool := map[string]string{"aws": "aws", "azure": "aks", "gce": "gke"}[scheme]
		if tool == "" {
			continue
		}
		r.evidence(tool, "%s have providerID %s://", of(st.providers[scheme]), scheme)
	}

	if len(st.missingIP) > 0 {
		r.res.Missing = append(r.res.Missing, Missing{Field: "spec.nodes[*].nics", Nodes: st.missingIP,
			Supply: "the node's NICs (name, ip, prefix): the Node reports no IPv4 InternalIP"})
	}
	if len(st.missingNICName) > 0 {
		r.res.Missing = append(r.res.Missing, Missing{Field: "spec.nodes[*].nics[0].name", Nodes: st.missingNICName,
			Supply: "the name of the interface holding the node's InternalIP (its cluster NIC), e.g. eth1 or \"Ethernet 2\"; the API does not carry interface names"})
	}
	if len(st.missingPrefix) > 0 {
		r.res.Missing = append(r.res.Missing, Missing{Field: "spec.nodes[*].nics[0].prefix", Nodes: st.missingPrefix,
			Supply: "the prefix length of the cluster NIC's subnet (e.g. 24); the API carries only the address"})
	}
	if len(st.missingWindowsBuild) > 0 {
		r.res.Missing = append(r.res.Missing, Missing{Field: "spec.nodes[*].windowsBuild", Nodes: st.missingWindowsBuild,
			Supply: "the Windows build, e.g. 10.0.17763: the Node has no " + labelWindowsBuild + " label and no kernelVersion"})
	}
	r.nodePodCIDRs = st.podCIDRs
}

func pluralNodesIs(n int) string {
	if n == 1 {
		return "node is"
	}
	return "nodes are"
}

func countList(m map[string]int, keys []string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s (%d)", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func abbreviate(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:max], ", ") + fmt.Sprintf(" and %d more", len(names)-max)
}
