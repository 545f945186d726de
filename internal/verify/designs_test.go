package verify

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func loadSpec(t *testing.T, name string) (*v1alpha1.Cluster, *plan.Plan) {
	t.Helper()
	c, _, err := v1alpha1.Load(filepath.Join("..", "..", "testdata", "specs", "good", name))
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	p, err := plan.New(c)
	if err != nil {
		t.Fatalf("plan %s: %v", name, err)
	}
	routedUpstream(c, p)
	return c, p
}

// TestGoodSpecsPerDesign verifies the spec engineer's good specs, one per network design.
// In the keepalived designs the plan does not (yet) give the Windows host a route to other
// nodes' pods; exactly those node→pod flows fail then, and nothing else.
func TestGoodSpecsPerDesign(t *testing.T) {
	for _, tc := range []struct {
		file, design string
		trace        []string // fragments of the linux→windows pod trace
	}{
		{"hostgw.yaml", "host-gw", []string{"pod CIDR of win-a", "vSwitch port of endpoint"}},
		{"flannel-hostgw.yaml", "flannel/host-gw", []string{"flannel host-gw: subnet lease of win-1"}},
		{"flannel-vxlan.yaml", "flannel/vxlan", []string{"encap: vxlan", "decap: vxlan from", "HNS overlay"}},
		{"router.yaml", "upstream-tor/router", []string{"its gateway is on the ToR router", "(tor-router)"}},
		{"anchors.yaml", "upstream-tor/keepalived", []string{"connected route of VIP 10.160.2.1"}},
	} {
		t.Run(tc.design, func(t *testing.T) {
			c, p := loadSpec(t, tc.file)
			v := NewVerifier(build(t, c, p, nil), false)
			r := v.Run()
			if r.Design != tc.design {
				t.Fatalf("design %s", r.Design)
			}
			hostRoutes := true
			for _, n := range p.Nodes {
				if n.Windows != nil && len(n.Windows.Routes) == 0 && n.Windows.GatewayHolder != "windows-host" {
					hostRoutes = false
				}
			}
			for _, f := range r.Failures {
				if hostRoutes || !strings.HasPrefix(f.Flow, "node→pod windows→") || f.Disposition != NoRoute {
					var b bytes.Buffer
					r.WriteText(&b)
					t.Fatalf("unexpected failure %s %s: %s\n%s", f.Flow, f.Proto, f.Cause, b.String())
				}
			}
			var lw *FlowResult
			for _, s := range v.enumerate() {
				if s.spec.kind == KindPodPod && s.spec.src.Node.OS == osLinux && s.spec.dst.Node.OS == osWindows && s.spec.proto == TCP {
					res := v.trace(s.spec)
					lw = &res
					break
				}
			}
			if lw == nil {
				t.Fatal("no linux→windows pod flow")
			}
			text := lw.Forward.Text("") + lw.Reply.Text("")
			for _, frag := range tc.trace {
				if !strings.Contains(text, frag) {
					t.Errorf("trace lacks %q:\n%s", frag, text)
				}
			}
			if tc.design == "flannel/vxlan" {
				for _, f := range mustFlows(t, v, "node→pod windows→linux", "", "", "") {
					if f.Verdict != VerdictUnsupported {
						t.Errorf("Windows node to remote pod on VXLAN: %+v", f)
					}
				}
			}
		})
	}
}
