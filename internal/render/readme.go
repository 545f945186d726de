package render

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

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
| HNS network | {{.W.HNSNetworkName}} ({{.W.HNSNetworkType}}) on adapter {{.W.AdapterName}}{{if .Flannel}}, created by flanneld{{end}} |
| Pod gateway (.1) | {{.W.Gateway}}, held by {{.W.GatewayHolder}} |
{{- if not .Flannel}}
| Host endpoint (.2) | {{.W.HostEndpointName}} at {{.W.HostEndpointIP}}, interface "vEthernet ({{.W.HostEndpointName}})" |
{{- else if .BridgeEndpoint}}
| Host endpoint (.2) | {{.BridgeEndpoint}} at {{.W.HostEndpointIP}}, created by flanneld, interface "vEthernet ({{.BridgeEndpoint}})" |
{{- end}}
{{- if .Flannel}}
| flanneld | {{.P.Flannel.Backend}} backend{{if .P.Flannel.VNI}}, VNI {{.P.Flannel.VNI}}, UDP {{.P.Flannel.Port}}{{end}}; net-conf.json at {{.NetConfPath}} |
{{- end}}
| OutBoundNAT exceptions | {{join .W.OutboundNATExceptions ", "}} |
| Service routes (NeedEncap) | {{join .W.ServiceRoutes ", "}} |
| Cluster DNS | {{join .W.DNSServers ", "}}; search {{join .W.DNSSearch " "}} |
| Sandbox (pause) image | {{.W.PauseImage}} |
| kube-proxy | {{.W.KubeProxyMode}}, runs as {{.W.KubeProxyServiceAccount}} |

Run every step in an elevated PowerShell on {{.N.Name}} unless it says otherwise. The scripts are
idempotent: after fixing a problem, run the failed step again.

1. **Windows features.** ` + "`Install-WindowsFeature -Name Containers{{if .HyperV}}, Hyper-V, Hyper-V-PowerShell{{end}}`" + `, then reboot.
2. **Programs.**
   - kubelet.exe, kube-proxy.exe and kube-log-runner.exe of {{.P.Cluster.KubernetesVersion}} (https://dl.k8s.io/{{.P.Cluster.KubernetesVersion}}/bin/windows/amd64/) into ` + "`{{.W.InstallDir}}`" + `;
   - containerd 2.1 or later (containerd.exe, containerd-shim-runhcs-v1.exe) into ` + "`{{.ContainerdDir}}`" + `;
{{- range .Programs}}
   - {{.Line}};
{{- end}}
   - hns.psm1 from https://github.com/microsoft/SDN (Kubernetes/windows) into ` + "`{{.W.InstallDir}}`" + `.
3. **This bundle.** Copy this directory (nodes/{{.N.Name}}) to ` + "`{{.BundleDir}}`" + `.
4. **Credentials** (on a control-plane node, then copy):
   - the cluster CA (/etc/kubernetes/pki/ca.crt) to ` + "`{{.CAFile}}`" + `;
   - a bootstrap kubeconfig for TLS bootstrapping (e.g. ` + "`kubeadm token create`" + ` or ` + "`kubewin token create`" + ` and a
     kubeconfig using that token) to ` + "`{{.Bootstrap}}`" + `. The token only has to outlive the kubelet's first start
     (24 hours by default for both).
   That is the only credential to copy. With it the kubelet obtains the node's client certificate
   (` + "`{{.NodeCert}}`" + `, identity system:node:{{.N.Name}}) and writes ` + "`{{.Kubeconfig}}`" + `. The certificate lives as long
   as the cluster's signer allows (kube-controller-manager ` + "`--cluster-signing-duration`" + `, one year by default);
   the kubelet requests a new one when 70 to 90 % of that has passed (` + "`rotateCertificates: true`" + ` in
   kubelet/config.yaml), and the cluster must approve that CSR: kubeadm's and ` + "`kubewin token create`" + `'s
   auto-approval do. kube-proxy{{if .Flannel}} and flanneld use{{else}} uses{{end}} the same credential: services\install.ps1 copies
   ` + "`{{.Kubeconfig}}`" + ` to ` + "`{{.ProxyKubeconfig}}`" + `{{if .Flannel}}, and flanneld reads ` + "`{{.Kubeconfig}}`" + `{{end}}; both name the
   certificate file, which client-go reads again when the kubelet replaces it, so they follow every renewal.
   For the EndpointSlices a node cannot list otherwise, the ClusterRole system:node-proxier must be bound to the
   group system:nodes: ` + "`kubewin token create`" + ` binds it as kubewin:node-proxier, or run
   ` + "`kubectl create clusterrolebinding kubewin:node-proxier --clusterrole=system:node-proxier --group=system:nodes`" + `.
{{- if .Flannel}}
   flanneld needs nothing more: flannel's ClusterRole (kube-flannel.yml) lets it get, list and watch nodes and
   patch nodes/status, which the Node authorizer allows every node for its own Node.
{{- end}}
   A node that was off longer than its certificate's life cannot renew it: put a new bootstrap kubeconfig in
   place and restart the kubelet, which bootstraps again when its certificate has expired.
   Never copy admin.conf to a node.
5. **Cluster objects** (once per cluster, from a machine with kubectl):
   - ` + "`kubectl apply -f cluster/runtimeclasses.yaml`" + `{{if .NodeObject}}
   - ` + "`kubectl apply -f cluster/windows-nodes.yaml`" + ` **before** this node's kubelet first starts: the Node object
     carries the pod CIDR {{.N.PodCIDR}} this node's network is built for (the controller-manager keeps a
     pod CIDR that is set; otherwise it would assign another one){{end}}{{if .CalicoFile}}
   - cluster/calico-ipreservation.yaml, **before** this node runs pods, so that Calico never hands out
     addresses of {{.N.PodCIDR}}{{end}}{{if .Keepalived}}
   - on the gateway members ({{.Members}}): install keepalived, copy nodes/<member>/keepalived/keepalived.conf
     to /etc/keepalived/keepalived.conf and keepalived.service.d/kubewin-vips.conf to
     /etc/systemd/system/keepalived.service.d/ (it removes the VIPs when keepalived dies, so a killed keepalived
     never leaves a second holder), ` + "`systemctl daemon-reload`" + ` and ` + "`systemctl reload keepalived`" + `; one of them
     must hold {{.W.Gateway}}{{end}}{{if .Router}}
   - on the router: hold {{.W.Gateway}}/{{.Bits}} on the cluster network and add cluster/tor-routes.txt{{end}}{{if .Flannel}}
   - flannel on the Linux nodes: the net-conf.json of the kube-flannel-cfg ConfigMap must equal
     cluster/flannel-net-conf.json (same Network and Backend; Linux flanneld ignores Backend.Name){{end}}
