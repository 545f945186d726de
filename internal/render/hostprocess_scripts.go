package render

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"

	"github.com/kubewin/kubewin/internal/plan"
)

// Start scripts of the HostProcess DaemonSets. What they do follows the scripts the Kubernetes
// Windows community maintained for the same pods (kubernetes-sigs/sig-windows-tools
// hostprocess/calico/kube-proxy/start.ps1 and, until their removal in April 2025 (#385),
// hostprocess/flannel/{kube-proxy,flanneld}/start.ps1), written anew for kubewin's node layout:
//   - kube-proxy waits for the CNI's HNS network, and on an Overlay network passes a source VIP:
//     Calico's host endpoint address (Calico_ep, created by calico-node-windows) or, for
//     flannel, an address reserved once from the network's subnet with host-local IPAM — the
//     same data directory pods' host-local allocations use, so no pod gets it
//     (containernetworking/plugins plugins/ipam/host-local/backend/disk: /var/lib/cni/networks).
//   - flanneld gets the node's kubeconfig-less credential: the pod's service-account token and
//     CA from the sandbox mount point, with the API server address (not the Service VIP).
//   - Waits are bounded (waitSeconds): the script then fails with the reason, the container
//     restarts, and the pod's status and log say what is missing.
// kube-proxy's flags exist on Windows in v1.37 (cmd/kube-proxy/app/init_windows.go:
// --source-vip, --network-name, --enable-dsr; options.go: --hostname-override, --proxy-mode).

const waitSeconds = 600

