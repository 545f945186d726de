package plan

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/kubewin/kubewin/internal/platform"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// New plans every node of a defaulted, validated cluster. It is a pure function: the same
// spec yields the same Plan (and the same plan.json bytes), the input is not modified, and odd
// input produces an error, never a panic. Errors are a v1alpha1.ErrorList with spec field paths.
func New(c *v1alpha1.Cluster) (*Plan, error) {
	var errs errorList
	if c == nil {
		errs.add("", "no cluster description")
		return nil, errs.err()
	}
	cl := defaultedCopy(c)
	b := &builder{c: cl, s: &cl.Spec, errs: &errs, byName: map[string]int{}}
	b.networking()
	b.nodeFacts()
	b.podCIDRs()
	b.designChecks()
	b.gatewayGroups()
	if len(errs) > 0 {
		return nil, errs.err()
	}
	p := b.assemble()
	if len(errs) > 0 {
		return nil, errs.err()
	}
	return p, nil
}

// JSON is plan.json: indented, maps sorted by encoding/json, a trailing newline.
func (p *Plan) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(p); err != nil {
		return nil, fmt.Errorf("encode plan: %w", err)
	}
	return buf.Bytes(), nil
}

// defaultedCopy applies v1alpha1.SetDefaults to a copy, duplicating everything SetDefaults
// writes to, so that New can accept a not-yet-defaulted spec without touching the caller's.
func defaultedCopy(c *v1alpha1.Cluster) *v1alpha1.Cluster {
	cp := *c
	s := &cp.Spec
	s.Nodes = slices.Clone(s.Nodes)
	s.GatewayGroups = slices.Clone(s.GatewayGroups)
	for i := range s.GatewayGroups {
		s.GatewayGroups[i].Members = slices.Clone(s.GatewayGroups[i].Members)
	}
	if s.LinuxCNI.Calico != nil {
		x := *s.LinuxCNI.Calico
		s.LinuxCNI.Calico = &x
	}
	if s.LinuxCNI.Flannel != nil {
		x := *s.LinuxCNI.Flannel
		s.LinuxCNI.Flannel = &x
	}
	v1alpha1.SetDefaults(&cp)
	return &cp
}

// Image defaults. registry.k8s.io/pause is a multi-arch manifest list that includes Windows
// images for every supported Windows Server build, so one name serves both operating systems.
const (
	DefaultPauseImage = "registry.k8s.io/pause:3.10.2" // kubeadm v1.37 constants.PauseVersion
	// DefaultGatewayImage is not published anywhere: operators build it from
	// deploy/gateway/Dockerfile and push it under images.registry (or set images.gateway).
	DefaultGatewayImage = "kubewin-gateway:v1alpha1"
	NanoserverRepo      = "mcr.microsoft.com/windows/nanoserver"
	ContainerdPipe      = "npipe:////./pipe/containerd-containerd"
	HostEndpointName    = "cbr0"
	ProcessHandler      = "runhcs-wcow-process"
	HyperVHandlerPrefix = "runhcs-wcow-hypervisor-"
	KubeProxyModeWin    = "kernelspace"
	// HyperVLabelPrefix + "10.0.<build>" = "true" marks a host that runs Hyper-V isolated
	// containers of that image build (see runtimeClasses).
	HyperVLabelPrefix = "hyperv.kubewin.io/"
)

// node is what the builder knows about one spec node.
type node struct {
	index  int
	spec   *v1alpha1.Node
	nic    *v1alpha1.NIC
	ip     netip.Addr
	subnet netip.Prefix
	build  platform.WindowsBuild
	cidr   nodeCIDR
	ok     bool
}

func (n *node) windows() bool { return n.spec.OS == v1alpha1.OSWindows }

// group is a gateway group after layout.
type group struct {
	index   int
	spec    *v1alpha1.GatewayGroup
	plan    GatewayGroupPlan
	members map[string]bool
	// routerVIP per served Windows node name (empty when the instance has none).
	routerVIP map[string]string
	instance  map[string]string
}

