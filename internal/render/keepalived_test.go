package render

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubewin/kubewin/internal/plan"
)

var netnsSeq atomic.Int64

// keepalivedNetns creates a network namespace holding a veth named iface, because keepalived -t
// rejects configurations whose interface does not exist. It is removed on cleanup.
func keepalivedNetns(t *testing.T, iface string) string {
	t.Helper()
	name := fmt.Sprintf("kwrender-%d-%d", os.Getpid(), netnsSeq.Add(1))
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	run("netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	run("-n", name, "link", "add", iface, "type", "veth", "peer", "name", "peer0")
	return name
}

// checkKeepalived writes cfg and has the real keepalived check it inside netns.
func checkKeepalived(t *testing.T, netns string, cfg []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keepalived.conf")
	if err := os.WriteFile(path, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ValidateKeepalivedInNetns(ctx, netns, path); err != nil {
		t.Fatalf("%v\n--- config ---\n%s", err, cfg)
	}
}

func threeMembers() []plan.GatewayMemberPlan {
	return []plan.GatewayMemberPlan{
		{Node: "master1", IP: "100.100.126.202", Priority: 150, RouterID: "kubewin_win-gw_master1"},
		{Node: "master2", IP: "100.100.126.203", Priority: 140, RouterID: "kubewin_win-gw_master2"},
		{Node: "master3", IP: "100.100.126.204", Priority: 130, RouterID: "kubewin_win-gw_master3"},
	}
}

// vips returns n gateway VIPs, the .1 of consecutive /24s starting at 10.<second>.<third>.0.
func vips(n, second, third int) []plan.VIPPlan {
	out := make([]plan.VIPPlan, n)
	for i := range out {
		o2, o3 := second+(third+i)/256, (third+i)%256
		out[i] = plan.VIPPlan{
			Address:     fmt.Sprintf("10.%d.%d.1/24", o2, o3),
			PodCIDR:     fmt.Sprintf("10.%d.%d.0/24", o2, o3),
			WindowsNode: fmt.Sprintf("win%04d", i),
		}
	}
	return out
}

func exampleGroup() plan.GatewayGroupPlan {
	return plan.GatewayGroupPlan{
		Name: "win-gw", Interface: "eth1", Members: threeMembers(),
		VRRPVersion: 3, AdvertIntervalSeconds: 0.1, VRIDRange: [2]int{188, 255},
		Instances: []plan.VRRPInstancePlan{{Name: "win-gw_188", VRID: 188, VIPs: []plan.VIPPlan{
			{Address: "10.160.11.1/24", PodCIDR: "10.160.11.0/24", WindowsNode: "node009"}}}},
	}
}

func TestKeepalivedConfigAcceptedByKeepalived(t *testing.T) {
	multi := exampleGroup()
	multi.Interface = "ens192"
	multi.Instances = []plan.VRRPInstancePlan{
		{Name: "win-gw_10", VRID: 10, VIPs: vips(254, 160, 0), RouterVIP: "100.100.127.250"},
		{Name: "win-gw_11", VRID: 11, VIPs: vips(254, 161, 0), RouterVIP: "100.100.127.251"},
		{Name: "win-gw_12", VRID: 12, VIPs: vips(100, 162, 0), RouterVIP: "100.100.127.252"},
	}
	full := exampleGroup()
	full.Instances = []plan.VRRPInstancePlan{{Name: "full", VRID: 255, VIPs: vips(255, 170, 0)}}
	fullRouter := exampleGroup()
	fullRouter.Instances = []plan.VRRPInstancePlan{{Name: "full", VRID: 255, VIPs: vips(255, 170, 0), RouterVIP: "100.100.127.250"}}
	v2 := exampleGroup()
	v2.VRRPVersion, v2.AdvertIntervalSeconds = 2, 1

	tests := []struct {
		name  string
		group plan.GatewayGroupPlan
		want  []string
	}{
		{"seed example", exampleGroup(), []string{
			"router_id kubewin_win-gw_master1", "vrrp_version 3", "vrrp_higher_prio_send_advert\n", "state BACKUP", "nopreempt",
			"interface eth1", "virtual_router_id 188", "priority 150", "advert_int 0.1",
			"unicast_src_ip 100.100.126.202", "        100.100.126.203\n        100.100.126.204\n",
			"10.160.11.1/24 dev eth1"}},
		{"255 VIPs in one instance", full, []string{"virtual_router_id 255", "10.170.254.1/24 dev eth1"}},
		{"255 VIPs and a router VIP", fullRouter, []string{"100.100.127.250 dev eth1", "10.170.254.1/24 dev eth1"}},
		{"three instances with router VIPs", multi, []string{
			"vrrp_instance win-gw_12 {", "virtual_router_id 11", "100.100.127.252 dev ens192", "10.162.99.1/24 dev ens192"}},
		{"VRRPv2 whole seconds", v2, []string{"vrrp_version 2", "advert_int 1\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := keepalivedNetns(t, tt.group.Interface)
			for _, m := range tt.group.Members {
				cfg, err := KeepalivedConfig(tt.group, m.Node)
				if err != nil {
					t.Fatal(err)
				}
				checkKeepalived(t, ns, cfg)
				if !strings.Contains(string(cfg), fmt.Sprintf("priority %d\n", m.Priority)) ||
					!strings.Contains(string(cfg), "unicast_src_ip "+m.IP+"\n") {
					t.Errorf("%s: own priority or source missing:\n%s", m.Node, cfg)
				}
				if strings.Contains(string(cfg), "        "+m.IP+"\n") {
					t.Errorf("%s lists itself as a unicast peer", m.Node)
				}
				for _, bad := range []string{"auth_type", "auth_pass", "vrrp_script", "track_script", "notify"} {
					if strings.Contains(string(cfg), bad) {
						t.Errorf("%s: config contains %q", m.Node, bad)
					}
				}
			}
			cfg, _ := KeepalivedConfig(tt.group, tt.group.Members[0].Node)
			for _, w := range tt.want {
				if !strings.Contains(string(cfg), w) {
					t.Errorf("config lacks %q:\n%s", w, cfg)
				}
			}
			if got := strings.Count(string(cfg), "vrrp_instance "); got != len(tt.group.Instances) {
				t.Errorf("%d vrrp_instance blocks, want %d", got, len(tt.group.Instances))
			}
		})
	}
}

func TestKeepalivedConfigDeterministic(t *testing.T) {
	g := exampleGroup()
	g.Members[0], g.Members[2] = g.Members[2], g.Members[0] // member order must not matter to peers
	a, err := KeepalivedConfig(g, "master2")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := KeepalivedConfig(exampleGroup(), "master2")
	if string(a) != string(b) {
		t.Errorf("member order changed the output:\n%s\n---\n%s", a, b)
	}
}

func TestKeepalivedConfigRejects(t *testing.T) {
	mod := func(f func(*plan.GatewayGroupPlan)) plan.GatewayGroupPlan {
		g := exampleGroup()
		f(&g)
		return g
	}
	tests := []struct {
		name, member, want string
		group              plan.GatewayGroupPlan
	}{
		{"not a member", "node001", "not a member", exampleGroup()},
		{"256 gateway VIPs", "master1", "at most 255", mod(func(g *plan.GatewayGroupPlan) {
			g.Instances[0].VIPs = vips(256, 170, 0)
		})},
		{"fractional v2", "master1", "VRRPv2 needs whole seconds", mod(func(g *plan.GatewayGroupPlan) {
			g.VRRPVersion = 2
		})},
		{"too fine v3", "master1", "multiple of 0.01", mod(func(g *plan.GatewayGroupPlan) {
			g.AdvertIntervalSeconds = 0.005
		})},
		{"vrid 0", "master1", "outside 1-255", mod(func(g *plan.GatewayGroupPlan) { g.Instances[0].VRID = 0 })},
		{"vrid twice", "master1", "used twice", mod(func(g *plan.GatewayGroupPlan) {
			g.Instances = append(g.Instances, plan.VRRPInstancePlan{Name: "b", VRID: 188, VIPs: vips(1, 190, 0)})
		})},
		{"vip twice", "master1", "already held", mod(func(g *plan.GatewayGroupPlan) {
			g.Instances = append(g.Instances, plan.VRRPInstancePlan{Name: "b", VRID: 189, VIPs: g.Instances[0].VIPs})
		})},
		{"lonely member", "master1", "no peers", mod(func(g *plan.GatewayGroupPlan) { g.Members = g.Members[:1] })},
		{"priority 255", "master1", "outside 1-254", mod(func(g *plan.GatewayGroupPlan) { g.Members[0].Priority = 255 })},
		{"router id twice", "master1", "not unique", mod(func(g *plan.GatewayGroupPlan) { g.Members[1].RouterID = g.Members[0].RouterID })},
		{"bad interface", "master1", "not a valid interface", mod(func(g *plan.GatewayGroupPlan) { g.Interface = "eth 1" })},
		{"version 4", "master1", "expected 2 or 3", mod(func(g *plan.GatewayGroupPlan) { g.VRRPVersion = 4 })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := KeepalivedConfig(tt.group, tt.member)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestValidateKeepalivedReportsDiagnostics(t *testing.T) {
	ns := keepalivedNetns(t, "eth1")
	cfg, err := KeepalivedConfig(exampleGroup(), "master1")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(cfg), "nopreempt", "nopreemtp", 1)
	path := filepath.Join(t.TempDir(), "bad.conf")
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	err = ValidateKeepalivedInNetns(context.Background(), ns, path)
	if err == nil || !strings.Contains(err.Error(), "Unknown keyword 'nopreemtp'") {
		t.Fatalf("error %v, want keepalived's unknown-keyword diagnostic", err)
	}
	// In the test's own namespace eth1 need not exist; keepalived must say so, not pass.
	noIface := exampleGroup()
	noIface.Interface = "kwnone0"
	cfg, _ = KeepalivedConfig(noIface, "master1")
	if err := os.WriteFile(path, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ValidateKeepalived(context.Background(), path); err == nil || !strings.Contains(err.Error(), "kwnone0") {
		t.Fatalf("error %v, want a diagnostic naming the missing interface", err)
	}
}

func TestBundleKeepalivedConfigsAcceptedByKeepalived(t *testing.T) {
	for _, name := range []string{"keepalived", "keepalived-hyperv-2022"} {
		p := designVariants(t)[name]
		files := mustRender(t, p)
		for _, g := range p.GatewayGroups {
			ns := keepalivedNetns(t, g.Interface)
			for _, m := range g.Members {
				cfg, ok := files["nodes/"+m.Node+"/keepalived/keepalived.conf"]
				if !ok {
					t.Fatalf("%s: no keepalived.conf for member %s", name, m.Node)
				}
				checkKeepalived(t, ns, cfg)
				for _, in := range g.Instances {
					for _, v := range in.VIPs {
						wantContains(t, m.Node+" keepalived.conf", cfg, v.Address+" dev "+g.Interface+"\n")
					}
				}
			}
		}
	}
	// The seed's gateway: 10.160.11.1/24 on eth1 of master1-3, VRID from 188.
	files := mustRender(t, examplePlan(t))
	wantContains(t, "master1 keepalived.conf", files["nodes/master1/keepalived/keepalived.conf"],
		"10.160.11.1/24 dev eth1", "virtual_router_id 188", "unicast_src_ip 100.100.126.202", "priority 150")
}

func TestKeepalivedConfigForNodeInTwoGroups(t *testing.T) {
	a := exampleGroup()
	b := exampleGroup()
	b.Name = "win-gw-b"
	b.Members = []plan.GatewayMemberPlan{
		{Node: "master1", IP: "100.100.126.202", Priority: 100, RouterID: "kubewin_win-gw-b_master1"},
		{Node: "node001", IP: "100.100.126.208", Priority: 90, RouterID: "kubewin_win-gw-b_node001"},
	}
	b.Instances = []plan.VRRPInstancePlan{{Name: "win-gw-b_189", VRID: 189, VIPs: vips(2, 170, 0)}}
	cfg, err := KeepalivedConfigForNode([]plan.GatewayGroupPlan{b, a}, "master1")
	if err != nil {
		t.Fatal(err)
	}
	checkKeepalived(t, keepalivedNetns(t, "eth1"), cfg)
	if strings.Count(string(cfg), "global_defs") != 1 || strings.Count(string(cfg), "vrrp_instance ") != 2 {
		t.Errorf("want one global_defs and both groups' instances:\n%s", cfg)
	}
	inOrder(t, "two groups", string(cfg), "router_id kubewin_win-gw_master1", "vrrp_instance win-gw_188",
		"priority 150", "vrrp_instance win-gw-b_189", "priority 100", "        100.100.126.208\n")
	b.Instances[0].VRID = 188
	if _, err := KeepalivedConfigForNode([]plan.GatewayGroupPlan{a, b}, "master1"); err == nil {
		t.Error("a VRID shared by two groups on one interface was accepted")
	}
	if _, err := KeepalivedConfigForNode([]plan.GatewayGroupPlan{a, b}, "node002"); err == nil {
		t.Error("a node in no group was accepted")
	}
}