6. **Firewall.** ` + "`& {{.BundleDir}}\\firewall\\rules.ps1`" + ` opens {{.Ports}}; the firewall stays on.
{{- if not .Flannel}}
7. **Network and services.** ` + "`& {{.BundleDir}}\\services\\install.ps1`" + `: copies the CNI and containerd
   configuration into place, creates the HNS network (the connection on {{.W.AdapterName}} drops for a few
   seconds) and registers it as the startup task {{.Task}}, then installs and starts containerd, kubelet
   and kube-proxy. At every boot the task re-creates the network (with retries, recorded in
   ` + "`{{.W.LogDir}}\\kubewin-boot.log`" + `) and only then starts kubelet and kube-proxy.
{{- else}}
7. **Network and services.** ` + "`& {{.BundleDir}}\\services\\install.ps1`" + `: copies the CNI, containerd and
   flannel configuration into place (net-conf.json to ` + "`{{.NetConfPath}}`" + `), creates the placeholder HNS
   network External (the connection on {{.W.AdapterName}} drops for a few seconds) and registers it as the
   startup task {{.Task}}, then installs and starts containerd, kubelet, flanneld (run by WinSW) and kube-proxy.
   flanneld creates the HNS network {{.W.HNSNetworkName}} once it holds its lease.
{{- end}}
8. **Check.**
{{- range .Checks}}
   - {{.}}
{{- end}}

To undo the network: ` + "`& {{.BundleDir}}\\hns\\cleanup.ps1`" + ` (drain the node first).

Logs: kubelet and kube-proxy run under kube-log-runner, which writes ` + "`{{.W.LogDir}}\\kubelet.log`" + ` and
` + "`{{.W.LogDir}}\\kube-proxy.log`" + ` and rotates them (100 MB, kept a week); containerd writes ` + "`{{.ContainerdLog}}`" + ` and the boot task
records its attempts in ` + "`{{.W.LogDir}}\\kubewin-boot.log`" + `, which the hourly task {{.LogTask}} rotates the same way{{if .Flannel}};
flanneld's output goes through WinSW to ` + "`{{.FlanneldLog}}`" + ` (rotated at 10 MB, 8 kept){{end}}.
Point ` + "`kubewin diagnose`" + ` at ` + "`{{.W.LogDir}}`" + `. (Their command lines contain --windows-service or --run-service: do not
run them in a console; read the logs instead.)
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
	bridgeEndpoint := ""
	if usesFlannel(w) && w.HNSNetworkType == "L2Bridge" {
		bridgeEndpoint = flannelBridgeEndpoint(w)
	}
	if usesFlannel(w) && p.Flannel == nil {
		return nil, fmt.Errorf("render README for %s: the node delegates to flannel but the plan has no flannel network", n.Name)
	}
	var b bytes.Buffer
	err = readmeTmpl.Execute(&b, map[string]any{
		"P": p, "N": n, "W": w, "Gen": generatedBy, "HyperV": len(w.RuntimeHandlers) > 1,
		"ContainerdDir": windowsContainerdDir, "Programs": windowsCNIAndFlannelPrograms(w),
		"Flannel": usesFlannel(w), "BridgeEndpoint": bridgeEndpoint, "NetConfPath": FlannelNetConfPath(),
		"NodeCert": winPath(w.InstallDir, pkiSubdir, "kubelet-client-current.pem"), "Checks": readmeChecks(p, n),
		"FlanneldLog": winPath(w.LogDir, flanneldLogName+".err.log"), "BundleDir": BundleDir(w), "CAFile": winPath(w.InstallDir, pkiSubdir, clusterCAFile),
		"Bootstrap": winPath(w.InstallDir, bootstrapKubeconfig), "Kubeconfig": winPath(w.InstallDir, kubeletKubeconfig),
		"ProxyKubeconfig": winPath(w.InstallDir, kubeProxyKubeconfig), "CalicoFile": calico != nil,
		"NodeObject": n.PodCIDRSource != plan.PodCIDRAllocated,
		"Keepalived": keepalived, "Members": strings.Join(members, ", "), "Router": w.GatewayHolder == "tor-router",
		"Bits": bits, "Ports": strings.Join(ports, ", "), "Task": hnsTaskName,
		"ContainerdLog": winPath(w.LogDir, containerdLogFile), "LogTask": logTaskName,
	})
	if err != nil {
		return nil, fmt.Errorf("render README for %s: %w", n.Name, err)
	}
	return b.Bytes(), nil
}