type builder struct {
	c    *v1alpha1.Cluster
	s    *v1alpha1.ClusterSpec
	errs *errorList

	clusters []netip.Prefix
	service  netip.Prefix
	dns      netip.Addr
	mask     int
	extra    []netip.Prefix // spec.networking.nodeSubnets

	nodes  []node
	byName map[string]int
	byCIDR []*node // nodes sorted by pod CIDR, built on first use

	groups   []*group
	servedBy map[string]*group // Windows node name -> group holding its gateway
	members  map[string][]GatewayMembership
}

func (b *builder) design() v1alpha1.NetworkDesign { return b.s.Design }

// calicoExports reports whether Linux nodes learn the VIP holder's connected route (seed 000
// §2.6: master1 routes 10.160.11.0/24 via the holder over tunl0).
func (b *builder) calicoExports() bool {
	cs := b.s.LinuxCNI.Calico
	return b.s.LinuxCNI.Type == "calico" && cs != nil && cs.ExportsConnectedRoutes != nil && *cs.ExportsConnectedRoutes &&
		!calicoRoutesWithoutBIRD(cs)
}

// calicoRoutesWithoutBIRD: with VXLAN pools no BGP runs (calico_backend vxlan), and with
// Felix-programmed cluster routes (FelixConfiguration programClusterRoutes: Enabled) BIRD keeps
// routes inside the IP pools out of the kernel — either way no Linux node learns a gateway
// holder's connected route to a Windows pod CIDR, and the route keeper must route it.
func calicoRoutesWithoutBIRD(cs *v1alpha1.CalicoSettings) bool {
	return (cs.VXLANMode != "" && cs.VXLANMode != "Never") || cs.ClusterRoutes == v1alpha1.CalicoClusterRoutesFelix
}

func (b *builder) networking() {
	n := &b.s.Networking
	if len(n.PodCIDRs) == 0 {
		b.errs.add("spec.networking.podCIDRs", "at least one cluster CIDR is needed")
	}
	for i, s := range n.PodCIDRs {
		p, err := parseV4Prefix(s)
		if err != nil {
			b.errs.add(fmt.Sprintf("spec.networking.podCIDRs[%d]", i), "%v", err)
			continue
		}
		b.clusters = append(b.clusters, p)
	}
	if p, err := parseV4Prefix(n.ServiceCIDR); err != nil {
		b.errs.add("spec.networking.serviceCIDR", "%v", err)
	} else {
		b.service = p
	}
	if a, err := parseV4Addr(n.ClusterDNS); err != nil || strings.Contains(n.ClusterDNS, "/") {
		b.errs.add("spec.networking.clusterDNS", "%q is not an IPv4 address", n.ClusterDNS)
	} else {
		b.dns = a
	}
	b.mask = n.NodeCIDRMaskSize
	for i, s := range n.NodeSubnets {
		p, err := parseV4Prefix(s)
		if err != nil {
			b.errs.add(fmt.Sprintf("spec.networking.nodeSubnets[%d]", i), "%v", err)
			continue
		}
		b.extra = append(b.extra, p)
	}
}

func (b *builder) nodeFacts() {
	b.nodes = make([]node, len(b.s.Nodes))
	for i := range b.s.Nodes {
		sn := &b.s.Nodes[i]
		n := &b.nodes[i]
		n.index, n.spec = i, sn
		path := fmt.Sprintf("spec.nodes[%d]", i)
		ok := true
		if sn.Name == "" {
			b.errs.add(path+".name", "a node needs a name")
			ok = false
		} else if j, dup := b.byName[sn.Name]; dup {
			b.errs.add(path+".name", "%s is also spec.nodes[%d]", sn.Name, j)
			ok = false
		} else {
			b.byName[sn.Name] = i
		}
		switch sn.OS {
		case v1alpha1.OSLinux:
		case v1alpha1.OSWindows:
			bld, found := platform.LookupWindowsBuild(sn.WindowsBuild)
			if !found {
				b.errs.add(path+".windowsBuild", "%q is not a known Windows build (known: %s)", sn.WindowsBuild, platform.KnownWindowsBuildNames())
				ok = false
			}
			n.build = bld
		default:
			b.errs.add(path+".os", "%q is neither linux nor windows", sn.OS)
			ok = false
		}
		nicName := sn.ClusterNIC
		if nicName == "" {
			b.errs.add(path+".clusterNIC", "the node has %d NICs; name the one on the cluster network", len(sn.NICs))
			ok = false
		} else {
			j := slices.IndexFunc(sn.NICs, func(x v1alpha1.NIC) bool { return x.Name == nicName })
			if j < 0 {
				b.errs.add(path+".clusterNIC", "no NIC named %q", nicName)
				ok = false
			} else {
				n.nic = &sn.NICs[j]
				ip, err := parseV4Addr(n.nic.IP)
				if err != nil || strings.Contains(n.nic.IP, "/") {
					b.errs.add(fmt.Sprintf("%s.nics[%d].ip", path, j), "%q is not an IPv4 address", n.nic.IP)
					ok = false
				} else if n.nic.Prefix < 1 || n.nic.Prefix > 32 {
					b.errs.add(fmt.Sprintf("%s.nics[%d].prefix", path, j), "%d is outside 1-32", n.nic.Prefix)
					ok = false
				} else {
					n.ip = ip
					n.subnet = netip.PrefixFrom(ip, n.nic.Prefix).Masked()
				}
			}
		}
		n.ok = ok
	}
}

