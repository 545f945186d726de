package render

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/atomicfs"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/testgen/designplans"
)

// effectPlans are designplans.Plans: together their nodes have every effect kind.
func effectPlans(t *testing.T) map[string]*plan.Plan {
	t.Helper()
	ps, err := designplans.Plans()
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// The bundle is rendered from the node's host effects: dropping any one effect changes the
// node's files, on both OSes, and every kind of both lists occurs. join's side is
// internal/join's TestWindowsEffectParity and TestLinuxEffectParity.
func TestBundleEffectParity(t *testing.T) {
	seen := map[string]map[EffectKind]bool{"windows": {}, "linux": {}}
	for name, p := range effectPlans(t) {
		for _, n := range p.Nodes {
			effects, err := NodeEffects(p, n)
			if err != nil {
				t.Fatal(err)
			}
			render := func(effects []HostEffect) ([]atomicfs.File, error) {
				if n.Windows != nil {
					return windowsNodeFilesFrom(p, n, newYAMLEncoder(), effects)
				}
				return linuxNodeFilesFrom(p, n, effects)
			}
			full, err := render(effects)
			if err != nil {
				t.Fatalf("%s %s: %v", name, n.Name, err)
			}
			os := "linux"
			if n.Windows != nil {
				os = "windows"
			}
			for i, e := range effects {
				seen[os][e.Kind] = true
				got, err := render(slices.Delete(slices.Clone(effects), i, i+1))
				if err != nil {
					t.Fatalf("%s %s without %s: %v", name, n.Name, e, err)
				}
				if sameFiles(got, full) {
					t.Errorf("%s: node %s's bundle ignores %s: the files are the same without it", name, n.Name, e)
				}
			}
		}
	}
	for os, kinds := range map[string][]EffectKind{"windows": WindowsEffectKinds, "linux": LinuxEffectKinds} {
		for _, k := range kinds {
			if !seen[os][k] {
				t.Errorf("no %s node of the test plans has a %s effect", os, k)
			}
		}
	}
}

func sameFiles(a, b []atomicfs.File) bool {
	return slices.EqualFunc(a, b, func(x, y atomicfs.File) bool { return x.Path == y.Path && bytes.Equal(x.Data, y.Data) })
}

// The effects of the example's Windows node, as the reviewers asked for them: forwarding on
// both vNICs, the metadata route kept, hns started, hosts.toml for the plain-HTTP registries.
func TestWindowsEffectsOfTheExample(t *testing.T) {
	p := effectPlans(t)["example"]
	var n plan.NodePlan
	for _, nn := range p.Nodes {
		if nn.Windows != nil {
			n = nn
		}
	}
	effects, err := NodeEffects(p, n)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range effects {
		got = append(got, e.String())
	}
	for _, want := range []string{"system-service hns", "hns-network External", "hns-network " + n.Windows.HNSNetworkName,
		"host-endpoint cbr0", "forwarding host-endpoint", "forwarding cluster-vswitch", "preserve-route 169.254.169.254/32",
		"firewall-rule kubewin-kubelet", "service containerd", "service kubelet", "service kube-proxy", "acl data-dir", "acl pki-dir"} {
		if !slices.Contains(got, want) {
			t.Errorf("effects %q lack %q", got, want)
		}
	}
	if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "registry-host ") }) {
		t.Errorf("no registry host among %q (the example pulls from plain-HTTP registries)", got)
	}
	setup, err := HNSSetupScript(p, n)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Start-Service -Name 'hns'", "foreach ($alias in @('vEthernet (cbr0)', 'vEthernet (" + n.Windows.AdapterName + ")'))",
		"$keptFile = Join-Path $InstallDir 'kept-routes.json'", "'169.254.169.254/32'"} {
		if !strings.Contains(string(setup), want) {
			t.Errorf("setup.ps1 lacks %q", want)
		}
	}
}
