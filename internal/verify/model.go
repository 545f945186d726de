package verify

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// The model is a data-plane abstraction of the mixed cluster, built from the plan (and the spec
// for facts the plan does not carry: every NIC, default gateways, the ToR router address) and
// overridden per node by real dumps. Assumptions, stated once:
//   - L2 segments are IP subnets: NICs whose address/prefix share a network are on one segment,
//     so ARP for an address resolves only among interfaces of that subnet.
//   - Calico pods live in the node's planned pod CIDR unless a route dump shows the node's real
//     IPAM blocks; Calico masquerades pool traffic to non-pool destinations (natOutgoing) and
//     flannel masquerades traffic leaving its network (--ip-masq), as their defaults do.
//   - kube-proxy runs on every node: iptables/ipvs on Linux, winkernel on Windows.
//   - The world outside the cluster ("external") is reached through NIC default gateways; that
//     network routes back spec.networking.upstreamRoutes (default: the subnets of NICs with a
//     gateway), never pod CIDRs or the service CIDR.
//   - rp_filter comes from the plan's sysctls (net.ipv4.conf.{all,IF}.rp_filter, the larger
//     wins); an interface the plan sets none for has Options.DefaultRPFilter, "all" the
//     kernel's 0.

// Node kinds beyond the two operating systems.
const (
	osLinux    = "linux"
	osWindows  = "windows"
	osRouter   = "router"   // the ToR router of design upstream-tor/router
	osEdge     = "edge"     // the default gateways' network, toward external destinations
	osExternal = "external" // a host outside the cluster
)

// Model is the data plane of one cluster state.
type Model struct {
	Plan         *plan.Plan
	Design       string
	ClusterCIDRs []Prefix
	ServiceCIDR  Prefix
	NodeSubnets  []Prefix
	External     Addr
	opts         Options

	Nodes    []*Node
	byName   map[string]*Node
	Segments []*Segment
	segBy    map[Prefix]*Segment
	Groups   []*Group
	vips     map[Addr]*Instance // gateway and router VIPs → their VRRP instance
	Tor      *Node
	Edge     *Node
	Ext      *Node

	Services []*Service
	// DNS is the cluster DNS service modelled from the plan (nil when a given service has
	// its ClusterIP); its endpoints are chosen by the verifier (syncDNS).
	DNS       *Service
	svcByVIP  map[Addr]*Service
	nodePorts map[lbKey]*Service

	podOwner lpm[*Node] // pod ranges → node
	nodeIPs  map[Addr]*Node

	// staleARP, while the "during failover" view is evaluated, maps moved VIPs to the former
	// holder's interface that hosts' neighbour caches still give (Verifier.during).
	staleARP map[Addr]*Iface

	calico  *calicoState
	flannel *flannelState
	routing routingInputs
	// explicit interns identical plan route lists so nodes share one table.
	explicit map[string]*Table

	Notes []string
}

// Node is a machine (or the ToR router, edge network, external host) in the model.
type Node struct {
	ID     int
	Name   string
	OS     string
	Role   string
	Ifaces []*Iface
	// Cluster is the cluster NIC (kubelet --node-ip).
	Cluster  *Iface
	Forward  bool
	RPFilter map[string]int // per interface; "all" is the default entry
	// tables is the assembled lookup order (see assemble); local is rebuilt from the node's
	// own state, explicit are plan routes shared by identical nodes, cni the Linux CNI's
	// routes to other nodes, dump a route dump.
	tables    layers
	local     *Table
	explicit  *Table
	cni       *Table
	PodRanges []Prefix
	Pods      []*Pod
	Linux     *LinuxNode
	Win       *WinNode
	// FelixDown says why calico-node is not running on a Linux node of a Calico cluster
	// (empty when it runs): no Calico routes are programmed on it or learned from it.
	FelixDown  string
	Down       bool // node-down scenario: gone entirely
	DumpRoutes *RouteDump
	dumpTable  *Table
	// vipRoutes are dumped routes that follow a gateway VIP (bindVIPRoutes).
	vipRoutes []vipRoute
	// held are the VIP addresses this node holds now, by interface.
	held map[Addr]*Iface
	// Sources explain where state came from (plan, dump files) for traces and notes.
	Sources []string

	sig   string
	class *Class
}

// Iface is one interface of a node.
type Iface struct {
	Name string
	Addr Addr
	Len  uint8
	Seg  *Segment
	Node *Node
	// Gateway is the NIC's default gateway from the spec, if any.
	Gateway Addr
}

// Segment is an L2 broadcast domain.
type Segment struct {
	ID     int
	Prefix Prefix
	arp    map[Addr]*Iface
	// bridges are Windows L2Bridge pod subnets reachable on this segment (the vSwitch answers
	// for its endpoints with the host's MAC).
	bridges lpm[*Node]
	// routers answer for any address (the edge network's gateway legs).
	edge *Iface
}

// LinuxNode is the Linux-specific state.
type LinuxNode struct {
	CNI string // calico, flannel-host-gw, flannel-vxlan, bridge
	// Tunl0 is the tunnel device's address (tunl0 or flannel.1), zero without a tunnel.
	Tunl0     Addr
	KubeProxy bool
	// Masq is set when the CNI masquerades pod traffic leaving MasqExcept.
	Masq       bool
	MasqExcept []Prefix
}

