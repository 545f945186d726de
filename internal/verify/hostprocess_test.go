package verify

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// hostProcessCase loads a good HostProcess spec, lets mod change the spec before planning and
// plan after it, and verifies the result.
func hostProcessCase(t *testing.T, file string, mod func(*v1alpha1.Cluster), pmod func(*plan.Plan)) (*Verifier, *Report) {
	t.Helper()
	c, _ := loadSpec(t, file)
	if mod != nil {
		mod(c)
	}
	p, err := plan.New(c)
	if err != nil {
		t.Fatalf("plan %s: %v", file, err)
	}
	routedUpstream(c, p)
	if pmod != nil {
		pmod(p)
	}
	v := NewVerifier(build(t, c, p, nil), false)
	return v, v.Run()
}

// tracedFlow is the trace (forward and reply) of the first representative flow of a class
// and protocol.
func tracedFlow(t *testing.T, v *Verifier, class string, proto Proto) FlowResult {
	t.Helper()
	for _, s := range v.enumerate() {
		if s.spec.label() == class && s.spec.proto == proto {
			return v.trace(s.spec)
		}
	}
	t.Fatalf("no %s %v flow", class, proto)
	return FlowResult{}
}

func traceText(r FlowResult) string {
	s := ""
	if r.Forward != nil {
		s += r.Forward.Text("")
	}
	if r.Reply != nil {
		s += r.Reply.Text("")
	}
	return s
}

func reportText(r *Report) string {
	var b bytes.Buffer
	r.WriteText(&b)
	return b.String()
}

type hpFlow struct {
	class string
	proto Proto
	disp  Disposition
	// trace fragments the traced representative must contain (forward and reply), and
	// noTrace fragments it must not.
	trace, noTrace []string
}

