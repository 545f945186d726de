package render

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"
	"text/template"

	"github.com/kubewin/kubewin/internal/plan"
)

// The HNS network of a Windows node. hns/network.json states it declaratively with HCN schema
// v2 field names (hcn.HostComputeNetwork / hcn.HostComputeEndpoint of hcsshim, checked by the
// Windows-only test); hns/setup.ps1 creates it with hns.psm1 (microsoft/SDN Kubernetes/windows:
// New-HnsNetwork, New-HnsEndpoint, Attach-HnsHostEndpoint, Invoke-HnsRequest), the module the
// field report used, and hns/cleanup.ps1 removes it again.
//
// PowerShell cannot run where kubewin is built and tested; the scripts are kept to plain,
// idempotent steps (look up by name, create only what is missing) and their content is tested.

// flannel designs: flanneld creates the pod network itself once it has a lease. Creating a
// placeholder network named "External" on the adapter first makes the vSwitch (and the short
// loss of connectivity it causes) happen before flanneld talks to the API server; the
// addresses are the throw-away ones used by the Kubernetes Windows guides.
const (
	externalNetworkName   = "External"
	externalNetworkPrefix = "192.168.255.0/30"
	externalNetworkGW     = "192.168.255.1"
	// externalOverlayVSID is the VSID of the placeholder overlay network; flannel's own network
	// uses the VNI (>= 4096).
	externalOverlayVSID = 9999
)

type hnsSpec struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Node       string `json:"node"`
	// CreatedBy is "kubewin" when setup.ps1 creates the pod network, "flanneld" when flanneld
	// does (only the External placeholder is kubewin's then).
	CreatedBy    string       `json:"createdBy"`
	Network      hcnNetwork   `json:"network"`
	HostEndpoint *hcnEndpoint `json:"hostEndpoint,omitempty"`
	// HostEndpointCompartment is the network compartment the host endpoint is attached to
	// (1, the host's default compartment) and ForwardingInterface the vNIC that must forward.
	HostEndpointCompartment int          `json:"hostEndpointCompartment,omitempty"`
	ForwardingInterface     string       `json:"forwardingInterface,omitempty"`
	Routes                  []plan.Route `json:"routes,omitempty"`
}

type hcnSchemaVersion struct {
	Major int `json:"Major"`
	Minor int `json:"Minor"`
}

type hcnNetwork struct {
	Name          string             `json:"Name"`
	Type          string             `json:"Type"`
	Policies      []hcnNetworkPolicy `json:"Policies"`
	Ipams         []hcnIpam          `json:"Ipams"`
	SchemaVersion hcnSchemaVersion   `json:"SchemaVersion"`
}

type hcnNetworkPolicy struct {
	Type     string `json:"Type"`
	Settings any    `json:"Settings"`
}

type hcnIpam struct {
	Type    string      `json:"Type"`
	Subnets []hcnSubnet `json:"Subnets"`
}

type hcnSubnet struct {
	IpAddressPrefix string             `json:"IpAddressPrefix"`
	Policies        []hcnNetworkPolicy `json:"Policies,omitempty"`
	Routes          []hcnRoute         `json:"Routes"`
}

type hcnRoute struct {
	NextHop           string `json:"NextHop"`
	DestinationPrefix string `json:"DestinationPrefix"`
}

type hcnEndpoint struct {
	Name             string           `json:"Name"`
	IpConfigurations []hcnIPConfig    `json:"IpConfigurations"`
	SchemaVersion    hcnSchemaVersion `json:"SchemaVersion"`
}

type hcnIPConfig struct {
	IpAddress    string `json:"IpAddress"`
	PrefixLength int    `json:"PrefixLength"`
}