// WinNode is the Windows-specific state: the HNS network and its host endpoint.
type WinNode struct {
	NetName    string
	NetType    string // L2Bridge or Overlay
	Adapter    *Iface
	Subnet     Prefix
	Gateway    Addr
	HostEP     Addr // zero when missing
	HostEPName string
	// PodGateway is the next hop pods use: what the CNI configuration gives them (win-bridge
	// with IPAM: x.2, the host endpoint, and the host routes; PodGatewayWhy says so), else the
	// keepalived/ToR gateway (.1) or, where the host routes ("windows-host"), the host endpoint.
	PodGateway    Addr
	PodGatewayWhy string
	// Build is the Windows build (DSR support).
	Build         int
	GatewayHolder string
	Group         *Group
	// KubeProxy is false when winkernel cannot start (KubeProxyDown says why): then no
	// service or NodePort load balancer exists on the node.
	KubeProxy     bool
	KubeProxyDown string
	// SourceVIP is winkernel's sourceVip (kube-proxy config): on an Overlay network the
	// source address of service traffic it load-balances to remote pods; zero when unset.
	// SourceVIPWhy says where a HostProcess design's kube-proxy takes it from.
	SourceVIP    Addr
	SourceVIPWhy string
	// HostRoutePolicy: the host reaches its local pods through the Overlay network's HostRoute
	// policy (flannel device_windows.go), not through a host endpoint of its own.
	HostRoutePolicy bool
	HostRouteWhy    string
	// calicoPending marks a Calico HostProcess node whose IPAM block is not chosen yet
	// (calicoWindowsBlocks); pendingEP is its pods' endpoint policy until then.
	calicoPending bool
	pendingEP     *EndpointPolicy
	// hostProcess is the CNI whose HostProcess pod makes the network ("calico", "flannel"),
	// empty when kubewin makes it.
	hostProcess string
	// DSR: kube-proxy runs with --enable-dsr (HostProcess designs; the plan enables it only
	// where the build supports it), so winkernel's ClusterIP load balancers are DSR ones.
	DSR bool
	// NoRouteWhy explains, for a HostProcess design, why the CNI gives the host no route to
	// other nodes' pods.
	NoRouteWhy string
	// LB is the winkernel load balancer from a Get-HnsPolicyList dump; nil means "as planned"
	// (every service is programmed).
	LB      map[lbKey][]Addr
	LBFile  string
	VNI     int
	UDPPort int
	Missing string // set when the dumped state lacks the HNS network
	// HostRoutes are the plan's routes of the Windows host (the cluster CIDR via the pod CIDR
	// gateway). They are part of the node-local layer, not a shared table: every Windows node's
	// list names its own gateway, so a shared table per node would make each node a class of
	// its own (and every node's signature probe every such table: 24 GB at 5,000 nodes).
	HostRoutes []Route
}

type lbKey struct {
	VIP   Addr
	Proto Proto
	Port  int
}

// Pod is a class of pods on one node that behave alike; IP is its representative address.
type Pod struct {
	Node *Node
	Name string
	IP   Addr
	// Sib is a second address of the class on the same node (same-node flows), zero if none.
	Sib   Addr
	Count int
	// Windows endpoint policies (nil on Linux).
	EP *EndpointPolicy
	// Broken explains why the pod's endpoint cannot pass traffic (e.g. IsRemoteEndpoint).
	Broken string
	// Conflict explains an address collision with another node's pods.
	Conflict string
	Origin   string
	sig      string
	class    *PodClass
}

// EndpointPolicy is what HNS applies on a Windows pod's port.
type EndpointPolicy struct {
	OutboundNAT bool
	Exceptions  []Prefix
	Routes      []EncapRoute
	Gateway     Addr
	Origin      string
}

// Group is a keepalived gateway group.
type Group struct {
	Name      string
	Iface     string
	Members   []*Member
	Instances []*Instance
}

// Member is one keepalived node of a group.
type Member struct {
	Node     *Node
	Priority int
	// Running is false after gateway-down (keepalived stopped) or node-down.
	Running bool
}

// Instance is a VRRP instance: a set of VIPs that move together.
type Instance struct {
	Group     *Group
	Name      string
	VRID      int
	VIPs      []VIP
	RouterVIP Addr
	RouterLen uint8
	Holder    *Node
	Preempt   bool
	// Forced is set by a vip-unheld scenario: nobody holds the instance's VIPs.
	Forced string
	// Origin of the holder decision (election, dump file:line).
	Origin string
	// missing are instance addresses a dumped MASTER does not configure; ineligible members
	// report FAULT/STOP; decided is set when dumps fixed the holder (or its absence).
	missing    map[Addr]string
	ineligible map[*Node]bool
	decided    bool
}

// VIP is one Windows pod-CIDR gateway address.
type VIP struct {
	Addr    Addr
	Len     uint8
	PodCIDR Prefix
	Windows string
}

// Options tune the model.
type Options struct {
	// DefaultRPFilter applies where the plan sets no rp_filter: 0 off, 1 strict, 2 loose.
	// Unset (-1 selects 0) means 2, systemd's 50-default.conf value on current distributions;
	// older RHEL/CentOS images use 1.
	DefaultRPFilter int
	// External is the representative external address (default 203.0.113.10, TEST-NET-3).
	External string
	// PacketSize, when set, is the IP size of every flow's packets; with DF, ICMP and UDP
	// packets cannot be fragmented, so a path whose MTU (LinkMTU, default 1500, less any
	// encapsulation) is smaller drops them. For TCP it is the size of the application's writes,
	// which MSS cuts into segments that fit (walker.fits).
	PacketSize int
	DF         bool
	LinkMTU    int
}

// Input is everything Build needs.
type Input struct {
	Plan *plan.Plan
	// Spec supplies NICs beyond the cluster NIC, default gateways and the ToR router IP.
	Spec     *v1alpha1.Cluster
	Services []ServiceSpec
	Dumps    *DumpSet
	Options  Options
}

