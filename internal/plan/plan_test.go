package plan

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

func exampleCluster(t testing.TB) *v1alpha1.Cluster {
	t.Helper()
	c, _, err := v1alpha1.ParseExample()
	if err != nil {
		t.Fatalf("parse example: %v", err)
	}
	return c
}

func examplePlan(t testing.TB) *Plan {
	t.Helper()
	p, err := New(exampleCluster(t))
	if err != nil {
		t.Fatalf("plan example: %v", err)
	}
	return p
}

func findNode(t testing.TB, p *Plan, name string) NodePlan {
	t.Helper()
	for _, n := range p.Nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("node %s not in plan", name)
	return NodePlan{}
}

// The seed 000 values: node009's pod network, its CNI exceptions and DNS, and the keepalived
// group on master1-3.
func TestExampleSeedValues(t *testing.T) {
	p := examplePlan(t)
	n := findNode(t, p, "node009")
	w := n.Windows
	if w == nil {
		t.Fatal("node009 has no Windows plan")
	}
	checks := []struct{ what, got, want string }{
		{"podCIDR", n.PodCIDR, "10.160.11.0/24"},
		{"podCIDR source", n.PodCIDRSource, PodCIDRFromSpec},
		{"gateway", n.Gateway, "10.160.11.1"},
		{"windows gateway", w.Gateway, "10.160.11.1"},
		{"endpoint", n.Endpoint, "10.160.11.2"},
		{"host endpoint", w.HostEndpointIP, "10.160.11.2"},
		{"host endpoint name", w.HostEndpointName, "cbr0"},
		{"node IP", n.NodeIP, "100.100.126.216"},
		{"node subnet", n.NodeSubnet, "100.100.126.0/23"},
		{"HNS network", w.HNSNetworkName, "l2bridge"},
		{"HNS type", w.HNSNetworkType, "L2Bridge"},
		{"adapter", w.AdapterName, "eth1"},
		{"holder", w.GatewayHolder, "keepalived:win-gw"},
		{"cni", w.CNIPlugin, "win-bridge"},
		{"kube-proxy mode", w.KubeProxyMode, "kernelspace"},
		{"pipe", w.ContainerdPipe, "npipe:////./pipe/containerd-containerd"},
		{"pause", w.PauseImage, "registry.k8s.io/pause:3.10.2"},
		{"nanoserver", w.NanoserverImage, "mcr.microsoft.com/windows/nanoserver:ltsc2022"},
		{"build label", n.Labels["node.kubernetes.io/windows-build"], "10.0.20348"},
		{"cni conf dir", w.CNIConfDir, `C:\k\cni\conf`},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	wantEx := []string{"10.160.0.0/12", "10.176.0.0/12", "100.100.126.0/23"}
	if !slices.Equal(w.OutboundNATExceptions, wantEx) || !slices.Equal(n.Exceptions, wantEx) {
		t.Errorf("exceptions = %v / %v, want %v", w.OutboundNATExceptions, n.Exceptions, wantEx)
	}
	if !slices.Equal(w.DNSServers, []string{"10.176.0.10"}) {
		t.Errorf("DNS servers = %v", w.DNSServers)
	}
	wantSearch := []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local", "mylan.k8s"}
	if !slices.Equal(w.DNSSearch, wantSearch) {
		t.Errorf("DNS search = %v, want %v", w.DNSSearch, wantSearch)
	}
	if !slices.Equal(w.ServiceRoutes, []string{"10.176.0.0/12"}) {
		t.Errorf("service routes = %v", w.ServiceRoutes)
	}
	// Pods use the host endpoint (.2) as gateway under containerd, so the host must send the rest
	// of the cluster CIDR to the keepalived VIP (.1) through the host endpoint.
	wantRoutes := []Route{{Destination: "10.160.0.0/12", Via: "10.160.11.1", Dev: "vEthernet (cbr0)"}}
	var gotRoutes []Route
	for _, r := range w.Routes {
		gotRoutes = append(gotRoutes, Route{Destination: r.Destination, Via: r.Via, Dev: r.Dev})
	}
	if !slices.Equal(gotRoutes, wantRoutes) {
		t.Errorf("windows host routes = %v, want %v", gotRoutes, wantRoutes)
	}
	if len(n.Taints) != 1 || n.Taints[0] != (Taint{Key: "os", Value: "windows", Effect: "NoSchedule"}) {
		t.Errorf("taints = %v", n.Taints)
	}
	if w.EnableDSR || w.KubeProxySourceVIP != "" {
		t.Errorf("DSR %v / source VIP %q on an L2Bridge node without DSR enabled", w.EnableDSR, w.KubeProxySourceVIP)
	}

	if len(p.GatewayGroups) != 1 {
		t.Fatalf("gateway groups = %d", len(p.GatewayGroups))
	}
	g := p.GatewayGroups[0]
	var names []string
	for _, m := range g.Members {
		names = append(names, m.Node)
	}
	if g.Name != "win-gw" || g.Interface != "eth1" || !slices.Equal(names, []string{"master1", "master2", "master3"}) {
		t.Errorf("group %s on %s with %v", g.Name, g.Interface, names)
	}
	if !slices.Equal(g.VRIDs, []int{188}) || !slices.Equal(g.VIPs, []string{"10.160.11.1/24"}) {
		t.Errorf("VRIDs %v VIPs %v, want [188] [10.160.11.1/24]", g.VRIDs, g.VIPs)
	}
	if len(g.Instances) != 1 || g.Instances[0].Name != "VI_WIN_GW_188" || g.Instances[0].VIPs[0].WindowsNode != "node009" {
		t.Errorf("instances = %+v", g.Instances)
	}
	m1 := findNode(t, p, "master1").Linux
	if m1.Gateway == nil || m1.Gateway.SourceIP != "100.100.126.202" || m1.Gateway.Priority != 150 ||
		!slices.Equal(m1.Gateway.Peers, []string{"100.100.126.203", "100.100.126.204"}) {
		t.Errorf("master1 gateway = %+v", m1.Gateway)
	}
	// Loose mode on the gateway interface only: a loose conf/all stops Felix (issue 11 item 1).
	if _, all := m1.Sysctls["net.ipv4.conf.all.rp_filter"]; m1.Sysctls["net.ipv4.conf.eth1.rp_filter"] != "2" || all {
		t.Errorf("master1 sysctls = %v; want rp_filter 2 on eth1 and conf/all untouched", m1.Sysctls)
	}
	// Calico exports the holder's connected route: no static routes anywhere (seed 000 §2.6).
	for _, n := range p.Nodes {
		if n.Linux != nil && len(n.Linux.Routes) > 0 {
			t.Errorf("%s has routes %v although Calico exports connected routes", n.Name, n.Linux.Routes)
		}
	}
	if p.Calico == nil || !slices.Equal(p.Calico.ReservedCIDRs, []string{"10.160.11.0/24"}) {
		t.Errorf("calico = %+v", p.Calico)
	}
	if len(p.RuntimeClasses) != 1 || p.RuntimeClasses[0].Name != "windows-ltsc2022" ||
		p.RuntimeClasses[0].NodeSelector["node.kubernetes.io/windows-build"] != "10.0.20348" ||
		len(p.RuntimeClasses[0].Tolerations) != 1 {
		t.Errorf("runtime classes = %+v", p.RuntimeClasses)
	}
}

func TestExampleGolden(t *testing.T) {
	got, err := examplePlan(t).JSON()
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "example.plan.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("plan.json differs from %s; run go test ./internal/plan -update and review the diff", golden)
	}
	if !bytes.HasSuffix(got, []byte("}\n")) {
		t.Error("plan.json does not end with a newline")
	}
}