// hnsLayout is what the three HNS files are rendered from.
type hnsLayout struct {
	Node        string
	Design      string
	InstallDir  string
	Flannel     bool
	NetworkName string
	NetworkType string
	AdapterName string
	Prefix      string
	Gateway     string
	// VSID is set for the overlay placeholder network.
	VSID         int
	EndpointName string
	EndpointIP   string
	Routes       []plan.Route
	// AdapterMAC selects the cluster adapter (renamed to AdapterName when it differs).
	AdapterMAC string
	// LogDir receives the boot record; BootServices are started, in order, by setup.ps1 -Boot
	// once the network exists.
	LogDir       string
	BootServices []string
	// PodCIDR is the pod CIDR the network is built for.
	PodCIDR string
	// FlannelNetwork is the pod network flanneld creates (flannel designs); cleanup removes it.
	FlannelNetwork string
	// TaskName is the boot task services\install.ps1 registers; cleanup removes it.
	TaskName string
	// External* name the placeholder network created before the pod network.
	ExternalName, ExternalPrefix, ExternalGateway string
	// SourceVIP (flannel overlay): kube-proxy's source VIP, reserved in the host-local store of
	// the CNI network IPAMStore before any pod can be given it.
	SourceVIP, IPAMStore string
	// From the node's host effects (NodeEffects): the OS services to start first, the
	// interfaces that must forward, and the destinations whose routes on the adapter are kept
	// on the vSwitch's vNIC.
	SystemServices    []string
	ForwardingAliases []string
	PreserveRoutes    []string
}

// withEffects takes what setup.ps1 does from the node's host effects, so that the script and
// join's executors apply one list (effects.go): the networks, the host endpoint, forwarding,
// routes, the preserved routes and the OS services.
func (l hnsLayout) withEffects(effects []HostEffect) hnsLayout {
	l.ExternalName, l.NetworkName, l.EndpointName, l.EndpointIP = "", "", "", ""
	l.Routes, l.SystemServices, l.ForwardingAliases, l.PreserveRoutes = nil, nil, nil, nil
	for _, e := range effects {
		switch e.Kind {
		case EffectSystemService:
			l.SystemServices = append(l.SystemServices, e.SystemService)
		case EffectNetwork:
			n := e.Network
			if n.Name == externalNetworkName && !l.Flannel {
				l.ExternalName, l.ExternalPrefix, l.ExternalGateway = n.Name, n.Prefix, n.Gateway
				continue
			}
			l.NetworkName, l.NetworkType, l.Prefix, l.Gateway, l.VSID = n.Name, n.Type, n.Prefix, n.Gateway, n.VSID
		case EffectHostEndpoint:
			l.EndpointName, l.EndpointIP = e.Endpoint.Name, e.Endpoint.IP
		case EffectForwarding:
			l.ForwardingAliases = append(l.ForwardingAliases, e.Alias)
		case EffectRoute:
			l.Routes = append(l.Routes, *e.Route)
		case EffectPreserveRoute:
			l.PreserveRoutes = append(l.PreserveRoutes, e.Destination)
		}
	}
	return l
}