// NodeByName returns the node or nil.
func (m *Model) NodeByName(name string) *Node { return m.byName[name] }

func (m *Model) segment(p Prefix) *Segment {
	p = prefixOf(p.Addr, p.Len)
	if s := m.segBy[p]; s != nil {
		return s
	}
	s := &Segment{ID: len(m.Segments), Prefix: p, arp: map[Addr]*Iface{}}
	m.Segments = append(m.Segments, s)
	m.segBy[p] = s
	return s
}

func (m *Model) addIface(n *Node, name string, a Addr, l uint8, gw Addr) *Iface {
	ifc := &Iface{Name: name, Addr: a, Len: l, Node: n, Gateway: gw}
	if l > 0 && l < 32 {
		ifc.Seg = m.segment(prefixOf(a, l))
		if prev := ifc.Seg.arp[a]; prev != nil && prev.Node != n {
			m.Notes = append(m.Notes, fmt.Sprintf("address %s is configured on both %s %s and %s %s", a, prev.Node.Name, prev.Name, n.Name, name))
		} else {
			ifc.Seg.arp[a] = ifc
		}
	}
	n.Ifaces = append(n.Ifaces, ifc)
	return ifc
}

func (n *Node) iface(name string) *Iface {
	for _, i := range n.Ifaces {
		if i.Name == name {
			return i
		}
	}
	return nil
}

// IP is the node's cluster address.
func (n *Node) IP() Addr {
	if n.Cluster != nil {
		return n.Cluster.Addr
	}
	if len(n.Ifaces) > 0 {
		return n.Ifaces[0].Addr
	}
	return 0
}

// isLocal reports whether a is one of the node's own addresses.
func (n *Node) isLocal(a Addr) bool {
	for _, i := range n.Ifaces {
		if i.Addr == a {
			return true
		}
	}
	if _, ok := n.held[a]; ok {
		return true
	}
	if n.Linux != nil && n.Linux.Tunl0 == a && a != 0 {
		return true
	}
	if n.Win != nil && n.Win.HostEP == a && a != 0 {
		return true
	}
	return false
}

func (n *Node) rpFilter(ifname string) int {
	v := n.RPFilter["all"]
	iv, ok := n.RPFilter[ifname]
	if !ok {
		iv = n.RPFilter[rpDefaultKey]
	}
	return max(v, iv)
}

// rpDefaultKey holds the rp_filter of interfaces the plan names no value for: distributions set
// it per interface (systemd's 50-default.conf sets net.ipv4.conf.default and .* to 2 and leaves
// "all" alone), so "all" keeps the kernel's 0 unless the plan sets it.
const rpDefaultKey = "*"

func (n *Node) podByIP(a Addr) *Pod {
	for _, p := range n.Pods {
		if p.IP == a || (p.Sib == a && a != 0) {
			return p
		}
	}
	return nil
}

