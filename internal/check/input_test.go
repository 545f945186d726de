package check

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/platform"
)

func newTestContext(t testing.TB) *Context {
	t.Helper()
	cats, err := NewCatalogs()
	if err != nil {
		t.Fatal(err)
	}
	gates, err := NewGateRegistry()
	if err != nil {
		t.Fatal(err)
	}
	return &Context{Catalogs: cats, Gates: gates, Version: platform.NewestKubernetes(), Newest: platform.NewestKubernetes()}
}

func TestRecognition(t *testing.T) {
	tests := []struct {
		file, content string
		count         func(*Context) int
		problem       string // rule ID of an expected problem instead
	}{
		{"kubelet.cmd", `c:\k\kubelet.exe --v=2`, func(c *Context) int { return len(c.CommandLines) }, ""},
		{"flags.txt", `--proxy-mode=kernelspace --network-name=l2bridge`, func(c *Context) int {
			if len(c.CommandLines) == 1 && c.CommandLines[0].Component == platform.KubeProxy {
				return 1
			}
			return 0
		}, ""},
		{"l2bridge.conf", `{"cniVersion": "0.2.0", "name": "l2bridge", "type": "win-bridge"}`, func(c *Context) int { return len(c.CNIConfs) }, ""},
		{"10-x.conflist", `{"cniVersion": "1.0.0", "name": "n", "plugins": [{"type": "flannel", "delegate": {"type": "win-bridge"}}]}`,
			func(c *Context) int {
				if len(c.CNIConfs) == 1 && c.CNIConfs[0].IsList && c.CNIConfs[0].Delegate == "win-bridge" {
					return 1
				}
				return 0
			}, ""},
		{"k.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n", func(c *Context) int { return len(c.KubeletConfigs) }, ""},
		{"kp.yaml", "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: kernelspace\n", func(c *Context) int { return len(c.KubeProxyConfigs) }, ""},
		{"config.toml", "version = 3\n[plugins.'io.containerd.cri.v1.images'.pinned_images]\n  sandbox = 'registry.k8s.io/pause:3.10'\n",
			func(c *Context) int {
				if len(c.Containerd) == 1 && c.Containerd[0].SandboxImage == "registry.k8s.io/pause:3.10" && c.Containerd[0].SandboxImageLine == 3 {
					return 1
				}
				return 0
			}, ""},
		{"keepalived.conf", "vrrp_instance A {\n virtual_router_id 5\n}\n", func(c *Context) int { return len(c.Keepalived) }, ""},
		{"net-conf.json", `{"Network": "10.244.0.0/16", "Backend": {"Type": "vxlan"}}`, func(c *Context) int { return len(c.FlannelNetConfs) }, ""},
		{"admin.conf", "apiVersion: v1\nkind: Config\nusers:\n- name: kubernetes-admin\n  user: {}\n", func(c *Context) int { return len(c.Kubeconfigs) }, ""},
		// a Butane config carrying a containerd config.toml and a kubelet unit in block
		// scalars is YAML, neither TOML (KW0001) nor a script; a containerd TOML without
		// the .toml extension is still TOML
		{"worker.yaml", "---\nvariant: fcos\nversion: 1.4.0\nsystemd:\n  units:\n    - name: kubelet.service\n      contents: |\n        [Service]\n        ExecStart=/usr/bin/kubelet --anonymous-auth=true\nstorage:\n  files:\n    - path: /etc/containerd/config.toml\n      contents:\n        inline: |\n          [plugins.\"io.containerd.grpc.v1.cri\"]\n            sandbox_image = \"pause\"\n",
			func(c *Context) int { return len(c.Containerd) + len(c.CommandLines) + len(c.Scripts) }, "KW0002"},
		{"containerd-config", "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  sandbox_image = \"registry.k8s.io/pause:3.10\"\n", func(c *Context) int { return len(c.Containerd) }, ""},
		{"daemon.json", `{"insecure-registries": ["a:5000"]}`, func(c *Context) int { return len(c.DockerDaemons) }, ""},
		{"99-k8s.conf", "net.ipv4.ip_forward = 1\nnet.bridge.bridge-nf-call-iptables=1\n", func(c *Context) int { return len(c.Sysctls) }, ""},
		{"pod.json", `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}`,
			func(c *Context) int { return len(c.Objects) }, ""},
		{"list.yaml", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n  spec: {containers: [{name: c, image: i}]}\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: b}\n  spec: {selector: {}, template: {spec: {containers: [{name: c, image: i}]}}}\n",
			func(c *Context) int {
				if len(c.Objects) == 2 && c.Objects[1].Template != nil && c.Objects[1].Line == 8 {
					return 2
				}
				return 0
			}, ""},
		{"deploylist.yaml", "apiVersion: apps/v1\nkind: DeploymentList\nitems:\n- metadata: {name: b}\n  spec: {selector: {}, template: {spec: {containers: [{name: c, image: i}]}}}\n",
			func(c *Context) int {
				if len(c.Objects) == 1 && c.Objects[0].Kind == "Deployment" && c.Objects[0].Template != nil {
					return 1
				}
				return 0
			}, ""},
		{"etc/modules-load.d/k8s.conf", "overlay\nbr_netfilter\n", func(c *Context) int { return len(c.Modules) }, ""},
		{"nodes/n1/kubelet/flags", "# comment\n--config=c:\\k\\config.yaml\n--hostname-override=n1\n", func(c *Context) int {
			if len(c.CommandLines) == 1 && c.CommandLines[0].Component == platform.Kubelet && len(c.CommandLines[0].Flags) == 2 && c.CommandLines[0].Flags[1].Line == 3 {
				return 1
			}
			return 0
		}, ""},
		{"notes.txt", "just some words\n", nil, "KW0002"},
		{"bin", "\x00\x01", nil, "KW0002"},
		{"broken.json", `{"a": `, nil, "KW0001"},
		{"bomb.yaml", "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" +
			"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n", nil, "KW0001"},
		{"broken.toml", "[plugins\n", nil, "KW0001"},
		{"broken-keepalived.conf", "vrrp_instance A {\n", nil, "KW0001"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			ctx := newTestContext(t)
			loadFile(ctx, tt.file, []byte(tt.content))
			if tt.problem != "" {
				if len(ctx.Problems) == 0 || ctx.Problems[0].RuleID != tt.problem {
					t.Fatalf("problems %+v, want %s", ctx.Problems, tt.problem)
				}
				return
			}
			if len(ctx.Problems) > 0 {
				t.Fatalf("unexpected problems %+v", ctx.Problems)
			}
			if tt.count(ctx) == 0 {
				t.Fatalf("not recognised: %+v", ctx)
			}
		})
	}
}

