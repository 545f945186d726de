package plan

import (
	"cmp"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/kubewin/kubewin/internal/platform"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// windowsShared holds the parts of a Windows node plan that are the same on every Windows node;
// nodes share these slices, so a Plan must be treated as read-only.
type windowsShared struct {
	exceptions []string
	// overlayExceptions are an Overlay network's: the cluster CIDRs and the service CIDR only.
	overlayExceptions []string
	serviceRoutes     []string
	dnsServers        []string
	dnsSearch         []string
}

// sharedWindows decides the OutBoundNAT exception list: cluster CIDRs (spec order), the service
// CIDR, then the node subnets (numerically sorted), duplicates removed. Pods talk to all of these
// with their own addresses: the cluster CIDRs and the service CIDR are routed inside the cluster
// (seed 000 §2.4.2), and the node subnets must see pod addresses so that node->pod replies and
// kubelet probes return to the pod instead of to the host's NAT.
//
// On an Overlay network (win-overlay) the node subnets stay out: a pod's packet to another
// node's address leaves un-encapsulated, and a Windows host there has no route back into the
// overlay (only its own pods' subnet is local to it), so the reply is lost unless the packet
// was NATed to this host's address. Upstream's overlay configurations exempt only the cluster
// and service CIDRs: microsoft/SDN Kubernetes/windows/helper.psm1 Update-CNIConfig (the
// l2bridge branch adds Get-MgmtSubnet, the overlay branch does not) and the k3s/rke2 Windows
// flannel conf (ExceptionList = cluster CIDR, service CIDR).
func (b *builder) sharedWindows(n NetworkingPlan) windowsShared {
	base := appendUnique(slices.Clone(n.ClusterCIDRs), n.ServiceCIDR)
	ex := appendUnique(slices.Clone(base), n.NodeSubnets...)
	return windowsShared{
		exceptions:        slices.Clip(ex),
		overlayExceptions: slices.Clip(base),
		serviceRoutes:     []string{n.ServiceCIDR},
		dnsServers:        []string{n.ClusterDNS},
		dnsSearch:         slices.Clip(n.DNSSearch),
	}
}

func winJoin(dir string, elem ...string) string {
	return strings.TrimRight(dir, `\/`) + `\` + strings.Join(elem, `\`)
}

func (b *builder) windowsPlan(n *node, sh windowsShared) *WindowsNodePlan {
	s := b.s
	w := &s.Windows
	pod := n.cidr.prefix
	overlay := s.Design == v1alpha1.DesignFlannelVXLAN
	wp := &WindowsNodePlan{
		Build:      n.build.Build,
		BuildLabel: n.build.Label(),
		ImageTag:   n.build.ImageTag,

		InstallDir: w.InstallDir,
		CNIBinDir:  winJoin(w.InstallDir, "cni", "bin"),
		CNIConfDir: winJoin(w.InstallDir, "cni", "conf"),
		LogDir:     winJoin(w.InstallDir, "logs"),

		HNSNetworkName: w.HNSNetworkName,
		HNSNetworkType: "L2Bridge",
		AdapterName:    n.nic.Name,

		Gateway:          nthAddr(pod, 1).String(),
		HostEndpointName: HostEndpointName,
		HostEndpointIP:   nthAddr(pod, 2).String(),
		PodIPRangeStart:  nthAddr(pod, 3).String(),

		CNIPlugin:             "win-bridge",
		OutboundNATExceptions: sh.exceptions,
		ServiceRoutes:         sh.serviceRoutes,
		DNSServers:            sh.dnsServers,
		DNSSearch:             sh.dnsSearch,

		PauseImage:      b.image(s.Images.WindowsPause, DefaultPauseImage),
		NanoserverImage: rewriteRegistry(NanoserverRepo+":"+n.build.ImageTag, s.Images.Registry),

		SystemReservedMemory:    w.SystemReservedMemory,
		KubeProxyMode:           KubeProxyModeWin,
		KubeProxyServiceAccount: kubeProxyAccount(w.KubeProxyServiceAccount, n.build),
		// WinDSR needs kernel support the build table records (Windows Server 2019 only with
		// later updates, so it stays off there).
		EnableDSR:      w.EnableDSR && n.build.DSR,
		ContainerdPipe: ContainerdPipe,
	}
	switch s.Design {
	case v1alpha1.DesignUpstreamToRKeepalived:
		if g := b.servedBy[n.spec.Name]; g != nil {
			wp.GatewayHolder = "keepalived:" + g.plan.Name
		}
	case v1alpha1.DesignUpstreamToRRouter:
		wp.GatewayHolder = "tor-router"
	default:
		wp.GatewayHolder = "windows-host"
	}
	switch s.Design {
	case v1alpha1.DesignFlannelHostGW:
		wp.CNIPlugin, wp.CNIDelegate = "flannel", "win-bridge"
	case v1alpha1.DesignFlannelVXLAN:
		wp.CNIPlugin, wp.CNIDelegate = "flannel", "win-overlay"
	}
	if wp.CNIPlugin == "win-bridge" || wp.CNIDelegate == "win-bridge" {
		wp.NodeRoute = n.ip.String() + "/32"
	}
	if overlay {
		wp.HNSNetworkType = "Overlay"
		wp.OutboundNATExceptions = sh.overlayExceptions
		// kube-proxy on an overlay network needs a source VIP inside the node's pod subnet
		// for SNAT of service traffic. .1 is the gateway and .2 the host endpoint, so .3 is
		// the first address no one else owns; pod IPAM starts after it.
		wp.KubeProxySourceVIP = nthAddr(pod, 3).String()
		wp.PodIPRangeStart = nthAddr(pod, 4).String()
	}
	if s.Design.HostProcess() {
		b.hostProcessNode(wp, sh)
	}
	wp.RuntimeHandlers = b.runtimeHandlers(n.build, wp.PauseImage)
	switch s.Design {
	case v1alpha1.DesignHostGW:
		wp.Routes = b.hostGWRoutes(n, "")
	case v1alpha1.DesignUpstreamToRKeepalived, v1alpha1.DesignUpstreamToRRouter:
		wp.Routes = upstreamToRRoutes(b.clusters, wp.Gateway)
	}
	return wp
}

// upstreamToRRoutes sends the rest of the cluster's pod addresses from the Windows host to the
// pod CIDR's gateway (.1, held by keepalived or the ToR router). It is needed because win-bridge
// on containerd (HCN v2 with IPAM) gives every pod the host endpoint (.2) as its gateway, so the
// host forwards pod traffic; without these routes it would follow its default route (often the
// office NIC, seed 000 §2.1.1) and never reach other nodes' pods. The node's own pod CIDR stays
// on the more specific connected route of the host endpoint.
func upstreamToRRoutes(clusterCIDRs []netip.Prefix, gateway string) []Route {
	rs := make([]Route, 0, len(clusterCIDRs))
	for _, c := range clusterCIDRs {
		rs = append(rs, Route{Destination: c.String(), Via: gateway, Dev: "vEthernet (" + HostEndpointName + ")",
			Reason: "cluster CIDR via the pod CIDR gateway; pods use the host endpoint as their gateway"})
	}
	return rs
}

// hyperVImageBuilds are the image builds a host can run with Hyper-V isolation: every build
// Kubernetes supports that is not newer than the host (image build <= host build).
func hyperVImageBuilds(host platform.WindowsBuild) []platform.WindowsBuild {
	var out []platform.WindowsBuild
	for _, b := range platform.WindowsBuilds() {
		if b.SupportedByKubernetes && b.Build <= host.Build {
			out = append(out, b)
		}
	}
	return out
}

func (b *builder) runtimeHandlers(host platform.WindowsBuild, pause string) []RuntimeHandler {
	hs := []RuntimeHandler{{Name: ProcessHandler, Isolation: "process", SandboxImage: pause}}
	if b.s.Windows.HyperV {
		for _, ib := range hyperVImageBuilds(host) {
			hs = append(hs, RuntimeHandler{
				Name:         HyperVHandlerPrefix + strconv.Itoa(ib.Build),
				Isolation:    "hyperv",
				SandboxImage: pause,
				ImageBuild:   ib.Build,
			})
		}
	}
	return hs
}

// runtimeClasses: one process-isolated class per Windows build present, pinned to hosts of that
// build (process isolation needs host build == image build). With Hyper-V, one class per image
// build that some host can run, selecting hosts labelled hyperv.kubewin.io/10.0.<image build>.
// A nodeSelector can only test equality, so "host build >= image build" is encoded in the
// labels the planner gives each host (one per image build it supports) rather than in
// per-(host, image) classes: a pod then names only the image build it was built for and may
// land on any host able to run it.
func (b *builder) runtimeClasses() []RuntimeClassPlan {
	hosts := map[int]platform.WindowsBuild{}
	images := map[int]platform.WindowsBuild{}
	for _, n := range b.nodes {
		if !n.windows() {
			continue
		}
		hosts[n.build.Build] = n.build
		if b.s.Windows.HyperV {
			for _, ib := range hyperVImageBuilds(n.build) {
				images[ib.Build] = ib
			}
		}
	}
	var tol []Taint
	if *b.s.Windows.Taint {
		t := windowsTaint()
		t.Operator = "Equal"
		tol = []Taint{t}
	}
	var out []RuntimeClassPlan
	for _, h := range hosts {
		out = append(out, RuntimeClassPlan{
			Name:    "windows-" + strings.ToLower(h.ImageTag),
			Handler: ProcessHandler,
			NodeSelector: map[string]string{
				"kubernetes.io/os":                 "windows",
				"kubernetes.io/arch":               "amd64",
				"node.kubernetes.io/windows-build": h.Label(),
			},
			Tolerations: tol,
		})
	}
	for _, ib := range images {
		out = append(out, RuntimeClassPlan{
			Name:    "windows-" + strings.ToLower(ib.ImageTag) + "-hyperv",
			Handler: HyperVHandlerPrefix + strconv.Itoa(ib.Build),
			NodeSelector: map[string]string{
				"kubernetes.io/os":             "windows",
				"kubernetes.io/arch":           "amd64",
				HyperVLabelPrefix + ib.Label(): "true",
			},
			Tolerations: tol,
		})
	}
	slices.SortFunc(out, func(a, b RuntimeClassPlan) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// hostGWRoutes: every other node's pod CIDR via that node's IP (design host-gw, seed 003).
// The design is quadratic in the node count by nature; nodes are walked in pod CIDR order so
// no per-node sort is needed.
func (b *builder) hostGWRoutes(self *node, dev string) []Route {
	rs := make([]Route, 0, len(b.nodes)-1)
	for _, o := range b.nodesByPodCIDR() {
		if o == self {
			continue
		}
		rs = append(rs, Route{Destination: o.cidr.prefix.String(), Via: o.ip.String(), Dev: dev, Reason: "pod CIDR of " + o.spec.Name})
	}
	return rs
}

func (b *builder) nodesByPodCIDR() []*node {
	if b.byCIDR == nil {
		b.byCIDR = make([]*node, len(b.nodes))
		for i := range b.nodes {
			b.byCIDR[i] = &b.nodes[i]
		}
		slices.SortFunc(b.byCIDR, func(x, y *node) int {
			return cmp.Or(comparePrefix(x.cidr.prefix, y.cidr.prefix), cmp.Compare(x.spec.Name, y.spec.Name))
		})
	}
	return b.byCIDR
}

func sortRoutes(rs []Route) {
	slices.SortFunc(rs, func(a, b Route) int {
		return cmp.Or(compareAddrString(a.Destination, b.Destination), cmp.Compare(a.Via, b.Via))
	})
}

// windowsPodPrefixes returns the Windows nodes in spec order with their pod CIDRs.
func (b *builder) windowsNodes() []*node {
	var out []*node
	for i := range b.nodes {
		if b.nodes[i].windows() {
			out = append(out, &b.nodes[i])
		}
	}
	return out
}

// gatewayAddress is the .1 of a pod CIDR with its prefix length, as a router interface holds it.
func gatewayAddress(p netip.Prefix) string {
	return netip.PrefixFrom(nthAddr(p, 1), p.Bits()).String()
}

// kubeProxyAccount: the spec's account, else LocalSystem, else (on builds where LocalSystem
// breaks win-bridge endpoints) NetworkService.
func kubeProxyAccount(spec string, build platform.WindowsBuild) string {
	switch {
	case spec != "":
		return spec
	case build.KubeProxyRestrictedAccount:
		return v1alpha1.RestrictedKubeProxyAccount
	}
	return v1alpha1.DefaultKubeProxyAccount
}