func (n *Node) inPodRanges(a Addr) bool {
	for _, p := range n.PodRanges {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Build constructs the model.
func Build(in Input) (*Model, error) {
	if in.Plan == nil {
		return nil, fmt.Errorf("verify: no plan")
	}
	p := in.Plan
	m := &Model{Plan: p, Design: p.Cluster.Design, opts: in.Options, byName: map[string]*Node{},
		segBy: map[Prefix]*Segment{}, vips: map[Addr]*Instance{}, svcByVIP: map[Addr]*Service{},
		nodeIPs: map[Addr]*Node{}, explicit: map[string]*Table{}}
	switch m.opts.DefaultRPFilter {
	case 0:
		m.opts.DefaultRPFilter = 2
	case -1:
		m.opts.DefaultRPFilter = 0
	}
	if m.opts.LinkMTU == 0 {
		m.opts.LinkMTU = 1500
	}
	ext := m.opts.External
	if ext == "" {
		ext = "203.0.113.10"
	}
	var err error
	if m.External, err = ParseAddr(ext); err != nil {
		return nil, fmt.Errorf("external address: %w", err)
	}
	for _, c := range p.Networking.ClusterCIDRs {
		cp, err := ParsePrefix(c)
		if err != nil {
			return nil, fmt.Errorf("plan networking.clusterCIDRs: %w", err)
		}
		m.ClusterCIDRs = append(m.ClusterCIDRs, cp)
	}
	if m.ServiceCIDR, err = ParsePrefix(p.Networking.ServiceCIDR); err != nil {
		return nil, fmt.Errorf("plan networking.serviceCIDR: %w", err)
	}
	for _, s := range p.Networking.NodeSubnets {
		sp, err := ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("plan networking.nodeSubnets: %w", err)
		}
		m.NodeSubnets = append(m.NodeSubnets, sp)
	}
	m.routingSettings(in.Spec)
	specNodes := map[string]*v1alpha1.Node{}
	if in.Spec != nil {
		for i := range in.Spec.Spec.Nodes {
			specNodes[in.Spec.Spec.Nodes[i].Name] = &in.Spec.Spec.Nodes[i]
		}
	}
	for i := range p.Nodes {
		if err := m.addPlannedNode(&p.Nodes[i], specNodes[p.Nodes[i].Name]); err != nil {
			return nil, err
		}
	}
	if err := m.calicoWindowsBlocks(); err != nil {
		return nil, err
	}
	if err := m.addTor(in.Spec); err != nil {
		return nil, err
	}
	m.addEdgeAndExternal()
	if err := m.readRouting(in.Spec); err != nil {
		return nil, err
	}
	if err := m.addGroups(); err != nil {
		return nil, err
	}
	if in.Dumps != nil {
		if err := m.applyDumps(in.Dumps); err != nil {
			return nil, err
		}
	}
	m.indexPods()
	m.indexBridges()
	m.setupCNI()
	if err := m.addServices(in.Services); err != nil {
		return nil, err
	}
	if err := m.addClusterDNS(); err != nil {
		return nil, err
	}
	if in.Dumps != nil {
		if err := m.applyKeepalivedDumps(in.Dumps); err != nil {
			return nil, err
		}
	}
	m.electAll()
	m.bindVIPRoutes()
	return m, nil
}

func (m *Model) newNode(name, os string) *Node {
	n := &Node{ID: len(m.Nodes), Name: name, OS: os, RPFilter: map[string]int{}, held: map[Addr]*Iface{}, local: &Table{}}
	m.Nodes = append(m.Nodes, n)
	m.byName[name] = n
	return n
}

func (m *Model) addPlannedNode(np *plan.NodePlan, sn *v1alpha1.Node) error {
	if m.byName[np.Name] != nil {
		return fmt.Errorf("plan: node %q twice", np.Name)
	}
	n := m.newNode(np.Name, np.OS)
	n.Role = np.Role
	nodeIP, err := ParseAddr(np.NodeIP)
	if err != nil {
		return fmt.Errorf("plan node %s nodeIP: %w", np.Name, err)
	}
	subnet, err := ParsePrefix(np.NodeSubnet)
	if err != nil {
		return fmt.Errorf("plan node %s nodeSubnet: %w", np.Name, err)
	}
	// NICs from the spec when available; the cluster NIC is always the plan's.
	if sn != nil {
		for _, nic := range sn.NICs {
			a, err := ParseAddr(nic.IP)
			if err != nil {
				return fmt.Errorf("spec node %s nic %s ip: %w", np.Name, nic.Name, err)
			}
			var gw Addr
			if nic.Gateway != "" {
				if gw, err = ParseAddr(nic.Gateway); err != nil {
					return fmt.Errorf("spec node %s nic %s gateway: %w", np.Name, nic.Name, err)
				}
			}
			if nic.Name == np.ClusterNIC || a == nodeIP {
				n.Cluster = m.addIface(n, np.ClusterNIC, nodeIP, subnet.Len, gw)
				continue
			}
			m.addIface(n, nic.Name, a, uint8(nic.Prefix), gw)
		}
	}
	if n.Cluster == nil {
		n.Cluster = m.addIface(n, np.ClusterNIC, nodeIP, subnet.Len, 0)
	}
	m.nodeIPs[nodeIP] = n
	if np.PodCIDR != "" {
		pc, err := ParsePrefix(np.PodCIDR)
		if err != nil {
			return fmt.Errorf("plan node %s podCIDR: %w", np.Name, err)
		}
		n.PodRanges = []Prefix{pc}
	}
	n.Sources = append(n.Sources, "plan")
	switch np.OS {
	case osLinux:
		return m.planLinux(n, np)
	case osWindows:
		return m.planWindows(n, np)
	}
	return fmt.Errorf("plan node %s: unknown os %q", np.Name, np.OS)
}

func (m *Model) planLinux(n *Node, np *plan.NodePlan) error {
	n.Linux = &LinuxNode{KubeProxy: true}
	n.Forward = true
	rp := -1
	if np.Linux != nil {
		if v, ok := np.Linux.Sysctls["net.ipv4.ip_forward"]; ok {
			n.Forward = v == "1"
		}
		for k, v := range np.Linux.Sysctls {
			if !strings.HasPrefix(k, "net.ipv4.conf.") || !strings.HasSuffix(k, ".rp_filter") {
				continue
			}
			ifn := strings.TrimSuffix(strings.TrimPrefix(k, "net.ipv4.conf."), ".rp_filter")
			ifn = strings.ReplaceAll(ifn, "/", ".")
			x, err := strconv.Atoi(v)
			if err != nil || x < 0 || x > 2 {
				return fmt.Errorf("plan node %s sysctl %s: expected 0, 1 or 2, got %q", n.Name, k, v)
			}
			if ifn == "all" {
				rp = x
			} else {
				n.RPFilter[ifn] = x
			}
		}
	}
	if rp < 0 {
		rp = 0
	}
	n.RPFilter["all"] = rp
	n.RPFilter[rpDefaultKey] = m.opts.DefaultRPFilter
	m.felixCheck(n)
	// Explicit plan routes, interned by content with the node's own pod CIDR normalised away,
	// so that "every other node's CIDR" lists become one shared table.
	if np.Linux != nil && len(np.Linux.Routes) > 0 {
		t, err := m.internRoutes(n, np.Linux.Routes)
		if err != nil {
			return err
		}
		n.explicit = t
	}
	return nil
}

func (m *Model) internRoutes(n *Node, rs []plan.Route) (*Table, error) {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.Destination)
		b.WriteByte('>')
		b.WriteString(r.Via)
		b.WriteByte('>')
		b.WriteString(r.Dev)
		b.WriteByte(';')
	}
	key := b.String()
	if t := m.explicit[key]; t != nil {
		return t, nil
	}
	t := &Table{}
	for _, r := range rs {
		dst, err := ParsePrefix(r.Destination)
		if err != nil {
			return nil, fmt.Errorf("plan node %s route %s: %w", n.Name, r.Destination, err)
		}
		via, err := ParseAddr(r.Via)
		if err != nil {
			return nil, fmt.Errorf("plan node %s route %s via: %w", n.Name, r.Destination, err)
		}
		origin := "plan route"
		if r.Reason != "" {
			origin = "plan: " + r.Reason
		}
		t.Add(Route{Dst: dst, Via: via, Dev: r.Dev, Kind: devKind(r.Dev), Origin: origin})
	}
	m.explicit[key] = t
	return t, nil
}

