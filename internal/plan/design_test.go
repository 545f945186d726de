package plan

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// threeNodes: two gateway-capable Linux nodes, a plain Linux node and a Windows node whose pod
// CIDR is slot 5 of 10.0.0.0/16.
func threeNodes() []v1alpha1.Node {
	return []v1alpha1.Node{
		lnx("m1", "192.168.0.11", "10.0.1.0/24"),
		lnx("m2", "192.168.0.12", "10.0.2.0/24"),
		lnx("l3", "192.168.0.13", "10.0.3.0/24"),
		win("w1", "192.168.0.21", "ltsc2022", "10.0.5.0/24"),
	}
}

func keepalived(cni string) *v1alpha1.Cluster {
	c := small(v1alpha1.DesignUpstreamToRKeepalived, cni, threeNodes()...)
	g := gwGroup("gw", "m1", "m2")
	g.RouterVIPs = []string{"192.168.0.250"}
	c.Spec.GatewayGroups = []v1alpha1.GatewayGroup{g}
	return c
}

func routes(rs []Route) string {
	var s []string
	for _, r := range rs {
		x := r.Destination + " via " + r.Via
		if r.Dev != "" {
			x += " dev " + r.Dev
		}
		s = append(s, x)
	}
	return strings.Join(s, "; ")
}