// TestHostProcessDesigns verifies designs calico/hostprocess and flannel/hostprocess (and their
// host-gw / BGP variants) as the CNIs' own HostProcess pods make the Windows network: no flow
// fails, and named flows take the path the CNI's upstream code gives them (hostprocess.go).
func TestHostProcessDesigns(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		mod        func(*v1alpha1.Cluster)
		netName    string
		netType    string
		gwHolder   string
		// sourceVIP and podGateway as the n-th address of the Windows node's subnet (0: none).
		sourceVIP, podGateway uint32
		flows                 []hpFlow
	}{{
		name: "calico VXLAN", file: "calico-hostprocess.yaml",
		netName: "Calico", netType: "Overlay", gwHolder: holderOverlay, sourceVIP: 2, podGateway: 1,
		flows: []hpFlow{
			{"pod→pod linux→windows", TCP, Delivered, []string{
				"dev vxlan.calico  {calico VXLAN (Felix route to the VTEP): block 192.168.255.192/26 of win-1}",
				"encap: vxlan 10.0.0.10 -> 10.0.0.31 (vxlan.calico, VTEP of win-1)",
				"decap: vxlan from 10.0.0.10 (HNS overlay)",
				"encap: vxlan 10.0.0.31 -> 10.0.0.10 (HNS overlay, remote subnet of cp1)",
			}, nil},
			{"pod→service windows→linux", TCP, Delivered, []string{"winkernel load balancer", "HNS overlay, remote subnet of cp1"}, nil},
			{"pod→service (backend on the client's node) windows→windows", UDP, Delivered, []string{"winkernel load balancer", "vSwitch port of endpoint"}, nil},
			// Calico's ExceptionList is the service CIDR and the pools: pod→node is NATed.
			{"pod→node windows→linux", TCP, DeliveredSNAT, []string{"HNS OutBoundNAT", "is the Overlay network's gateway, answered by VFP on win-1"}, nil},
			{"node→pod own node windows→windows", TCP, Delivered, []string{"Overlay network Calico on the host (local pods only"}, nil},
			{"node→pod windows→linux", TCP, Unsupported, []string{"RemoteSubnetRoute policies inside VFP"}, nil},
		},
	}, {
		name: "flannel vxlan with DSR", file: "flannel-hostprocess.yaml",
		mod:     func(c *v1alpha1.Cluster) { c.Spec.Windows.EnableDSR = true },
		netName: "flannel.4096", netType: "Overlay", gwHolder: holderOverlay, sourceVIP: 2, podGateway: 1,
		flows: []hpFlow{
			{"pod→service windows→linux", UDP, Delivered, []string{"winkernel load balancer", "(DSR: kube-proxy --enable-dsr)"}, nil},
		},
	}, {
		name: "calico BGP", file: "calico-hostprocess.yaml",
		mod: func(c *v1alpha1.Cluster) {
			c.Spec.LinuxCNI.Calico.VXLANMode, c.Spec.LinuxCNI.Calico.BGP = "Never", "Enabled"
		},
		netName: "Calico", netType: "L2Bridge", gwHolder: holderHost, podGateway: 2,
		flows: []hpFlow{
			{"pod→pod linux→windows", TCP, Delivered, []string{"192.168.255.192/26 via 10.0.0.31  {calico BGP: block 192.168.255.192/26 of win-1}", "vSwitch port of endpoint 192.168.255.195", "route: 192.168.0.0/24 via 10.0.0.10  {calico BGP: block 192.168.0.0/24 of cp1}"}, nil},
			{"pod→pod windows→linux", TCP, Delivered, []string{"the host endpoint: the Windows host routes", "calico BGP: block 192.168.0.0/24 of cp1"}, nil},
			{"node→pod windows→linux", UDP, Delivered, nil, nil},
		},
	}, {
		name: "flannel vxlan", file: "flannel-hostprocess.yaml",
		netName: "flannel.4096", netType: "Overlay", gwHolder: holderOverlay, sourceVIP: 2, podGateway: 1,
		flows: []hpFlow{
			// Both were no-ARP when the pods' gateway was taken for an L2Bridge one.
			{"pod→service windows→linux", TCP, Delivered, []string{"winkernel load balancer", "encap: vxlan 172.20.1.10 -> 172.20.0.10 (HNS overlay, remote subnet of master)"}, []string{"DSR"}},
			{"pod→service (backend on the client's node) windows→windows", TCP, Delivered, []string{"winkernel load balancer", "vSwitch port of endpoint 10.244.1.3"}, nil},
			{"pod→pod linux→windows", UDP, Delivered, []string{"flannel vxlan: subnet lease of win-1", "decap: vxlan from 172.20.0.10 (HNS overlay)"}, nil},
			// The ExceptionList of an Overlay network holds the cluster and service CIDRs only
			// (plan sharedWindows: microsoft/SDN, k3s/rke2): pod→node is NATed to the host.
			{"pod→node own node windows→windows", TCP, DeliveredSNAT, []string{"HNS OutBoundNAT", "Overlay network's gateway, answered by VFP on win-1"}, nil},
			{"node→pod own node windows→windows", UDP, Delivered, []string{"HostRoute policy of Overlay network flannel.4096 (flannel device_windows.go"}, nil},
			{"pod→node windows→linux", TCP, DeliveredSNAT, []string{"HNS OutBoundNAT", "connected (Ethernet)"}, nil},
			{"node→pod windows→linux", ICMP, Unsupported, nil, nil},
		},
	}, {
		name: "flannel host-gw", file: "flannel-hostprocess.yaml",
		mod: func(c *v1alpha1.Cluster) {
			// The spec as written for host-gw: the network name defaults to flannel's (cbr0).
			c.Spec.LinuxCNI.Flannel, c.Spec.Windows.HNSNetworkName = &v1alpha1.FlannelSettings{Backend: "host-gw"}, ""
		},
		netName: "cbr0", netType: "L2Bridge", gwHolder: holderHost, podGateway: 2,
		flows: []hpFlow{
			{"pod→pod windows→linux", TCP, Delivered, []string{"vEthernet (cbr0_ep)", "flannel host-gw: subnet lease of master"}, nil},
			{"pod→pod linux→windows", TCP, Delivered, []string{"flannel host-gw: subnet lease of win-1"}, nil},
			{"node→pod windows→linux", TCP, Delivered, nil, nil},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			v, r := hostProcessCase(t, tc.file, tc.mod, nil)
			if len(r.Failures) > 0 {
				t.Fatalf("%d flows fail:\n%s", len(r.Failures), reportText(r))
			}
			m := v.Model()
			if len(m.Groups) != 0 || len(m.vips) != 0 {
				t.Errorf("a HostProcess design has gateway groups/VIPs: %d/%d", len(m.Groups), len(m.vips))
			}
			win := m.NodeByName("win-1").Win
			if win.NetName != tc.netName || win.NetType != tc.netType || win.GatewayHolder != tc.gwHolder {
				t.Errorf("network %s/%s holder %s, want %s/%s %s", win.NetName, win.NetType, win.GatewayHolder, tc.netName, tc.netType, tc.gwHolder)
			}
			if want := win.Subnet.Nth(tc.podGateway); win.PodGateway != want {
				t.Errorf("pod gateway %s, want %s", win.PodGateway, want)
			}
			wantVIP := Addr(0)
			if tc.sourceVIP > 0 {
				wantVIP = win.Subnet.Nth(tc.sourceVIP)
			}
			if win.SourceVIP != wantVIP || !win.KubeProxy {
				t.Errorf("source VIP %s (kube-proxy up %t), want %s", win.SourceVIP, win.KubeProxy, wantVIP)
			}
			if pod := m.NodeByName("win-1").Pods[0]; pod.IP != win.Subnet.Nth(3) {
				t.Errorf("first Windows pod %s, want %s (.0-.2 are the network's, the gateway's and the host endpoint's or source VIP's)", pod.IP, win.Subnet.Nth(3))
			}
			for _, f := range tc.flows {
				got := mustFlows(t, v, f.class, f.proto.String(), "", "")
				for _, g := range got {
					if g.Disposition != f.disp {
						t.Errorf("%s %v: %s (%s), want %s", f.class, f.proto, g.Disposition, g.Cause, f.disp)
					}
				}
				text := traceText(tracedFlow(t, v, f.class, f.proto))
				for _, frag := range f.trace {
					if !strings.Contains(text, frag) {
						t.Errorf("%s %v trace lacks %q:\n%s", f.class, f.proto, frag, text)
					}
				}
				for _, frag := range f.noTrace {
					if strings.Contains(text, frag) {
						t.Errorf("%s %v trace has %q:\n%s", f.class, f.proto, frag, text)
					}
				}
			}
		})
	}
}