func (m *Model) planWindows(n *Node, np *plan.NodePlan) error {
	wp := np.Windows
	if wp == nil {
		return fmt.Errorf("plan node %s: windows node without a windows plan", n.Name)
	}
	w := &WinNode{NetName: wp.HNSNetworkName, NetType: wp.HNSNetworkType, GatewayHolder: wp.GatewayHolder,
		KubeProxy: true, HostEPName: wp.HostEndpointName, Build: wp.Build}
	n.Win = w
	n.Forward = true // netsh ... forwarding=enabled on the host endpoint (seed 000 §2.4.1)
	w.Adapter = n.iface(wp.AdapterName)
	if w.Adapter == nil {
		w.Adapter = n.Cluster
	}
	if len(n.PodRanges) > 0 {
		w.Subnet = n.PodRanges[0]
	}
	if m.hostProcessCNI(wp) != "" {
		return m.planHostProcessWindows(n, wp, w)
	}
	var err error
	if w.Gateway, err = ParseAddr(wp.Gateway); err != nil {
		return fmt.Errorf("plan node %s windows.gateway: %w", n.Name, err)
	}
	if w.HostEP, err = ParseAddr(wp.HostEndpointIP); err != nil {
		return fmt.Errorf("plan node %s windows.hostEndpointIP: %w", n.Name, err)
	}
	w.PodGateway = w.Gateway
	if w.GatewayHolder == "windows-host" {
		w.PodGateway = w.HostEP
	}
	if m.Plan.Flannel != nil && m.Plan.Flannel.Backend == "vxlan" {
		w.VNI, w.UDPPort = m.Plan.Flannel.VNI, m.Plan.Flannel.Port
	}
	if wp.KubeProxySourceVIP != "" {
		if w.SourceVIP, err = ParseAddr(wp.KubeProxySourceVIP); err != nil {
			return fmt.Errorf("plan node %s windows.kubeProxySourceVIP: %w", n.Name, err)
		}
	}
	if w.NetType == "Overlay" && w.SourceVIP == 0 {
		// winkernel's NewProxier refuses an Overlay network without a source VIP.
		w.KubeProxy = false
		w.KubeProxyDown = "kube-proxy (winkernel) does not start on " + n.Name + ": its HNS network is Overlay and the plan sets no sourceVip (\"source-vip flag not set\")"
		m.Notes = append(m.Notes, w.KubeProxyDown)
	}
	ep := &EndpointPolicy{OutboundNAT: true, Gateway: w.PodGateway, Origin: "plan (win-bridge CNI config of " + n.Name + ")"}
	if gw, why := cniPodGateway(wp, w); gw != 0 {
		ep.Gateway, w.PodGateway, w.PodGatewayWhy = gw, gw, why
	}
	if err := addPlanCNIPolicies(ep, n.Name, wp); err != nil {
		return err
	}
	if w.Subnet.Len > 0 {
		start := w.Subnet.Nth(10)
		if wp.PodIPRangeStart != "" {
			if a, err := ParseAddr(wp.PodIPRangeStart); err == nil && w.Subnet.Contains(a) {
				start = a
			}
		}
		n.Pods = []*Pod{{Node: n, Name: "pod", IP: start, Sib: start + 1, Count: 1, EP: ep, Origin: "plan"}}
	}
	for _, r := range wp.Routes {
		dst, err := ParsePrefix(r.Destination)
		if err != nil {
			return fmt.Errorf("plan node %s windows route %s: %w", n.Name, r.Destination, err)
		}
		via, err := ParseAddr(r.Via)
		if err != nil {
			return fmt.Errorf("plan node %s windows route %s via: %w", n.Name, r.Destination, err)
		}
		origin := "plan route"
		if r.Reason != "" {
			origin = "plan: " + r.Reason
		}
		w.HostRoutes = append(w.HostRoutes, Route{Dst: dst, Via: via, Dev: r.Dev, Kind: devKind(r.Dev), Origin: origin})
	}
	return nil
}

func (m *Model) addEdgeAndExternal() {
	// The edge network: one leg on every segment that has a default gateway, answering ARP for
	// those gateway addresses; it routes node subnets back to the segments and everything else
	// to the external host.
	e := m.newNode("(edge)", osEdge)
	e.Forward = true
	for _, n := range m.Nodes {
		for _, i := range n.Ifaces {
			if i.Gateway == 0 || i.Seg == nil {
				continue
			}
			if i.Seg.edge == nil {
				leg := &Iface{Name: "gw-" + i.Seg.Prefix.String(), Addr: i.Gateway, Len: i.Seg.Prefix.Len, Seg: i.Seg, Node: e}
				i.Seg.edge = leg
				e.Ifaces = append(e.Ifaces, leg)
				if i.Seg.arp[i.Gateway] == nil {
					i.Seg.arp[i.Gateway] = leg
				}
			}
		}
	}
	m.Edge = e
	if len(e.Ifaces) == 0 {
		m.Notes = append(m.Notes, "no NIC in the spec has a default gateway (nodes[].nics[].gateway): flows to and from outside the cluster are not verified")
	}
	x := m.newNode("(external)", osExternal)
	x.Ifaces = []*Iface{{Name: "wan", Addr: m.External, Len: 32, Node: x}}
	m.Ext = x
}

