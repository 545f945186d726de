package join

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/testenv/netns"
)

// Every effect a Linux node has is applied by join's real Linux executors, in a network
// namespace of the test's own (sysctls below net. and routes are per namespace): dropping any
// one leaves the namespace or the node's files different, and every kind has an executor.
func TestLinuxEffectParity(t *testing.T) {
	for _, k := range render.LinuxEffectKinds {
		if linuxExecutors[k] == "" {
			t.Errorf("effect kind %s has no executor in join", k)
		}
	}
	seen := map[render.EffectKind]bool{}
	for name, p := range windowsParityPlans(t) {
		for _, n := range p.Nodes {
			// One node with routes per design: a namespace per applied list is not free.
			if n.Linux == nil || len(n.Linux.Routes) == 0 {
				continue
			}
			t.Run(strings.ReplaceAll(name, "/", "-")+"/"+n.Name, func(t *testing.T) {
				effects, err := render.NodeEffects(p, n)
				if err != nil {
					t.Fatal(err)
				}
				full := applyLinuxForTest(t, n, effects, effects)
				for i, e := range effects {
					seen[e.Kind] = true
					if got := applyLinuxForTest(t, n, effects, slices.Delete(slices.Clone(effects), i, i+1)); got == full {
						t.Errorf("join ignores %s: the node is the same without it", e)
					}
				}
			})
			break
		}
	}
	for _, k := range render.LinuxEffectKinds {
		if !seen[k] {
			t.Errorf("no test node has a %s effect", k)
		}
	}
}

// applyLinuxForTest applies effects on a fresh namespace standing for the node — its cluster
// NIC with the node's address (a dummy link: routes need an interface that reaches their next
// hops), every sysctl of the effects set the other way first (a machine without them) — and
// modules looked up in an empty module directory, so that each is loaded through Modprobe,
// which records it. It describes the namespace's sysctls and routes, the modules loaded and
// the files written.
func applyLinuxForTest(t *testing.T, n plan.NodePlan, all, effects []render.HostEffect) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ns := netns.New(t, "effects")
	nic := n.ClusterNIC
	if nic == "" {
		nic = "eth0"
	}
	ns.MustRun(t, "ip", "link", "add", nic, "type", "veth", "peer", "name", "peer0")
	ns.MustRun(t, "ip", "link", "set", "peer0", "up")
	// A /16 holds every next hop of the test plans' routes (the example's node network).
	ns.MustRun(t, "ip", "addr", "add", n.NodeIP+"/16", "dev", nic)
	ns.MustRun(t, "ip", "link", "set", nic, "up")
	var loaded []string
	sys := LinuxSystem{ProcSys: "/proc/sys", SysModule: t.TempDir(),
		Modprobe: func(_ context.Context, m string) error { loaded = append(loaded, m); return nil }}
	var keys []string
	for _, e := range render.EffectsOf(all, render.EffectSysctl) {
		keys = append(keys, e.Sysctl.Key)
		other := "0"
		if e.Sysctl.Value == "0" {
			other = "1"
		}
		ns.Sysctl(t, e.Sysctl.Key, other)
	}
	root := t.TempDir()
	paths := render.LinuxPathsUnder(root)
	host := &LinuxHost{Paths: paths, Root: root, Init: "none", System: sys}
	var kernel []Change
	err := ns.Do(func() error {
		var err error
		if kernel, err = applyLinuxKernel(ctx, host.Kernel(), effects); err != nil {
			return err
		}
		if _, err := applyRegistryHosts(effects, paths); err != nil {
			return err
		}
		var routes []plan.Route
		for _, e := range render.EffectsOf(effects, render.EffectRoute) {
			routes = append(routes, *e.Route)
		}
		_, err = host.EnsureRoutes(ctx, routes)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	_ = ns.Do(func() error {
		for _, k := range keys {
			v, _ := os.ReadFile("/proc/sys/" + SysctlPath(k))
			fmt.Fprintf(&b, "sysctl %s=%s\n", k, strings.TrimSpace(string(v)))
		}
		return nil
	})
	fmt.Fprintf(&b, "routes:\n%s", ns.MustRun(t, "ip", "-4", "route", "show"))
	// A module is built in or loaded on this machine (no change), or loaded through Modprobe:
	// what the executor found or did about each is what shows it was not ignored.
	fmt.Fprintf(&b, "modules loaded: %v\n", loaded)
	for _, c := range kernel {
		if strings.HasPrefix(c.What, "kernel module ") {
			fmt.Fprintf(&b, "%s %s\n", c.What, c.Action)
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
	return b.String()
}