func TestScriptExtraction(t *testing.T) {
	script := "$global:Labels = \"a=b,c=d\"\r\n" +
		"$global:Dir = \"c:\\k\"\r\n" +
		"$env:KUBE_NETWORK = \"l2bridge\"\r\n" +
		"# c:\\k\\kubelet.exe --commented-out\r\n" +
		"& c:\\k\\kubelet.exe --node-labels=$global:Labels `\r\n" +
		"   --cert-dir=\"$global:Dir\\pki\" --resolv-conf=\"\"\r\n" +
		".\\kube-proxy.exe --proxy-mode=kernelspace\r\n" +
		"nssm set kube-proxy AppParameters --v=4 --hostname-override=n1\r\n" +
		"nssm.exe set kube-proxy AppEnvironmentExtra KUBE_NETWORK=cbr0\r\n" +
		"sc.exe create kubelet binPath= \"c:\\k\\kubelet.exe --windows-service --v=2\" start= auto\r\n" +
		"New-Service -Name kube-proxy -BinaryPathName \"c:\\k\\kube-proxy.exe --windows-service\"\r\n" +
		"Set-NetFirewallProfile -Profile Domain,Public,Private -Enabled False\r\n"
	ctx := newTestContext(t)
	loadFile(ctx, "start.ps1", []byte(script))
	if len(ctx.CommandLines) != 5 {
		for _, c := range ctx.CommandLines {
			t.Logf("%s %s line %d %v", c.Component, c.Origin, c.Line, c.Flags)
		}
		t.Fatalf("%d command lines, want 5", len(ctx.CommandLines))
	}
	kl := ctx.CommandLines[0]
	if kl.Component != platform.Kubelet || kl.Line != 5 || kl.OS != OSWindows || kl.Origin != "& operator" {
		t.Errorf("kubelet line: %+v", kl)
	}
	if f, _ := kl.Last("node-labels"); f.Value != "a=b,c=d" || !f.Resolved || f.Line != 5 {
		t.Errorf("node-labels: %+v", f)
	}
	if f, _ := kl.Last("cert-dir"); f.Value != `c:\k\pki` || f.Line != 6 {
		t.Errorf("cert-dir: %+v", f)
	}
	if f, ok := kl.Last("resolv-conf"); !ok || f.Value != "" || !f.HasValue {
		t.Errorf("resolv-conf: %+v", f)
	}
	kp := ctx.CommandLines[1]
	if kp.Component != platform.KubeProxy || kp.Env["KUBE_NETWORK"].Value != "l2bridge" {
		t.Errorf("kube-proxy: %+v", kp)
	}
	nssm := ctx.CommandLines[2]
	if nssm.Service != ServiceNSSM || nssm.Node != "n1" || nssm.Env["KUBE_NETWORK"].Value != "cbr0" || nssm.Line != 8 {
		t.Errorf("nssm: %+v", nssm)
	}
	if f, _ := nssm.Last("hostname-override"); f.Column != 41 {
		t.Errorf("nssm flag column %d", f.Column)
	}
	sc := ctx.CommandLines[3]
	if sc.Service != ServiceSC || !sc.Has("windows-service") || sc.Program != `c:\k\kubelet.exe` {
		t.Errorf("sc: %+v", sc)
	}
	if ns := ctx.CommandLines[4]; ns.Service != ServiceSC || ns.Component != platform.KubeProxy {
		t.Errorf("New-Service: %+v", ns)
	}
	if len(ctx.Scripts) != 1 || !reflect.DeepEqual(ctx.Scripts[0].FirewallOff, []int{12}) {
		t.Errorf("firewall lines: %+v", ctx.Scripts)
	}
}