// TestCalicoHostProcessBlock: the Windows node's pods live in a Calico IPAM block of the pool,
// not in its spec.podCIDR, and Linux nodes route that block to it.
func TestCalicoHostProcessBlock(t *testing.T) {
	v, _ := hostProcessCase(t, "calico-hostprocess.yaml", nil, nil)
	n := v.Model().NodeByName("win-1")
	pool, _ := ParsePrefix("192.168.0.0/16")
	if n.Win.Subnet.Len != 26 || !pool.Covers(n.Win.Subnet) {
		t.Fatalf("Windows subnet %s is not a /26 block of %s", n.Win.Subnet, pool)
	}
	planned, _ := ParsePrefix("192.168.1.0/24")
	if planned.Overlaps(n.Win.Subnet) {
		t.Errorf("Windows block %s lies in the node's spec.podCIDR %s, which Calico IPAM ignores", n.Win.Subnet, planned)
	}
	cp1 := v.Model().NodeByName("cp1")
	r, _ := cp1.tables.lookup(n.Pods[0].IP)
	if r == nil || r.Via != n.IP() || r.Kind != DevVXLAN {
		t.Errorf("cp1's route to %s: %+v, want VXLAN via %s", n.Pods[0].IP, r, n.IP())
	}
}

// TestHostProcessWrongSettings: settings with which the CNI's pod or kube-proxy cannot work on
// Windows are caught, with the upstream reason.
func TestHostProcessWrongSettings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		file  string
		mod   func(*v1alpha1.Cluster)
		pmod  func(*plan.Plan)
		class string
		proto Proto
		disp  Disposition
		cause string
	}{{
		name: "flannel VNI below 4096", file: "flannel-hostprocess.yaml",
		pmod:  func(p *plan.Plan) { p.Flannel.VNI = 4095 },
		class: "pod→pod linux→windows", proto: TCP, disp: Dropped,
		cause: "net-conf.json has VNI 4095 port 4789, and on Windows the VNI must be at least 4096",
	}, {
		name: "flannel port not 4789", file: "flannel-hostprocess.yaml",
		pmod:  func(p *plan.Plan) { p.Flannel.Port = 8472 },
		class: "pod→pod windows→linux", proto: UDP, disp: Dropped,
		cause: "flanneld on win-1 exits before making HNS network",
	}, {
		name: "flannel without sourceVip", file: "flannel-hostprocess.yaml",
		pmod:  func(p *plan.Plan) { p.HostProcess.SourceVIP = "" },
		class: "pod→service windows→linux", proto: TCP, disp: NoRoute,
		cause: "no route to 10.96.",
	}, {
		name: "calico without sourceVip", file: "calico-hostprocess.yaml",
		pmod:  func(p *plan.Plan) { p.HostProcess.SourceVIP = "" },
		class: "pod→service (backend on the client's node) windows→windows", proto: UDP, disp: NoRoute,
		cause: "no route to 10.96.",
	}, {
		name: "calico strictAffinity false and not patched", file: "calico-hostprocess.yaml",
		pmod:  func(p *plan.Plan) { p.HostProcess.Calico.SetStrictAffinity = false },
		class: "pod→pod linux→windows", proto: TCP, disp: Dropped,
		cause: "global strict affinity should not be false for Windows node",
	}, {
		name: "calico VXLAN CrossSubnet", file: "calico-hostprocess.yaml",
		mod:   func(c *v1alpha1.Cluster) { c.Spec.LinuxCNI.Calico.VXLANMode = "CrossSubnet" },
		class: "pod→pod linux→windows", proto: UDP, disp: Dropped,
		cause: "Calico for Windows does not support cross-subnet VXLAN",
	}, {
		name: "calico IP-in-IP", file: "calico-hostprocess.yaml",
		mod: func(c *v1alpha1.Cluster) {
			c.Spec.LinuxCNI.Calico.VXLANMode, c.Spec.LinuxCNI.Calico.IPIPMode, c.Spec.LinuxCNI.Calico.BGP = "Never", "Always", "Enabled"
		},
		class: "pod→pod windows→linux", proto: TCP, disp: NoRoute,
		cause: "\"IP in IP overlay with BGP routing\" is not supported on Windows",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			v, r := hostProcessCase(t, tc.file, tc.mod, tc.pmod)
			got := mustFlows(t, v, tc.class, tc.proto.String(), "", "")
			for _, g := range got {
				if g.Disposition != tc.disp || g.Verdict != VerdictFail || !strings.Contains(g.Cause, tc.cause) {
					t.Errorf("%s %v: %s %s (%s), want FAIL %s containing %q\n%s", tc.class, tc.proto, g.Verdict, g.Disposition, g.Cause, tc.disp, tc.cause, reportText(r))
				}
			}
		})
	}
	// Without a source VIP, the trace names winkernel's refusal.
	v, _ := hostProcessCase(t, "flannel-hostprocess.yaml", nil, func(p *plan.Plan) { p.HostProcess.SourceVIP = "" })
	text := traceText(tracedFlow(t, v, "pod→service windows→linux", TCP))
	if !strings.Contains(text, `source-vip flag not set`) || !strings.Contains(text, "no-lb") {
		t.Errorf("trace does not say why there is no load balancer:\n%s", text)
	}
	// IP-in-IP from Linux to a Calico Windows node is dropped there.
	v, _ = hostProcessCase(t, "calico-hostprocess.yaml", func(c *v1alpha1.Cluster) {
		c.Spec.LinuxCNI.Calico.VXLANMode, c.Spec.LinuxCNI.Calico.IPIPMode, c.Spec.LinuxCNI.Calico.BGP = "Never", "Always", "Enabled"
	}, nil)
	for _, g := range mustFlows(t, v, "pod→pod linux→windows", "tcp", "", "") {
		if g.Disposition != Dropped || !strings.Contains(g.Cause, "cannot decapsulate ipip") {
			t.Errorf("Linux→Windows pod with IP-in-IP: %s (%s)", g.Disposition, g.Cause)
		}
	}
}