func TestDeterministicAndInputUntouched(t *testing.T) {
	c := exampleCluster(t)
	before, _ := jsonOf(c)
	a, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := a.JSON()
	jb, _ := b.JSON()
	if !bytes.Equal(ja, jb) {
		t.Error("two plans of the same spec differ")
	}
	after, _ := jsonOf(c)
	if !bytes.Equal(before, after) {
		t.Error("New modified its input")
	}
}

func TestNilAndEmpty(t *testing.T) {
	for _, c := range []*v1alpha1.Cluster{nil, {}} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%v) succeeded", c)
		} else {
			var el v1alpha1.ErrorList
			if !errors.As(err, &el) {
				t.Errorf("error %T is not a v1alpha1.ErrorList", err)
			}
		}
	}
}

// issue 11 item 12: with Felix-programmed cluster routes or VXLAN pools nothing exports the VIP
// holder's route. Without router VIPs the plan warns (verify shows what breaks); with them it
// routes Linux nodes via the router VIP (the route keeper) and says so.
func TestCalicoWithoutBIRDExport(t *testing.T) {
	for _, mut := range []func(*v1alpha1.CalicoSettings){
		func(cs *v1alpha1.CalicoSettings) { cs.ClusterRoutes = v1alpha1.CalicoClusterRoutesFelix },
		func(cs *v1alpha1.CalicoSettings) { cs.VXLANMode = "Always" },
	} {
		c := exampleCluster(t)
		mut(c.Spec.LinuxCNI.Calico)
		p0, err := New(c)
		if err != nil {
			t.Fatalf("without router VIPs: %v (want a plan with a warning)", err)
		}
		if !slices.ContainsFunc(p0.Notes, func(n string) bool { return strings.Contains(n, "give every gateway group routerVIPs") }) {
			t.Errorf("without router VIPs: no warning: %q", p0.Notes)
		}
		c.Spec.GatewayGroups[0].RouterVIPs = []string{"100.100.126.250"}
		p, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(p.Notes, func(n string) bool { return strings.Contains(n, "route keeper") }) {
			t.Errorf("no note about the route keeper: %q", p.Notes)
		}
		routes := findNode(t, p, "node001").Linux.Routes
		if len(routes) != 1 || routes[0].Destination != "10.160.11.0/24" || routes[0].Via != "100.100.126.250" {
			t.Errorf("node001 routes = %+v, want 10.160.11.0/24 via the router VIP", routes)
		}
	}
}