func TestFlagParsing(t *testing.T) {
	ctx := newTestContext(t)
	loadFlagString(ctx, "--kubelet-flags[0]", `kubelet --max-pods 30 --windows-service --cgroups-per-qos --v 3 -v=4 --network-plugin cni --api_servers=x -- stray`, platform.Kubelet)
	cl := ctx.CommandLines[0]
	got := map[string]string{}
	for _, f := range cl.Flags {
		got[f.Name] = f.Value
	}
	want := map[string]string{"max-pods": "30", "windows-service": "", "cgroups-per-qos": "", "v": "4", "network-plugin": "cni", "api-servers": "x"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("flags %v, want %v", got, want)
	}
	if len(cl.Args) != 1 || cl.Args[0].Text != "stray" {
		t.Errorf("args %+v", cl.Args)
	}
	if cl.Program != "kubelet" {
		t.Errorf("program %q", cl.Program)
	}
}

func TestKeepalivedParse(t *testing.T) {
	data, err := os.ReadFile("../../testdata/check/seeds/seed000-keepalived.conf")
	if err != nil {
		t.Fatal(err)
	}
	kc, err := ParseKeepalived("k.conf", data)
	if err != nil {
		t.Fatal(err)
	}
	if kc.RouterID != "LVS_WIN_GW_1" || kc.VRRPVersion != 2 || len(kc.Instances) != 1 {
		t.Fatalf("%+v", kc)
	}
	in := kc.Instances[0]
	if in.Name != "VI_MYLAN_K8S_WIN_GATE_ETH1" || in.State != "BACKUP" || in.Interface != "eth1" || in.VRID != 188 ||
		in.Priority != 150 || !in.Nopreempt || in.AdvertInt != 1 || in.AuthType != "PASS" || in.AuthPass != "lvs" ||
		in.UnicastSrc != "100.100.126.202" || !reflect.DeepEqual(in.UnicastPeers, []string{"100.100.126.203", "100.100.126.204"}) ||
		len(in.VIPs) != 1 || in.VIPs[0].Prefix.String() != "10.160.11.1/24" || in.VIPs[0].Dev != "eth1" || in.VIPs[0].Line != 29 {
		t.Errorf("instance %+v", in)
	}
	if len(kc.CutWords) != 1 || kc.CutWords[0].Kept != "lvs" || kc.CutWords[0].Line != 19 {
		t.Errorf("cut words %+v", kc.CutWords)
	}
	// The renderer's layout: one advertised VIP, the other gateways excluded.
	ex, err := ParseKeepalived("x", []byte("vrrp_instance A {\n virtual_ipaddress {\n  10.160.11.1/24 dev eth1\n }\n"+
		" virtual_ipaddress_excluded {\n  10.160.12.1/24 dev eth1\n  10.160.13.1\n }\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, v := range ex.Instances[0].AllVIPs() {
		all = append(all, fmt.Sprintf("%s@%d", v.Prefix, v.Line))
	}
	if in := ex.Instances[0]; len(in.VIPs) != 1 || len(in.Excluded) != 2 || in.Excluded[0].Dev != "eth1" ||
		!reflect.DeepEqual(all, []string{"10.160.11.1/24@3", "10.160.12.1/24@6", "10.160.13.1/32@7"}) {
		t.Errorf("VIPs %+v, excluded %+v, all %v", in.VIPs, in.Excluded, all)
	}
	for _, bad := range []string{"vrrp_instance A {\n", "}\n", "{\n", "global_defs {\n vrrp_version 4\n}\n", "vrrp_instance A {\n advert_int x\n}\n", "a \"b\n"} {
		if _, err := ParseKeepalived("x", []byte(bad)); err == nil || !strings.Contains(err.Error(), "line ") {
			t.Errorf("%q: error %v, want one with a line", bad, err)
		}
	}
}

// A VIP without a prefix is the whole address: keepalived's parse_ipaddress (vrrp_ipaddress.c)
// sets ifa_prefixlen to 128 for an address with a ':' and to 32 otherwise. keepalived 2.2.7 in a
// network namespace adds bare 2001:db8::10 as 2001:db8::10/128 and bare 192.0.2.11 as /32.
func TestKeepalivedBareVIPPrefix(t *testing.T) {
	cases := []struct {
		vip  string
		want string // "" when keepalived skips the address as invalid
	}{
		{"10.160.13.1", "10.160.13.1/32"},
		{"10.160.13.1/24", "10.160.13.1/24"},
		{"fd00:10:160:13::1", "fd00:10:160:13::1/128"},
		{"fd00:10:160:13::1/64", "fd00:10:160:13::1/64"},
		{"::ffff:10.160.13.1", "::ffff:10.160.13.1/128"},
		{"fe80::1%eth1", ""},
		{"10.160.13.300", ""},
		{"10.160.13.1/33", ""},
	}
	for _, c := range cases {
		for _, block := range []string{"virtual_ipaddress", "virtual_ipaddress_excluded"} {
			kc, err := ParseKeepalived("x", []byte("vrrp_instance A {\n "+block+" {\n  "+c.vip+" dev eth1\n }\n}\n"))
			if err != nil {
				t.Fatalf("%s in %s: %v", c.vip, block, err)
			}
			vips := kc.Instances[0].AllVIPs()
			if len(vips) != 1 {
				t.Fatalf("%s in %s: %d VIPs", c.vip, block, len(vips))
			}
			got := ""
			if vips[0].Valid {
				got = vips[0].Prefix.String()
			}
			if got != c.want || vips[0].Raw != c.vip || vips[0].Dev != "eth1" {
				t.Errorf("%s in %s: %q (raw %q, dev %q), want %q", c.vip, block, got, vips[0].Raw, vips[0].Dev, c.want)
			}
		}
	}
}

// The keepalived findings that concern how keepalived reads a file agree with keepalived's own
// config test (keepalived -t), which hack/test.sh installs.
func TestKeepalivedAgreesWithKeepalivedT(t *testing.T) {
	bin, err := exec.LookPath("keepalived")
	if err != nil {
		t.Fatalf("keepalived is required (hack/test.sh installs it): %v", err)
	}
	cases := []struct {
		name, conf, keepalivedSays string
		ours                       func(*KeepalivedConf, error) bool
	}{
		{"unbalanced", "vrrp_instance A {\n state BACKUP\n interface eth0\n virtual_router_id 1\n", "missing '}'",
			func(_ *KeepalivedConf, err error) bool { return err != nil }},
		{"vrid", "vrrp_instance A {\n state BACKUP\n interface eth0\n virtual_router_id 300\n}\n", "not valid - must be between 1 & 255",
			func(k *KeepalivedConf, err error) bool { return err == nil && k.Instances[0].VRID == 300 }},
		{"truncated pass", "vrrp_instance A {\n interface eth0\n virtual_router_id 1\n authentication {\n  auth_type PASS\n  auth_pass abcdefghij\n }\n}\n",
			"Truncating auth_pass to 8 characters", func(k *KeepalivedConf, err error) bool { return err == nil && k.Instances[0].AuthPass == "abcdefghij" }},
		{"priority", "vrrp_instance A {\n interface eth0\n virtual_router_id 1\n priority abc\n}\n", "Priority not valid",
			func(k *KeepalivedConf, err error) bool { return err == nil && k.Instances[0].PriorityRaw == "abc" }},
		{"quoted hash", "vrrp_instance A {\n interface eth0\n virtual_router_id 1\n authentication {\n  auth_type PASS\n  auth_pass \"ab#cdefghijk\"\n }\n}\n",
			"Truncating auth_pass to 8 characters", func(k *KeepalivedConf, err error) bool {
				return err == nil && k.Instances[0].AuthPass == "ab#cdefghijk" && len(k.CutWords) == 0
			}},
		{"garp zero", "global_defs {\n vrrp_garp_interval 0\n}\n", "vrrp_garp_interval '0' is invalid",
			func(k *KeepalivedConf, err error) bool { return err == nil && len(k.Globals) == 1 }},
	}
	dir := t.TempDir()
	for _, c := range cases {
		p := filepath.Join(dir, c.name+".conf")
		if err := os.WriteFile(p, []byte(c.conf), 0o644); err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command(bin, "-t", "-l", "-D", "-f", p).CombinedOutput()
		if !strings.Contains(string(out), c.keepalivedSays) {
			t.Errorf("%s: keepalived -t did not say %q:\n%s", c.name, c.keepalivedSays, out)
		}
		kc, err := ParseKeepalived(p, []byte(c.conf))
		if !c.ours(kc, err) {
			t.Errorf("%s: kubewin's parse disagrees (%+v, %v)", c.name, kc, err)
		}
	}
	// The seed's auth_pass with '#': keepalived reads only "lvs", so it does not truncate.
	p := filepath.Join(dir, "hash.conf")
	conf := "vrrp_instance A {\n interface eth0\n virtual_router_id 1\n authentication {\n  auth_type PASS\n  auth_pass lvs#Win.Gate@Q1\n }\n}\n"
	if err := os.WriteFile(p, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(bin, "-t", "-l", "-D", "-f", p).CombinedOutput()
	if strings.Contains(string(out), "Truncating auth_pass") {
		t.Errorf("keepalived read past '#':\n%s", out)
	}
	if kc, err := ParseKeepalived(p, []byte(conf)); err != nil || kc.Instances[0].AuthPass != "lvs" {
		t.Errorf("kubewin reads %+v, %v", kc, err)
	}
}

func FuzzParseKeepalived(f *testing.F) {
	if data, err := os.ReadFile("../../testdata/check/seeds/seed000-keepalived.conf"); err == nil {
		f.Add(data)
	}
	for _, s := range []string{"vrrp_instance A {\n", "}", "global_defs { router_id x }", "a \"b", "x#y!z\n{\n}\n",
		"vrrp_instance A {\n virtual_ipaddress {\n 1.2.3.4/33 dev\n }\n unicast_peer {\n }\n}\n",
		"vrrp_instance A {\n virtual_ipaddress_excluded {\n fd00::1\n fe80::1%eth1\n }\n}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		kc, err := ParseKeepalived("f", data)
		if err != nil {
			if !strings.Contains(err.Error(), "line ") {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		lines := strings.Count(string(data), "\n") + 1
		for _, in := range kc.Instances {
			if in.Line < 1 || in.Line > lines {
				t.Fatalf("instance line %d outside 1-%d", in.Line, lines)
			}
		}
	})
}

func FuzzSplitYAML(f *testing.F) {
	for _, s := range []string{"a: 1\n---\nb: [1, 2]\n", `{"a": {"b": null}}`, "a: &x {b: 1}\nc: *x\n", "- 1\n- 2\n", "a: 1e999\n", "a: 0x1F\n", ":", "a:\n  - b: c\n    d: e\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, _ := splitYAML(data)
		// YAML breaks lines at \n, \r\n and a lone \r.
		lines := strings.Count(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") + strings.Count(strings.ReplaceAll(string(data), "\r\n", ""), "\r") + 1
		for _, d := range docs {
			if d.Line < 1 || d.Line > lines {
				t.Fatalf("document line %d outside 1-%d", d.Line, lines)
			}
			if l := d.Pos.Line(""); l > lines {
				t.Fatalf("position %d outside 1-%d", l, lines)
			}
		}
	})
}

// FuzzLoadFile feeds arbitrary bytes under every file name kubewin recognises: the content
// dispatcher and every parser behind it (CNI, containerd TOML, keepalived, component configs,
// kubeconfigs, net-conf, daemon.json, sysctl, scripts, manifests) must report problems, never
// panic.
func FuzzLoadFile(f *testing.F) {
	seeds, _ := filepath.Glob("../../testdata/check/seeds/*.*")
	for _, s := range seeds {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(uint8(0), data)
		}
	}
	// Component configs that reach every ported defaulting and validation check.
	configs, _ := filepath.Glob(configDir + "/*.yaml")
	for _, s := range configs {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(uint8(4), data)
		}
	}
	f.Add(uint8(3), []byte("version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runhcs-wcow-process]\n runtime_type = \"io.containerd.runhcs.v1\"\n"))
	f.Add(uint8(4), []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfoo: 1\n"))
	f.Add(uint8(5), []byte("apiVersion: v1\nkind: Config\nusers:\n- name: a\n  user: {client-certificate-data: AAAA}\n"))
	// templates (issue 24): an Ansible task, a unit and a TOML and a keepalived template
	f.Add(uint8(4), []byte("- name: k\n  ansible.windows.win_service:\n    name: kubelet\n    path: >-\n      {{ p }}\\kubelet.exe --windows-service\n      --v={{ v | int }}\n"))
	f.Add(uint8(7), []byte("[Service]\nExecStart={{ bin }}/kubelet \\\n{% if x %}\n  --a=1 \\\n{% endif %}\n  --b={{ y }}\n"))
	f.Add(uint8(3), []byte("root = \"{{ r }}\"\n{% if a %}\nx = {{ b }}\n{% endif %}\n{{ extra | b64decode }}\n"))
	f.Add(uint8(1), []byte("vrrp_instance V {\n  interface {{ IF }}\n{% for h in hs %}\n  {{ h }}\n{% endfor %}\n}\n"))
	// kubeadm configurations (v1beta2 map, v1beta4 list) and a version-guarded flag template
	f.Add(uint8(4), []byte("apiVersion: kubeadm.k8s.io/v1beta2\nkind: JoinConfiguration\ndiscovery:\n  bootstrapToken:\n{% if h %}\n    caCertHashes: [\"sha256:{{ h }}\"]\n{% else %}\n    unsafeSkipCAVerification: true\n{% endif %}\nnodeRegistration:\n  kubeletExtraArgs:\n    max-pods: MAX_PODS\n"))
	f.Add(uint8(0), []byte("---\napiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\nnodeRegistration:\n  kubeletExtraArgs:\n  - name: v\n    value: \"2\"\n---\nkind: KubeletConfiguration\napiVersion: kubelet.config.k8s.io/v1beta1\n"))
	f.Add(uint8(8), []byte("--v=2 \\\n{% if kube_version is version('1.22', '<') %}\n--dynamic-config-dir=/d \\\n{% endif %}\n--node-ip={{ ip }}:{{ p }}\n"))
	f.Add(uint8(4), []byte("---\nvariant: fcos\nversion: 1.4.0\nstorage:\n  files:\n    - path: /etc/containerd/config.toml\n      contents:\n        inline: |\n          [plugins.\"io.containerd.grpc.v1.cri\"]\n"))
	f.Add(uint8(10), []byte("kubelet.exe `\n  <%-\n    if_p('k8s-args') do |args|\n  -%>\n    <%= \"--#{flag}=#{value}\" %> `\n  <%- end -%>\n    --node-labels=<%= labels %>\n"))
	names := []string{"f.txt", "f.conf", "f.json", "config.toml", "f.yaml", "f.ps1", "f.cmd", "f.sh", "kubelet.flags", "kube-proxy.flags", "f.ps1.erb"}
	ctx := newTestContext(f)
	f.Fuzz(func(t *testing.T, sel uint8, data []byte) {
		ctx.Problems, ctx.CommandLines, ctx.CNIConfs, ctx.Objects = nil, nil, nil, nil
		ctx.KubeletConfigs, ctx.KubeProxyConfigs, ctx.Containerd, ctx.Keepalived = nil, nil, nil, nil
		ctx.FlannelNetConfs, ctx.Kubeconfigs, ctx.Scripts, ctx.Sysctls, ctx.DockerDaemons = nil, nil, nil, nil, nil
		ctx.Templates = nil
		name := names[int(sel)%len(names)]
		loadFile(ctx, name, data)
		for _, p := range ctx.Problems {
			if p.Location.File != name || p.RuleID == "" || p.Message == "" {
				t.Fatalf("problem %+v", p)
			}
		}
		for _, cl := range ctx.CommandLines {
			for _, fl := range cl.Flags {
				if fl.Line < 1 || fl.Column < 1 {
					t.Fatalf("flag %+v without a position", fl)
				}
			}
		}
	})
}

// cmd.exe expands %VAR% before it splits the line; the flags a variable holds are the
// kubelet's, at the position of the reference.
func TestCmdVariablesExpand(t *testing.T) {
	script := "@echo off\r\nset K=C:\\k\r\nset ARGS=--v=2 --hostname-override=n1\r\n%K%\\kubelet.exe %ARGS% --eviction-hard=memory.available^<5%% --node-ip=%NODE_IP%\r\n"
	ctx := newTestContext(t)
	loadFile(ctx, "start.cmd", []byte(script))
	if len(ctx.CommandLines) != 1 {
		t.Fatalf("%d command lines", len(ctx.CommandLines))
	}
	cl := ctx.CommandLines[0]
	if cl.Program != `C:\k\kubelet.exe` || cl.Node != "n1" {
		t.Errorf("program %q node %q", cl.Program, cl.Node)
	}
	if f, ok := cl.Last("v"); !ok || f.Value != "2" || f.Line != 4 || f.Column != 17 {
		t.Errorf("--v from %%ARGS%%: %+v", f)
	}
	if f, _ := cl.Last("eviction-hard"); HasPlaceholder(f.Value) {
		t.Errorf("eviction threshold taken for a placeholder: %q", f.Value)
	}
	if f, _ := cl.Last("node-ip"); f.Resolved {
		t.Errorf("unset %%NODE_IP%% resolved: %+v", f)
	}
}

func TestHasPlaceholder(t *testing.T) {
	for v, want := range map[string]bool{
		"<hostname>": true, "<DNS": true, "IP>": true, "a=<x>": true, "<主机名>": true,
		"<%= p('labels') %>": false, "a=<%= x %>,b=<y>": true,
		"memory.available<5%": false, "nodefs.available<10%,imagefs.available<15%": false, "10.0.0.5": false, "": false,
	} {
		if got := HasPlaceholder(v); got != want {
			t.Errorf("HasPlaceholder(%q) = %v, want %v", v, got, want)
		}
	}
}

// A script that only asks a binary about itself (--version, --help) runs no component: no
// command line is judged from it and the line is not "unread".
func TestVersionQueriesAreNotRuns(t *testing.T) {
	for _, tt := range []struct {
		name, file, text string
		lines            []int // lines of the command lines read
	}{
		{"cmd", "run.cmd", "@echo off\r\nc:\\k\\kubelet.exe --version\r\nc:\\k\\kubelet.exe --help\r\nc:\\k\\kubelet.exe --hostname-override=n1 --kubeconfig=c:\\k\\config\r\n", []int{4}},
		{"sh", "run.sh", "#!/bin/sh\n/usr/bin/kubelet --version=raw\nexec /usr/bin/kubelet --kubeconfig=/etc/kubernetes/kubelet.conf\n", []int{3}},
		{"only a version query", "v.cmd", "c:\\k\\kubelet.exe --version\n", nil},
		{"a flag besides --version is a run", "r.cmd", "c:\\k\\kubelet.exe --version --v=2\n", []int{1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := newTestContext(t)
			loadFile(ctx, tt.file, []byte(tt.text))
			var got []int
			for _, cl := range ctx.CommandLines {
				got = append(got, cl.Line)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.lines) {
				t.Errorf("command lines at %v, want %v", got, tt.lines)
			}
			for _, p := range ctx.Problems {
				if p.RuleID == "KW0015" {
					t.Errorf("KW0015 at line %d: %s", p.Location.Line, p.Message)
				}
			}
		})
	}
}