// TestCalicoHostProcessDumps: an HNS dump of a Calico Windows node gives its real IPAM block;
// Calico_ep (a remote endpoint on purpose) is not taken for a broken pod and its address becomes
// kube-proxy's source VIP; the pod's own policies are used and the Linux node routes the block.
func TestCalicoHostProcessDumps(t *testing.T) {
	c, p := loadSpec(t, "calico-hostprocess.yaml")
	ds := dumpSet(t, "win-1=hostprocess/win-1.calico-networks.json", "win-1=hostprocess/win-1.calico-endpoints.json")
	v := NewVerifier(build(t, c, p, ds), false)
	r := v.Run()
	if len(r.Failures) > 0 {
		t.Fatalf("%d flows fail:\n%s", len(r.Failures), reportText(r))
	}
	n := v.Model().NodeByName("win-1")
	block, _ := ParsePrefix("192.168.77.64/26")
	if n.Win.Subnet != block || n.Win.Gateway != block.Nth(1) || n.Win.PodGateway != block.Nth(1) {
		t.Errorf("subnet %s gateway %s pod gateway %s, want %s and its .65", n.Win.Subnet, n.Win.Gateway, n.Win.PodGateway, block)
	}
	if n.Win.SourceVIP != block.Nth(2) {
		t.Errorf("source VIP %s, want Calico_ep's %s", n.Win.SourceVIP, block.Nth(2))
	}
	if len(n.Pods) != 1 || n.Pods[0].IP != block.Nth(6) || n.Pods[0].Broken != "" {
		t.Fatalf("pods %+v, want the one endpoint %s, not broken", n.Pods, block.Nth(6))
	}
	if !strings.Contains(n.Pods[0].EP.Origin, "HNS endpoint") || len(n.Pods[0].EP.Exceptions) != 2 {
		t.Errorf("pod policies not from the dump: %+v", n.Pods[0].EP)
	}
	text := traceText(tracedFlow(t, v, "pod→pod linux→windows", TCP))
	if !strings.Contains(text, "192.168.77.64/26 via 10.0.0.31 dev vxlan.calico") {
		t.Errorf("cp1 does not route the dumped block over VXLAN:\n%s", text)
	}
}