var hostProcessTemplates = template.Must(template.New("").Funcs(template.FuncMap{"ps": psQuote}).Parse(`
{{- define "prelude" -}}
$ErrorActionPreference = 'Stop'
$Sandbox = $env:CONTAINER_SANDBOX_MOUNT_POINT
$InstallDir = {{ps .InstallDir}}
$CNIBinDir = {{ps .CNIBinDir}}

# Wait-Until runs $Condition every 2 s until it returns something, for at most $Seconds.
function Wait-Until([scriptblock]$Condition, [int]$Seconds, [string]$What) {
    $deadline = (Get-Date).AddSeconds($Seconds)
    while (-not (& $Condition)) {
        if ((Get-Date) -gt $deadline) { throw "$What did not appear within $Seconds s" }
        Start-Sleep -Seconds 2
    }
}

# Write-Kubeconfig writes a kubeconfig for this pod's ServiceAccount that names the API server
# directly: on Windows the kubernetes Service works only once kube-proxy runs.
function Write-Kubeconfig([string]$Path) {
    $sa = Join-Path $Sandbox 'var\run\secrets\kubernetes.io\serviceaccount'
    $text = @(
        'apiVersion: v1', 'kind: Config',
        'clusters:', '- name: cluster', '  cluster:', "    server: $env:KUBEWIN_API_SERVER",
        "    certificate-authority: '$(Join-Path $sa 'ca.crt')'",
        'users:', '- name: pod', '  user:', "    tokenFile: '$(Join-Path $sa 'token')'",
        'contexts:', '- name: pod', '  context: {cluster: cluster, user: pod}', 'current-context: pod')
    Set-Content -Path $Path -Value $text -Encoding ascii
}

foreach ($f in {{.Required}}) {
    if (-not (Test-Path $f)) { throw "$f is missing on this node; kubewin join installs it" }
}
{{end -}}

{{- define "kube-proxy" -}}
# kube-proxy of design {{.Design}}, run by DaemonSet {{.Namespace}}/{{.Name}} as a HostProcess pod.
# {{.GeneratedBy}}
{{template "prelude" .}}
Import-Module (Join-Path $InstallDir 'hns.psm1') -DisableNameChecking
$Network = {{ps .Network}}
Wait-Until { Get-HnsNetwork | Where-Object Name -EQ $Network } {{.Wait}} "HNS network $Network (made by the {{.CNI}} pod on this node)"
$net = Get-HnsNetwork | Where-Object Name -EQ $Network | Select-Object -First 1
$kubeconfig = Join-Path $Sandbox 'kube-proxy.kubeconfig'
Write-Kubeconfig $kubeconfig
$argv = @('--proxy-mode=kernelspace', "--hostname-override=$env:NODE_NAME", "--network-name=$Network",
    "--kubeconfig=$kubeconfig", {{ps .ClusterCIDR}}, '--v=2'{{if .DSR}}, '--enable-dsr=true'{{end}})
{{- if .SourceVIP}}
if ($net.Type -eq 'Overlay') {
{{- if eq .SourceVIP "host-endpoint"}}
    # The source VIP is the address of the host endpoint the CNI creates on the overlay network.
    $ep = {{ps .Endpoint}}
    Wait-Until { Get-HnsEndpoint | Where-Object Name -EQ $ep } {{.Wait}} "HNS endpoint $ep (made by the {{.CNI}} pod on this node)"
    $vip = (Get-HnsEndpoint | Where-Object Name -EQ $ep | Select-Object -First 1).IpAddress
{{- else}}
    # The source VIP is an address of the node's pod subnet reserved once with host-local IPAM,
    # in the data directory the pods' own allocations use, and kept across restarts.
    $dir = Join-Path $InstallDir 'sourcevip'
    New-Item -ItemType Directory -Force -Path $dir | Out-Null
    $file = Join-Path $dir 'sourceVip.json'
    if (-not (Test-Path $file)) {
        $subnet = $net.Subnets[0].AddressPrefix
        $request = '{"cniVersion":"0.3.0","name":"' + $Network + '","ipam":{"type":"host-local","ranges":[[{"subnet":"' + $subnet + '"}]],"dataDir":"C:/var/lib/cni/networks"}}'
        $env:CNI_COMMAND = 'ADD'; $env:CNI_CONTAINERID = 'kube-proxy-source-vip'; $env:CNI_NETNS = 'none'
        $env:CNI_IFNAME = 'sourcevip'; $env:CNI_PATH = $CNIBinDir
        $out = $request | & (Join-Path $CNIBinDir 'host-local.exe')
        if ($LASTEXITCODE -ne 0) { throw "host-local could not reserve a source VIP in ${subnet}: $out" }
        Set-Content -Path $file -Value $out -Encoding ascii
    }
    $vip = ((Get-Content -Path $file -Raw | ConvertFrom-Json).ips[0].address -split '/')[0]
{{- end}}
    if (-not $vip) { throw "no source VIP found for overlay network $Network" }
    $argv += "--source-vip=$vip"
}
{{- end}}
Write-Host "starting kube-proxy $argv"
& (Join-Path {{ps .BinDir}} 'kube-proxy.exe') @argv
exit $LASTEXITCODE
{{end -}}

{{- define "flannel" -}}
# flanneld of design {{.Design}}, run by DaemonSet {{.Namespace}}/{{.Name}} as a HostProcess pod.
# {{.GeneratedBy}}
{{template "prelude" .}}
Import-Module (Join-Path $InstallDir 'hns.psm1') -DisableNameChecking
# A placeholder network named {{.External}} first, as kubewin's own flannel designs do in
# hns/setup.ps1 (hns.go; microsoft/SDN start scripts and rke2 pkg/windows do the same): creating
# the vSwitch cuts the node's connection for a few seconds, which must happen before flanneld
# talks to the API server, and the vSwitch then outlives flannel's own network.
if (-not (Get-HnsNetwork | Where-Object Name -EQ {{ps .External}})) {
    $alias = (Get-NetIPAddress -IPAddress $env:NODE_IP -AddressFamily IPv4 -ErrorAction Stop | Select-Object -First 1).InterfaceAlias
    if ($alias -notlike 'vEthernet (*') {
        Write-Host "Creating the placeholder HNS network {{.External}} on $alias; its connection drops for a few seconds"
{{- if .ExternalVSID}}
        $external = New-HnsNetwork -Type Overlay -Name {{ps .External}} -AddressPrefix {{ps .ExternalPrefix}} -Gateway {{ps .ExternalGateway}} -AdapterName $alias -SubnetPolicies @(@{ Type = 'VSID'; VSID = {{.ExternalVSID}} })
{{- else}}
        $external = New-HnsNetwork -Type L2Bridge -Name {{ps .External}} -AddressPrefix {{ps .ExternalPrefix}} -Gateway {{ps .ExternalGateway}} -AdapterName $alias
{{- end}}
        if (-not $external) { throw "HNS did not create network {{.External}}" }
        Start-Sleep -Seconds 10
    }
}
# The node's flannel CNI configuration, completed with this node's own route on win-bridge
# (without it a pod cannot reach its own node: containernetworking/plugins win-bridge sample).
$conf = Get-Content -Path (Join-Path $Sandbox 'kubewin\cni.conf') -Raw
{{- if eq .Delegate "win-bridge"}}
$c = $conf | ConvertFrom-Json
$c.delegate.policies += [pscustomobject]@{ name = 'EndpointPolicy'; value = [pscustomobject]@{ Type = 'SDNRoute'; Settings = [pscustomobject]@{ DestinationPrefix = "$env:NODE_IP/32"; NeedEncap = $true } } }
$conf = $c | ConvertTo-Json -Depth 20
{{- end}}
New-Item -ItemType Directory -Force -Path {{ps .CNIConfDir}} | Out-Null
Set-Content -Path (Join-Path {{ps .CNIConfDir}} {{ps .CNIConfName}}) -Value $conf -Encoding ascii
# flanneld writes its lease where the flannel CNI plugin reads it (both default to
# /run/flannel/subnet.env, on drive C:).
New-Item -ItemType Directory -Force -Path 'C:\run\flannel' | Out-Null
$kubeconfig = Join-Path $Sandbox 'flanneld.kubeconfig'
Write-Kubeconfig $kubeconfig
$argv = @("--kubeconfig-file=$kubeconfig", "--net-config-path=$(Join-Path $Sandbox 'kubewin\net-conf.json')",
    "--iface=$env:NODE_IP", '--ip-masq=1', '--kube-subnet-mgr=1')
Write-Host "starting flanneld $argv"
& (Join-Path {{ps .BinDir}} 'flanneld.exe') @argv
exit $LASTEXITCODE
{{end -}}
`))

