package render

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"

	"github.com/kubewin/kubewin/internal/plan"
)

// cniPluginsVersion is the containernetworking/plugins release whose win-bridge/win-overlay
// configuration format kubewin renders (pkg/hns NetConf, apiVersion 2).
const cniPluginsVersion = "v1.9.1"

var readmeTmpl = template.Must(template.New("readme").Funcs(template.FuncMap{
	"join": strings.Join,
}).Parse(`# Windows node {{.N.Name}}

{{.Gen}}

| | |
|---|---|
| Windows build | {{.W.BuildLabel}} (image tag {{.W.ImageTag}}) |
| Kubernetes | {{.P.Cluster.KubernetesVersion}}, design {{.P.Cluster.Design}} |
| Node IP | {{.N.NodeIP}} on {{.W.AdapterName}} ({{.N.NodeSubnet}}) |
| Pod CIDR | {{.N.PodCIDR}} ({{.N.PodCIDRSource}}) |
| HNS network | {{.W.HNSNetworkName}} ({{.W.HNSNetworkType}}) on adapter {{.W.AdapterName}} |
| Pod gateway (.1) | {{.W.Gateway}}, held by {{.W.GatewayHolder}} |
| Host endpoint (.2) | {{.W.HostEndpointName}} at {{.W.HostEndpointIP}}, interface "vEthernet ({{.W.HostEndpointName}})" |
| OutBoundNAT exceptions | {{join .W.OutboundNATExceptions ", "}} |
| Service routes (NeedEncap) | {{join .W.ServiceRoutes ", "}} |
| Cluster DNS | {{join .W.DNSServers ", "}}; search {{join .W.DNSSearch " "}} |
| Sandbox (pause) image | {{.W.PauseImage}} |
| kube-proxy | {{.W.KubeProxyMode}}, runs as {{.W.KubeProxyServiceAccount}} |

Run every step in an elevated PowerShell on {{.N.Name}} unless it says otherwise. The scripts are
idempotent: after fixing a problem, run the failed step again.

1. **Windows features.** ` + "`Install-WindowsFeature -Name Containers{{if .HyperV}}, Hyper-V, Hyper-V-PowerShell{{end}}`" + `, then reboot.
2. **Programs.**
   - kubelet.exe and kube-proxy.exe of {{.P.Cluster.KubernetesVersion}} (https://dl.k8s.io/{{.P.Cluster.KubernetesVersion}}/bin/windows/amd64/) into ` + "`{{.W.InstallDir}}`" + `;
   - containerd 2.1 or later (containerd.exe, containerd-shim-runhcs-v1.exe) into ` + "`{{.ContainerdDir}}`" + `;
   - {{.CNITypes}} from containernetworking/plugins {{.CNIVersion}} into ` + "`{{.W.CNIBinDir}}`" + `;
   - hns.psm1 from https://github.com/microsoft/SDN (Kubernetes/windows) into ` + "`{{.W.InstallDir}}`" + `.
3. **This bundle.** Copy this directory (nodes/{{.N.Name}}) to ` + "`{{.BundleDir}}`" + `.
4. **Credentials** (on a control-plane node, then copy):
   - the cluster CA (/etc/kubernetes/pki/ca.crt) to ` + "`{{.CAFile}}`" + `;
   - a bootstrap kubeconfig for TLS bootstrapping (e.g. ` + "`kubeadm token create`" + ` and a kubeconfig using that
     token) to ` + "`{{.Bootstrap}}`" + `; the kubelet writes ` + "`{{.Kubeconfig}}`" + ` itself once its CSR is approved;
   - a kubeconfig for kube-proxy (the kube-proxy ServiceAccount's token) to ` + "`{{.ProxyKubeconfig}}`" + `.
     Never copy admin.conf to a node.
5. **Cluster objects** (once per cluster, from a machine with kubectl):
   - ` + "`kubectl apply -f cluster/runtimeclasses.yaml`" + `{{if .CalicoFile}}
   - cluster/calico-ipreservation.yaml, **before** this node runs pods, so that Calico never hands out
     addresses of {{.N.PodCIDR}}{{end}}{{if .Keepalived}}
   - on the gateway members ({{.Members}}): install keepalived, copy nodes/<member>/keepalived/keepalived.conf
     to /etc/keepalived/keepalived.conf and ` + "`systemctl reload keepalived`" + `; one of them must hold {{.W.Gateway}}{{end}}{{if .Router}}
   - on the router: hold {{.W.Gateway}}/{{.Bits}} on the cluster network and add cluster/tor-routes.txt{{end}}
6. **Firewall.** ` + "`& {{.BundleDir}}\\firewall\\rules.ps1`" + ` opens {{.Ports}}; the firewall stays on.
7. **Network and services.** ` + "`& {{.BundleDir}}\\services\\install.ps1`" + `: copies the CNI and containerd
   configuration into place, creates the HNS network (the connection on {{.W.AdapterName}} drops for a few
   seconds) and registers it as the startup task {{.Task}}, then installs and starts containerd, kubelet
   and kube-proxy.
8. **Check.**
   - ` + "`Get-NetIPInterface -InterfaceAlias 'vEthernet ({{.W.HostEndpointName}})' -AddressFamily IPv4`" + ` shows Forwarding Enabled;
   - ` + "`Test-NetConnection {{.W.Gateway}}`" + ` from the node reaches the pod gateway;
   - ` + "`kubectl get node {{.N.Name}} -o wide`" + ` is Ready with podCIDR {{.N.PodCIDR}}.

To undo the network: ` + "`& {{.BundleDir}}\\hns\\cleanup.ps1`" + ` (drain the node first).

Logs: containerd writes ` + "`{{.ContainerdLog}}`" + `. kubelet and kube-proxy run as services
with --windows-service; Kubernetes removed their --log-file flag, so for a foreground run stop the
service and start the same command line (see ` + "`sc.exe qc kubelet`" + `) in a console.
`))