func newHNSLayout(p *plan.Plan, n plan.NodePlan) (hnsLayout, error) {
	w := n.Windows
	if w == nil {
		return hnsLayout{}, fmt.Errorf("render HNS network for %s: not a Windows node", n.Name)
	}
	l := hnsLayout{
		Node: n.Name, Design: p.Cluster.Design, InstallDir: w.InstallDir,
		AdapterName: w.AdapterName, Routes: w.Routes, AdapterMAC: windowsMAC(n.ClusterNICMAC),
		LogDir: w.LogDir, PodCIDR: n.PodCIDR, TaskName: hnsTaskName,
		ExternalName: externalNetworkName, ExternalPrefix: externalNetworkPrefix, ExternalGateway: externalNetworkGW,
	}
	svcs, err := WindowsServices(p, n)
	if err != nil {
		return hnsLayout{}, err
	}
	for _, s := range svcs {
		if s.Manual {
			l.BootServices = append(l.BootServices, s.Name)
		}
	}
	if w.CNIPlugin == "flannel" {
		l.Flannel = true
		l.FlannelNetwork = w.HNSNetworkName
		if w.KubeProxySourceVIP != "" {
			// flannel's cni-plugin hands the delegate host-local IPAM over the whole
			// FLANNEL_SUBNET with no dataDir (flannel-io/cni-plugin flannel_windows.go), so
			// pods get .2, .3, … from host-local's default store /var/lib/cni/networks/<conf
			// name> — one file per address, created with O_EXCL, so an existing file reserves it
			// (containernetworking/plugins plugins/ipam/host-local/backend/disk/backend.go).
			// kube-proxy creates its source VIP endpoint at every sync and programs no Service
			// while that fails (kubernetes pkg/proxy/winkernel/proxier.go), so the address is
			// reserved first, as rke2 (pkg/windows ReserveSourceVip) and sig-windows-tools do.
			l.SourceVIP = w.KubeProxySourceVIP
			l.IPAMStore = `C:\var\lib\cni\networks\` + w.HNSNetworkName
		}
		l.NetworkName, l.NetworkType = externalNetworkName, "L2Bridge"
		l.Prefix, l.Gateway = externalNetworkPrefix, externalNetworkGW
		if w.HNSNetworkType == "Overlay" {
			l.NetworkType, l.VSID = "Overlay", externalOverlayVSID
		}
		return l, nil
	}
	pod, err := netip.ParsePrefix(n.PodCIDR)
	if err != nil {
		return hnsLayout{}, fmt.Errorf("render HNS network for %s: pod CIDR %q: %w", n.Name, n.PodCIDR, err)
	}
	for _, a := range []string{w.Gateway, w.HostEndpointIP} {
		ip, err := netip.ParseAddr(a)
		if err != nil || !pod.Contains(ip) {
			return hnsLayout{}, fmt.Errorf("render HNS network for %s: address %q is not inside pod CIDR %s", n.Name, a, pod)
		}
	}
	l.NetworkName, l.NetworkType = w.HNSNetworkName, w.HNSNetworkType
	l.Prefix, l.Gateway = pod.Masked().String(), w.Gateway
	l.EndpointName, l.EndpointIP = w.HostEndpointName, w.HostEndpointIP
	return l, nil
}

// HNSNetworkJSON renders hns/network.json.
func HNSNetworkJSON(p *plan.Plan, n plan.NodePlan) ([]byte, error) {
	l, err := newHNSLayout(p, n)
	if err != nil {
		return nil, err
	}
	v2 := hcnSchemaVersion{Major: 2, Minor: 0}
	subnet := hcnSubnet{IpAddressPrefix: l.Prefix, Routes: []hcnRoute{{NextHop: l.Gateway, DestinationPrefix: "0.0.0.0/0"}}}
	if l.VSID != 0 {
		subnet.Policies = []hcnNetworkPolicy{{Type: "VSID", Settings: map[string]int{"IsolationId": l.VSID}}}
	}
	spec := hnsSpec{
		APIVersion: plan.APIVersion, Kind: "HNSNetwork", Node: n.Name, CreatedBy: "kubewin",
		Network: hcnNetwork{
			Name: l.NetworkName, Type: l.NetworkType,
			Policies:      []hcnNetworkPolicy{{Type: "NetAdapterName", Settings: map[string]string{"NetworkAdapterName": l.AdapterName}}},
			Ipams:         []hcnIpam{{Type: "Static", Subnets: []hcnSubnet{subnet}}},
			SchemaVersion: v2,
		},
		Routes: l.Routes,
	}
	if l.Flannel {
		spec.CreatedBy = "flanneld"
	} else {
		pod := netip.MustParsePrefix(l.Prefix) // parsed by newHNSLayout
		spec.HostEndpoint = &hcnEndpoint{
			Name:             l.EndpointName,
			IpConfigurations: []hcnIPConfig{{IpAddress: l.EndpointIP, PrefixLength: pod.Bits()}},
			SchemaVersion:    v2,
		}
		spec.HostEndpointCompartment = 1
		spec.ForwardingInterface = vEthernet(l.EndpointName)
	}
	b, err := jsonIndent(spec)
	if err != nil {
		return nil, fmt.Errorf("render HNS network for %s: %w", n.Name, err)
	}
	return b, nil
}

func vEthernet(name string) string { return "vEthernet (" + name + ")" }

var psFuncs = template.FuncMap{"q": psQuote, "veth": vEthernet}

var hnsSetupTmpl = template.Must(template.New("setup").Funcs(psFuncs).Parse(`# HNS network for {{.Node}} ({{.Design}}).
# {{.Gen}}
#
# Run elevated. services\install.ps1 runs it once and registers it as a startup task with
# -Boot: HNS networks do not survive a reboot, so at every boot it re-creates the network
# (retrying, with each failure recorded in {{.LogDir}}\kubewin-boot.log) and only then starts
# the node services{{range .BootServices}} {{.}}{{end}}, in that order. Running it again is safe:
# what exists is kept. Needs hns.psm1 from https://github.com/microsoft/SDN (Kubernetes/windows)
# in {{.InstallDir}}.
param([switch]$Boot)
#Requires -RunAsAdministrator
$ErrorActionPreference = 'Stop'

$InstallDir   = {{q .InstallDir}}
$NetworkName  = {{q .NetworkName}}
$NetworkType  = {{q .NetworkType}}
$AdapterName  = {{q .AdapterName}}
$AddressPrefix = {{q .Prefix}}
$Gateway      = {{q .Gateway}}
{{- if .EndpointName}}
$EndpointName = {{q .EndpointName}}
$EndpointIP   = {{q .EndpointIP}}
{{- end}}

{{- if .AdapterMAC}}
$AdapterMAC   = {{q .AdapterMAC}}
{{- end}}
$LogDir       = {{q .LogDir}}

function Initialize-PodNetwork {
{{- range .SystemServices}}
# The node services need {{.}}; its start type may be Manual, and then nothing starts it after
# a boot (Siemens-Healthineers/K2s issue 593).
Start-Service -Name {{q .}}
{{- end}}
Import-Module (Join-Path $InstallDir 'hns.psm1') -DisableNameChecking

$network = @(Invoke-HnsRequest -Method GET -Type networks) | Where-Object { $_.Name -eq $NetworkName } | Select-Object -First 1
{{- if .AdapterMAC}}
if (-not $network) {
    # The cluster adapter is the one with the planned MAC; image and driver updates rename
    # adapters, so it is found by address and given the planned name.
    # Several adapters can carry the MAC (an SR-IOV virtual function beside the synthetic NIC):
    # the planned name first, then one with an IPv4 address (what the Reconciler prefers too).
    $adapter = @(Get-NetAdapter -Physical | Where-Object { $_.MacAddress -eq $AdapterMAC } |
        Sort-Object { $_.Name -ne $AdapterName }, { -not (Get-NetIPAddress -InterfaceIndex $_.ifIndex -AddressFamily IPv4 -ErrorAction SilentlyContinue) }) | Select-Object -First 1
    if (-not $adapter) { throw "no physical network adapter with MAC $AdapterMAC (the cluster NIC of {{.Node}})" }
    if ($adapter.Name -ne $AdapterName) {
        Write-Host "Renaming adapter $($adapter.Name) ($AdapterMAC) to $AdapterName"
        Rename-NetAdapter -Name $adapter.Name -NewName $AdapterName
    }
}
{{- end}}
{{- if .PreserveRoutes}}
# Creating the vSwitch drops the cloud metadata route (kubernetes cluster/gce/windows/
# k8s-node-setup.psm1; microsoft/hcsshim#299): remember the adapter's routes to these
# destinations before, keep them in a file for later boots, and put them on the vSwitch's vNIC.
# The file is kubewin join's too ([{"Destination": ..., "Via": ...}]). Windows PowerShell 5.1's
# ConvertFrom-Json emits a JSON array as one object: it is assigned first, then enumerated.
$keptFile = Join-Path $InstallDir 'kept-routes.json'
$kept = @()
if (Test-Path -LiteralPath $keptFile) {
    $parsed = Get-Content -Raw -LiteralPath $keptFile | ConvertFrom-Json
    $kept = @($parsed | Where-Object { $_.Destination -and $_.Via })
}
$keptChanged = $false
foreach ($dst in @({{range $i, $d := .PreserveRoutes}}{{if $i}}, {{end}}{{q $d}}{{end}})) {
    foreach ($r in @(Get-NetRoute -DestinationPrefix $dst -InterfaceAlias $AdapterName -PolicyStore ActiveStore -ErrorAction SilentlyContinue)) {
        if (-not ($kept | Where-Object { $_.Destination -eq $dst })) {
            $kept += [pscustomobject]@{ Destination = $dst; Via = $r.NextHop }
            $keptChanged = $true
        }
    }
}
if ($keptChanged) { ConvertTo-Json -InputObject @($kept) | Set-Content -LiteralPath $keptFile }
{{- end}}
{{- if and (not .Flannel) .ExternalName}}
# A placeholder network first (microsoft/SDN start scripts and rke2 pkg/windows create one named
# External): it owns the vSwitch, so re-creating the pod network later (after an HNS reset, or
# by this script at boot) does not tear the vSwitch down and cut the node off its network.
$external = @(Invoke-HnsRequest -Method GET -Type networks) | Where-Object { $_.Name -eq {{q .ExternalName}} } | Select-Object -First 1
if (-not $external) {
    Write-Host "Creating the placeholder HNS network {{.ExternalName}} on adapter $AdapterName; its connection drops for a few seconds"
    $external = New-HnsNetwork -Type L2Bridge -Name {{q .ExternalName}} -AddressPrefix {{q .ExternalPrefix}} -Gateway {{q .ExternalGateway}} -AdapterName $AdapterName
    if (-not $external) { throw "HNS did not create network {{.ExternalName}}" }
    Start-Sleep -Seconds 10
}
{{- end}}
if (-not $network) {
    Write-Host "Creating HNS network $NetworkName ($NetworkType $AddressPrefix) on adapter $AdapterName; its connection drops for a few seconds"
{{- if .VSID}}
    $network = New-HnsNetwork -Type $NetworkType -Name $NetworkName -AddressPrefix $AddressPrefix -Gateway $Gateway -AdapterName $AdapterName -SubnetPolicies @(@{ Type = 'VSID'; VSID = {{.VSID}} })
{{- else}}
    $network = New-HnsNetwork -Type $NetworkType -Name $NetworkName -AddressPrefix $AddressPrefix -Gateway $Gateway -AdapterName $AdapterName
{{- end}}
    if (-not $network) { throw "HNS did not create network $NetworkName" }
    # The adapter's IP configuration moves to the new vSwitch's vNIC; wait for it to settle.
    Start-Sleep -Seconds 10
} else {
    Write-Host "HNS network $NetworkName exists"
}
{{- if .Flannel}}

# flanneld creates the pod network and its host endpoint once it holds a lease.
{{- if .SourceVIP}}

# kube-proxy's source VIP {{.SourceVIP}} must never be given to a pod: reserve it in the
# host-local store the flannel CNI plugin allocates pod addresses from.
$store = {{q .IPAMStore}}
New-Item -ItemType Directory -Force -Path $store | Out-Null
$reservation = Join-Path $store {{q .SourceVIP}}
if (-not (Test-Path -LiteralPath $reservation)) {
    [System.IO.File]::WriteAllText($reservation, "kube-proxy-source-vip` + "`" + `r` + "`" + `nsource-vip")
    Write-Host "Reserved {{.SourceVIP}} for kube-proxy's source VIP in $store"
}
{{- end}}
{{- else}}

$endpoint = @(Invoke-HnsRequest -Method GET -Type endpoints) | Where-Object { $_.Name -eq $EndpointName -and $_.VirtualNetwork -eq $network.Id } | Select-Object -First 1
if (-not $endpoint) {
    Write-Host "Creating host endpoint $EndpointName at $EndpointIP"
    $endpoint = New-HnsEndpoint -NetworkId $network.Id -Name $EndpointName -IPAddress $EndpointIP -Gateway '0.0.0.0'
    if (-not $endpoint) { throw "HNS did not create endpoint $EndpointName" }
}

$vnic = {{q (veth .EndpointName)}}
if (-not (Get-NetAdapter -Name $vnic -ErrorAction SilentlyContinue)) {
    Write-Host "Attaching $EndpointName to the host compartment"
    Attach-HnsHostEndpoint -EndpointID $endpoint.Id -CompartmentID 1 | Out-Null
}
for ($i = 0; -not (Get-NetIPInterface -InterfaceAlias $vnic -AddressFamily IPv4 -ErrorAction SilentlyContinue); $i++) {
    if ($i -ge 60) { throw "$vnic did not appear" }
    Start-Sleep -Seconds 1
}
# Pods use the host endpoint (.2) as their gateway (win-bridge with IPAM forces x.2,
# containernetworking/plugins win-bridge_windows.go), so the host forwards all their traffic:
# in on the host endpoint's vNIC and out through the cluster adapter's vNIC, which must forward
# too (flannel pkg/backend/hostgw/hostgw_windows.go enables both).
{{- if .ForwardingAliases}}
foreach ($alias in @({{range $i, $a := .ForwardingAliases}}{{if $i}}, {{end}}{{q $a}}{{end}})) {
    Set-NetIPInterface -InterfaceAlias $alias -AddressFamily IPv4 -Forwarding Enabled
}
{{- end}}
{{- end}}
{{- if .PreserveRoutes}}
foreach ($r in $kept) {
    if (-not (Get-NetRoute -DestinationPrefix $r.Destination -InterfaceAlias {{q (veth .AdapterName)}} -PolicyStore ActiveStore -ErrorAction SilentlyContinue)) {
        New-NetRoute -DestinationPrefix $r.Destination -NextHop $r.Via -InterfaceAlias {{q (veth .AdapterName)}} -PolicyStore ActiveStore | Out-Null
        Write-Host "Kept route $($r.Destination) via $($r.Via) on the vSwitch"
    }
}
{{- end}}
{{- if .Routes}}

# Routes this node needs ({{len .Routes}}); ActiveStore only, since the vNICs are recreated at boot.
$Routes = @(
{{- range .Routes}}
    @{ Destination = {{q .Destination}}; Via = {{q .Via}}; Interface = {{q .Dev}} }  # {{.Reason}}
{{- end}}
)
foreach ($r in $Routes) {
    if ($r.Interface) {
        $ifIndex = (Get-NetIPInterface -InterfaceAlias $r.Interface -AddressFamily IPv4).ifIndex
    } else {
        $ifIndex = (Find-NetRoute -RemoteIPAddress $r.Via | Select-Object -First 1).InterfaceIndex
    }
    $have = Get-NetRoute -DestinationPrefix $r.Destination -PolicyStore ActiveStore -ErrorAction SilentlyContinue
    if ($have | Where-Object { $_.NextHop -eq $r.Via -and $_.ifIndex -eq $ifIndex }) { continue }
    $have | Remove-NetRoute -Confirm:$false -ErrorAction SilentlyContinue
    New-NetRoute -DestinationPrefix $r.Destination -NextHop $r.Via -InterfaceIndex $ifIndex -PolicyStore ActiveStore | Out-Null
}
{{- end}}
}

if (-not $Boot) {
    Initialize-PodNetwork
    Write-Host 'HNS setup done'
    return
}

# Boot: the network first, retried until it exists (HNS and the adapter may take minutes to
# come up after an update; giving up would leave the node down until someone logs in), with a
# backoff capped at a minute, then the node services in order. Until then the services stay
# stopped and the log says why, instead of a kubelet registering Ready without a pod network.
New-Item -ItemType Directory -Force -Path $LogDir | Out-Null
$log = Join-Path $LogDir 'kubewin-boot.log'
$delay = 5
for ($attempt = 1; ; $attempt++) {
    try {
        Initialize-PodNetwork
        Add-Content -Path $log -Value "$(Get-Date -Format o) pod network {{.PodCIDR}} ready (attempt $attempt)"
        break
    } catch {
        Add-Content -Path $log -Value "$(Get-Date -Format o) attempt $attempt to build the pod network failed (next in $delay s): $_"
        Start-Sleep -Seconds $delay
        $delay = [Math]::Min($delay * 2, 60)
    }
}
foreach ($svc in @({{range $i, $s := .BootServices}}{{if $i}}, {{end}}{{q $s}}{{end}})) {
    Start-Service -Name $svc
    Add-Content -Path $log -Value "$(Get-Date -Format o) started $svc"
}
`))

var hnsCleanupTmpl = template.Must(template.New("cleanup").Funcs(psFuncs).Parse(`# Removes what hns\setup.ps1 created on {{.Node}}, in reverse order. Pods on this node lose
# their network: drain the node first.
# {{.Gen}}
#Requires -RunAsAdministrator
$ErrorActionPreference = 'Stop'

$InstallDir  = {{q .InstallDir}}
$NetworkName = {{q .NetworkName}}
{{- if .EndpointName}}
$EndpointName = {{q .EndpointName}}
{{- end}}

Import-Module (Join-Path $InstallDir 'hns.psm1') -DisableNameChecking

# The boot task would re-create the network at the next boot, and the node services would use
# it: stop both first (install.ps1 registers them again).
Unregister-ScheduledTask -TaskName {{q .TaskName}} -Confirm:$false -ErrorAction SilentlyContinue
foreach ($svc in @({{range $i, $s := .BootServices}}{{if $i}}, {{end}}{{q $s}}{{end}})) {
    Stop-Service -Name $svc -Force -ErrorAction SilentlyContinue
}
{{- if .Routes}}

foreach ($dst in {{.RouteList}}) {
    Get-NetRoute -DestinationPrefix $dst -PolicyStore ActiveStore -ErrorAction SilentlyContinue | Remove-NetRoute -Confirm:$false
}
{{- end}}
{{- if .EndpointName}}

$endpoint = @(Invoke-HnsRequest -Method GET -Type endpoints) | Where-Object { $_.Name -eq $EndpointName } | Select-Object -First 1
if ($endpoint) {
    Detach-HnsHostEndpoint -EndpointID $endpoint.Id | Out-Null
    Invoke-HnsRequest -Method DELETE -Type endpoints -Id $endpoint.Id | Out-Null
    Write-Host "Removed endpoint $EndpointName"
}
{{- end}}

foreach ($name in @({{if .FlannelNetwork}}{{q .FlannelNetwork}}, {{end}}$NetworkName)) {
    $network = @(Invoke-HnsRequest -Method GET -Type networks) | Where-Object { $_.Name -eq $name } | Select-Object -First 1
    if ($network) {
        Invoke-HnsRequest -Method DELETE -Type networks -Id $network.Id | Out-Null
        Write-Host "Removed network $name"
    }
}
Write-Host 'HNS cleanup done'
`))

// HNSSetupScript renders hns/setup.ps1.
func HNSSetupScript(p *plan.Plan, n plan.NodePlan) ([]byte, error) {
	effects, err := NodeEffects(p, n)
	if err != nil {
		return nil, err
	}
	return hnsSetupScript(p, n, effects)
}

func hnsSetupScript(p *plan.Plan, n plan.NodePlan, effects []HostEffect) ([]byte, error) {
	l, err := newHNSLayout(p, n)
	if err != nil {
		return nil, err
	}
	return executeHNSScript(hnsSetupTmpl, n, l.withEffects(effects))
}

// HNSCleanupScript renders hns/cleanup.ps1.
func HNSCleanupScript(p *plan.Plan, n plan.NodePlan) ([]byte, error) {
	return renderHNSScript(hnsCleanupTmpl, p, n)
}

func renderHNSScript(t *template.Template, p *plan.Plan, n plan.NodePlan) ([]byte, error) {
	l, err := newHNSLayout(p, n)
	if err != nil {
		return nil, err
	}
	return executeHNSScript(t, n, l)
}

func executeHNSScript(t *template.Template, n plan.NodePlan, l hnsLayout) ([]byte, error) {
	dsts := make([]string, len(l.Routes))
	for i, r := range l.Routes {
		dsts[i] = r.Destination
	}
	var b bytes.Buffer
	err := t.Execute(&b, struct {
		hnsLayout
		Gen       string
		RouteList string
	}{l, generatedBy, psArray(dsts)})
	if err != nil {
		return nil, fmt.Errorf("render %s for %s: %w", t.Name(), n.Name, err)
	}
	return b.Bytes(), nil
}

// windowsMAC writes a MAC as Get-NetAdapter shows it (AA-BB-CC-DD-EE-FF).
func windowsMAC(mac string) string {
	return strings.ToUpper(strings.ReplaceAll(mac, ":", "-"))
}