type hostProcessScriptData struct {
	Design, Namespace, Name, GeneratedBy string
	InstallDir, BinDir, CNIBinDir        string
	CNIConfDir, CNIConfName, Delegate    string
	CNI, Network, SourceVIP, Endpoint    string
	ClusterCIDR                          string
	Required                             string
	External, ExternalPrefix             string
	ExternalGateway                      string
	ExternalVSID                         int
	DSR                                  bool
	Wait                                 int
}

func hostProcessData(p *plan.Plan, d *plan.DaemonSetPlan, required []string) hostProcessScriptData {
	hp := p.HostProcess
	return hostProcessScriptData{
		Design: p.Cluster.Design, Namespace: d.Namespace, Name: d.Name, GeneratedBy: generatedBy,
		InstallDir: hp.InstallDir, BinDir: hp.BinDir, CNIBinDir: hp.CNIBinDir, CNIConfDir: hp.CNIConfDir,
		CNI: hp.CNI, Network: hp.NetworkName, SourceVIP: hp.SourceVIP, Endpoint: plan.CalicoHostEndpoint,
		ClusterCIDR: "--cluster-cidr=" + strings.Join(p.Networking.ClusterCIDRs, ","),
		Required:    psArray(required), DSR: hp.EnableDSR, Wait: waitSeconds,
	}
}

func runHostProcessTemplate(name string, data hostProcessScriptData) (string, error) {
	var b bytes.Buffer
	if err := hostProcessTemplates.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("render %s start script: %w", name, err)
	}
	return b.String(), nil
}

func kubeProxyStartScript(p *plan.Plan) (string, error) {
	hp := p.HostProcess
	required := []string{hp.BinDir + `\kube-proxy.exe`, hp.InstallDir + `\hns.psm1`}
	if hp.SourceVIP == plan.SourceVIPFromHostLocal {
		required = append(required, hp.CNIBinDir+`\host-local.exe`)
	}
	return runHostProcessTemplate("kube-proxy", hostProcessData(p, hp.KubeProxy, required))
}

func flannelStartScript(p *plan.Plan) (string, error) {
	hp := p.HostProcess
	delegate := "win-bridge"
	if hp.NetworkType == "Overlay" {
		delegate = "win-overlay"
	}
	required := []string{hp.BinDir + `\flanneld.exe`, hp.InstallDir + `\hns.psm1`, hp.CNIBinDir + `\flannel.exe`, hp.CNIBinDir + `\` + delegate + ".exe", hp.CNIBinDir + `\host-local.exe`}
	data := hostProcessData(p, &hp.Flannel.DaemonSetPlan, required)
	data.Delegate = delegate
	data.External, data.ExternalPrefix, data.ExternalGateway = externalNetworkName, externalNetworkPrefix, externalNetworkGW
	if hp.NetworkType == "Overlay" {
		data.ExternalVSID = externalOverlayVSID
	}
	data.CNIConfName = hp.NetworkName + ".conf"
	return runHostProcessTemplate("flannel", data)
}