func (m *Model) addTor(spec *v1alpha1.Cluster) error {
	p := m.Plan
	if m.Design != string(v1alpha1.DesignUpstreamToRRouter) {
		return nil
	}
	t := m.newNode("(tor-router)", osRouter)
	t.Forward = true
	name := "tor-router"
	var ip Addr
	if spec != nil && spec.Spec.TorRouter != nil {
		a, err := ParseAddr(spec.Spec.TorRouter.IP)
		if err != nil {
			return fmt.Errorf("spec torRouter.ip: %w", err)
		}
		ip = a
		if spec.Spec.TorRouter.Name != "" {
			name = spec.Spec.TorRouter.Name
		}
	}
	t.Sources = append(t.Sources, "ToR router "+name)
	var leg *Iface
	for _, s := range m.Segments {
		if ip != 0 && s.Prefix.Contains(ip) {
			leg = m.addIface(t, "cluster", ip, s.Prefix.Len, 0)
			break
		}
	}
	if leg == nil && len(m.Segments) > 0 {
		m.Notes = append(m.Notes, "the ToR router's address is unknown or on no node segment; it is modelled without a cluster leg")
	}
	for _, g := range p.TorGatewayAddresses {
		pfx, a, err := parseIfacePrefix(g)
		if err != nil {
			return fmt.Errorf("plan torGatewayAddresses: %w", err)
		}
		t.held[a] = leg
		if leg != nil {
			leg.Seg.arp[a] = leg
		}
		if pfx.Len < 32 {
			t.local.Add(Route{Dst: prefixOf(a, pfx.Len), Dev: "cluster", Origin: "ToR gateway address " + g})
		}
	}
	for _, r := range p.TorRoutes {
		dst, err := ParsePrefix(r.Destination)
		if err != nil {
			return fmt.Errorf("plan torRoutes: %w", err)
		}
		via, err := ParseAddr(r.Via)
		if err != nil {
			return fmt.Errorf("plan torRoutes %s via: %w", r.Destination, err)
		}
		t.local.Add(Route{Dst: dst, Via: via, Origin: "plan torRoutes: " + r.Reason})
	}
	if leg != nil {
		t.local.Add(Route{Dst: leg.Seg.Prefix, Dev: "cluster", Origin: "connected"})
	}
	// Anything else goes up to the network beyond the rack.
	t.local.Add(Route{Dst: Prefix{}, Dev: edgeDev, Origin: "ToR uplink"})
	m.Tor = t
	return nil
}

func (m *Model) addGroups() error {
	for _, gp := range m.Plan.GatewayGroups {
		g := &Group{Name: gp.Name, Iface: gp.Interface}
		for _, mp := range gp.Members {
			n := m.byName[mp.Node]
			if n == nil || n.Linux == nil {
				return fmt.Errorf("plan gateway group %s: member %q is not a Linux node of the plan", gp.Name, mp.Node)
			}
			g.Members = append(g.Members, &Member{Node: n, Priority: mp.Priority, Running: true})
		}
		for _, ip := range gp.Instances {
			in := &Instance{Group: g, Name: ip.Name, VRID: ip.VRID}
			for _, v := range ip.VIPs {
				pfx, a, err := parseIfacePrefix(v.Address)
				if err != nil {
					return fmt.Errorf("plan gateway group %s instance %s VIP: %w", gp.Name, ip.Name, err)
				}
				pc, err := ParsePrefix(v.PodCIDR)
				if err != nil {
					return fmt.Errorf("plan gateway group %s instance %s VIP podCIDR: %w", gp.Name, ip.Name, err)
				}
				in.VIPs = append(in.VIPs, VIP{Addr: a, Len: pfx.Len, PodCIDR: pc, Windows: v.WindowsNode})
				m.vips[a] = in
				if w := m.byName[v.WindowsNode]; w != nil && w.Win != nil {
					w.Win.Group = g
				}
			}
			if ip.RouterVIP != "" {
				pfx, a, err := parseIfacePrefix(ip.RouterVIP)
				if err != nil {
					return fmt.Errorf("plan gateway group %s instance %s routerVIP: %w", gp.Name, ip.Name, err)
				}
				in.RouterVIP, in.RouterLen = a, pfx.Len
				m.vips[a] = in
			}
			g.Instances = append(g.Instances, in)
		}
		m.Groups = append(m.Groups, g)
	}
	return nil
}

// setupCNI builds the Linux CNI's shared routes and every node's local table.
func (m *Model) setupCNI() {
	p := m.Plan
	switch p.Cluster.LinuxCNI {
	case "calico":
		m.calico = newCalico(m)
	case "flannel":
		m.flannel = newFlannel(m)
	}
	if m.flannel == nil && strings.HasPrefix(m.Design, "flannel/") {
		m.flannel = newFlannel(m)
	}
	for _, n := range m.Nodes {
		m.buildLocal(n)
	}
	if m.calico != nil {
		m.calico.rebuild()
	}
	if m.flannel != nil {
		m.flannel.rebuild()
	}
}

