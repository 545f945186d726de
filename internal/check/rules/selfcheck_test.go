package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/atomicfs"
	"github.com/kubewin/kubewin/internal/bundle"
	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// selfcheckVariants are the example cluster in every network design, plus Hyper-V, a Windows
// Server 2022 node and DSR (the same variants internal/render tests its renderers with), so
// that every kind of file `kubewin plan` writes meets check.
func selfcheckVariants(t *testing.T) map[string]*v1alpha1.Cluster {
	t.Helper()
	example := func() *v1alpha1.Cluster {
		c, _, err := v1alpha1.ParseExample()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	out := map[string]*v1alpha1.Cluster{"keepalived": example()}

	c := example()
	c.Spec.Windows.HyperV = true
	c.Spec.Windows.EnableDSR = true
	n := c.Spec.Nodes[len(c.Spec.Nodes)-1]
	n.Name, n.WindowsBuild, n.PodCIDR = "node010", "ltsc2022", ""
	n.NICs = []v1alpha1.NIC{{Name: "Ethernet 2", IP: "100.100.126.217", Prefix: 23}}
	n.ClusterNIC = "Ethernet 2"
	c.Spec.Nodes = append(c.Spec.Nodes, n)
	v1alpha1.SetDefaults(c)
	out["keepalived-hyperv-2022"] = c

	c = example()
	c.Spec.Design = v1alpha1.DesignUpstreamToRRouter
	c.Spec.GatewayGroups = nil
	c.Spec.TorRouter = &v1alpha1.TorRouter{Name: "tor1", IP: "100.100.126.1"}
	out["router"] = c

	c = example()
	c.Spec.Design = v1alpha1.DesignHostGW
	c.Spec.GatewayGroups = nil
	c.Spec.LinuxCNI = v1alpha1.LinuxCNI{Type: "other"}
	out["host-gw"] = c

	for _, d := range []v1alpha1.NetworkDesign{v1alpha1.DesignFlannelHostGW, v1alpha1.DesignFlannelVXLAN} {
		c = example()
		c.Spec.Design = d
		c.Spec.GatewayGroups = nil
		c.Spec.LinuxCNI = v1alpha1.LinuxCNI{Type: "flannel"}
		c.Spec.Windows.HNSNetworkName = ""
		v1alpha1.SetDefaults(c)
		out[strings.ReplaceAll(string(d), "/", "-")] = c
	}
	for name, c := range out {
		if errs := v1alpha1.Validate(c); len(errs) > 0 {
			t.Fatalf("variant %s is invalid: %v", name, errs)
		}
	}
	return out
}

// kubewin must pass its own checks. The bundle `kubewin plan` writes for each design variant,
// checked the way the README tour does it (kubewin check -f cluster.yaml out), has no finding
// at warning or above about what kubewin wrote: the only ones are true of the spec (the two
// insecure registries the example asks for, KW1804; DSR asked for a cluster with a Windows
// Server 2019 node, KW1206). Every file of the bundle is either parsed or known as kubewin's
// own (no KW0002).
func TestRenderedBundlesPassCheck(t *testing.T) {
	for name, c := range selfcheckVariants(t) {
		t.Run(name, func(t *testing.T) {
			p, err := plan.New(c)
			if err != nil {
				t.Fatal(err)
			}
			files, err := bundle.Build(p)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "out")
			if err := atomicfs.WriteTree(dir, files); err != nil {
				t.Fatal(err)
			}
			ctx, bad, err := check.Load(check.Input{Spec: c, Files: []string{dir}})
			if err != nil || bad {
				t.Fatalf("Load: %v (spec bad %v)", err, bad)
			}
			rep := check.Run(ctx, All(), check.Options{})

			var got []string
			for _, f := range rep.Findings {
				if f.Severity >= check.Warning || f.RuleID == "KW0002" {
					got = append(got, fmt.Sprintf("%s %s %s", f.RuleID, f.Location.File, f.Location.Field))
				}
			}
			sort.Strings(got)
			want := []string{
				"KW1804 <spec> spec.images.insecureRegistries[0]",
				"KW1804 <spec> spec.images.insecureRegistries[1]",
			}
			dsrOff := false
			for _, n := range p.Nodes {
				dsrOff = dsrOff || (n.Windows != nil && !n.Windows.EnableDSR)
			}
			if c.Spec.Windows.EnableDSR && dsrOff {
				// True of such a spec: it asks for DSR and a node runs a build where the plan
				// leaves DSR off (Windows Server 2019).
				want = append(want, "KW1206 <spec> spec.windows.enableDSR")
				sort.Strings(want)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("findings at warning or above:\n  %s\nwant exactly:\n  %s\nall findings:\n%s",
					strings.Join(got, "\n  "), strings.Join(want, "\n  "), dump(rep))
			}
			if rep.Failed != true {
				t.Errorf("the spec's insecure registries should fail the run at --severity=warning")
			}

			// Everything in the bundle was parsed, or is one of kubewin's own files.
			if len(ctx.KubeletConfigs) == 0 || len(ctx.KubeProxyConfigs) == 0 || len(ctx.CNIConfs) == 0 ||
				len(ctx.Containerd) == 0 || len(ctx.Objects) == 0 || len(ctx.CommandLines) < 3 || len(ctx.Sysctls) == 0 || len(ctx.Modules) == 0 {
				t.Errorf("bundle inputs not recognised: %+v", rep.Inputs)
			}
			if p.GatewayGroups != nil && len(ctx.Keepalived) == 0 {
				t.Errorf("keepalived.conf not recognised: %+v", rep.Inputs)
			}
			known := map[string]bool{}
			for _, k := range ctx.KubewinFiles {
				rel, _ := filepath.Rel(dir, k.File)
				known[filepath.ToSlash(rel)] = true
				if k.What == "" {
					t.Errorf("%s: no description", k.File)
				}
			}
			for _, f := range files {
				switch {
				case f.Path == "plan.json", strings.HasSuffix(f.Path, "/README.md"), strings.HasSuffix(f.Path, "/pause/Dockerfile"),
					strings.HasSuffix(f.Path, "/hns/setup.ps1"), strings.HasSuffix(f.Path, "/hns/cleanup.ps1"),
					strings.HasSuffix(f.Path, "/firewall/rules.ps1"), strings.HasSuffix(f.Path, "/hns/network.json"),
					strings.HasSuffix(f.Path, "/routes"), f.Path == "cluster/tor-routes.txt", f.Path == "cluster/tor-routes.json",
					strings.Contains(f.Path, "/keepalived/keepalived.service.d/"):
					if !known[f.Path] {
						t.Errorf("%s: not taken as a kubewin file", f.Path)
					}
				case known[f.Path]:
					t.Errorf("%s: has content check can parse, but was skipped as a kubewin file", f.Path)
				}
			}
			if testing.Verbose() {
				var b strings.Builder
				_ = check.WriteText(&b, rep, false)
				t.Log(b.String())
			}
		})
	}
}