// hostProcessExample is the embedded example (ten nodes, two NICs each, default gateways on the
// office NIC) turned into a HostProcess design with a second Windows node.
func hostProcessExample(t *testing.T, design v1alpha1.NetworkDesign) (*v1alpha1.Cluster, *plan.Plan) {
	t.Helper()
	c, _, err := v1alpha1.ParseExample()
	if err != nil {
		t.Fatal(err)
	}
	s := &c.Spec
	s.Design, s.GatewayGroups, s.Windows.HNSNetworkName = design, nil, ""
	s.Networking.APIServerEndpoint = "100.100.126.202:6443"
	if design == v1alpha1.DesignCalicoHostProcess {
		yes := true
		s.LinuxCNI = v1alpha1.LinuxCNI{Type: "calico", Calico: &v1alpha1.CalicoSettings{IPPools: []string{"10.160.0.0/12"},
			IPIPMode: "Never", VXLANMode: "Always", BlockSize: 26, StrictAffinity: &yes}}
	} else {
		s.LinuxCNI = v1alpha1.LinuxCNI{Type: "flannel", Flannel: &v1alpha1.FlannelSettings{Backend: "vxlan", VNI: 4096, Port: 4789}}
	}
	w2 := s.Nodes[len(s.Nodes)-1]
	w2.Name, w2.PodCIDR = "node010", "10.160.12.0/24"
	w2.NICs = append([]v1alpha1.NIC(nil), w2.NICs...)
	w2.NICs[0].IP, w2.NICs[0].MAC, w2.NICs[1].IP, w2.NICs[1].MAC = "172.16.126.217", "", "100.100.126.217", ""
	s.Nodes = append(s.Nodes, w2)
	v1alpha1.SetDefaults(c)
	if errs := v1alpha1.Validate(c); len(errs) > 0 {
		t.Fatalf("%s example invalid: %v", design, errs)
	}
	p, err := plan.New(c)
	if err != nil {
		t.Fatalf("plan %s example: %v", design, err)
	}
	routedUpstream(c, p)
	return c, p
}