// buildLocal (re)creates the node-local routing layer and assembles the node's layers.
func (m *Model) buildLocal(n *Node) {
	if n.OS != osLinux && n.OS != osWindows {
		n.assemble()
		return
	}
	t := &Table{}
	for idx, i := range n.Ifaces {
		if i.Seg != nil {
			t.Add(Route{Dst: i.Seg.Prefix, Dev: i.Name, Src: i.Addr, Origin: "connected (" + i.Name + ")"})
		}
		if i.Gateway != 0 {
			t.Add(Route{Dst: Prefix{}, Via: i.Gateway, Dev: i.Name, Metric: 100 * (idx + 1), Origin: "default gateway of " + i.Name + " (spec)"})
		}
	}
	switch n.OS {
	case osLinux:
		n.Linux.CNI = m.linuxCNI()
		dev, kind := "cni0", DevBridge
		if n.Linux.CNI == "calico" {
			dev, kind = "cali*", DevPod
		}
		for _, r := range n.PodRanges {
			t.Add(Route{Dst: r, Dev: dev, Kind: kind, Origin: "local pods (" + n.Linux.CNI + ")"})
		}
		// The tunnel device's address: Calico gives tunl0 an address of the node's first
		// block, flannel gives flannel.1 the .0 of the node's subnet.
		n.Linux.Tunl0 = 0
		if len(n.PodRanges) > 0 && (n.Linux.CNI == "calico" || n.Linux.CNI == "flannel-vxlan") {
			n.Linux.Tunl0 = n.PodRanges[0].Addr
		}
		m.setMasq(n)
	case osWindows:
		w := n.Win
		if w.HostEP != 0 && w.Subnet.Len > 0 && w.Missing == "" {
			t.Add(Route{Dst: w.Subnet, Dev: "vEthernet (" + w.HostEPName + ")", Kind: DevHostEndpoint, Src: w.HostEP,
				Origin: "host endpoint " + w.HostEPName + " in compartment 1"})
		} else if w.HostRoutePolicy && w.Subnet.Len > 0 && w.Missing == "" {
			t.Add(Route{Dst: w.Subnet, Dev: "HNS network " + w.NetName, Kind: DevHostEndpoint, Src: n.IP(), Origin: w.HostRouteWhy})
		}
		for _, r := range w.HostRoutes {
			t.Add(r)
		}
	}
	for a, ifc := range n.held {
		if in := m.vips[a]; in != nil {
			for _, v := range in.VIPs {
				if v.Addr == a && v.Len < 32 {
					t.Add(Route{Dst: prefixOf(a, v.Len), Dev: ifc.Name, Src: a, Origin: "connected route of VIP " + a.String() + " (" + in.Name + ")"})
				}
			}
		}
	}
	n.local = t
	n.assemble()
}

// assemble orders the node's tables: a full route dump replaces everything; a partial one
// ("..." lines) overrides the planned layers.
func (n *Node) assemble() {
	var ls layers
	if n.DumpRoutes != nil {
		if n.dumpTable == nil {
			n.dumpTable = NewTable(n.DumpRoutes.Routes)
		}
		ls = append(ls, n.dumpTable)
		if !n.DumpRoutes.Partial {
			n.tables = ls
			return
		}
	}
	for _, t := range []*Table{n.local, n.explicit, n.cni} {
		if t != nil {
			ls = append(ls, t)
		}
	}
	n.tables = ls
}

func (m *Model) linuxCNI() string {
	switch m.Plan.Cluster.LinuxCNI {
	case "calico":
		return "calico"
	case "flannel":
		if m.Plan.Flannel != nil && m.Plan.Flannel.Backend == "vxlan" {
			return "flannel-vxlan"
		}
		return "flannel-host-gw"
	}
	if m.Plan.Flannel != nil {
		if m.Plan.Flannel.Backend == "vxlan" {
			return "flannel-vxlan"
		}
		return "flannel-host-gw"
	}
	return "bridge"
}

func (m *Model) setMasq(n *Node) {
	l := n.Linux
	switch {
	case m.Plan.Calico != nil:
		l.Masq = true
		l.MasqExcept = nil
		for _, s := range m.Plan.Calico.IPPools {
			if p, err := ParsePrefix(s); err == nil {
				l.MasqExcept = append(l.MasqExcept, p)
			}
		}
	case m.Plan.Flannel != nil:
		l.Masq = true
		if p, err := ParsePrefix(m.Plan.Flannel.Network); err == nil {
			l.MasqExcept = []Prefix{p}
		}
	default:
		// Bridge CNIs (kubenet-style host-gw) masquerade traffic leaving the cluster CIDRs.
		l.Masq = true
		l.MasqExcept = slices.Clone(m.ClusterCIDRs)
	}
}

// indexPods creates Linux pod classes, indexes pod ranges and flags collisions.
func (m *Model) indexPods() {
	m.calicoIPAMBlocks()
	m.podOwner = lpm[*Node]{}
	type rng struct {
		p Prefix
		n *Node
	}
	var all []rng
	for _, n := range m.Nodes {
		if n.OS == osLinux && len(n.Pods) == 0 && len(n.PodRanges) > 0 {
			pod := &Pod{Node: n, Name: "pod", IP: n.PodRanges[0].Nth(10), Count: 1, Origin: "plan"}
			if n.PodRanges[0].Len > 28 {
				pod.IP = n.PodRanges[0].Nth(1)
			}
			if n.PodRanges[0].Contains(pod.IP + 1) {
				pod.Sib = pod.IP + 1
			}
			n.Pods = []*Pod{pod}
		}
		for _, r := range n.PodRanges {
			m.podOwner.set(r, n)
			all = append(all, rng{r, n})
		}
	}
	// Sweep for overlaps between different nodes' ranges.
	slices.SortFunc(all, func(a, b rng) int {
		if a.p.Addr != b.p.Addr {
			if a.p.Addr < b.p.Addr {
				return -1
			}
			return 1
		}
		return int(a.p.Len) - int(b.p.Len)
	})
	var open []rng
	for _, r := range all {
		kept := open[:0]
		for _, o := range open {
			if o.p.Last() >= r.p.Addr {
				kept = append(kept, o)
			}
		}
		open = kept
		for _, o := range open {
			if o.n != r.n && o.p.Overlaps(r.p) {
				m.markConflict(o.n, r.n, o.p, r.p)
			}
		}
		open = append(open, r)
	}
	m.calicoReservationConflicts()
}

