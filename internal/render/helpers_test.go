package render

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/atomicfs"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// exampleCluster is the embedded example, parsed and validated by the real spec package.
func exampleCluster(t testing.TB) *v1alpha1.Cluster {
	t.Helper()
	c, _, err := v1alpha1.ParseExample()
	if err != nil {
		t.Fatalf("parse example: %v", err)
	}
	return c
}

// planOf validates c with the spec package and plans it with the real planner.
func planOf(t testing.TB, c *v1alpha1.Cluster) *plan.Plan {
	t.Helper()
	if errs := v1alpha1.Validate(c); len(errs) > 0 {
		t.Fatalf("variant spec is invalid: %v", errs)
	}
	p, err := plan.New(c)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return p
}

func examplePlan(t testing.TB) *plan.Plan { return planOf(t, exampleCluster(t)) }

// designVariants are the example cluster re-expressed in every network design, plus Hyper-V,
// a Windows Server 2022 node and DSR, so that every renderer branch meets a real plan.
func designVariants(t testing.TB) map[string]*plan.Plan {
	t.Helper()
	out := map[string]*plan.Plan{"keepalived": examplePlan(t)}

	withWin2022 := func(c *v1alpha1.Cluster) {
		n := c.Spec.Nodes[len(c.Spec.Nodes)-1]
		n.Name, n.WindowsBuild, n.PodCIDR = "node010", "ltsc2022", ""
		n.NICs = []v1alpha1.NIC{{Name: "Ethernet 2", IP: "100.100.126.217", Prefix: 23}}
		n.ClusterNIC = "Ethernet 2"
		c.Spec.Nodes = append(c.Spec.Nodes, n)
	}

	c := exampleCluster(t)
	c.Spec.Windows.HyperV = true
	c.Spec.Windows.EnableDSR = true
	withWin2022(c)
	v1alpha1.SetDefaults(c)
	out["keepalived-hyperv-2022"] = planOf(t, c)

	c = exampleCluster(t)
	c.Spec.Design = v1alpha1.DesignUpstreamToRRouter
	c.Spec.GatewayGroups = nil
	c.Spec.TorRouter = &v1alpha1.TorRouter{Name: "tor1", IP: "100.100.126.1"}
	out["router"] = planOf(t, c)

	c = exampleCluster(t)
	c.Spec.Design = v1alpha1.DesignHostGW
	c.Spec.GatewayGroups = nil
	c.Spec.LinuxCNI = v1alpha1.LinuxCNI{Type: "other"}
	out["host-gw"] = planOf(t, c)

	for _, d := range []v1alpha1.NetworkDesign{v1alpha1.DesignFlannelHostGW, v1alpha1.DesignFlannelVXLAN} {
		c = exampleCluster(t)
		c.Spec.Design = d
		c.Spec.GatewayGroups = nil
		c.Spec.LinuxCNI = v1alpha1.LinuxCNI{Type: "flannel"}
		c.Spec.Windows.HNSNetworkName = ""
		v1alpha1.SetDefaults(c)
		out[strings.ReplaceAll(string(d), "/", "-")] = planOf(t, c)
	}
	return out
}

func windowsNode(t testing.TB, p *plan.Plan, name string) plan.NodePlan {
	t.Helper()
	for _, n := range p.Nodes {
		if n.Name == name {
			if n.Windows == nil {
				t.Fatalf("%s is not a Windows node", name)
			}
			return n
		}
	}
	t.Fatalf("no node %s in plan", name)
	return plan.NodePlan{}
}

func windowsNodes(p *plan.Plan) []plan.NodePlan {
	var out []plan.NodePlan
	for _, n := range p.Nodes {
		if n.Windows != nil {
			out = append(out, n)
		}
	}
	return out
}

func fileMap(files []atomicfs.File) map[string][]byte {
	m := make(map[string][]byte, len(files))
	for _, f := range files {
		m[f.Path] = f.Data
	}
	return m
}

func mustRender(t testing.TB, p *plan.Plan) map[string][]byte {
	t.Helper()
	files, err := Render(p)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return fileMap(files)
}

func wantContains(t *testing.T, what string, data []byte, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(string(data), w) {
			t.Errorf("%s lacks %q:\n%s", what, w, data)
		}
	}
}

func planRoute(dst, via string) plan.Route { return plan.Route{Destination: dst, Via: via} }

// execIn runs a command inside network namespace ns.
func execIn(ns string, args ...string) (string, error) {
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...).CombinedOutput()
	return string(out), err
}
