package verify

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// flows returns the last run's results of a flow class ("pod→pod windows→linux") and protocol
// ("" for any) whose source and destination start with the given prefixes ("" for any).
func flows(v *Verifier, class, proto, src, dst string) []FlowResult {
	var out []FlowResult
	for _, r := range v.Results() {
		if r.Flow == class && (proto == "" || r.Proto == proto) && strings.HasPrefix(r.Src, src) && strings.HasPrefix(r.Dst, dst) {
			out = append(out, r)
		}
	}
	return out
}

func mustFlows(t *testing.T, v *Verifier, class, proto, src, dst string) []FlowResult {
	t.Helper()
	fs := flows(v, class, proto, src, dst)
	if len(fs) == 0 {
		t.Fatalf("no %s %s flows from %q to %q", class, proto, src, dst)
	}
	return fs
}

func windowsNode(p *plan.Plan, name string) *plan.WindowsNodePlan {
	for i := range p.Nodes {
		if p.Nodes[i].Name == name {
			return p.Nodes[i].Windows
		}
	}
	return nil
}

// withWindowsHostRoute adds the route the Windows host needs to reach remote pods through its
// gateway (cluster CIDR via .1 over the host endpoint) when the plan does not have it.
func withWindowsHostRoute(p *plan.Plan) {
	w := windowsNode(p, "node009")
	if len(w.Routes) == 0 {
		w.Routes = []plan.Route{{Destination: "10.160.0.0/12", Via: "10.160.11.1", Reason: "test: cluster CIDR via the pod gateway"}}
	}
}

func TestExampleVerifies(t *testing.T) {
	c, p := example(t)
	v := NewVerifier(build(t, c, p, nil), false)
	r := v.Run()
	if len(windowsNode(p, "node009").Routes) == 0 {
		// The plan gives node009's host no route to other nodes' pods: its default route
		// leads out of the cluster. Exactly those flows fail.
		for _, f := range r.Failures {
			if f.Flow != "node→pod windows→linux" || f.Disposition != NoRoute || !strings.Contains(f.Cause, "pod address") {
				t.Errorf("unexpected failure %s %s: %s %s", f.Flow, f.Proto, f.Disposition, f.Cause)
			}
		}
		if len(r.Failures) == 0 {
			t.Errorf("node009 has no route to remote pods, yet nothing fails")
		}
	} else if r.Failed() {
		t.Errorf("example fails: %d flows, first %+v", r.Summary.Failed, r.Failures[0])
	}
	withWindowsHostRoute(p)
	v = NewVerifier(build(t, c, p, nil), false)
	r = v.Run()
	if r.Failed() {
		var b bytes.Buffer
		r.WriteText(&b)
		t.Fatalf("example with the Windows host route must verify clean:\n%s", b.String())
	}
	// Every flow class the issue names is present and works.
	for _, cl := range []string{"pod→pod same node linux→linux", "pod→pod same node windows→windows", "pod→pod linux→linux",
		"pod→pod linux→windows", "pod→pod windows→linux", "pod→service linux→windows", "pod→service windows→linux",
		"pod→service (backend on the client's node) windows→windows", "node→pod linux→windows", "node→pod windows→linux",
		"node→pod own node windows→windows", "pod→node windows→linux", "pod→external windows→external", "external→NodePort external→windows",
		"external→NodePort external→linux"} {
		for _, f := range mustFlows(t, v, cl, "", "", "") {
			if f.Verdict != VerdictOK && f.Verdict != VerdictUnsupported {
				t.Errorf("%s %s: %s", cl, f.Proto, f.Verdict)
			}
		}
	}
	if r.Summary.ExpectedUnsupported == 0 {
		t.Errorf("documented Windows limits not reported")
	}
	if r.Gateways[0].Holder != "master1" {
		t.Errorf("initial holder %s, want master1 (highest priority)", r.Gateways[0].Holder)
	}
}