// TestHostProcessExampleClasses: on the ten-node example as a HostProcess design, equivalence
// classes give what per-node-pair evaluation gives (also after a node goes down), nothing fails,
// and external traffic to a Windows NodePort with a remote backend is SNATed to kube-proxy's
// source VIP and VXLAN-encapsulated (winkernel on an Overlay network).
func TestHostProcessExampleClasses(t *testing.T) {
	for _, design := range []v1alpha1.NetworkDesign{v1alpha1.DesignCalicoHostProcess, v1alpha1.DesignFlannelHostProcess} {
		for _, sc := range []string{"", "node-down=node003", "node-down=node010"} {
			t.Run(string(design)+" "+sc, func(t *testing.T) {
				c, p := hostProcessExample(t, design)
				// The same services in both: one per node, backed by that node's first pod (probe
				// services follow the pod classes, which differ between the two).
				base := build(t, c, p, nil)
				var svcs []ServiceSpec
				for i, n := range base.Nodes {
					if len(n.Pods) > 0 {
						svcs = append(svcs, ServiceSpec{Name: "svc-" + n.Name, ClusterIP: base.ServiceCIDR.Nth(uint32(100 + i)).String(),
							Ports:    []ServicePort{{Protocol: "TCP", Port: 80, TargetPort: 8080, NodePort: 30000 + i}, {Protocol: "UDP", Port: 53, TargetPort: 5353}},
							Backends: []string{n.Pods[0].IP.String()}})
					}
				}
				agg := func(naive bool) (map[string]int, *Verifier) {
					m, err := Build(Input{Plan: p, Spec: c, Services: svcs})
					if err != nil {
						t.Fatal(err)
					}
					v := NewVerifier(m, naive)
					if sc != "" {
						s, err := ParseScenario(sc)
						if err != nil {
							t.Fatal(err)
						}
						if err := v.Apply(s); err != nil {
							t.Fatal(err)
						}
					}
					r := v.Run()
					// No flow fails. pod→node windows→windows on flannel vxlan did while the plan
					// exempted the node subnets from OutBoundNAT on the Overlay network: the pod
					// reached another Windows host with its own address, and that host has no
					// route back into the overlay (RemoteSubnetRoutes live in VFP, not in the
					// host's table); now it is NATed, as upstream's overlay configurations do.
					for _, f := range r.Failures {
						t.Errorf("unexpected failure %s %s: %s (%s)\n%s", f.Flow, f.Proto, f.Disposition, f.Cause, reportText(r))
						break
					}
					out := map[string]int{}
					for _, r := range v.Results() {
						out[r.Flow+" "+r.Proto+" "+r.Verdict+" "+string(r.Disposition)] += r.NodePairs
					}
					return out, v
				}
				classes, v := agg(false)
				naive, _ := agg(true)
				for k, n := range naive {
					if classes[k] != n {
						t.Errorf("%s: classes %d node pairs, naive %d", k, classes[k], n)
					}
				}
				for k, n := range classes {
					if _, ok := naive[k]; !ok {
						t.Errorf("%s: classes %d node pairs, naive none", k, n)
					}
				}
				if sc != "" {
					return
				}
				n9 := v.Model().NodeByName("node009")
				for _, s := range v.enumerate() {
					if s.spec.kind == KindExtNodePort && s.spec.proto == TCP && s.spec.dstAddr == nodePortAddr(n9) && s.spec.backend.Node.OS == osLinux {
						res := v.trace(s.spec)
						text := traceText(res)
						want := "source becomes kube-proxy's sourceVip " + n9.Win.SourceVIP.String() + " (" + n9.Win.SourceVIPWhy + ")"
						if res.Disposition != DeliveredSNAT || !strings.Contains(text, want) || !strings.Contains(text, "remote subnet of "+s.spec.backend.Node.Name) {
							t.Errorf("external → NodePort of node009 → Linux backend: %s (%s), want delivered-with-SNAT with %q:\n%s", res.Disposition, res.Cause, want, text)
						}
						return
					}
				}
				t.Error("no external → NodePort flow to node009 with a Linux backend")
			})
		}
	}
}