func (b *builder) podCIDRs() {
	if b.mask == 0 {
		b.mask = v1alpha1.DefaultNodeCIDRMaskSize
	}
	cidrs := allocatePodCIDRs(b.s.Nodes, b.clusters, b.service, b.mask, b.errs)
	for i := range b.nodes {
		b.nodes[i].cidr = cidrs[i]
		if b.nodes[i].windows() && cidrs[i].prefix.IsValid() && cidrs[i].prefix.Bits() > 29 {
			b.errs.add(fmt.Sprintf("spec.nodes[%d].podCIDR", i),
				"%s is too small for a Windows node: .1 is the gateway, .2 the host endpoint, .3 may be the kube-proxy source VIP", cidrs[i].prefix)
		}
	}
}

// gatewayGroups lays out the keepalived groups of design upstream-tor/keepalived.
func (b *builder) gatewayGroups() {
	b.servedBy = map[string]*group{}
	b.members = map[string][]GatewayMembership{}
	if b.design() != v1alpha1.DesignUpstreamToRKeepalived {
		return
	}
	// Router VIPs are required wherever Linux nodes must be routed to Windows pod CIDRs — except
	// for Calico without BIRD export (VXLAN pools, Felix cluster routes), which was described as
	// exporting and is planned anyway with a warning in the notes, so that verify can show what
	// breaks and the user can add routerVIPs and the route keeper.
	cs := b.s.LinuxCNI.Calico
	required := !b.calicoExports() && (b.s.LinuxCNI.Type != "calico" || cs == nil || !calicoRoutesWithoutBIRD(cs))
	for gi := range b.s.GatewayGroups {
		sg := &b.s.GatewayGroups[gi]
		path := fmt.Sprintf("spec.gatewayGroups[%d]", gi)
		g := &group{index: gi, spec: sg, members: map[string]bool{}, routerVIP: map[string]string{}, instance: map[string]string{}}
		in := GatewayLayoutInput{
			Name:               sg.Name,
			Interface:          sg.Interface,
			VRRPVersion:        sg.VRRPVersion,
			VIPsPerInstance:    sg.VIPsPerInstance,
			ClusterCIDRs:       prefixStrings(b.clusters),
			NodeCIDRMaskSize:   b.mask,
			RouterVIPs:         sg.RouterVIPs,
			RouterVIPsRequired: required,
		}
		if sg.VRIDRange != nil {
			in.VRIDRange = [2]int{sg.VRIDRange.First, sg.VRIDRange.Last}
		}
		d, err := time.ParseDuration(sg.AdvertInterval)
		if err != nil {
			b.errs.add(path+".advertInterval", "%q is not a duration such as 100ms or 1s", sg.AdvertInterval)
			continue
		}
		in.AdvertIntervalSeconds = d.Seconds()
		resolved := true
		for mi, m := range sg.Members {
			k, found := b.byName[m.Node]
			if !found || b.nodes[k].windows() {
				b.errs.add(fmt.Sprintf("%s.members[%d].node", path, mi), "%q is not a Linux node of spec.nodes", m.Node)
				resolved = false
				continue
			}
			n := &b.nodes[k]
			ip := n.ip
			if j := slices.IndexFunc(n.spec.NICs, func(x v1alpha1.NIC) bool { return x.Name == sg.Interface }); j >= 0 {
				if a, err := parseV4Addr(n.spec.NICs[j].IP); err == nil {
					ip = a
				}
			}
			if !ip.IsValid() {
				resolved = false
				continue
			}
			in.Members = append(in.Members, GatewayMemberPlan{Node: m.Node, IP: ip.String(), Priority: m.Priority})
			g.members[m.Node] = true
		}
		served := sg.WindowsNodes
		if len(served) == 0 {
			for _, n := range b.nodes {
				if n.windows() && n.spec.Name != "" {
					served = append(served, n.spec.Name)
				}
			}
		}
		for wi, name := range served {
			k, found := b.byName[name]
			if !found || !b.nodes[k].windows() {
				b.errs.add(fmt.Sprintf("%s.windowsNodes[%d]", path, wi), "%q is not a Windows node of spec.nodes", name)
				continue
			}
			if other, dup := b.servedBy[name]; dup {
				b.errs.add(fmt.Sprintf("%s.windowsNodes", path),
					"Windows node %s is already served by gateway group %s; a gateway address can have only one set of holders", name, other.spec.Name)
				continue
			}
			b.servedBy[name] = g
			if c := b.nodes[k].cidr.prefix; c.IsValid() {
				in.WindowsNodes = append(in.WindowsNodes, WindowsPodCIDR{Name: name, PodCIDR: c.String()})
			}
		}
		if !resolved {
			continue
		}
		lp, err := LayoutGatewayGroup(in)
		if err != nil {
			b.errs.addPrefixed(path, err)
			continue
		}
		g.plan = lp
		for _, inst := range lp.Instances {
			for _, v := range inst.VIPs {
				g.routerVIP[v.WindowsNode] = inst.RouterVIP
				g.instance[v.WindowsNode] = inst.Name
			}
		}
		b.groups = append(b.groups, g)
	}
	for _, n := range b.nodes {
		if n.windows() && n.spec.Name != "" && b.servedBy[n.spec.Name] == nil {
			b.errs.add("spec.gatewayGroups", "no gateway group serves Windows node %s; design %s needs a holder for its gateway", n.spec.Name, b.design())
		}
	}
	b.checkVRIDClashes()
	for _, g := range b.groups {
		for _, m := range g.plan.Members {
			var peers []netip.Addr
			for _, o := range g.plan.Members {
				if o.Node != m.Node {
					a, _ := netip.ParseAddr(o.IP)
					peers = append(peers, a)
				}
			}
			slices.SortFunc(peers, netip.Addr.Compare)
			ps := make([]string, len(peers))
			for i, a := range peers {
				ps[i] = a.String()
			}
			b.members[m.Node] = append(b.members[m.Node], GatewayMembership{
				Group: g.plan.Name, RouterID: m.RouterID, Priority: m.Priority,
				Interface: g.plan.Interface, SourceIP: m.IP, Peers: ps,
			})
		}
	}
	for name, ms := range b.members {
		slices.SortFunc(ms, func(a, b GatewayMembership) int { return cmp.Compare(a.Group, b.Group) })
		b.members[name] = ms
	}
}

