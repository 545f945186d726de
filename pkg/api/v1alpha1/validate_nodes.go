package v1alpha1

import (
	"cmp"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	kubeletapis "k8s.io/kubelet/pkg/apis"

	"github.com/kubewin/kubewin/internal/platform"
)

func (v *validator) nodeList() {
	nodes := v.c.Spec.Nodes
	if len(nodes) == 0 {
		v.errs.addf(nodesPath, "at least one node", "missing")
		return
	}
	var podCIDRs []nodePodCIDR
	for i := range nodes {
		ni := v.node(i, &nodes[i])
		v.nodeInfos = append(v.nodeInfos, ni)
		if pc, ok := v.nodePodCIDR(ni); ok {
			podCIDRs = append(podCIDRs, pc)
		}
	}
	v.podCIDROverlaps(podCIDRs)
}

func (v *validator) node(i int, n *Node) *nodeInfo {
	ni := &nodeInfo{index: i, node: n, path: nodesPath.Index(i)}
	v.nodeName(ni)
	v.nodeOS(ni)
	if len(n.NICs) == 0 {
		v.errs.addf(ni.path.Child("nics"), "at least one NIC with name, ip and prefix", "missing")
	}
	names := map[string]int{}
	for j := range n.NICs {
		p := ni.path.Child("nics").Index(j)
		name := n.NICs[j].Name
		if first, dup := names[name]; dup && name != "" {
			v.errs.addf(p.Child("name"), "a NIC name unique within the node", "%q repeats nics[%d]", name, first)
		} else {
			names[name] = j
		}
		ni.nics = append(ni.nics, v.nic(p, &n.NICs[j]))
	}
	v.clusterNIC(ni)
	v.nodeLabels(ni)
	return ni
}

func (v *validator) nodeName(ni *nodeInfo) {
	p := ni.path.Child("name")
	const expected = "a lowercase DNS-1123 name such as node009"
	switch name := ni.node.Name; {
	case name == "":
		v.errs.addf(p, expected, "missing")
	case len(content.IsDNS1123Subdomain(name)) > 0:
		v.errs.addf(p, expected, "%q is not a valid node name", name)
	}
	if first, dup := v.nodes[ni.node.Name]; dup {
		v.errs.addf(p, "a node name unique in the cluster", "%q repeats %s", ni.node.Name, first.path)
		return
	}
	if ni.node.Name != "" {
		v.nodes[ni.node.Name] = ni
	}
}

func (v *validator) nodeOS(ni *nodeInfo) {
	n := ni.node
	if !v.oneOf(ni.path.Child("os"), string(n.OS), string(OSLinux), string(OSWindows)) {
		return
	}
	if n.Role != "" && v.oneOf(ni.path.Child("role"), string(n.Role), string(RoleControlPlane), string(RoleWorker)) &&
		n.OS == OSWindows && n.Role == RoleControlPlane {
		v.errs.addf(ni.path.Child("role"), string(RoleWorker), "a Windows node cannot be a control-plane node; the control plane runs on Linux")
	}
	if n.OS == OSLinux {
		if n.WindowsBuild != "" {
			v.errs.addf(ni.path.Child("windowsBuild"), "no windowsBuild on a Linux node", "%q is set on a Linux node", n.WindowsBuild)
		}
		return
	}
	v.windows = append(v.windows, ni)
	v.windowsBuild(ni)
}

func (v *validator) windowsBuild(ni *nodeInfo) {
	p := ni.path.Child("windowsBuild")
	s := ni.node.WindowsBuild
	if s == "" {
		v.errs.addf(p, "the node's Windows Server build, e.g. 10.0.20348 or ltsc2022", "missing")
		return
	}
	b, ok := platform.LookupWindowsBuild(s)
	if !ok {
		v.errs.addf(p, "one of "+platform.KnownWindowsBuildNames(), "%q is not a Windows Server build kubewin knows", s)
		return
	}
	if !b.SupportedByKubernetes {
		v.errs.addf(p, "a build Kubernetes supports: "+supportedWindowsBuilds(),
			"%q is %s (%s), which Kubernetes no longer supports", s, b.Name(), b.Label())
	}
}

