package verify

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// vxlanSpec turns the example into design flannel/vxlan: flanneld (vxlan) on every node,
// win-overlay on node009, no keepalived gateway group.
func vxlanSpec(t *testing.T) (*v1alpha1.Cluster, *plan.Plan) {
	t.Helper()
	c, _, err := v1alpha1.ParseExample()
	if err != nil {
		t.Fatal(err)
	}
	c.Spec.Design = v1alpha1.DesignFlannelVXLAN
	c.Spec.LinuxCNI = v1alpha1.LinuxCNI{Type: "flannel"}
	c.Spec.GatewayGroups = nil
	v1alpha1.SetDefaults(c)
	if errs := v1alpha1.Validate(c); len(errs) > 0 {
		t.Fatalf("flannel/vxlan spec invalid: %v", errs)
	}
	p, err := plan.New(c)
	if err != nil {
		t.Fatalf("plan flannel/vxlan spec: %v", err)
	}
	routedUpstream(c, p)
	return c, p
}

// extNodePortToLinux traces external → NodePort on node009 with the backend on a Linux node.
func extNodePortToLinux(t *testing.T, v *Verifier) FlowResult {
	t.Helper()
	v.Run()
	n9 := v.m.NodeByName("node009")
	for _, s := range v.enumerate() {
		if s.spec.kind == KindExtNodePort && s.spec.proto == TCP && s.spec.dstAddr == nodePortAddr(n9) && s.spec.backend.Node.OS == osLinux {
			return v.trace(s.spec)
		}
	}
	t.Fatal("no external→NodePort flow through node009 to a Linux backend")
	return FlowResult{}
}

// TestOverlayNodePortSourceVIP: on an HNS Overlay network winkernel SNATs NodePort traffic for
// a remote pod to its sourceVip (an address of the node's own pod subnet, from the kube-proxy
// config) and VFP encapsulates it to the pod's node; the reply comes back to the sourceVip
// through flannel's route to the Windows subnet. Without a sourceVip kube-proxy does not
// start; with one outside the node's subnet the reply goes elsewhere.
func TestOverlayNodePortSourceVIP(t *testing.T) {
	for _, tc := range []struct {
		name      string
		sourceVIP string // "" keeps the plan's
		unset     bool
		verdict   string
		disp      Disposition
		want      []string // fragments of cause + forward + reply traces
		clean     bool     // the whole report has no failure
	}{
		{name: "planned sourceVip", verdict: VerdictOK, disp: DeliveredSNAT, clean: true, want: []string{
			"SNAT: winkernel NodePort to a remote endpoint on an Overlay network: source becomes kube-proxy's sourceVip 10.160.11.3",
			"-> 10.160.11.3:40000 -> 10.160.0.10:8080",
			"encap: vxlan 100.100.126.216 -> 100.100.126.202 (HNS overlay, remote subnet of master1)",
			"decap: vxlan from 100.100.126.216, inner packet continues on flannel.1",
			"10.160.11.0/24 via 100.100.126.216 dev flannel.1",
			"decap: vxlan from 100.100.126.202 (HNS overlay)",
			"conntrack: reply of SNAT",
			"deliver: to external 203.0.113.10",
		}},
		{name: "no sourceVip", unset: true, verdict: VerdictFail, disp: Dropped, want: []string{
			"NodePort 30080 of probe-1: kube-proxy (winkernel) does not start on node009",
			"source-vip flag not set",
		}},
		{name: "sourceVip outside the node's pod subnet", sourceVIP: "10.160.200.3", verdict: VerdictFail, disp: NoRoute, want: []string{
			"source becomes kube-proxy's sourceVip 10.160.200.3",
			"reply: the network beyond the default gateways has no route to 10.160.200.3",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, p := vxlanSpec(t)
			w := windowsNode(p, "node009")
			if w.HNSNetworkType != "Overlay" || w.KubeProxySourceVIP != "10.160.11.3" {
				t.Fatalf("plan: network %s, sourceVip %q", w.HNSNetworkType, w.KubeProxySourceVIP)
			}
			if tc.unset {
				w.KubeProxySourceVIP = ""
			}
			if tc.sourceVIP != "" {
				w.KubeProxySourceVIP = tc.sourceVIP
			}
			v := NewVerifier(build(t, c, p, nil), false)
			res := extNodePortToLinux(t, v)
			text := res.Cause + "\n" + res.Forward.Text("")
			if res.Reply != nil {
				text += res.Reply.Text("")
			}
			if res.Verdict != tc.verdict || res.Disposition != tc.disp {
				t.Errorf("verdict %s disposition %s, want %s %s:\n%s", res.Verdict, res.Disposition, tc.verdict, tc.disp, text)
			}
			for _, frag := range tc.want {
				if !strings.Contains(text, frag) {
					t.Errorf("trace lacks %q:\n%s", frag, text)
				}
			}
			if r := v.Run(); tc.clean && r.Failed() {
				var b bytes.Buffer
				r.WriteText(&b)
				t.Errorf("flannel/vxlan example fails:\n%s", b.String())
			}
			if tc.unset {
				// No winkernel, no service load balancing for node009's pods either.
				for _, f := range mustFlows(t, v, "pod→service windows→linux", "", "node009", "") {
					if f.Verdict != VerdictFail {
						t.Errorf("pod→service without kube-proxy: %+v", f)
					}
				}
			}
		})
	}
}