func TestWindowsNodeToServiceIsExpectedUnsupported(t *testing.T) {
	c, p := example(t)
	withWindowsHostRoute(p)
	v := NewVerifier(build(t, c, p, nil), false)
	r := v.Run()
	fs := mustFlows(t, v, "node→service windows→linux", "", "node009", "")
	for _, f := range fs {
		if f.Disposition != Unsupported || f.Verdict != VerdictUnsupported || !strings.Contains(f.Cause, "service VIP") {
			t.Errorf("%+v", f)
		}
	}
	if r.Failed() {
		t.Errorf("an expected-unsupported flow counted as a failure")
	}
	for _, f := range mustFlows(t, v, "pod→external windows→external", "icmp", "", "") {
		if f.Disposition != Unsupported || !strings.Contains(f.Cause, "ICMP") {
			t.Errorf("Windows pod ping to an external address: %+v", f)
		}
	}
	for _, f := range mustFlows(t, v, "node→own NodePort windows→linux", "", "", "") {
		if f.Disposition != Unsupported {
			t.Errorf("local NodePort on Windows: %+v", f)
		}
	}
	// The same through --flow, to the cluster DNS service (modelled from the plan, endpoints
	// on Linux nodes) and to a probe service.
	rs, err := v.Flow("node009", "10.176.0.10", TCP, 53)
	if err != nil || len(rs) != dnsReplicas {
		t.Fatalf("flow node009 -> cluster DNS: %v %+v", err, rs)
	}
	for _, r := range rs {
		if r.Verdict != VerdictUnsupported || r.Via != "kube-dns 10.176.0.10:53" {
			t.Errorf("node009 host -> cluster DNS: %+v", r)
		}
	}
	svc := v.m.Services[0]
	rs, err = v.Flow("node009", svc.VIP.String(), TCP, 0)
	if err != nil || len(rs) == 0 || rs[0].Verdict != VerdictUnsupported || rs[0].Forward == nil {
		t.Fatalf("flow node009 -> %s: %v %+v", svc.VIP, err, rs)
	}
}

func TestExceptionListWithoutClusterCIDR(t *testing.T) {
	check := func(t *testing.T, v *Verifier) {
		v.Run()
		fs := mustFlows(t, v, "pod→pod windows→linux", "tcp", "node009", "")
		for _, f := range fs {
			if f.Disposition != DeliveredSNAT || f.Verdict != VerdictFail || !strings.Contains(f.Cause, "OutBoundNAT") {
				t.Errorf("pod→pod with SNAT not caught: %+v", f)
			}
		}
		// Traffic inside the node stays untranslated.
		for _, f := range flows(v, "pod→pod same node windows→windows", "tcp", "", "") {
			if f.Verdict != VerdictOK {
				t.Errorf("same node: %+v", f)
			}
		}
	}
	t.Run("plan", func(t *testing.T) {
		c, p := example(t)
		withWindowsHostRoute(p)
		w := windowsNode(p, "node009")
		w.OutboundNATExceptions = []string{"10.176.0.0/12", "100.100.126.0/23"}
		check(t, NewVerifier(build(t, c, p, nil), false))
	})
	t.Run("dump", func(t *testing.T) {
		c, p := example(t)
		withWindowsHostRoute(p)
		ds := dumpSet(t, "node009=broken/node009.endpoints-no-cluster-exception.json")
		check(t, NewVerifier(build(t, c, p, ds), false))
	})
}

func TestMissingServiceRoutePolicy(t *testing.T) {
	check := func(t *testing.T, v *Verifier, want string) {
		v.Run()
		fs := mustFlows(t, v, "pod→service (backend on the client's node) windows→windows", "tcp", "node009", "")
		for _, f := range fs {
			if f.Verdict != VerdictFail || !strings.Contains(f.Cause, want) {
				t.Fatalf("hairpin through the gateway not caught: %+v", f)
			}
		}
		spec := v.enumerate()
		for _, s := range spec {
			if s.spec.kind == KindPodServiceLocal && s.spec.src.Node.Name == "node009" && s.spec.proto == TCP {
				res := v.trace(s.spec)
				text := res.Forward.Text("")
				if !strings.Contains(text, "no ROUTE/SDNRoute policy with NeedEncap covers it") {
					t.Errorf("trace does not name the missing policy:\n%s", text)
				}
				return
			}
		}
		t.Fatal("no hairpin flow enumerated")
	}
	t.Run("plan", func(t *testing.T) {
		c, p := example(t)
		withWindowsHostRoute(p)
		windowsNode(p, "node009").ServiceRoutes = nil
		// The CNI conf gives pods gateway x.2 (win-bridge): without the policy the VIP goes to
		// the Windows host, which has no route for the service CIDR but its default route.
		check(t, NewVerifier(build(t, c, p, nil), false), "has no route to 10.176.")
	})
	t.Run("dump", func(t *testing.T) {
		c, p := example(t)
		withWindowsHostRoute(p)
		// The dumped endpoint's GatewayAddress is the VIP .1: the packet hairpins through it.
		check(t, NewVerifier(build(t, c, p, dumpSet(t, "node009=broken/node009.endpoints-no-route-policy.json")), false), "not undone")
	})
}