func TestDesigns(t *testing.T) {
	noExport := keepalived("calico")
	f := false
	noExport.Spec.LinuxCNI.Calico = &v1alpha1.CalicoSettings{ExportsConnectedRoutes: &f}
	router := func(cni string) *v1alpha1.Cluster {
		c := small(v1alpha1.DesignUpstreamToRRouter, cni, threeNodes()...)
		c.Spec.TorRouter = &v1alpha1.TorRouter{Name: "tor1", IP: "192.168.0.1"}
		return c
	}
	type want struct {
		holder, cni, delegate, hnsName, hnsType, sourceVIP, rangeStart string
		m1, l3, win, tor                                               string
		torGateways                                                    []string
	}
	cases := []struct {
		name string
		c    *v1alpha1.Cluster
		want want
	}{
		{"keepalived, flannel does not export", keepalived("flannel"), want{
			holder: "keepalived:gw", cni: "win-bridge", hnsName: "l2bridge", hnsType: "L2Bridge", rangeStart: "10.0.5.3",
			m1:  "10.0.5.0/24 via 192.168.0.21 dev eth0",
			l3:  "10.0.5.0/24 via 192.168.0.250",
			tor: "10.0.5.0/24 via 192.168.0.250"}},
		{"keepalived, calico without export", noExport, want{
			holder: "keepalived:gw", cni: "win-bridge", hnsName: "l2bridge", hnsType: "L2Bridge", rangeStart: "10.0.5.3",
			m1:  "10.0.5.0/24 via 192.168.0.21 dev eth0",
			l3:  "10.0.5.0/24 via 192.168.0.250",
			tor: "10.0.5.0/24 via 192.168.0.250"}},
		{"keepalived, calico exports", keepalived("calico"), want{
			holder: "keepalived:gw", cni: "win-bridge", hnsName: "l2bridge", hnsType: "L2Bridge", rangeStart: "10.0.5.3",
			tor: "10.0.5.0/24 via 192.168.0.250"}},
		{"router, calico", router("calico"), want{
			holder: "tor-router", cni: "win-bridge", hnsName: "l2bridge", hnsType: "L2Bridge", rangeStart: "10.0.5.3",
			m1: "10.0.5.0/24 via 192.168.0.1", l3: "10.0.5.0/24 via 192.168.0.1",
			tor: "10.0.5.0/24 via 192.168.0.21", torGateways: []string{"10.0.5.1/24"}}},
		{"router, other CNI", router("other"), want{
			holder: "tor-router", cni: "win-bridge", hnsName: "l2bridge", hnsType: "L2Bridge", rangeStart: "10.0.5.3",
			m1: "10.0.5.0/24 via 192.168.0.1", l3: "10.0.5.0/24 via 192.168.0.1",
			tor:         "10.0.1.0/24 via 192.168.0.11; 10.0.2.0/24 via 192.168.0.12; 10.0.3.0/24 via 192.168.0.13; 10.0.5.0/24 via 192.168.0.21",
			torGateways: []string{"10.0.5.1/24"}}},
		{"host-gw", small(v1alpha1.DesignHostGW, "other", threeNodes()...), want{
			holder: "windows-host", cni: "win-bridge", hnsName: "l2bridge", hnsType: "L2Bridge", rangeStart: "10.0.5.3",
			m1:  "10.0.2.0/24 via 192.168.0.12 dev eth0; 10.0.3.0/24 via 192.168.0.13 dev eth0; 10.0.5.0/24 via 192.168.0.21 dev eth0",
			l3:  "10.0.1.0/24 via 192.168.0.11 dev eth0; 10.0.2.0/24 via 192.168.0.12 dev eth0; 10.0.5.0/24 via 192.168.0.21 dev eth0",
			win: "10.0.1.0/24 via 192.168.0.11; 10.0.2.0/24 via 192.168.0.12; 10.0.3.0/24 via 192.168.0.13"}},
		{"flannel host-gw", small(v1alpha1.DesignFlannelHostGW, "flannel", threeNodes()...), want{
			holder: "windows-host", cni: "flannel", delegate: "win-bridge", hnsName: "cbr0", hnsType: "L2Bridge", rangeStart: "10.0.5.3"}},
		{"flannel vxlan", small(v1alpha1.DesignFlannelVXLAN, "flannel", threeNodes()...), want{
			holder: "windows-host", cni: "flannel", delegate: "win-overlay", hnsName: "vxlan0", hnsType: "Overlay",
			sourceVIP: "10.0.5.3", rangeStart: "10.0.5.4"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := mustPlan(t, tc.c)
			w := findNode(t, p, "w1").Windows
			got := want{
				holder: w.GatewayHolder, cni: w.CNIPlugin, delegate: w.CNIDelegate, hnsName: w.HNSNetworkName,
				hnsType: w.HNSNetworkType, sourceVIP: w.KubeProxySourceVIP, rangeStart: w.PodIPRangeStart,
				m1: routes(findNode(t, p, "m1").Linux.Routes), l3: routes(findNode(t, p, "l3").Linux.Routes),
				win: routes(w.Routes), tor: routes(p.TorRoutes), torGateways: p.TorGatewayAddresses,
			}
			if !equalWant(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func equalWant[T any](a, b T) bool {
	ja, _ := jsonOf(a)
	jb, _ := jsonOf(b)
	return string(ja) == string(jb)
}

func TestFlannelPlan(t *testing.T) {
	p := mustPlan(t, small(v1alpha1.DesignFlannelVXLAN, "flannel", threeNodes()...))
	if p.Flannel == nil || *p.Flannel != (FlannelPlan{Network: "10.0.0.0/16", Backend: "vxlan", VNI: 4096, Port: 4789}) {
		t.Errorf("flannel = %+v", p.Flannel)
	}
	p = mustPlan(t, small(v1alpha1.DesignFlannelHostGW, "flannel", threeNodes()...))
	if p.Flannel == nil || *p.Flannel != (FlannelPlan{Network: "10.0.0.0/16", Backend: "host-gw"}) {
		t.Errorf("flannel = %+v", p.Flannel)
	}
}

func TestRouterVIPsRequired(t *testing.T) {
	c := keepalived("flannel")
	c.Spec.GatewayGroups[0].RouterVIPs = nil
	_, err := New(c)
	wantFieldError(t, err, "spec.gatewayGroups[0].routerVIPs", "routerVIPs[0]", "w1")
}

func TestVRIDBudgetError(t *testing.T) {
	c := exampleCluster(t)
	c.Spec.GatewayGroups[0].VRIDRange = &v1alpha1.Range{First: 188, Last: 188}
	n := c.Spec.Nodes[len(c.Spec.Nodes)-1]
	n.Name, n.PodCIDR = "node010", "10.160.255.0/24" // slot 255: instance 1, VRID 189
	n.NICs = []v1alpha1.NIC{{Name: "eth1", IP: "100.100.126.217", Prefix: 23}}
	c.Spec.Nodes = append(c.Spec.Nodes, n)
	_, err := New(c)
	wantFieldError(t, err, "spec.gatewayGroups[0].vridRange", "node010", "VRID 189")
	// Planner errors carry spec paths, so the parser's Source places them in the file.
	_, src, _ := v1alpha1.ParseExample()
	var el v1alpha1.ErrorList
	errors.As(err, &el)
	if placed := src.Annotate(el); placed[0].Line == 0 {
		t.Errorf("error not placed in the example: %v", placed[0])
	}
}

func TestVRIDClashOnSharedMember(t *testing.T) {
	nodes := append(threeNodes(), win("w2", "192.168.0.22", "ltsc2022", "10.0.6.0/24"))
	c := small(v1alpha1.DesignUpstreamToRKeepalived, "calico", nodes...)
	a, b := gwGroup("a", "m1"), gwGroup("b", "m1", "m2")
	a.WindowsNodes, b.WindowsNodes = []string{"w1"}, []string{"w2"}
	c.Spec.GatewayGroups = []v1alpha1.GatewayGroup{a, b}
	_, err := New(c)
	wantFieldError(t, err, "spec.gatewayGroups[1].vridRange", "VRID 1 is also used by gateway group a", "m1")

	a.VRIDRange = &v1alpha1.Range{First: 1, Last: 9}
	b.VRIDRange = &v1alpha1.Range{First: 10, Last: 20}
	c.Spec.GatewayGroups = []v1alpha1.GatewayGroup{a, b}
	p := mustPlan(t, c)
	m1 := findNode(t, p, "m1").Linux
	if len(m1.Gateways) != 2 || m1.Gateway == nil || m1.Gateway.Group != "a" || m1.Gateways[1].Group != "b" {
		t.Errorf("m1 memberships: %+v / %+v", m1.Gateway, m1.Gateways)
	}
}

func TestHyperVRuntimeClassesAndLabels(t *testing.T) {
	nodes := []v1alpha1.Node{
		lnx("l1", "192.168.0.11", "10.0.1.0/24"),
		win("w2019", "192.168.0.21", "10.0.17763", "10.0.5.0/24"),
		win("w2025", "192.168.0.22", "ltsc2025", "10.0.6.0/24"),
	}
	c := small(v1alpha1.DesignHostGW, "other", nodes...)
	c.Spec.Windows.HyperV = true
	c.Spec.Windows.EnableDSR = true
	p := mustPlan(t, c)
	var names []string
	for _, rc := range p.RuntimeClasses {
		names = append(names, rc.Name+"="+rc.Handler)
		if errs := validation.IsDNS1123Subdomain(rc.Name); len(errs) > 0 {
			t.Errorf("RuntimeClass name %s: %v", rc.Name, errs)
		}
		if errs := validation.IsDNS1123Label(rc.Handler); len(errs) > 0 {
			t.Errorf("handler %s: %v", rc.Handler, errs)
		}
		for k, v := range rc.NodeSelector {
			if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(errs) > 0 {
				t.Errorf("selector %s=%s: %v", k, v, errs)
			}
		}
	}
	want := []string{
		"windows-ltsc2019=runhcs-wcow-process",
		"windows-ltsc2019-hyperv=runhcs-wcow-hypervisor-17763",
		"windows-ltsc2022-hyperv=runhcs-wcow-hypervisor-20348",
		"windows-ltsc2025=runhcs-wcow-process",
		"windows-ltsc2025-hyperv=runhcs-wcow-hypervisor-26100",
	}
	if !slices.Equal(names, want) {
		t.Errorf("runtime classes %v, want %v", names, want)
	}
	// Hyper-V classes select by label; a host carries one label per image build <= its own.
	w25, w19 := findNode(t, p, "w2025"), findNode(t, p, "w2019")
	for _, b := range []string{"10.0.17763", "10.0.20348", "10.0.26100"} {
		if w25.Labels[HyperVLabelPrefix+b] != "true" {
			t.Errorf("w2025 lacks the Hyper-V label for %s", b)
		}
	}
	if w19.Labels[HyperVLabelPrefix+"10.0.20348"] != "" || w19.Labels[HyperVLabelPrefix+"10.0.17763"] != "true" {
		t.Errorf("w2019 labels %v", w19.Labels)
	}
	for k, v := range w25.Labels {
		if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(errs) > 0 {
			t.Errorf("label %s=%s: %v", k, v, errs)
		}
	}
	var handlers []string
	for _, h := range w25.Windows.RuntimeHandlers {
		handlers = append(handlers, h.Name)
	}
	if !slices.Equal(handlers, []string{"runhcs-wcow-process", "runhcs-wcow-hypervisor-17763", "runhcs-wcow-hypervisor-20348", "runhcs-wcow-hypervisor-26100"}) {
		t.Errorf("w2025 handlers %v", handlers)
	}
	// DSR: on where the build supports it.
	if !w25.Windows.EnableDSR || w19.Windows.EnableDSR {
		t.Errorf("DSR: 2025 %v, 2019 %v", w25.Windows.EnableDSR, w19.Windows.EnableDSR)
	}
}

func TestNoTaint(t *testing.T) {
	c := small(v1alpha1.DesignHostGW, "other", threeNodes()...)
	f := false
	c.Spec.Windows.Taint = &f
	p := mustPlan(t, c)
	if n := findNode(t, p, "w1"); len(n.Taints) != 0 || len(p.RuntimeClasses[0].Tolerations) != 0 {
		t.Errorf("taints %v tolerations %v", n.Taints, p.RuntimeClasses[0].Tolerations)
	}
}

func TestImages(t *testing.T) {
	cases := []struct{ image, registry, want string }{
		{"registry.k8s.io/pause:3.10.2", "", "registry.k8s.io/pause:3.10.2"},
		{"registry.k8s.io/pause:3.10.2", "repo.mylan.k8s:9999", "repo.mylan.k8s:9999/pause:3.10.2"},
		{"mcr.microsoft.com/windows/nanoserver:ltsc2019", "repo.mylan.k8s:9999/", "repo.mylan.k8s:9999/windows/nanoserver:ltsc2019"},
		{"localhost/x:1", "r.example", "r.example/x:1"},
		{"library/busybox", "r.example", "r.example/library/busybox"},
	}
	for _, tc := range cases {
		if got := rewriteRegistry(tc.image, tc.registry); got != tc.want {
			t.Errorf("rewriteRegistry(%s, %s) = %s, want %s", tc.image, tc.registry, got, tc.want)
		}
	}
	c := exampleCluster(t)
	c.Spec.Images.Registry = "repo.mylan.k8s:9999"
	c.Spec.Images.WindowsPause = "repo.mylan.k8s:8888/q1winpause:10.0.17763.973"
	p := mustPlan(t, c)
	w := findNode(t, p, "node009").Windows
	if w.PauseImage != c.Spec.Images.WindowsPause || w.RuntimeHandlers[0].SandboxImage != w.PauseImage {
		t.Errorf("user pause image not kept: %s", w.PauseImage)
	}
	if w.NanoserverImage != "repo.mylan.k8s:9999/windows/nanoserver:ltsc2022" || p.Images.LinuxPause != "repo.mylan.k8s:9999/pause:3.10.2" {
		t.Errorf("rewritten images: %s, %s", w.NanoserverImage, p.Images.LinuxPause)
	}
}

func TestNodeErrors(t *testing.T) {
	cases := []struct {
		name  string
		mod   func(c *v1alpha1.Cluster)
		field string
	}{
		{"duplicate name", func(c *v1alpha1.Cluster) { c.Spec.Nodes[1].Name = "m1" }, "spec.nodes[1].name"},
		{"unknown build", func(c *v1alpha1.Cluster) { c.Spec.Nodes[3].WindowsBuild = "ltsc2030" }, "spec.nodes[3].windowsBuild"},
		{"no cluster NIC", func(c *v1alpha1.Cluster) {
			c.Spec.Nodes[0].NICs = append(c.Spec.Nodes[0].NICs, v1alpha1.NIC{Name: "eth9", IP: "1.2.3.4", Prefix: 24})
		}, "spec.nodes[0].clusterNIC"},
		{"bad IP", func(c *v1alpha1.Cluster) { c.Spec.Nodes[2].NICs[0].IP = "192.168.0" }, "spec.nodes[2].nics[0].ip"},
		{"Windows pod CIDR too small", func(c *v1alpha1.Cluster) { c.Spec.Nodes[3].PodCIDR = "10.0.5.0/30" }, "spec.nodes[3].podCIDR"},
		{"bad design", func(c *v1alpha1.Cluster) { c.Spec.Design = "bgp" }, "spec.design"},
		{"router without router", func(c *v1alpha1.Cluster) { c.Spec.Design = v1alpha1.DesignUpstreamToRRouter }, "spec.torRouter"},
		{"bad DNS", func(c *v1alpha1.Cluster) { c.Spec.Networking.ClusterDNS = "10.96.0.10/32" }, "spec.networking.clusterDNS"},
		{"unknown member", func(c *v1alpha1.Cluster) {
			c.Spec.Design = v1alpha1.DesignUpstreamToRKeepalived
			c.Spec.GatewayGroups = []v1alpha1.GatewayGroup{gwGroup("gw", "w1")}
		}, "spec.gatewayGroups[0].members[0].node"},
		{"unserved Windows node", func(c *v1alpha1.Cluster) {
			c.Spec.Design = v1alpha1.DesignUpstreamToRKeepalived
			g := gwGroup("gw", "m1")
			g.WindowsNodes = []string{}
			c.Spec.GatewayGroups = []v1alpha1.GatewayGroup{g}
			c.Spec.Nodes = append(c.Spec.Nodes, win("w2", "192.168.0.22", "ltsc2022", "10.0.6.0/24"))
			c.Spec.GatewayGroups[0].WindowsNodes = []string{"w1"}
		}, "spec.gatewayGroups"},
		{"bad advert", func(c *v1alpha1.Cluster) {
			c.Spec.Design = v1alpha1.DesignUpstreamToRKeepalived
			g := gwGroup("gw", "m1")
			g.AdvertInterval = "fast"
			c.Spec.GatewayGroups = []v1alpha1.GatewayGroup{g}
		}, "spec.gatewayGroups[0].advertInterval"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := small(v1alpha1.DesignHostGW, "other", threeNodes()...)
			tc.mod(c)
			_, err := New(c)
			wantFieldError(t, err, tc.field)
		})
	}
}

// TestOutboundNATExceptions: the node subnets are exempt from OutBoundNAT on L2Bridge networks
// (the hosts route every pod CIDR) but not on Overlay ones, where another Windows host has no
// route back into the overlay (sharedWindows: microsoft/SDN helper.psm1, k3s/rke2).
func TestOutboundNATExceptions(t *testing.T) {
	hp := func(backend string) *v1alpha1.Cluster {
		c := loadGood(t, "flannel-hostprocess.yaml")
		c.Spec.LinuxCNI.Flannel = &v1alpha1.FlannelSettings{Backend: backend}
		return c
	}
	for _, tc := range []struct {
		name    string
		c       *v1alpha1.Cluster
		overlay bool
	}{
		{"flannel/host-gw", small(v1alpha1.DesignFlannelHostGW, "flannel", threeNodes()...), false},
		{"flannel/vxlan", small(v1alpha1.DesignFlannelVXLAN, "flannel", threeNodes()...), true},
		{"host-gw", small(v1alpha1.DesignHostGW, "bridge", threeNodes()...), false},
		{"flannel/hostprocess vxlan", hp("vxlan"), true},
		{"flannel/hostprocess host-gw", hp("host-gw"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustPlan(t, tc.c)
			want := append(slices.Clone(p.Networking.ClusterCIDRs), p.Networking.ServiceCIDR)
			if !tc.overlay {
				want = append(want, p.Networking.NodeSubnets...)
			}
			if len(p.Networking.NodeSubnets) == 0 {
				t.Fatal("the test spec has no node subnets")
			}
			windows := 0
			for _, n := range p.Nodes {
				if n.Windows == nil {
					continue
				}
				windows++
				if !slices.Equal(n.Windows.OutboundNATExceptions, want) {
					t.Errorf("%s (%s network): exceptions %v, want %v", n.Name, n.Windows.HNSNetworkType, n.Windows.OutboundNATExceptions, want)
				}
			}
			if windows == 0 {
				t.Fatal("no Windows node planned")
			}
		})
	}
}