func supportedWindowsBuilds() string {
	var names []string
	for _, b := range platform.WindowsBuilds() {
		if b.SupportedByKubernetes {
			names = append(names, fmt.Sprintf("%s (%s)", b.Label(), b.Names[1]))
		}
	}
	return strings.Join(names, ", ")
}

// nic checks one NIC and returns what later rules need, or nil when its address is unusable.
func (v *validator) nic(p fieldPath, nic *NIC) *nicInfo {
	if nic.Name == "" {
		v.errs.addf(p.Child("name"), "the interface name, e.g. eth1", "missing")
	}
	if nic.MAC != "" && !validMAC(nic.MAC) {
		v.errs.addf(p.Child("mac"), "six hex pairs such as 00-15-00-00-00-02 or 00:15:00:00:00:02", "%q is not a MAC address", nic.MAC)
	}
	prefixOK := true
	if nic.Prefix == 0 {
		v.errs.addf(p.Child("prefix"), "the subnet's prefix length, 1-32", "missing")
		prefixOK = false
	} else {
		prefixOK = v.intRange(p.Child("prefix"), nic.Prefix, 1, 32)
	}
	addr, ok := v.ipv4(p.Child("ip"), nic.IP, true)
	if !ok {
		return nil
	}
	if !addr.IsGlobalUnicast() {
		v.errs.addf(p.Child("ip"), "a unicast host address", "%s is not a unicast host address", addr)
		return nil
	}
	v.uniqueNodeIP(p.Child("ip"), addr)
	if !prefixOK {
		return nil
	}
	info := &nicInfo{name: nic.Name, path: p, addr: addr, subnet: netip.PrefixFrom(addr, nic.Prefix).Masked()}
	if why := reservedHost(addr, info.subnet); why != "" {
		v.errs.addf(p.Child("ip"), "a host address of "+info.subnet.String(), "%s is %s", addr, why)
	}
	v.disjointFromClusterRanges(p.Child("ip"), "the NIC's subnet "+info.subnet.String(), info.subnet)
	v.nicGateway(p.Child("gateway"), nic.Gateway, info)
	for k, s := range nic.DNSServers {
		v.ipv4(p.Child("dnsServers").Index(k), s, true)
	}
	return info
}

// validMAC accepts the two spellings operators copy from Windows and Linux: six hex pairs
// separated by '-' or ':'.
func validMAC(s string) bool {
	hw, err := net.ParseMAC(s)
	return err == nil && len(hw) == 6 && !strings.Contains(s, ".")
}

func (v *validator) uniqueNodeIP(p fieldPath, a netip.Addr) {
	if v.nodeIPs == nil {
		v.nodeIPs = map[netip.Addr]fieldPath{}
	}
	if first, dup := v.nodeIPs[a]; dup {
		v.errs.addf(p, "an address no other NIC has", "%s is already the address of %s", a, first)
		return
	}
	v.nodeIPs[a] = p
}

func (v *validator) nicGateway(p fieldPath, s string, nic *nicInfo) {
	gw, ok := v.ipv4(p, s, false)
	if !ok {
		return
	}
	expected := "a router address inside " + nic.subnet.String()
	switch {
	case !nic.subnet.Contains(gw):
		v.errs.addf(p, expected, "%s is outside the NIC's subnet %s", gw, nic.subnet)
	case gw == nic.addr:
		v.errs.addf(p, expected, "%s is the NIC's own address", gw)
	case reservedHost(gw, nic.subnet) != "":
		v.errs.addf(p, expected, "%s is %s", gw, reservedHost(gw, nic.subnet))
	}
}

// clusterNIC resolves which NIC is on the cluster network (the only one, or the named one).
func (v *validator) clusterNIC(ni *nodeInfo) {
	n := ni.node
	p := ni.path.Child("clusterNIC")
	var names []string
	for _, nic := range n.NICs {
		names = append(names, nic.Name)
	}
	name := n.ClusterNIC
	if name == "" {
		switch {
		case len(n.NICs) == 1:
			name = n.NICs[0].Name
		case len(n.NICs) > 1:
			v.errs.addf(p, "the NIC on the cluster network, one of "+strings.Join(names, ", "),
				"missing: the node has %d NICs", len(n.NICs))
			return
		default:
			return
		}
	}
	j := slices.Index(names, name)
	if j < 0 {
		v.errs.addf(p, "one of "+strings.Join(names, ", "), "%q is not a NIC of this node", name)
		return
	}
	ni.cluster = ni.nics[j]
}