// flannelSpec turns the example into a flannel host-gw cluster whose Linux nodes reach the
// Windows pod CIDR through a router VIP held by the gateway group.
func flannelSpec(t *testing.T) (*v1alpha1.Cluster, *plan.Plan) {
	t.Helper()
	c, _, err := v1alpha1.ParseExample()
	if err != nil {
		t.Fatal(err)
	}
	c.Spec.LinuxCNI = v1alpha1.LinuxCNI{Type: "flannel", Flannel: &v1alpha1.FlannelSettings{Backend: "host-gw"}}
	c.Spec.GatewayGroups[0].RouterVIPs = []string{"100.100.127.250"}
	if errs := v1alpha1.Validate(c); len(errs) > 0 {
		t.Fatalf("flannel spec invalid: %v", errs)
	}
	p, err := plan.New(c)
	if err != nil {
		t.Fatalf("plan flannel spec: %v", err)
	}
	routedUpstream(c, p)
	withWindowsHostRoute(p)
	return c, p
}

func TestFlannelWithoutRoutesToWindowsPods(t *testing.T) {
	c, p := flannelSpec(t)
	v := NewVerifier(build(t, c, p, nil), false)
	r := v.Run()
	for _, f := range mustFlows(t, v, "pod→pod linux→windows", "", "", "") {
		if f.Verdict != VerdictOK {
			t.Errorf("with the planned router-VIP routes: %+v", f)
		}
	}
	if r.Failed() {
		t.Errorf("flannel plan fails: %+v", r.Failures[0])
	}
	// Flannel only programs its own leases; without the planned routes Linux nodes send
	// Windows pod traffic to their default gateway.
	for i := range p.Nodes {
		if p.Nodes[i].Linux != nil {
			p.Nodes[i].Linux.Routes = nil
		}
	}
	v = NewVerifier(build(t, c, p, nil), false)
	v.Run()
	for _, f := range mustFlows(t, v, "pod→pod linux→windows", "", "node001", "") {
		if f.Verdict != VerdictFail || f.Disposition != NoRoute || !strings.Contains(f.Cause, "no route to 10.160.11") {
			t.Errorf("missing host-gw route not caught: %+v", f)
		}
	}
}

func TestVIPHolderNotOnWindowsSegment(t *testing.T) {
	c, p := example(t)
	withWindowsHostRoute(p)
	// master1 (priority 150, the holder) has its eth1 on another subnet than node009's eth1.
	for i := range p.Nodes {
		if p.Nodes[i].Name == "master1" {
			p.Nodes[i].NodeIP, p.Nodes[i].NodeSubnet = "100.100.130.202", "100.100.130.0/23"
		}
	}
	for i := range c.Spec.Nodes {
		if c.Spec.Nodes[i].Name == "master1" {
			c.Spec.Nodes[i].NICs[1].IP = "100.100.130.202"
		}
	}
	v := NewVerifier(build(t, c, p, nil), false)
	v.Run()
	for _, f := range mustFlows(t, v, "pod→pod windows→linux", "", "node009", "") {
		if f.Disposition != NoARP || !strings.Contains(f.Cause, "held by master1 on eth1, which is on segment 100.100.130.0/23, not node009's segment 100.100.126.0/23") {
			t.Errorf("holder off the segment not caught: %+v", f)
		}
	}
}

