package render

import (
	"path/filepath"
	"testing"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// A node whose network a CNI pod owns gets none of kubewin's network effects and neither
// kube-proxy nor flanneld as a service; containerd, the kubelet and the hns start remain.
func TestCNIOwnedWindowsEffects(t *testing.T) {
	for _, f := range []string{"calico-hostprocess.yaml", "flannel-hostprocess.yaml"} {
		t.Run(f, func(t *testing.T) {
			c, _, err := v1alpha1.Load(filepath.Join("..", "..", "testdata", "specs", "good", f))
			if err != nil {
				t.Fatal(err)
			}
			p, err := plan.New(c)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range p.Nodes {
				if n.Windows == nil {
					continue
				}
				effects, err := NodeEffects(p, n)
				if err != nil {
					t.Fatal(err)
				}
				services := map[string]bool{}
				for _, e := range effects {
					switch e.Kind {
					case EffectNetwork, EffectHostEndpoint, EffectForwarding, EffectRoute, EffectPreserveRoute:
						t.Errorf("%s: effect %s on a node whose network the CNI pod owns", n.Name, e)
					case EffectService:
						services[e.Service.Name] = true
					}
				}
				if !services["containerd"] || !services["kubelet"] || services["kube-proxy"] || services["flanneld"] {
					t.Errorf("%s: services %v", n.Name, services)
				}
				if len(EffectsOf(effects, EffectSystemService)) != 1 || len(EffectsOf(effects, EffectFirewallRule)) == 0 || len(EffectsOf(effects, EffectACL)) == 0 {
					t.Errorf("%s: effects %v", n.Name, effects)
				}
			}
		})
	}
}