// checkVRIDClashes rejects two groups whose instances would share a VRID on the same interface
// of the same node: keepalived refuses that configuration.
func (b *builder) checkVRIDClashes() {
	type key struct {
		node, iface string
		vrid        int
	}
	seen := map[key]*group{}
	for _, g := range b.groups {
		for _, m := range g.plan.Members {
			for _, v := range g.plan.VRIDs {
				k := key{m.Node, g.plan.Interface, v}
				if other, dup := seen[k]; dup && other != g {
					b.errs.add(fmt.Sprintf("spec.gatewayGroups[%d].vridRange", g.index),
						"VRID %d is also used by gateway group %s on %s of node %s; give the groups disjoint VRID ranges",
						v, other.spec.Name, g.plan.Interface, m.Node)
					continue
				}
				seen[k] = g
			}
		}
	}
}

func prefixStrings(ps []netip.Prefix) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// assemble builds the Plan once every fact is known and consistent.
func (b *builder) assemble() *Plan {
	s := b.s
	p := &Plan{
		APIVersion: APIVersion,
		Kind:       Kind,
		Cluster: ClusterInfo{
			Name:              b.c.Metadata.Name,
			KubernetesVersion: s.KubernetesVersion,
			Design:            string(s.Design),
			LinuxCNI:          s.LinuxCNI.Type,
			ContainerRuntime:  s.ContainerRuntime.Name,
			CgroupDriver:      s.ContainerRuntime.CgroupDriver,
		},
		Networking: b.networkingPlan(),
		Images: ImagePlan{
			LinuxPause:         b.image(s.Images.LinuxPause, DefaultPauseImage),
			InsecureRegistries: slices.Clone(s.Images.InsecureRegistries),
			Registry:           s.Images.Registry,
		},
	}
	shared := b.sharedWindows(p.Networking)
	linuxShared := b.sharedLinuxRoutes()
	p.Nodes = make([]NodePlan, 0, len(b.nodes))
	for i := range b.nodes {
		n := &b.nodes[i]
		np := NodePlan{
			Name:          n.spec.Name,
			OS:            string(n.spec.OS),
			Role:          string(n.spec.Role),
			NodeIP:        n.ip.String(),
			ClusterNIC:    n.nic.Name,
			ClusterNICMAC: n.nic.MAC,
			NodeSubnet:    n.subnet.String(),
			PodCIDR:       n.cidr.prefix.String(),
			PodCIDRSource: n.cidr.source,
			Labels:        b.labels(n),
		}
		if n.windows() {
			w := b.windowsPlan(n, shared)
			np.Windows = w
			np.Gateway, np.Endpoint, np.Exceptions = w.Gateway, w.HostEndpointIP, w.OutboundNATExceptions
			if *s.Windows.Taint {
				np.Taints = []Taint{windowsTaint()}
			}
		} else {
			np.Linux = b.linuxPlan(n, linuxShared)
		}
		p.Nodes = append(p.Nodes, np)
	}
	slices.SortFunc(p.Nodes, func(a, b NodePlan) int { return cmp.Compare(a.Name, b.Name) })
	for _, g := range b.groups {
		p.GatewayGroups = append(p.GatewayGroups, g.plan)
	}
	slices.SortFunc(p.GatewayGroups, func(a, b GatewayGroupPlan) int { return cmp.Compare(a.Name, b.Name) })
	if len(p.GatewayGroups) > 0 {
		p.Images.Gateway = b.image(s.Images.Gateway, DefaultGatewayImage)
	}
	b.torRoutes(p)
	p.Calico = b.calicoPlan()
	p.Flannel = b.flannelPlan()
	p.HostProcess = b.hostProcessPlan(p)
	p.RuntimeClasses = b.runtimeClasses()
	p.Notes = b.notes()
	return p
}