func TestAllGatewayHoldersDown(t *testing.T) {
	c, p := example(t)
	withWindowsHostRoute(p)
	v := NewVerifier(build(t, c, p, nil), false)
	if v.Run().Failed() {
		t.Fatal("baseline fails")
	}
	sc, err := ParseScenario("gateway-down=master1,master2,master3")
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Apply(sc); err != nil {
		t.Fatal(err)
	}
	r := v.Run()
	if r.Gateways[0].Holder != "none" {
		t.Errorf("holder %s after all members stopped", r.Gateways[0].Holder)
	}
	for _, f := range mustFlows(t, v, "pod→pod windows→linux", "", "", "") {
		if f.Disposition != NoARP || !strings.Contains(f.Cause, "held by nobody") {
			t.Errorf("W→L with no holder: %+v", f)
		}
	}
	for _, f := range mustFlows(t, v, "pod→pod linux→windows", "", "", "") {
		if f.Verdict != VerdictFail {
			t.Errorf("L→W with no holder: %+v", f)
		}
	}
}

func TestKeepalivedNopreempt(t *testing.T) {
	c, p := example(t)
	withWindowsHostRoute(p)
	v := NewVerifier(build(t, c, p, nil), false)
	holder := func() string { return v.Run().Gateways[0].Holder }
	steps := []struct{ scenario, want string }{
		{"", "master1"},
		{"gateway-down=master1", "master2"},
		{"gateway-up=master1", "master2"}, // nopreempt: the returning higher priority waits
		{"node-down=master2", "master1"},
		{"node-up=master2", "master1"},
		{"vip-unheld=node009", "none"},
	}
	for _, s := range steps {
		if s.scenario == "node-up=master2" {
			// While master2 is down its pods are in no flow.
			for _, f := range v.Results() {
				if strings.HasPrefix(f.Src, "master2") || strings.HasPrefix(f.Dst, "master2") {
					t.Fatalf("flow of a node that is down: %+v", f)
				}
			}
		}
		if s.scenario != "" {
			sc, err := ParseScenario(s.scenario)
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Apply(sc); err != nil {
				t.Fatal(err)
			}
		}
		if got := holder(); got != s.want {
			t.Fatalf("after %q holder %s, want %s", s.scenario, got, s.want)
		}
	}
	for _, bad := range []string{"gateway-down", "gateway-down=", "frobnicate=x", "gateway-down=node001", "node-down=nobody", "vip-unheld=10.9.9.9"} {
		sc, err := ParseScenario(bad)
		if err == nil {
			err = v.Apply(sc)
		}
		if err == nil {
			t.Errorf("scenario %q accepted", bad)
		}
	}
}

func TestKeepalivedDumps(t *testing.T) {
	c, p := example(t)
	withWindowsHostRoute(p)
	// Captured from keepalived: master1 came back after master3 took over and stays BACKUP.
	v := NewVerifier(build(t, c, p, dumpSet(t, "master1=real/master1.keepalived.data", "master3=real/master3.keepalived.data")), false)
	r := v.Run()
	if g := r.Gateways[0]; g.Holder != "master3" || !strings.Contains(g.Why, "master3.keepalived.data:") {
		t.Errorf("holder from dumps: %+v", g)
	}
	if r.Failed() {
		t.Errorf("holder master3 breaks flows: %+v", r.Failures[0])
	}
	_, err := Build(Input{Plan: p, Spec: c, Dumps: dumpSet(t, "master1=broken/master1.keepalived-also-master.data", "master3=real/master3.keepalived.data")})
	if err == nil || !strings.Contains(err.Error(), "contradictory keepalived state") || !strings.Contains(err.Error(), "master1.keepalived-also-master.data") {
		t.Errorf("two MASTERs: %v", err)
	}
}