// WindowsReadme renders nodes/<node>/README.md with the ordered steps and this node's values.
func WindowsReadme(p *plan.Plan, n plan.NodePlan) ([]byte, error) {
	w := n.Windows
	if w == nil {
		return nil, fmt.Errorf("render README for %s: not a Windows node", n.Name)
	}
	rules, err := FirewallRules(n)
	if err != nil {
		return nil, err
	}
	var ports []string
	for _, r := range rules {
		ports = append(ports, r.Protocol+" "+r.LocalPort)
	}
	cniTypes := "win-bridge.exe, host-local.exe"
	switch {
	case w.CNIPlugin == "flannel":
		cniTypes = "flannel.exe, " + w.CNIDelegate + ".exe (and flanneld.exe, run as a service per flannel's docs)"
	case w.CNIPlugin == "win-overlay":
		cniTypes = "win-overlay.exe, host-local.exe"
	}
	var members []string
	keepalived := strings.HasPrefix(w.GatewayHolder, "keepalived:")
	if keepalived {
		group := strings.TrimPrefix(w.GatewayHolder, "keepalived:")
		for _, g := range p.GatewayGroups {
			if g.Name == group {
				for _, m := range g.Members {
					members = append(members, m.Node)
				}
			}
		}
	}
	bits := ""
	if i := strings.IndexByte(n.PodCIDR, '/'); i >= 0 {
		bits = n.PodCIDR[i+1:]
	}
	calico, err := CalicoReservation(p)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = readmeTmpl.Execute(&b, map[string]any{
		"P": p, "N": n, "W": w, "Gen": generatedBy, "HyperV": len(w.RuntimeHandlers) > 1,
		"ContainerdDir": windowsContainerdDir, "CNITypes": cniTypes, "CNIVersion": cniPluginsVersion,
		"BundleDir": BundleDir(w), "CAFile": winPath(w.InstallDir, pkiSubdir, clusterCAFile),
		"Bootstrap": winPath(w.InstallDir, bootstrapKubeconfig), "Kubeconfig": winPath(w.InstallDir, kubeletKubeconfig),
		"ProxyKubeconfig": winPath(w.InstallDir, kubeProxyKubeconfig), "CalicoFile": calico != nil,
		"Keepalived": keepalived, "Members": strings.Join(members, ", "), "Router": w.GatewayHolder == "tor-router",
		"Bits": bits, "Ports": strings.Join(ports, ", "), "Task": hnsTaskName,
		"ContainerdLog": winPath(w.LogDir, "containerd.log"),
	})
	if err != nil {
		return nil, fmt.Errorf("render README for %s: %w", n.Name, err)
	}
	return b.Bytes(), nil
}