func (b *builder) networkingPlan() NetworkingPlan {
	n := b.s.Networking
	subnets := slices.Clone(b.extra)
	for _, nd := range b.nodes {
		subnets = append(subnets, nd.subnet)
	}
	domain := n.ClusterDomain
	search := appendUnique([]string{"default.svc." + domain, "svc." + domain, domain}, n.DNSSearch...)
	return NetworkingPlan{
		ClusterCIDRs:     prefixStrings(b.clusters),
		ServiceCIDR:      b.service.String(),
		NodeCIDRMaskSize: b.mask,
		ClusterDNS:       b.dns.String(),
		ClusterDomain:    domain,
		DNSSearch:        search,
		NodeSubnets:      sortedUniquePrefixes(subnets),
	}
}

// image rewrites the registry of an image kubewin chose; an image the user gave is kept.
func (b *builder) image(given, def string) string {
	if given != "" {
		return given
	}
	return rewriteRegistry(def, b.s.Images.Registry)
}

// rewriteRegistry replaces the registry host of image (its first path element when that looks
// like a host: it has a dot or a port, or is localhost) with registry.
func rewriteRegistry(image, registry string) string {
	registry = strings.TrimRight(strings.TrimSpace(registry), "/")
	if registry == "" {
		return image
	}
	first, rest, found := strings.Cut(image, "/")
	if found && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return registry + "/" + rest
	}
	return registry + "/" + image
}

