package join

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/testgen/designplans"
	"github.com/kubewin/kubewin/internal/winnode"
)

// windowsParityPlans are designplans.Plans: together their nodes have every effect kind.
func windowsParityPlans(t *testing.T) map[string]*plan.Plan {
	t.Helper()
	ps, err := designplans.Plans()
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// Every effect a Windows node has is applied by join: dropping any one of them leaves the
// modelled host (winnode.MemHost, named as such: not Windows) or the node's files different,
// and every kind has an executor. The bundle's side is render's TestBundleEffectParity.
func TestWindowsEffectParity(t *testing.T) {
	for _, k := range render.WindowsEffectKinds {
		if windowsExecutors[k] == "" {
			t.Errorf("effect kind %s has no executor in join", k)
		}
	}
	seen := map[render.EffectKind]bool{}
	for name, p := range windowsParityPlans(t) {
		t.Run(strings.ReplaceAll(name, "/", "-"), func(t *testing.T) {
			var n plan.NodePlan
			for _, nn := range p.Nodes {
				if nn.Windows != nil {
					n = nn
				}
			}
			if n.Windows.CNIPlugin == "flannel" {
				// join refuses flannel designs on Windows (checkWindowsDesign); their bundle is
				// render's TestBundleEffectParity's.
				return
			}
			effects, err := render.NodeEffects(p, n)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := winnode.DesiredFromEffects(n.Name, effects); err != nil {
				t.Fatalf("the full list: %v", err)
			}
			full := applyWindowsForTest(t, n, effects)
			for i, e := range effects {
				seen[e.Kind] = true
				without := slices.Delete(slices.Clone(effects), i, i+1)
				if got := applyWindowsForTest(t, n, without); got == full {
					t.Errorf("join ignores %s: the host is the same without it", e)
				}
			}
		})
	}
	for _, k := range render.WindowsEffectKinds {
		if !seen[k] {
			t.Errorf("no test plan has a %s effect", k)
		}
	}
}

// applyWindowsForTest applies effects to a fresh modelled Windows node — the adapter with the
// planned MAC and a metadata route, hns stopped as after a boot on a host where it is Manual
// — the way join's steps do, and describes the resulting host and files.
func applyWindowsForTest(t *testing.T, n plan.NodePlan, effects []render.HostEffect) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w := n.Windows
	mem := winnode.NewMemHostModel(winnode.Model{HNSManualStart: true},
		winnode.Adapter{Name: w.AdapterName, MAC: n.ClusterNICMAC, IPv4: []string{n.NodeIP}})
	mem.Reboot()
	mem.SetRoute(winnode.HostRoute{DestinationPrefix: "169.254.169.254/32", NextHop: "100.100.126.1", InterfaceAlias: w.AdapterName})
	root := t.TempDir()
	paths := render.WindowsPathsUnder(filepath.Join(root, "k"), filepath.Join(root, "containerd"))
	for _, f := range []string{paths.KubeProxyKubeconfig(), filepath.Join(paths.BinDir, "kube-proxy.exe"), filepath.Join(paths.BinDir, "kube-log-runner.exe")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// configuration, node-service, pod-network: the executors join's steps call.
	if _, err := applyRegistryHosts(effects, paths); err != nil {
		t.Fatal(err)
	}
	if _, err := applyACLs(ctx, mem, effects, paths); err != nil {
		t.Fatal(err)
	}
	if _, err := applyFirewallRules(ctx, mem, effects); err != nil {
		t.Fatal(err)
	}
	cfgs, err := windowsServiceConfigsFrom(effects)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfgs {
		if err := mem.InstallService(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if d, err := winnode.DesiredFromEffects(n.Name, effects); err == nil {
		r := &winnode.Reconciler{Host: mem, Desired: d}
		for range 3 {
			if _, err := r.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	var b strings.Builder
	for _, nw := range mem.Networks() {
		fmt.Fprintf(&b, "network %s %s %s %s %s\n", nw.Name, nw.Type, nw.Prefix, nw.Gateway, nw.AdapterName)
	}
	for _, e := range mem.Endpoints() {
		fmt.Fprintf(&b, "endpoint %s %s\n", e.Name, e.IP)
	}
	ads, _ := mem.Adapters(ctx)
	for _, a := range ads {
		fmt.Fprintf(&b, "interface %s forwarding=%v\n", a.Name, a.Forwarding)
	}
	for _, r := range mem.HostRoutes() {
		fmt.Fprintf(&b, "route %s\n", r)
	}
	rules := mem.FirewallRules()
	names := make([]string, 0, len(rules))
	for name := range rules {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(&b, "firewall %s %s %s\n", name, rules[name].Protocol, rules[name].LocalPorts)
	}
	for _, e := range mem.Events() {
		switch e.Kind {
		case "acl", "start":
			fmt.Fprintf(&b, "%s\n", e)
		}
	}
	for _, c := range cfgs {
		if def, ok := mem.ServiceDefinition(c.Name); ok {
			fmt.Fprintf(&b, "service %s %v %s\n", def.Name, def.DependsOn, def.StartType)
		}
	}
	_ = filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			data, _ := os.ReadFile(path)
			rel, _ := filepath.Rel(root, path)
			fmt.Fprintf(&b, "file %s %x\n", rel, sha256.Sum256(data))
		}
		return nil
	})
	return strings.ReplaceAll(b.String(), root, "ROOT")
}
