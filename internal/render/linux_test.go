package render

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/plan"
)

func TestLinuxNodeFiles(t *testing.T) {
	for name, p := range designVariants(t) {
		files := mustRender(t, p)
		for _, n := range p.Nodes {
			if n.Linux == nil {
				continue
			}
			dir := "nodes/" + n.Name + "/"
			mods := files[dir+"modules-load.d/kubewin.conf"]
			for _, m := range n.Linux.Modules {
				wantContains(t, name+" "+n.Name+" modules", mods, "\n"+m+"\n")
			}
			sys := files[dir+"sysctl.d/99-kubewin.conf"]
			for k, v := range n.Linux.Sysctls {
				wantContains(t, name+" "+n.Name+" sysctl", sys, fmt.Sprintf("\n%s = %s\n", k, v))
			}
			routes, has := files[dir+"routes"]
			if has != (len(n.Linux.Routes) > 0) {
				t.Errorf("%s %s: routes file present=%v with %d routes", name, n.Name, has, len(n.Linux.Routes))
			}
			if has {
				if got := strings.Count(string(routes), "\nip route replace "); got != len(n.Linux.Routes) {
					t.Errorf("%s %s: %d route lines, want %d", name, n.Name, got, len(n.Linux.Routes))
				}
			}
			_, hasKA := files[dir+"keepalived/keepalived.conf"]
			if hasKA != (n.Linux.Gateway != nil) {
				t.Errorf("%s %s: keepalived.conf present=%v, gateway member=%v", name, n.Name, hasKA, n.Linux.Gateway != nil)
			}
		}
	}
}

func TestSeedLinuxValues(t *testing.T) {
	files := mustRender(t, examplePlan(t))
	// Linux prerequisites of the Kubernetes container-runtime docs (seed 001) and the gateway
	// forwarding of seed 000 §2.6.
	wantContains(t, "modules", files["nodes/master1/modules-load.d/kubewin.conf"], "\noverlay\n", "\nbr_netfilter\n")
	wantContains(t, "sysctl", files["nodes/master1/sysctl.d/99-kubewin.conf"], "net.ipv4.ip_forward = 1",
		"net.bridge.bridge-nf-call-iptables = 1")
	wantContains(t, "containerd", files["nodes/node001/containerd/config.toml"], "SystemdCgroup = true")
}

func TestLinuxRoutesScriptRuns(t *testing.T) {
	// The routes file is a shell script of `ip route replace` lines; run it for real inside a
	// network namespace where the next hops are on-link.
	n := plan.NodePlan{Name: "node001", Linux: &plan.LinuxNodePlan{Routes: []plan.Route{
		{Destination: "10.160.11.0/24", Via: "100.100.127.250", Dev: "eth1", Reason: "pod CIDR of node009 via the router VIP of win-gw"},
		{Destination: "10.160.12.0/24", Via: "100.100.126.216", Reason: "pod CIDR of node010"},
	}}}
	data, err := LinuxRoutes(n)
	if err != nil {
		t.Fatal(err)
	}
	ns := keepalivedNetns(t, "eth1")
	run := func(args ...string) string {
		t.Helper()
		out, err := execIn(ns, args...)
		if err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
		}
		return out
	}
	run("ip", "addr", "add", "100.100.126.208/23", "dev", "eth1")
	run("ip", "link", "set", "eth1", "up")
	script := filepath.Join(t.TempDir(), "routes")
	if err := os.WriteFile(script, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // idempotent: the second run changes nothing and succeeds
		run("sh", script)
	}
	got := run("ip", "-4", "route", "show")
	for _, want := range []string{"10.160.11.0/24 via 100.100.127.250 dev eth1", "10.160.12.0/24 via 100.100.126.216 dev eth1"} {
		if !strings.Contains(got, want) {
			t.Errorf("route %q not installed:\n%s", want, got)
		}
	}
	bad := plan.NodePlan{Name: "x", Linux: &plan.LinuxNodePlan{Routes: []plan.Route{{Destination: "10.0.0.0/8", Via: "10.0.0.1", Dev: "eth0; reboot"}}}}
	if _, err := LinuxRoutes(bad); err == nil {
		t.Error("an interface name with shell syntax was accepted")
	}
}