func (b *builder) labels(n *node) map[string]string {
	l := make(map[string]string, len(n.spec.Labels)+4)
	for k, v := range n.spec.Labels {
		l[k] = v
	}
	// The kubelet sets these itself; they are listed so that plan.json and RuntimeClass
	// selectors agree, and win over user labels that would contradict them. The architecture
	// is only known for Windows nodes (kubewin supports them on amd64 only); a Linux node's is
	// whatever its kubelet reports, and claiming one here would be a guess.
	l["kubernetes.io/os"] = string(n.spec.OS)
	if n.windows() {
		l["kubernetes.io/arch"] = "amd64"
		l["node.kubernetes.io/windows-build"] = n.build.Label()
		if b.s.Windows.HyperV {
			for _, ib := range hyperVImageBuilds(n.build) {
				l[HyperVLabelPrefix+ib.Label()] = "true"
			}
		}
	}
	return l
}

func windowsTaint() Taint { return Taint{Key: "os", Value: "windows", Effect: "NoSchedule"} }

func (b *builder) notes() []string {
	var notes []string
	s := b.s
	switch {
	case s.Design == v1alpha1.DesignUpstreamToRKeepalived && b.calicoExports():
		notes = append(notes, "Linux nodes learn each Windows pod CIDR from Calico BGP, which exports the VIP holder's connected route (seed 000 §2.6); no static routes are planned for them.")
	case s.Design == v1alpha1.DesignUpstreamToRKeepalived:
		notes = append(notes, "The Linux CNI does not export the VIP holder's connected route: non-member Linux nodes route each Windows pod CIDR via the router VIP of its VRRP instance; gateway members route it directly to the Windows node on the group interface (while a member holds the VIP, the kernel keeps that route and traffic takes the same path).")
	}
	if cs := s.LinuxCNI.Calico; s.Design == v1alpha1.DesignUpstreamToRKeepalived && s.LinuxCNI.Type == "calico" && cs != nil && calicoRoutesWithoutBIRD(cs) {
		notes = append(notes, "Warning: Calico does not export the VIP holder's route here (VXLAN pools run no BGP; Felix-programmed cluster routes keep pool routes learned over BGP out of the kernel): give every gateway group routerVIPs and deploy the route keeper of cluster/gateway-<group>.yaml, or Linux nodes cannot reach Windows pods (kubewin verify shows the failing flows).")
	}
	if s.Design == v1alpha1.DesignUpstreamToRRouter && s.LinuxCNI.Type == "calico" {
		notes = append(notes, "Calico assigns Linux pod addresses in IPAM blocks anywhere in its pools, not from node podCIDRs: the ToR router must learn Linux pod routes by BGP peering with Calico; torRoutes lists the Windows pod CIDRs only.")
	}
	if s.Design != v1alpha1.DesignUpstreamToRKeepalived && len(s.GatewayGroups) > 0 {
		notes = append(notes, fmt.Sprintf("spec.gatewayGroups are not used by design %s.", s.Design))
	}
	if v, err := platform.ParseVersion(s.KubernetesVersion); err == nil {
		for _, n := range b.nodes {
			if !n.windows() {
				continue
			}
			for _, gap := range n.build.SupportGaps(v.Minor, s.LinuxCNI.Type) {
				notes = append(notes, fmt.Sprintf("Warning: %s: %s; it may work, but nobody tests or fixes it there — prefer a supported build.", n.spec.Name, gap))
			}
		}
	}
	for _, n := range b.nodes {
		if n.cidr.source == PodCIDRAllocated {
			notes = append(notes, "Allocated pod CIDRs are what a freshly started kube-controller-manager range allocator assigns when the nodes without spec.podCIDR register in spec order; after a node has joined, copy its real spec.podCIDR into the spec.")
			break
		}
	}
	slices.Sort(notes)
	return notes
}