// nodePodCIDR is a node's pod CIDR for the overlap check.
type nodePodCIDR struct {
	pathPrefix
	index int
}

func (v *validator) nodePodCIDR(ni *nodeInfo) (nodePodCIDR, bool) {
	p := ni.path.Child("podCIDR")
	pr, ok := v.cidr(p, ni.node.PodCIDR, false)
	if !ok {
		return nodePodCIDR{}, false
	}
	if len(v.podCIDRs) > 0 && !slices.ContainsFunc(v.podCIDRs, func(pc pathPrefix) bool { return containsPrefix(pc.prefix, pr) }) {
		var cidrs []string
		for _, pc := range v.podCIDRs {
			cidrs = append(cidrs, pc.prefix.String())
		}
		v.errs.addf(p, "a subnet of the pod CIDRs "+strings.Join(cidrs, ", "), "%s is outside every pod CIDR", pr)
	}
	if v.maskSize != 0 && pr.Bits() != v.maskSize {
		v.errs.addf(p, fmt.Sprintf("a /%d (networking.nodeCIDRMaskSize)", v.maskSize), "%s is a /%d", pr, pr.Bits())
	}
	return nodePodCIDR{pathPrefix{p, pr}, ni.index}, true
}

// podCIDROverlaps reports nodes whose pod CIDRs overlap. Canonical prefixes either nest or are
// disjoint, so after sorting by address each overlap shows against the widest prefix seen so far;
// that keeps a 5000-node spec at n log n.
func (v *validator) podCIDROverlaps(list []nodePodCIDR) {
	slices.SortFunc(list, func(a, b nodePodCIDR) int {
		return cmp.Or(a.prefix.Addr().Compare(b.prefix.Addr()), cmp.Compare(a.prefix.Bits(), b.prefix.Bits()),
			cmp.Compare(a.index, b.index))
	})
	var cover *nodePodCIDR
	for i := range list {
		cur := &list[i]
		if cover != nil && cover.prefix.Overlaps(cur.prefix) {
			later, earlier := cur, cover
			if later.index < earlier.index {
				later, earlier = earlier, later
			}
			how := "overlaps " + earlier.prefix.String() + ","
			if later.prefix == earlier.prefix {
				how = "is also"
			}
			v.errs.addf(later.path, "a pod CIDR no other node has", "%s %s the pod CIDR of node %q (%s)",
				later.prefix, how, v.c.Spec.Nodes[earlier.index].Name, earlier.path)
		}
		if cover == nil || lastAddr(cur.prefix).Compare(lastAddr(cover.prefix)) > 0 {
			cover = cur
		}
	}
}

func (v *validator) nodeLabels(ni *nodeInfo) {
	for key, val := range ni.node.Labels {
		p := ni.path.Child("labels").Key(key)
		if len(content.IsLabelKey(key)) > 0 {
			v.errs.addf(p, "a label key such as example.com/rack", "%q is not a valid label key", key)
			continue
		}
		if len(content.IsLabelValue(val)) > 0 {
			v.errs.addf(p, "at most 63 letters, digits, '-', '_' or '.', starting and ending alphanumeric",
				"%q is not a valid label value", val)
		}
		if restrictedLabelNamespace(key) && !kubeletapis.IsKubeletLabel(key) {
			v.errs.addf(p, "a label outside kubernetes.io and k8s.io, or under node.kubernetes.io or kubelet.kubernetes.io",
				"the kubelet refuses to set %q on its own node (--node-labels)", key)
		}
	}
}

// restrictedLabelNamespace reports whether key is in the kubernetes.io or k8s.io namespaces,
// where the NodeRestriction rules let a kubelet set only a few labels on itself.
func restrictedLabelNamespace(key string) bool {
	ns, _, found := strings.Cut(key, "/")
	if !found {
		return false
	}
	for _, r := range []string{"kubernetes.io", "k8s.io"} {
		if ns == r || strings.HasSuffix(ns, "."+r) {
			return true
		}
	}
	return false
}