func TestSeedIsRemoteEndpoint(t *testing.T) {
	c, p := example(t)
	withWindowsHostRoute(p)
	ds := dumpSet(t, "node009=seed/node009.endpoints-with-cbr0.json", "node009=seed/node009.networks.json")
	v := NewVerifier(build(t, c, p, ds), false)
	v.Run()
	var broken, fine int
	for _, f := range v.Results() {
		if (strings.Contains(f.Src, "10.160.11.169") || strings.Contains(f.Dst, "10.160.11.169")) && f.Verdict != VerdictUnsupported {
			broken++
			if f.Verdict != VerdictFail || !strings.Contains(f.Cause, "IsRemoteEndpoint=true") || !strings.Contains(f.Cause, "node009.endpoints-with-cbr0.json:19") {
				t.Errorf("flow of the IsRemoteEndpoint pod: %+v", f)
			}
		}
		if f.Flow == "pod→pod linux→windows" && strings.Contains(f.Dst, "10.160.11.99") {
			fine++
			if f.Verdict != VerdictOK {
				t.Errorf("the working endpoint fails: %+v", f)
			}
		}
	}
	if broken == 0 || fine == 0 {
		t.Fatalf("flows of the seed endpoints not evaluated (%d broken, %d fine)", broken, fine)
	}
	rs, err := v.Flow("node001/pod", "10.160.11.169", ICMP, 0)
	if err != nil || rs[0].Verdict != VerdictFail || rs[0].Forward.Disposition != Dropped {
		t.Fatalf("--flow to the broken endpoint: %v %+v", err, rs)
	}
	// Without the host endpoint the seed's two-endpoint dump leaves the host no way into its
	// pod subnet.
	v = NewVerifier(build(t, c, p, dumpSet(t, "node009=seed/node009.endpoints.json")), false)
	v.Run()
	if !strings.Contains(strings.Join(v.m.Notes, "\n"), "has no host endpoint \"cbr0\"") {
		t.Errorf("missing host endpoint not noted: %q", v.m.Notes)
	}
	for _, f := range mustFlows(t, v, "node→pod own node windows→windows", "tcp", "", "") {
		if f.Verdict != VerdictFail {
			t.Errorf("node→own pod without cbr0: %+v", f)
		}
	}
	// The v2 schema and UTF-16 captures say the same.
	for _, f := range []string{"seed/node009.endpoints-v2.json", "seed/node009.endpoints-with-cbr0.utf16.json"} {
		v = NewVerifier(build(t, c, p, dumpSet(t, "node009="+f)), false)
		v.Run()
		n := 0
		for _, r := range v.Results() {
			if strings.Contains(r.Dst, "10.160.11.169") && r.Verdict == VerdictFail {
				n++
			}
		}
		if n == 0 {
			t.Errorf("%s: broken endpoint not caught", f)
		}
	}
}

func TestWindowsPodCIDROverlapsCalicoBlock(t *testing.T) {
	t.Run("plan without reservation", func(t *testing.T) {
		c, p := example(t)
		withWindowsHostRoute(p)
		p.Calico.ReservedCIDRs = nil
		v := NewVerifier(build(t, c, p, nil), false)
		v.Run()
		for _, f := range mustFlows(t, v, "pod→pod linux→windows", "", "", "") {
			if f.Disposition != AddressConflict || !strings.Contains(f.Cause, "Calico IP pool 10.160.0.0/12") {
				t.Errorf("unreserved Windows CIDR: %+v", f)
			}
		}
	})
	t.Run("block in a route dump", func(t *testing.T) {
		c, p := example(t)
		withWindowsHostRoute(p)
		v := NewVerifier(build(t, c, p, dumpSet(t, "master1=broken/master1.route-n-block-overlap.txt")), false)
		v.Run()
		fs := mustFlows(t, v, "pod→pod linux→windows", "", "master1", "")
		for _, f := range fs {
			if f.Disposition != AddressConflict || !strings.Contains(f.Cause, "overlaps node001's 10.160.11.0/26") {
				t.Errorf("Calico block inside node009's CIDR: %+v", f)
			}
		}
	})
}