// readmeChecks are the README's check steps: what a working node of the design shows.
func readmeChecks(p *plan.Plan, n plan.NodePlan) []string {
	w := n.Windows
	ready := "`kubectl get node " + n.Name + " -o wide` is Ready with podCIDR " + n.PodCIDR + "."
	if !usesFlannel(w) {
		return []string{
			"`Get-NetIPInterface -InterfaceAlias '" + vEthernet(w.HostEndpointName) + "' -AddressFamily IPv4` shows Forwarding Enabled;",
			"`Test-NetConnection " + w.Gateway + "` from the node reaches the pod gateway;",
			ready,
		}
	}
	checks := []string{
		"`Get-Service " + flanneldServiceName + "` is Running and `Get-Content " + flannelSubnetFile + "` shows FLANNEL_SUBNET=" + w.Gateway + "/" + prefixBits(n.PodCIDR) + ";",
	}
	peer, hasPeer := flannelPeer(p, n)
	if w.HNSNetworkType == "Overlay" {
		checks = append(checks,
			"`Get-HnsNetwork | Where-Object Type -eq 'Overlay'` shows the network "+w.HNSNetworkName+" over "+n.PodCIDR+";")
		if hasPeer {
			checks = append(checks, "`(Get-HnsNetwork | Where-Object Name -eq '"+w.HNSNetworkName+"').Policies | Where-Object Type -eq 'RemoteSubnetRoute'` "+
				"lists one entry per other node, e.g. DestinationPrefix "+peer.PodCIDR+" with ProviderAddress "+peer.NodeIP+" ("+peer.Name+");")
		}
	} else {
		ep := flannelBridgeEndpoint(w)
		checks = append(checks,
			"`Get-HnsNetwork | Where-Object Name -eq '"+w.HNSNetworkName+"'` shows an L2Bridge network over "+n.PodCIDR+" with gateway "+w.Gateway+";",
			"`Get-NetIPInterface -InterfaceAlias '"+vEthernet(ep)+"' -AddressFamily IPv4` shows Forwarding Enabled (flanneld's endpoint at "+w.HostEndpointIP+");")
		if hasPeer {
			checks = append(checks, "`Get-NetRoute -DestinationPrefix "+peer.PodCIDR+"` shows NextHop "+peer.NodeIP+" ("+peer.Name+"); flanneld adds one such route per other node;")
		}
	}
	target := "another node"
	if hasPeer {
		target = peer.Name
	}
	checks = append(checks,
		"a pod on "+n.Name+" reaches a pod on "+target+": `kubectl exec <pod on "+n.Name+"> -- ping -n 3 <IP of the pod on "+target+">`;",
		ready)
	return checks
}

// flannelPeer is another node with a pod CIDR, a worker if there is one (control-plane nodes
// often run no test pods): an example of what flanneld programs.
func flannelPeer(p *plan.Plan, n plan.NodePlan) (plan.NodePlan, bool) {
	var first *plan.NodePlan
	for i, o := range p.Nodes {
		if o.Name == n.Name || o.PodCIDR == "" || o.NodeIP == "" {
			continue
		}
		if o.Role != string(v1alpha1.RoleControlPlane) {
			return o, true
		}
		if first == nil {
			first = &p.Nodes[i]
		}
	}
	if first == nil {
		return plan.NodePlan{}, false
	}
	return *first, true
}

func prefixBits(cidr string) string {
	if i := strings.IndexByte(cidr, '/'); i >= 0 {
		return cidr[i+1:]
	}
	return ""
}
