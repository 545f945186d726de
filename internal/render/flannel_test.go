package render

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestFlanneldServicePerDesign(t *testing.T) {
	v := designVariants(t)
	for _, tc := range []struct {
		variant  string
		flanneld bool
	}{
		{"keepalived", false},
		{"keepalived-hyperv-2022", false},
		{"router", false},
		{"host-gw", false},
		{"flannel-host-gw", true},
		{"flannel-vxlan", true},
	} {
		t.Run(tc.variant, func(t *testing.T) {
			p := v[tc.variant]
			for _, n := range windowsNodes(p) {
				svcs, err := WindowsServices(p, n)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, s := range svcs {
					names = append(names, s.Name)
				}
				data, err := ServicesScript(p, n)
				if err != nil {
					t.Fatal(err)
				}
				s := string(data)
				if !tc.flanneld {
					if want := []string{"containerd", "kubelet", "kube-proxy"}; !slices.Equal(names, want) {
						t.Errorf("%s: services %v, want %v", n.Name, names, want)
					}
					for _, bad := range []string{"flanneld", "nssm", "WinSW", "Install-ServiceWrapper", "kube-flannel"} {
						if strings.Contains(s, bad) {
							t.Errorf("%s: install.ps1 of a design without flannel mentions %q", n.Name, bad)
						}
					}
					continue
				}
				if want := []string{"containerd", "kubelet", "flanneld", "kube-proxy"}; !slices.Equal(names, want) {
					t.Fatalf("%s: services %v, want %v", n.Name, names, want)
				}
				f, proxy := svcs[2], svcs[3]
				wantArgs := []string{
					`--kubeconfig-file=C:\k\kubelet.conf`,
					`--net-config-path=C:\etc\kube-flannel\net-conf.json`,
					"--iface=" + n.NodeIP,
					"--ip-masq=1",
					"--kube-subnet-mgr=1",
				}
				if !slices.Equal(f.Args, wantArgs) {
					t.Errorf("%s: flanneld args %q, want %q", n.Name, f.Args, wantArgs)
				}
				if f.Binary != `C:\k\flanneld.exe` || f.Wrapper == nil || f.BinaryPath != `C:\k\flanneld-service.exe` {
					t.Fatalf("%s: flanneld must run under WinSW (it has no service mode): %+v", n.Name, f)
				}
				if !slices.Equal(f.Wrapper.Environment, []string{"NODE_NAME=" + n.Name}) {
					t.Errorf("%s: flanneld environment %q lacks NODE_NAME=%s", n.Name, f.Wrapper.Environment, n.Name)
				}
				if !slices.Equal(f.DependsOn, []string{"kubelet"}) || !slices.Equal(proxy.DependsOn, []string{"flanneld"}) {
					t.Errorf("%s: flanneld depends on %v, kube-proxy on %v", n.Name, f.DependsOn, proxy.DependsOn)
				}
				inOrder(t, "install.ps1", s,
					`Copy-Item -Force -Path (Join-Path $BundleDir 'flannel\net-conf.json') -Destination 'C:\etc\kube-flannel\net-conf.json'`,
					"function Install-ServiceWrapper",
					"Install-NodeService -Name 'kubelet'",
					"<arguments>"+strings.Join(wantArgs, " ")+"</arguments>", "<env name=\"NODE_NAME\" value=\""+n.Name+"\"></env>",
					`Install-ServiceWrapper -Exe 'C:\k\flanneld-service.exe'`,
					"Install-NodeService -Name 'flanneld'", "-DependsOn @('kubelet')", `-BinaryPath 'C:\k\flanneld-service.exe'`,
					"Install-NodeService -Name 'kube-proxy'", "-DependsOn @('flanneld')",
					"Start-Service -Name 'kubelet'", "Start-Service -Name 'flanneld'", "Start-Service -Name 'kube-proxy'")
				wantContains(t, "install.ps1", data, "plugins (flannel.exe, "+n.Windows.CNIDelegate+".exe, host-local.exe)",
					"(and flanneld.exe, flanneld-service.exe) are in C:\\k")
				if err := psStructure(s); err != nil {
					t.Errorf("%s: %v", n.Name, err)
				}
			}
		})
	}
}

func TestFlannelNetConfNamesTheCNINetwork(t *testing.T) {
	for _, variant := range []string{"flannel-host-gw", "flannel-vxlan"} {
		p := designVariants(t)[variant]
		files := mustRender(t, p)
		cluster := files["cluster/flannel-net-conf.json"]
		var nc flannelNetConf
		if err := json.Unmarshal(cluster, &nc); err != nil {
			t.Fatal(err)
		}
		for _, n := range windowsNodes(p) {
			var cni struct{ Name, Type string }
			if err := json.Unmarshal(files["nodes/"+n.Name+"/cni/"+CNIConfigName(n.Windows)], &cni); err != nil {
				t.Fatal(err)
			}
			// flanneld names the HNS network after Backend.Name; the flannel CNI plugin makes
			// win-bridge/win-overlay look it up by the CNI network name.
			if cni.Type != "flannel" || nc.Backend.Name != cni.Name {
				t.Errorf("%s %s: net-conf Backend.Name %q, CNI network %q (type %s)", variant, n.Name, nc.Backend.Name, cni.Name, cni.Type)
			}
			if got := files["nodes/"+n.Name+"/flannel/net-conf.json"]; string(got) != string(cluster) {
				t.Errorf("%s %s: node net-conf.json differs from the cluster's:\n%s\n%s", variant, n.Name, got, cluster)
			}
		}
	}
	p := designVariants(t)["keepalived"]
	if _, ok := mustRender(t, p)["nodes/node009/flannel/net-conf.json"]; ok {
		t.Error("net-conf.json in the bundle of a node without flannel")
	}

	p = designVariants(t)["flannel-vxlan"]
	for i := range p.Nodes {
		if p.Nodes[i].Windows != nil {
			w := *p.Nodes[i].Windows
			w.HNSNetworkName = "other"
			p.Nodes[i].Windows = &w
			break
		}
	}
	p.Nodes = append(p.Nodes, windowsNode(t, designVariants(t)["flannel-vxlan"], "node009"))
	p.Nodes[len(p.Nodes)-1].Name = "node010"
	if _, err := FlannelNetConf(p); err == nil || !strings.Contains(err.Error(), "Backend.Name") {
		t.Errorf("Windows nodes with different HNS network names share one net-conf: err %v", err)
	}
}

