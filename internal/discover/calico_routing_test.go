package discover

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/testenv"
	"github.com/kubewin/kubewin/internal/verify"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// TestDiscoverCalicoRouting reads how Calico programs and exports routes from a live cluster
// (FelixConfiguration, Installation, IPPool vxlanMode), says what it means for Windows pod
// CIDRs, and verify — given what was discovered — finds that the non-holder Linux nodes lose the
// Windows pod CIDR, which the route keeper (router VIPs) restores (issue 11 items 12 and 15).
func TestDiscoverCalicoRouting(t *testing.T) {
	cp := testenv.StartControlPlane(t, testenv.WithServiceCIDR("10.176.0.0/12"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cp.CreateFiles(ctx, filepath.Join(clustersDir, "crds", "calico.yaml"),
		filepath.Join("testdata", "calico-routing", "crds.yaml"), filepath.Join("testdata", "calico-routing", "objects.yaml")); err != nil {
		t.Fatal(err)
	}
	res := discoverT(t, cp, Options{})
	cs := res.Cluster.Spec.LinuxCNI.Calico
	if cs == nil {
		t.Fatalf("no Calico settings discovered; notes %v", res.Notes)
	}
	want(t, res, "spec.linuxCNI.calico.clusterRoutes", cs.ClusterRoutes, v1alpha1.CalicoClusterRoutesFelix, "programClusterRoutes Enabled")
	want(t, res, "spec.linuxCNI.calico.vxlanMode", cs.VXLANMode, "Always", "IPPool default-ipv4-ippool")
	want(t, res, "spec.linuxCNI.calico.ignoreLooseRPF", cs.IgnoreLooseRPF, true, "FelixConfiguration default")
	if p := res.Provenance["spec.linuxCNI.calico.ignoreLooseRPF"]; len(p.Agrees) != 1 || !strings.Contains(p.Agrees[0], "FELIX_IGNORELOOSERPF") {
		t.Errorf("the calico-node env does not agree in provenance: %+v", p)
	}
	if p := res.Provenance["spec.linuxCNI.calico.clusterRoutes"]; len(p.Agrees) != 1 || !strings.Contains(p.Agrees[0], "Installation default") {
		t.Errorf("the Installation's clusterRoutingMode does not agree in provenance: %+v", p)
	}
	notes := strings.Join(res.Notes, "\n")
	for _, w := range []string{"Felix programs cluster routes", "uses VXLAN (vxlanMode Always)", "route keeper"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}

	// What verify makes of it, on the example's topology.
	c, _, err := v1alpha1.ParseExample()
	if err != nil {
		t.Fatal(err)
	}
	c.Spec.LinuxCNI.Calico.ClusterRoutes = cs.ClusterRoutes
	c.Spec.LinuxCNI.Calico.IgnoreLooseRPF = cs.IgnoreLooseRPF
	for _, tc := range []struct {
		name        string
		vxlan       string
		routeKeeper bool
		verdict     string
	}{
		{"felix cluster routes", "", false, verify.VerdictFail},
		{"felix cluster routes and vxlan", cs.VXLANMode, false, verify.VerdictFail},
		{"with the route keeper", cs.VXLANMode, true, verify.VerdictOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc := *c
			cc.Spec.LinuxCNI.Calico = new(v1alpha1.CalicoSettings)
			*cc.Spec.LinuxCNI.Calico = *c.Spec.LinuxCNI.Calico
			cc.Spec.GatewayGroups = append([]v1alpha1.GatewayGroup(nil), c.Spec.GatewayGroups...)
			cc.Spec.LinuxCNI.Calico.VXLANMode = tc.vxlan
			if tc.vxlan != "" {
				cc.Spec.LinuxCNI.Calico.IPIPMode = "Never"
			}
			if tc.routeKeeper {
				f := false
				cc.Spec.LinuxCNI.Calico.ExportsConnectedRoutes = &f
				cc.Spec.GatewayGroups[0].RouterVIPs = []string{"100.100.126.250"}
			}
			p, err := plan.New(&cc)
			if err != nil {
				t.Fatal(err)
			}
			m, err := verify.Build(verify.Input{Plan: p, Spec: &cc})
			if err != nil {
				t.Fatal(err)
			}
			v := verify.NewVerifier(m, false)
			// node001 is no gateway member: it needs the route to node009's pod CIDR.
			rs, err := v.Flow("node001/pod", "node009/pod", verify.TCP, 0)
			if err != nil || len(rs) != 1 {
				t.Fatalf("flow: %v %d", err, len(rs))
			}
			if rs[0].Verdict != tc.verdict {
				t.Errorf("node001/pod -> node009/pod: %s (%s: %s), want %s", rs[0].Verdict, rs[0].Disposition, rs[0].Cause, tc.verdict)
			}
		})
	}
}