// TestForwardingLoop: master1's table captured after keepalived moved the gateway VIP to
// master3 (seed §2.6) still sends node009's pod CIDR to master3, but without master3's
// keepalived dump the plan's election makes master1 the holder, so master3's Calico route
// (the VIP's connected route exported by its holder) points back at master1.
func TestForwardingLoop(t *testing.T) {
	c, p := example(t)
	withWindowsHostRoute(p)
	v := NewVerifier(build(t, c, p, dumpSet(t, "master1=seed/master1-after-keepalived.route-n.txt")), false)
	v.Run()
	for _, f := range mustFlows(t, v, "pod→pod linux→windows", "", "master1", "") {
		if f.Disposition != Loop || f.Verdict != VerdictFail || !strings.Contains(f.Cause, "forwarding loop") {
			t.Errorf("stale route through a non-holder: %+v", f)
		}
	}
	rs, err := v.Flow("master1/pod", "node009/pod", TCP, 0)
	if err != nil {
		t.Fatal(err)
	}
	tr := rs[0].Forward
	if tr.Disposition != Loop {
		t.Fatalf("disposition %s: %s", tr.Disposition, tr.Text(""))
	}
	var path []string
	for _, h := range tr.Hops {
		path = append(path, h.Node)
	}
	if strings.Join(path, ",") != "master1,master3,master1" {
		t.Errorf("loop path %v", path)
	}
	text := tr.Text("")
	for _, frag := range []string{"master1-after-keepalived.route-n.txt:5", "exported by its holder master1"} {
		if !strings.Contains(text, frag) {
			t.Errorf("trace lacks %q:\n%s", frag, text)
		}
	}
	// With master3's keepalived dump (it holds the VIP) the same table is right.
	v = NewVerifier(build(t, c, p, dumpSet(t, "master1=seed/master1-after-keepalived.route-n.txt", "master3=real/master3.keepalived.data")), false)
	v.Run()
	for _, f := range mustFlows(t, v, "pod→pod linux→windows", "", "master1", "") {
		if f.Verdict != VerdictOK {
			t.Errorf("master3 holds the VIP: %+v", f)
		}
	}
}

// TestClusterDNSService: the plan's cluster DNS service is modelled with and without given
// services (a given service with its ClusterIP stands instead), with CoreDNS endpoints on
// live Linux nodes.
func TestClusterDNSService(t *testing.T) {
	user := ServiceSpec{Name: "web", ClusterIP: "10.176.0.100", Ports: []ServicePort{{Protocol: "TCP", Port: 80}}, Backends: []string{"10.160.11.3"}}
	ownDNS := ServiceSpec{Name: "my-dns", ClusterIP: "10.176.0.10", Ports: []ServicePort{{Protocol: "UDP", Port: 53}}, Backends: []string{"10.160.5.10"}}
	for _, tc := range []struct {
		name     string
		services []ServiceSpec
		scenario string
		want     string // the service at 10.176.0.10: name and backend nodes
	}{
		{name: "probes", want: "kube-dns master1,master2"},
		{name: "given services", services: []ServiceSpec{user}, want: "kube-dns master1,master2"},
		{name: "given DNS service", services: []ServiceSpec{user, ownDNS}, want: "my-dns node003"},
		{name: "CoreDNS node down", scenario: "node-down=master1", want: "kube-dns master2,master3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, p := example(t)
			withWindowsHostRoute(p)
			m, err := Build(Input{Plan: p, Spec: c, Services: tc.services})
			if err != nil {
				t.Fatal(err)
			}
			v := NewVerifier(m, false)
			if tc.scenario != "" {
				sc, err := ParseScenario(tc.scenario)
				if err != nil {
					t.Fatal(err)
				}
				if err := v.Apply(sc); err != nil {
					t.Fatal(err)
				}
			}
			r := v.Run()
			if r.Failed() {
				t.Fatalf("fails: %+v", r.Failures[0])
			}
			rs, err := v.Flow("node009/pod", "10.176.0.10", UDP, 53)
			if err != nil {
				t.Fatal(err)
			}
			var nodes []string
			for _, f := range rs {
				if f.Verdict != VerdictOK || f.Flow != "pod→service windows→linux" {
					t.Errorf("node009 pod -> DNS: %+v", f)
				}
				nodes = append(nodes, strings.Split(f.Dst, "/")[0])
			}
			svc := m.svcByVIP[mustAddr(t, "10.176.0.10")]
			if got := svc.Name + " " + strings.Join(nodes, ","); got != tc.want {
				t.Errorf("DNS service %q, want %q", got, tc.want)
			}
			if !slices.Contains(m.Services, svc) {
				t.Errorf("%s is not among the model's services", svc.Name)
			}
			if tc.services == nil {
				tcp, err := v.Flow("node009/pod", "10.176.0.10", TCP, 53)
				if err != nil || len(tcp) == 0 || tcp[0].Verdict != VerdictOK {
					t.Errorf("DNS over TCP: %v %+v", err, tcp)
				}
			}
		})
	}
}

func mustAddr(t *testing.T, s string) Addr {
	t.Helper()
	a, err := ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