func TestReadmeSourcesAndChecksPerDesign(t *testing.T) {
	v := designVariants(t)
	upstream := []string{
		"win-bridge.exe, host-local.exe from containernetworking/plugins " + cniPluginsVersion + " (https://github.com/containernetworking/plugins/releases/download/" +
			cniPluginsVersion + "/cni-plugins-windows-amd64-" + cniPluginsVersion + ".tgz) into `C:\\k\\cni\\bin`;",
		"`Get-NetIPInterface -InterfaceAlias 'vEthernet (cbr0)' -AddressFamily IPv4` shows Forwarding Enabled;",
		"`Test-NetConnection 10.160.11.1` from the node reaches the pod gateway;",
	}
	flannel := []string{
		"flanneld.exe from flannel-io/flannel " + flannelVersion + " (https://github.com/flannel-io/flannel/releases/download/" + flannelVersion + "/flanneld.exe) into `C:\\k`;",
		"flannel.exe from flannel-io/cni-plugin " + flannelCNIPluginVersion + " (https://github.com/flannel-io/cni-plugin/releases/download/" + flannelCNIPluginVersion +
			"/cni-plugin-flannel-windows-amd64-" + flannelCNIPluginVersion + ".tgz, its flannel-amd64.exe renamed) into `C:\\k\\cni\\bin`;",
		"flanneld-service.exe from winsw/winsw " + winswVersion + " (https://github.com/winsw/winsw/releases/download/" + winswVersion + "/WinSW.NET461.exe, renamed, SHA-256 " + winswSHA256 + ") into `C:\\k`;",
		"flanneld reads `C:\\k\\kubelet.conf`",
		"`Get-Service flanneld` is Running and `Get-Content C:\\run\\flannel\\subnet.env` shows FLANNEL_SUBNET=10.160.11.1/24;",
		"a pod on node009 reaches a pod on node001: `kubectl exec <pod on node009> -- ping -n 3 <IP of the pod on node001>`;",
	}
	for _, tc := range []struct {
		variant   string
		want, not []string
	}{
		{"keepalived", upstream, []string{"flannel", "nssm", "WinSW", "winsw"}},
		{"router", upstream, []string{"flannel", "nssm", "WinSW", "winsw"}},
		{"host-gw", upstream, []string{"flannel", "nssm", "WinSW", "winsw"}},
		{"flannel-host-gw", append([]string{
			"win-bridge.exe, host-local.exe from containernetworking/plugins " + cniPluginsVersion,
			"`Get-HnsNetwork | Where-Object Name -eq 'cbr0'` shows an L2Bridge network over 10.160.11.0/24 with gateway 10.160.11.1;",
			"`Get-NetIPInterface -InterfaceAlias 'vEthernet (cbr0_ep)' -AddressFamily IPv4` shows Forwarding Enabled",
			"`Get-NetRoute -DestinationPrefix 10.160.3.0/24` shows NextHop 100.100.126.208 (node001)",
		}, flannel...), []string{"win-overlay", "Overlay", "RemoteSubnetRoute", "Test-NetConnection", "'vEthernet (cbr0)'", "flannel.exe, win-bridge.exe (and"}},
		{"flannel-vxlan", append([]string{
			"win-overlay.exe, host-local.exe from containernetworking/plugins " + cniPluginsVersion,
			"`Get-HnsNetwork | Where-Object Type -eq 'Overlay'` shows the network vxlan0 over 10.160.11.0/24;",
			"`(Get-HnsNetwork | Where-Object Name -eq 'vxlan0').Policies | Where-Object Type -eq 'RemoteSubnetRoute'` lists one entry per other node, e.g. DestinationPrefix 10.160.3.0/24 with ProviderAddress 100.100.126.208 (node001);",
			"vxlan backend, VNI 4096, UDP 4789",
		}, flannel...), []string{"win-bridge", "L2Bridge", "Get-NetRoute", "Test-NetConnection", "vEthernet (cbr0", "_ep"}},
	} {
		t.Run(tc.variant, func(t *testing.T) {
			p := v[tc.variant]
			data, err := WindowsReadme(p, windowsNode(t, p, "node009"))
			if err != nil {
				t.Fatal(err)
			}
			wantContains(t, "README", data, tc.want...)
			for _, bad := range tc.not {
				if strings.Contains(string(data), bad) {
					t.Errorf("README of %s contains %q:\n%s", tc.variant, bad, data)
				}
			}
			// No release of containernetworking/plugins ships the flannel binaries.
			if strings.Contains(string(data), "flannel.exe, ") || strings.Contains(string(data), "flanneld.exe from containernetworking") {
				t.Errorf("README of %s names containernetworking/plugins as the source of flannel binaries:\n%s", tc.variant, data)
			}
		})
	}
}
