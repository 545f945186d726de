package winnode

import (
	"context"
	"testing"
	"time"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// testLoadBalancers is how many load balancers the modelled kube-proxy programs.
const testLoadBalancers = 12

// designPlan plans the embedded example cluster in a design ("" keeps the example's).
func designPlan(t testing.TB, design v1alpha1.NetworkDesign) *plan.Plan {
	t.Helper()
	c, _, err := v1alpha1.ParseExample()
	if err != nil {
		t.Fatalf("parse example: %v", err)
	}
	switch design {
	case v1alpha1.DesignFlannelHostGW, v1alpha1.DesignFlannelVXLAN, v1alpha1.DesignHostGW:
		c.Spec.Design = design
		c.Spec.GatewayGroups = nil
		// host-gw routes every node's spec.podCIDR, which calico-ipam ignores (validate_design.go).
		c.Spec.LinuxCNI = v1alpha1.LinuxCNI{Type: "flannel"}
		if design != v1alpha1.DesignHostGW {
			c.Spec.Windows.HNSNetworkName = ""
		}
		v1alpha1.SetDefaults(c)
	}
	if errs := v1alpha1.Validate(c); len(errs) > 0 {
		t.Fatalf("spec is invalid: %v", errs)
	}
	p, err := plan.New(c)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return p
}

func windowsNode(t testing.TB, p *plan.Plan) plan.NodePlan {
	t.Helper()
	for _, n := range p.Nodes {
		if n.Windows != nil {
			return n
		}
	}
	t.Fatal("the plan has no Windows node")
	return plan.NodePlan{}
}

// node is a modelled Windows node of the example cluster: its adapters, the services
// render installs, a kube-proxy that programs testLoadBalancers, and in flannel designs a
// flanneld that creates the pod network.
type node struct {
	host    *MemHost
	desired Desired
	r       *Reconciler
	n       plan.NodePlan
}

func newNode(t *testing.T, design v1alpha1.NetworkDesign) *node {
	t.Helper()
	return newNodeModel(t, design, Model{})
}

// newNodeModel is newNode on a host under model m.
func newNodeModel(t *testing.T, design v1alpha1.NetworkDesign, m Model) *node {
	t.Helper()
	p := designPlan(t, design)
	n := windowsNode(t, p)
	d, err := DesiredFromPlan(p, n)
	if err != nil {
		t.Fatal(err)
	}
	h := NewMemHostModel(m,
		Adapter{Name: "eth0", MAC: "00-15-00-00-00-01", IPv4: []string{"172.16.126.216"}},
		Adapter{Name: n.Windows.AdapterName, MAC: n.ClusterNICMAC, IPv4: []string{n.NodeIP}},
	)
	ctx := testCtx(t)
	svcs, err := render.WindowsServices(p, n)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range svcs {
		cfg := ServiceConfig{Name: s.Name, DisplayName: s.DisplayName, Binary: s.Binary, Args: s.Args,
			DependsOn: s.DependsOn, StartType: StartAutomatic, Account: s.Account,
			Recovery: []time.Duration{10 * time.Second, 10 * time.Second, 30 * time.Second}, RecoveryReset: 24 * time.Hour}
		if s.Manual {
			cfg.StartType = StartManual
		}
		if err := h.InstallService(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	h.SetBehavior(d.KubeProxy, ServiceBehavior{ProgramsNetwork: d.ProxyNetwork, LoadBalancers: testLoadBalancers})
	if n.Windows.CNIPlugin == "flannel" {
		h.SetBehavior("flanneld", ServiceBehavior{CreatesNetwork: &NetworkSpec{
			Name: n.Windows.HNSNetworkName, Type: n.Windows.HNSNetworkType, Prefix: n.PodCIDR,
			Gateway: n.Windows.Gateway, AdapterName: n.Windows.AdapterName,
		}})
	}
	return &node{host: h, desired: d, n: n, r: &Reconciler{Host: h, Desired: d}}
}

// testCtx bounds every test: none may hang.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (nd *node) pass(t *testing.T) Report {
	t.Helper()
	rep, err := nd.r.Reconcile(testCtx(t))
	if err != nil {
		t.Fatalf("pass: %v\nevents: %v", err, nd.host.Events())
	}
	return rep
}

func (nd *node) healthyPass(t *testing.T) Report {
	t.Helper()
	rep := nd.pass(t)
	if !rep.Healthy {
		t.Fatalf("pass %d unhealthy: %s\nevents: %v", rep.Pass, rep.Reason(), nd.host.Events())
	}
	return rep
}

// assertRunning checks that every desired service runs.
func (nd *node) assertRunning(t *testing.T) {
	t.Helper()
	for _, s := range nd.desired.Services {
		if st := nd.host.State(s.Name); st != ServiceRunning {
			t.Errorf("service %s is %s, want Running", s.Name, st)
		}
	}
}

// assertNetwork checks the pod network and host endpoint against the plan.
func (nd *node) assertNetwork(t *testing.T, adapter string) {
	t.Helper()
	nets := nd.host.Networks()
	for _, want := range nd.desired.Networks {
		have := networkNamed(nets, want.Name)
		if have == nil {
			t.Fatalf("HNS network %s missing; have %+v", want.Name, nets)
		}
		if have.Prefix != want.Prefix || have.Gateway != want.Gateway || have.Type != want.Type || have.AdapterName != adapter {
			t.Errorf("HNS network %s = %+v, want %s %s gw %s on %s", want.Name, have.NetworkSpec, want.Type, want.Prefix, want.Gateway, adapter)
		}
	}
	if nd.desired.HostEndpoint == nil {
		return
	}
	var found bool
	for _, e := range nd.host.Endpoints() {
		if e.Name == nd.desired.HostEndpoint.Name {
			found = true
			if e.IP != nd.desired.HostEndpoint.IP || !e.HostAttached || e.Network != nd.desired.HostEndpoint.Network {
				t.Errorf("host endpoint = %+v, want %s on %s attached", e, nd.desired.HostEndpoint.IP, nd.desired.HostEndpoint.Network)
			}
		}
	}
	if !found {
		t.Errorf("host endpoint %s missing", nd.desired.HostEndpoint.Name)
	}
}

// assertRoutes checks that every desired host route is on the host once.
func (nd *node) assertRoutes(t *testing.T) {
	t.Helper()
	have := nd.host.HostRoutes()
	for _, want := range nd.desired.Routes {
		n := 0
		for _, h := range have {
			if routeMatches(h, want) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("route %s is on the host %d times; host routes %v", want, n, have)
		}
	}
}