func (m *Model) markConflict(a, b *Node, pa, pb Prefix) {
	overlap := pa
	if pb.Len > pa.Len {
		overlap = pb
	}
	for _, x := range []struct {
		n, other *Node
		mine     Prefix
		theirs   Prefix
	}{{a, b, pa, pb}, {b, a, pb, pa}} {
		for _, pod := range x.n.Pods {
			if overlap.Contains(pod.IP) || x.n.OS == osWindows {
				if x.n.OS == osWindows && !overlap.Contains(pod.IP) {
					pod.IP = firstUsable(overlap, x.n)
					pod.Sib = pod.IP + 1
				}
				pod.Conflict = fmt.Sprintf("%s's pod range %s overlaps %s's %s (%s)", x.n.Name, x.mine, x.other.Name, x.theirs, srcOf(x.other))
			}
		}
	}
}

func firstUsable(p Prefix, n *Node) Addr {
	a := p.Addr + 10
	if !p.Contains(a) {
		a = p.Addr + 1
	}
	if n.Win != nil && (a == n.Win.Gateway || a == n.Win.HostEP) {
		a += 8
	}
	return a
}

func srcOf(n *Node) string {
	if n.DumpRoutes != nil {
		return "route dump " + n.DumpRoutes.File
	}
	return "plan"
}

// calicoReservationConflicts flags Windows pod CIDRs inside a Calico pool that IPAM is not
// kept away from: Calico hands out /blockSize blocks anywhere in its pools and ignores
// node.spec.podCIDR, so such a CIDR can be given to Linux pods too.
func (m *Model) calicoReservationConflicts() {
	cp := m.Plan.Calico
	if cp == nil {
		return
	}
	var pools, reserved []Prefix
	for _, s := range cp.IPPools {
		if p, err := ParsePrefix(s); err == nil {
			pools = append(pools, p)
		}
	}
	for _, s := range cp.ReservedCIDRs {
		if p, err := ParsePrefix(s); err == nil {
			reserved = append(reserved, p)
		}
	}
	for _, n := range m.Nodes {
		if n.Win == nil || n.Win.Subnet.Len == 0 {
			continue
		}
		if m.calicoHostProcess() {
			// calico/hostprocess: the subnet is the node's own affine block, which strict
			// affinity keeps every other node from allocating from (windows-calico/operator docs);
			// without strict affinity IPAM gives the Windows node no address at all
			// (calicoWindowsBlocks marks its pods broken).
			continue
		}
		in := false
		var pool Prefix
		for _, p := range pools {
			if p.Overlaps(n.Win.Subnet) {
				in, pool = true, p
			}
		}
		if !in {
			continue
		}
		// Reserved CIDRs are kept out of IPAM by an IPReservation or by re-creating the pool
		// without them (PoolExclusion), whichever the plan chose.
		covered := false
		for _, r := range reserved {
			if r.Covers(n.Win.Subnet) {
				covered = true
			}
		}
		if covered {
			continue
		}
		for _, pod := range n.Pods {
			if pod.Conflict == "" {
				pod.Conflict = fmt.Sprintf("%s's pod CIDR %s lies in Calico IP pool %s and is not in calico.reservedCIDRs (kept out by %s): Calico IPAM can allocate /%d blocks of it to Linux pods",
					n.Name, n.Win.Subnet, pool, cp.Reservation, cp.BlockSize)
			}
		}
	}
}

// indexBridges registers each Windows L2Bridge/Overlay subnet on its adapter's segment: the
// vSwitch answers ARP for its endpoints with the host's MAC.
func (m *Model) indexBridges() {
	for _, n := range m.Nodes {
		if w := n.Win; w != nil && w.Adapter != nil && w.Adapter.Seg != nil && w.Subnet.Len > 0 && w.Missing == "" && w.NetType != "Overlay" {
			w.Adapter.Seg.bridges.set(w.Subnet, n)
		}
	}
}

// OwnerOfPodIP returns the node whose pod range holds a.
func (m *Model) OwnerOfPodIP(a Addr) *Node {
	n, _, _ := m.podOwner.get(a)
	return n
}

func (m *Model) inCluster(a Addr) bool {
	for _, c := range m.ClusterCIDRs {
		if c.Contains(a) {
			return true
		}
	}
	return false
}

// edgeDev names the ToR's uplink toward the edge network.
const edgeDev = "(uplink)"

func (m *Model) hasEdge() bool { return len(m.Edge.Ifaces) > 0 }

// indexNodePorts rebuilds the NodePort lookup.
func (m *Model) indexNodePorts() {
	m.nodePorts = map[lbKey]*Service{}
	for _, s := range m.Services {
		for _, p := range s.Ports {
			if p.NodePort != 0 {
				m.nodePorts[lbKey{Proto: p.Proto, Port: p.NodePort}] = s
			}
		}
	}
}

// addPlanCNIPolicies adds what the plan's Windows CNI configuration carries to an endpoint
// policy: the OutBoundNAT exceptions and the service routes (NeedEncap). kubewin's own
// win-bridge/win-overlay configuration and the flannel DaemonSet's are rendered from the same
// plan fields (render.CNIConfig).
func addPlanCNIPolicies(ep *EndpointPolicy, node string, wp *plan.WindowsNodePlan) error {
	for _, e := range wp.OutboundNATExceptions {
		p, err := ParsePrefix(e)
		if err != nil {
			return fmt.Errorf("plan node %s windows.outboundNATExceptions: %w", node, err)
		}
		ep.Exceptions = append(ep.Exceptions, p)
	}
	for _, r := range wp.ServiceRoutes {
		p, err := ParsePrefix(r)
		if err != nil {
			return fmt.Errorf("plan node %s windows.serviceRoutes: %w", node, err)
		}
		ep.Routes = append(ep.Routes, EncapRoute{Dst: p, NeedEncap: true})
	}
	return nil
}