func TestAsymmetricReturnStrictRPFilter(t *testing.T) {
	c, p := example(t)
	withWindowsHostRoute(p)
	ds := dumpSet(t, "node001=broken/node001.ip-route-asymmetric.txt")
	m, err := Build(Input{Plan: p, Spec: c, Dumps: ds, Options: Options{DefaultRPFilter: 1}})
	if err != nil {
		t.Fatal(err)
	}
	v := NewVerifier(m, false)
	v.Run()
	for _, f := range mustFlows(t, v, "pod→pod windows→linux", "tcp", "node009", "node001") {
		if f.Disposition != Dropped || !strings.Contains(f.Cause, "rp_filter=1 (strict) on node001") || !strings.Contains(f.Cause, "leaves via eth0") {
			t.Errorf("strict rp_filter: %+v", f)
		}
	}
	// Loose: delivered, but the reply takes master2 and the report says so.
	v = NewVerifier(build(t, c, p, ds), false)
	v.Run()
	for _, f := range mustFlows(t, v, "pod→pod windows→linux", "tcp", "node009", "node001") {
		if f.Verdict != VerdictOK || len(f.Notes) == 0 || !strings.Contains(f.Notes[0], "asymmetric path") || !strings.Contains(f.Notes[0], "master2") {
			t.Errorf("loose rp_filter: %+v", f)
		}
	}
}

func TestSeedMaster1Tables(t *testing.T) {
	c, p := example(t)
	withWindowsHostRoute(p)
	// Before keepalived (seed §2.6, first table): Calico's real blocks, no route to node009.
	v := NewVerifier(build(t, c, p, dumpSet(t, "master1=seed/master1.route-n.txt")), false)
	v.Run()
	m1 := v.m.NodeByName("master1")
	if m1.Pods[0].IP.String() != "10.161.40.82" || m1.PodRanges[0].String() != "10.161.40.64/26" {
		t.Fatalf("master1's pods from its table: %v %v", m1.Pods[0].IP, m1.PodRanges)
	}
	if r := v.m.NodeByName("node001").PodRanges; len(r) != 2 || r[0].String() != "10.167.98.192/26" {
		t.Fatalf("node001's blocks from master1's table: %v", r)
	}
	for _, f := range mustFlows(t, v, "pod→pod linux→windows", "", "master1", "") {
		if f.Verdict != VerdictFail || !strings.Contains(f.Cause, "no route to 10.160.11") {
			t.Errorf("master1 before keepalived: %+v", f)
		}
	}
	for _, f := range mustFlows(t, v, "pod→pod linux→linux", "", "master1", "node001") {
		if f.Verdict != VerdictOK {
			t.Errorf("Calico blocks: %+v", f)
		}
	}
	// After: master3 holds the VIP (its table and keepalived dump); master1 tunnels to it.
	ds := dumpSet(t, "master1=seed/master1-after-keepalived.route-n.txt", "master3=seed/master3.route-n.txt",
		"master3=real/master3.keepalived.data", "master1=real/master1.keepalived.data")
	v = NewVerifier(build(t, c, p, ds), false)
	r := v.Run()
	if r.Failed() {
		var b bytes.Buffer
		r.WriteText(&b)
		t.Fatalf("seed state after keepalived fails:\n%s", b.String())
	}
	rs, err := v.Flow("master1/pod", "node009/pod", TCP, 0)
	if err != nil {
		t.Fatal(err)
	}
	text := rs[0].Forward.Text("")
	if !strings.Contains(text, "10.160.11.0/24 via 100.100.126.204 dev tunl0") || !strings.Contains(text, "master1-after-keepalived.route-n.txt:5") {
		t.Errorf("trace does not use the dumped route:\n%s", text)
	}
}

func TestDumpErrors(t *testing.T) {
	c, p := example(t)
	for _, tc := range []struct {
		dumps []string
		want  string
	}{
		{[]string{"node999=seed/master3.route-n.txt"}, "dump for node \"node999\", which is not in the plan"},
		{[]string{"node009=seed/master3.route-n.txt"}, "route -n dump for node009, a windows node"},
		{[]string{"master1=seed/node009.endpoints.json"}, "HNS dump for master1, a linux node"},
		{[]string{"master1=seed/master1.route-n.txt", "master1=seed/master3.route-n.txt"}, "contradictory dumps: a second routing table for master1"},
		{[]string{"node001=real/master3.keepalived.data"}, "keepalived dump for node001, which is a member of no gateway group"},
	} {
		_, err := Build(Input{Plan: p, Spec: c, Dumps: dumpSet(t, tc.dumps...)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.dumps, err, tc.want)
		}
		var de *DumpError
		if err != nil && !errorsAs(err, &de) {
			t.Errorf("%v: %T is not a DumpError", tc.dumps, err)
		}
	}
}