// Only files of a kubewin bundle, at the places kubewin writes them, are taken as kubewin's own:
// a hand-written file in the bundle, a README next to no plan.json, and a README next to a
// plan.json that is not kubewin's are unrecognised input. Scripts are scanned first, so a
// disabled firewall added to kubewin's firewall script is still found.
func TestBundleFilesOnlyInsideKubewinBundles(t *testing.T) {
	_, p := examplePlan(t, nil)
	files, err := bundle.Build(p)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	bdir := filepath.Join(root, "out")
	if err := atomicfs.WriteTree(bdir, files); err != nil {
		t.Fatal(err)
	}
	write := func(rel, content string) string {
		t.Helper()
		path := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	notes := write("out/nodes/node009/notes.txt", "remember to reboot\n")
	readme := write("elsewhere/nodes/node009/README.md", "# my notes\n")
	write("other/plan.json", `{"apiVersion": "example.com/v1", "kind": "Plan"}`)
	otherReadme := write("other/nodes/node009/README.md", "# my notes\n")
	fw := filepath.Join(bdir, "nodes", "node009", "firewall", "rules.ps1")
	data, err := os.ReadFile(fw)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fw, append(data, "netsh advfirewall set allprofiles state off\n"...), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, _, err := check.Load(check.Input{Files: []string{bdir, readme, otherReadme}})
	if err != nil {
		t.Fatal(err)
	}
	rep := check.Run(ctx, All(), check.Options{})
	unrecognised := map[string]bool{}
	for _, f := range findingsOf(rep, "KW0002") {
		unrecognised[f.Location.File] = true
	}
	for _, f := range []string{notes, readme, otherReadme} {
		if !unrecognised[f] {
			t.Errorf("%s: not reported as unrecognised; findings:\n%s", f, dump(rep))
		}
	}
	if len(unrecognised) != 3 {
		t.Errorf("KW0002 for %v, want only the three hand-written files", unrecognised)
	}
	firewallOff := false
	for _, f := range rep.Findings {
		if f.Location.File == fw {
			firewallOff = true
		}
	}
	if !firewallOff {
		t.Errorf("the disabled firewall appended to %s was not reported; findings:\n%s", fw, dump(rep))
	}
	for _, k := range ctx.KubewinFiles {
		if k.File == fw {
			t.Errorf("%s was skipped as kubewin's own although it disables the firewall", fw)
		}
	}
}