// TestHostProcessJoinMatchesFull: a Windows node joining a HostProcess cluster incrementally
// (its Calico block chosen among the blocks in use, Linux nodes' routes to it added) gives what
// a model built with it from the start gives.
func TestHostProcessJoinMatchesFull(t *testing.T) {
	for _, design := range []v1alpha1.NetworkDesign{v1alpha1.DesignCalicoHostProcess, v1alpha1.DesignFlannelHostProcess} {
		t.Run(string(design), func(t *testing.T) {
			c, p := hostProcessExample(t, design)
			agg := func(v *Verifier) map[string]int {
				out := map[string]int{}
				for _, r := range v.Results() {
					out[r.Flow+" "+r.Proto+" "+r.Verdict+" "+string(r.Disposition)] += r.NodePairs
				}
				return out
			}
			full := NewVerifier(build(t, c, p, nil), false)
			full.Run()
			// The same cluster without node010, which then joins.
			last := len(p.Nodes) - 1
			if p.Nodes[last].Name != "node010" {
				t.Fatalf("last plan node %s", p.Nodes[last].Name)
			}
			pj, cj := *p, *c
			pj.Nodes = p.Nodes[:last]
			cj.Spec.Nodes = c.Spec.Nodes[:len(c.Spec.Nodes)-1]
			v := NewVerifier(build(t, &cj, &pj, nil), false)
			v.Run()
			if err := v.Join(&p.Nodes[last], &c.Spec.Nodes[len(c.Spec.Nodes)-1], nil, ""); err != nil {
				t.Fatal(err)
			}
			v.Run()
			want, got := agg(full), agg(v)
			for k, n := range want {
				if got[k] != n {
					t.Errorf("%s: incremental %d node pairs, full %d", k, got[k], n)
				}
			}
			for k, n := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("%s: incremental %d node pairs, full none", k, n)
				}
			}
			if a, b := full.Model().NodeByName("node010").Win.Subnet, v.Model().NodeByName("node010").Win.Subnet; a != b {
				t.Errorf("node010's subnet: incremental %s, full %s", b, a)
			}
		})
	}
}
