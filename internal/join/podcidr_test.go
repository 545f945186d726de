package join

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// TestNeedsPodCIDR: only a Windows node of calico/hostprocess (Calico's pod makes the network,
// Calico IPAM addresses the pods) is planned without its Node's spec.podCIDR, BGP or VXLAN; the
// node service plans such a node from a join state that records it (State.WithoutPodCIDR), and a
// node of any other design stays unplanned until join has read the pod CIDR.
func TestNeedsPodCIDR(t *testing.T) {
	bgp := func(c *v1alpha1.Cluster) {
		c.Spec.LinuxCNI.Calico.VXLANMode, c.Spec.LinuxCNI.Calico.BGP = "Never", "Enabled"
	}
	cases := []struct {
		file, node string
		mod        func(*v1alpha1.Cluster)
		want       bool
	}{
		{"calico-hostprocess.yaml", "win-1", nil, false},
		{"calico-hostprocess.yaml", "win-1", bgp, false},
		{"calico-hostprocess.yaml", "cp1", nil, true},
		{"flannel-hostprocess.yaml", "win-1", nil, true},
		{"flannel-vxlan.yaml", "win-1", nil, true},
		{"hostgw.yaml", "win-a", nil, true},
		{"router.yaml", "win1", nil, true},
	}
	for _, c := range cases {
		name := c.file + "/" + c.node
		if c.mod != nil {
			name += "/modified"
		}
		t.Run(name, func(t *testing.T) {
			file := filepath.Join("..", "..", "testdata", "specs", "good", c.file)
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			spec, _, err := v1alpha1.Parse(file, data)
			if err != nil {
				t.Fatal(err)
			}
			if c.mod != nil {
				c.mod(spec)
			}
			p, err := plan.New(spec)
			if err != nil {
				t.Fatal(err)
			}
			var np *plan.NodePlan
			for i := range p.Nodes {
				if p.Nodes[i].Name == c.node {
					np = &p.Nodes[i]
				}
			}
			if np == nil {
				t.Fatalf("node %s not in the plan", c.node)
			}
			if got := needsPodCIDR(*np); got != c.want {
				t.Fatalf("needsPodCIDR = %v, want %v (design %s, network owner %q)", got, c.want, spec.Spec.Design, windowsOwner(*np))
			}
			if np.Windows == nil || c.mod != nil {
				return
			}
			// The node service's side: a state without a pod CIDR plans the node only when it
			// says the node is planned without one and the plan agrees.
			paths := render.WindowsPathsUnder(t.TempDir(), t.TempDir())
			if err := os.MkdirAll(paths.DataDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(paths.DataDir, "cluster.yaml"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			h := memHost{os: "windows"}
			for _, without := range []bool{false, true} {
				st, _ := json.Marshal(State{Node: c.node, Server: "https://10.0.0.10:6443", WithoutPodCIDR: without, Step: "pod-network"})
				if err := os.WriteFile(StatePath(paths), st, 0o644); err != nil {
					t.Fatal(err)
				}
				pl, err := LoadPlanned(context.Background(), h, paths)
				if unplanned := !without || c.want; unplanned {
					if !errors.Is(err, os.ErrNotExist) {
						t.Errorf("withoutPodCIDR %v: LoadPlanned = %v, want os.ErrNotExist (no pod CIDR yet)", without, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("withoutPodCIDR %v: LoadPlanned: %v", without, err)
				}
				if pl.Node.Name != c.node || !cniOwned(pl.Node) || pl.CNIDaemonSet != "calico-system/calico-node-windows" {
					t.Errorf("planned node %s (CNI-owned %v), CNI DaemonSet %q", pl.Node.Name, cniOwned(pl.Node), pl.CNIDaemonSet)
				}
			}
		})
	}
}

func windowsOwner(n plan.NodePlan) string {
	if n.Windows == nil {
		return "(Linux)"
	}
	return n.Windows.NetworkOwner
}