func TestDeterministicOutput(t *testing.T) {
	c, p := example(t)
	out := func() string {
		v := NewVerifier(build(t, c, p, dumpSet(t, "node009=seed/node009.endpoints-with-cbr0.json")), false)
		var b bytes.Buffer
		if err := v.Run().WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	a, b := out(), out()
	if a != b {
		t.Fatal("two runs on the same input differ")
	}
}

// TestClassesMatchNaive checks the equivalence classes against per-node-pair evaluation: the
// node pairs per flow class, protocol, verdict and disposition must be the same.
func TestClassesMatchNaive(t *testing.T) {
	type variant struct {
		name      string
		dumps     []string
		scenarios []string
		mutate    func(*plan.Plan)
		// spec replaces the example (with its Windows host route).
		spec func(*testing.T) (*v1alpha1.Cluster, *plan.Plan)
	}
	for _, vr := range []variant{
		{name: "example"},
		{name: "holder down", scenarios: []string{"gateway-down=master1"}},
		{name: "node down", scenarios: []string{"node-down=node003"}},
		{name: "no exception", mutate: func(p *plan.Plan) { windowsNode(p, "node009").OutboundNATExceptions = []string{"10.176.0.0/12"} }},
		{name: "seed dumps", dumps: []string{"node009=seed/node009.endpoints-with-cbr0.json", "master1=seed/master1.route-n.txt"}},
		{name: "asymmetric", dumps: []string{"node001=broken/node001.ip-route-asymmetric.txt"}},
		{name: "flannel/vxlan", spec: vxlanSpec},
		{name: "flannel/vxlan node down", spec: vxlanSpec, scenarios: []string{"node-down=master1"}},
	} {
		t.Run(vr.name, func(t *testing.T) {
			var c *v1alpha1.Cluster
			var p *plan.Plan
			if vr.spec != nil {
				c, p = vr.spec(t)
			} else {
				c, p = example(t)
				withWindowsHostRoute(p)
			}
			if vr.mutate != nil {
				vr.mutate(p)
			}
			agg := func(naive bool) map[string]int {
				// The same services in both: one per node, backed by that node's first pod.
				base := build(t, c, p, dumpSet(t, vr.dumps...))
				var svcs []ServiceSpec
				for i, n := range base.Nodes {
					if len(n.Pods) == 0 {
						continue
					}
					svcs = append(svcs, ServiceSpec{Name: "svc-" + n.Name, ClusterIP: base.ServiceCIDR.Nth(uint32(100 + i)).String(),
						Ports:    []ServicePort{{Protocol: "TCP", Port: 80, TargetPort: 8080, NodePort: 30000 + i}, {Protocol: "UDP", Port: 53, TargetPort: 5353}},
						Backends: []string{n.Pods[0].IP.String()}})
				}
				m, err := Build(Input{Plan: p, Spec: c, Dumps: dumpSet(t, vr.dumps...), Services: svcs})
				if err != nil {
					t.Fatal(err)
				}
				v := NewVerifier(m, naive)
				for _, s := range vr.scenarios {
					sc, _ := ParseScenario(s)
					if err := v.Apply(sc); err != nil {
						t.Fatal(err)
					}
				}
				v.Run()
				out := map[string]int{}
				for _, r := range v.Results() {
					out[fmt.Sprintf("%s %s %s %s", r.Flow, r.Proto, r.Verdict, r.Disposition)] += r.NodePairs
				}
				return out
			}
			classes, naive := agg(false), agg(true)
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
		})
	}
}

// TestIncrementalMatchesFull: after joins and a gateway failure, the incremental run reports
// what a verifier built from scratch on the changed model reports.
func TestIncrementalMatchesFull(t *testing.T) {
	in := genInput(t, 40, 12, 3, 30)
	lin, win, linSpec, winSpec, vip, inst := joinNodes(t, in)
	m, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	v := NewVerifier(m, false)
	v.Run()
	agg := func(v *Verifier) map[string]int {
		out := map[string]int{}
		for _, r := range v.Results() {
			out[fmt.Sprintf("%s %s %s %s", r.Flow, r.Proto, r.Verdict, r.Disposition)] += r.NodePairs
		}
		return out
	}
	steps := []struct {
		name   string
		change func() error
	}{
		{"join linux", func() error { return v.Join(lin, linSpec, nil, "") }},
		{"join windows", func() error { return v.Join(win, winSpec, vip, inst) }},
		{"gateway down", func() error {
			return v.Apply(Scenario{Kind: "gateway-down", Targets: []string{holderOf(m, 0)}})
		}},
		{"node down", func() error { return v.Apply(Scenario{Kind: "node-down", Targets: []string{"linux-00020"}}) }},
		{"vip unheld", func() error { return v.Apply(Scenario{Kind: "vip-unheld", Targets: []string{"gw-1"}}) }},
		{"gateway up", func() error {
			return v.Apply(Scenario{Kind: "gateway-up", Targets: []string{m.Groups[0].Members[0].Node.Name}})
		}},
	}
	for _, s := range steps {
		if err := s.change(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		v.Run()
		if v.Reused == 0 {
			t.Errorf("%s: nothing reused, the run was not incremental", s.name)
		}
		inc := agg(v)
		fresh := NewVerifier(m, false)
		fresh.Run()
		full := agg(fresh)
		if fmt.Sprint(inc) != fmt.Sprint(full) {
			for k, n := range full {
				if inc[k] != n {
					t.Errorf("%s: %s: incremental %d, full %d", s.name, k, inc[k], n)
				}
			}
			for k, n := range inc {
				if _, ok := full[k]; !ok {
					t.Errorf("%s: %s: incremental %d, full none", s.name, k, n)
				}
			}
		}
		// Continue incrementally from the fresh verifier's classes: the model's signatures now
		// belong to it.
		v = fresh
	}
	// A joined node joins the class of the node it mirrors: its flows are that class's.
	wj, w0 := v.m.NodeByName("win-join"), v.m.NodeByName(win.Name)
	if wj.class == nil {
		t.Errorf("joined Windows node is in no class")
	}
	_ = w0
}

func TestHNSNetworkAndLoadBalancerDumps(t *testing.T) {
	c, p := example(t)
	withWindowsHostRoute(p)
	// winkernel programmed only kube-dns: the probe services have no load balancer on node009,
	// so its pods' service traffic leaves with the VIP and is translated by the gateway holder.
	v := NewVerifier(build(t, c, p, dumpSet(t, "node009=seed/node009.endpoints-policies.json", "node009=seed/node009.policylists.json")), false)
	v.Run()
	found := false
	for _, s := range v.enumerate() {
		if s.spec.kind == KindPodService && s.spec.src.Node.Name == "node009" && s.spec.proto == TCP {
			res := v.trace(s.spec)
			if text := res.Forward.Text(""); strings.Contains(text, "winkernel has no load balancer for") && strings.Contains(text, "node009.policylists.json") {
				found = true
			}
		}
	}
	if !found {
		t.Error("missing winkernel load balancer not shown in traces")
	}
	// A network dump without the planned network: nothing reaches node009's pods.
	bad := []byte(`[{"ID":"1","Name":"nat","Type":"NAT","Subnets":[{"AddressPrefix":"172.30.0.0/20","GatewayAddress":"172.30.0.1"}]}]`)
	f, err := ParseDump("node009", "networks.json", bad)
	if err != nil {
		t.Fatal(err)
	}
	v = NewVerifier(build(t, c, p, &DumpSet{Files: []*DumpFile{f}}), false)
	v.Run()
	for _, r := range mustFlows(t, v, "pod→pod linux→windows", "", "", "") {
		if r.Verdict != VerdictFail {
			t.Errorf("flow to a node without its HNS network: %+v", r)
		}
	}
	for _, r := range mustFlows(t, v, "pod→pod windows→linux", "", "", "") {
		if r.Verdict != VerdictFail || !strings.Contains(r.Cause, "has no HNS network named \"l2bridge\"") {
			t.Errorf("flow from a node without its HNS network: %+v", r)
		}
	}
}
