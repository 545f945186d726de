package render

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kubewin/kubewin/internal/plan"
)

// One desired host state. NodeEffects computes, once per node, every change the node's host
// needs; the bundle's scripts are rendered from that list (hns/setup.ps1, firewall/rules.ps1,
// services/install.ps1, containerd/certs.d, sysctl.d, modules-load.d, routes) and kubewin join
// and the node service apply the same list (internal/join's executors, winnode's Reconciler).
// A parity test drops each effect in turn and fails when either the bundle or join's executor
// comes out the same: an executor that ignores an effect kind cannot go unnoticed (an
// independent review found the join path missing forwarding and hosts.toml that the bundle
// had, when the two were computed apart).

// EffectKind is a kind of change on a node's host.
type EffectKind string

const (
	// EffectSystemService is a Windows service of the OS the node services need running
	// (the Host Network Service; it may be Manual and stopped after a boot: K2s issue 593).
	EffectSystemService EffectKind = "system-service"
	// EffectNetwork is an HNS network kubewin creates.
	EffectNetwork EffectKind = "hns-network"
	// EffectHostEndpoint is the pod network's host endpoint (.2), attached to compartment 1.
	EffectHostEndpoint EffectKind = "host-endpoint"
	// EffectForwarding is an interface that must forward IPv4 (by role: its name changes).
	EffectForwarding EffectKind = "forwarding"
	// EffectRoute is a host route; another route to the same destination is removed.
	EffectRoute EffectKind = "route"
	// EffectPreserveRoute is a destination whose route on the cluster adapter must outlive the
	// vSwitch (creating it drops the cloud metadata route: kubernetes
	// cluster/gce/windows/k8s-node-setup.psm1; microsoft/hcsshim#299).
	EffectPreserveRoute EffectKind = "preserve-route"
	// EffectFirewallRule is an inbound allow rule.
	EffectFirewallRule EffectKind = "firewall-rule"
	// EffectService is a node service with its recovery settings.
	EffectService EffectKind = "service"
	// EffectRegistryHost is containerd's certs.d/<host>/hosts.toml for a registry.
	EffectRegistryHost EffectKind = "registry-host"
	// EffectACL is a protected DACL on a path of the node's layout.
	EffectACL EffectKind = "acl"
	// EffectSysctl is a kernel parameter (Linux).
	EffectSysctl EffectKind = "sysctl"
	// EffectModule is a kernel module (Linux).
	EffectModule EffectKind = "module"
)

// WindowsEffectKinds and LinuxEffectKinds are every kind a node's list can hold on each OS;
// the parity test checks that each executor handles all of them.
var (
	WindowsEffectKinds = []EffectKind{EffectSystemService, EffectNetwork, EffectHostEndpoint, EffectForwarding, EffectRoute,
		EffectPreserveRoute, EffectFirewallRule, EffectService, EffectRegistryHost, EffectACL}
	LinuxEffectKinds = []EffectKind{EffectSysctl, EffectModule, EffectRoute, EffectRegistryHost}
)

// HostEffect is one entry of a node's desired host state; Kind says which field is set.
type HostEffect struct {
	Kind EffectKind `json:"kind"`
	// SystemService names an OS service (EffectSystemService).
	SystemService string          `json:"systemService,omitempty"`
	Network       *NetworkEffect  `json:"network,omitempty"`
	Endpoint      *EndpointEffect `json:"endpoint,omitempty"`
	// Interface is the forwarding interface's role ("host-endpoint", "cluster-vswitch") and
	// Alias the name it has when nothing renamed it.
	Interface string      `json:"interface,omitempty"`
	Alias     string      `json:"alias,omitempty"`
	Route     *plan.Route `json:"route,omitempty"`
	// Destination is a preserved route's destination prefix.
	Destination  string          `json:"destination,omitempty"`
	FirewallRule *firewallRule   `json:"firewallRule,omitempty"`
	Service      *WindowsService `json:"service,omitempty"`
	RegistryHost *RegistryHost   `json:"registryHost,omitempty"`
	ACL          *ACLEffect      `json:"acl,omitempty"`
	Sysctl       *Sysctl         `json:"sysctl,omitempty"`
	Module       string          `json:"module,omitempty"`
}

// String names the effect for messages and tests ("route 10.160.0.0/12 via 10.160.11.1").
func (e HostEffect) String() string {
	switch {
	case e.SystemService != "":
		return string(e.Kind) + " " + e.SystemService
	case e.Network != nil:
		return string(e.Kind) + " " + e.Network.Name
	case e.Endpoint != nil:
		return string(e.Kind) + " " + e.Endpoint.Name
	case e.Interface != "":
		return string(e.Kind) + " " + e.Interface
	case e.Route != nil:
		return string(e.Kind) + " " + e.Route.Destination + " via " + e.Route.Via
	case e.Destination != "":
		return string(e.Kind) + " " + e.Destination
	case e.FirewallRule != nil:
		return string(e.Kind) + " " + e.FirewallRule.Name
	case e.Service != nil:
		return string(e.Kind) + " " + e.Service.Name
	case e.RegistryHost != nil:
		return string(e.Kind) + " " + e.RegistryHost.Host
	case e.ACL != nil:
		return string(e.Kind) + " " + string(e.ACL.Target)
	case e.Sysctl != nil:
		return string(e.Kind) + " " + e.Sysctl.Key
	case e.Module != "":
		return string(e.Kind) + " " + e.Module
	}
	return string(e.Kind)
}

// WindowsService is a Windows node service as render defines it (WindowsServices).
type WindowsService = winService

// FirewallRule is an inbound allow rule of a Windows node (FirewallRules).
type FirewallRule = firewallRule

// NetworkEffect is an HNS network.
type NetworkEffect struct {
	Name string `json:"name"`
	// Type is "L2Bridge" or "Overlay".
	Type    string `json:"type"`
	Prefix  string `json:"prefix"`
	Gateway string `json:"gateway"`
	// AdapterName is the planned name of the adapter the vSwitch binds; AdapterMAC finds it
	// when it was renamed.
	AdapterName string `json:"adapterName"`
	AdapterMAC  string `json:"adapterMAC"`
	// VSID is the overlay isolation ID (0 for L2Bridge).
	VSID int `json:"vsid,omitempty"`
}

// EndpointEffect is the host endpoint.
type EndpointEffect struct {
	Name         string `json:"name"`
	Network      string `json:"network"`
	IP           string `json:"ip"`
	PrefixLength int    `json:"prefixLength"`
	// Compartment is the network compartment it is attached to (1, the host's default).
	Compartment int `json:"compartment"`
}

// RegistryHost is containerd's configuration of one registry host.
type RegistryHost struct {
	Host string `json:"host"`
	// Dir is the directory below containerd's certs.d (RegistryHostDir).
	Dir  string `json:"dir"`
	Data []byte `json:"data"`
}

// ACLTarget is a path of a node's layout, resolved by each executor against its own layout
// (the bundle's and join's differ).
type ACLTarget string

const (
	ACLDataDir             ACLTarget = "data-dir"
	ACLPKIDir              ACLTarget = "pki-dir"
	ACLKubeProxyConfigDir  ACLTarget = "kube-proxy-config-dir"
	ACLKubeProxyKubeconfig ACLTarget = "kube-proxy-kubeconfig"
	ACLKubeProxyBinary     ACLTarget = "kube-proxy-binary"
	ACLKubeLogRunner       ACLTarget = "kube-log-runner-binary"
	ACLLogDir              ACLTarget = "log-dir"
)

// ACLEffect is a protected DACL — full control for SYSTEM and Administrators plus Grants,
// nothing inherited from above.
type ACLEffect struct {
	Target ACLTarget  `json:"target"`
	Grants []ACLGrant `json:"grants,omitempty"`
}

// ACLGrant is an access besides SYSTEM's and Administrators': "R" read and execute, "M" modify.
type ACLGrant struct {
	Account string `json:"account"`
	Access  string `json:"access"`
}

// Sysctl is one kernel parameter.
type Sysctl struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// The cloud metadata server's route (AWS, Azure, GCE: 169.254.169.254).
const metadataRouteDestination = "169.254.169.254/32"

// Forwarding roles (winnode.InterfaceRole values).
const (
	forwardingHostEndpoint  = "host-endpoint"
	forwardingClusterSwitch = "cluster-vswitch"
)

// NodeEffects is the desired host state of a node, in the order it is applied.
func NodeEffects(p *plan.Plan, n plan.NodePlan) ([]HostEffect, error) {
	switch {
	case n.Windows != nil:
		return windowsEffects(p, n)
	case n.Linux != nil:
		return linuxEffects(p, n)
	}
	return nil, fmt.Errorf("host effects of %s: neither a Windows nor a Linux node", n.Name)
}

func windowsEffects(p *plan.Plan, n plan.NodePlan) ([]HostEffect, error) {
	w := n.Windows
	if w.NetworkOwner == plan.NetworkOwnerDaemonSet {
		return cniOwnedWindowsEffects(p, n) // effects_hostprocess.go
	}
	l, err := newHNSLayout(p, n)
	if err != nil {
		return nil, err
	}
	mac := strings.ToLower(strings.ReplaceAll(n.ClusterNICMAC, "-", ":"))
	out := []HostEffect{{Kind: EffectSystemService, SystemService: "hns"}}
	external := NetworkEffect{Name: externalNetworkName, Type: "L2Bridge", Prefix: externalNetworkPrefix, Gateway: externalNetworkGW,
		AdapterName: w.AdapterName, AdapterMAC: mac}
	if l.Flannel {
		external.Type, external.VSID = l.NetworkType, l.VSID
		out = append(out, HostEffect{Kind: EffectNetwork, Network: &external})
	} else {
		pod := netip.MustParsePrefix(l.Prefix) // parsed by newHNSLayout
		out = append(out,
			HostEffect{Kind: EffectNetwork, Network: &external},
			HostEffect{Kind: EffectNetwork, Network: &NetworkEffect{Name: l.NetworkName, Type: l.NetworkType, Prefix: l.Prefix,
				Gateway: l.Gateway, AdapterName: w.AdapterName, AdapterMAC: mac}},
			HostEffect{Kind: EffectHostEndpoint, Endpoint: &EndpointEffect{Name: l.EndpointName, Network: l.NetworkName,
				IP: l.EndpointIP, PrefixLength: pod.Bits(), Compartment: 1}},
			// win-bridge with IPAM makes the host endpoint (.2) every pod's gateway
			// (containernetworking/plugins win-bridge_windows.go): the host forwards in on its
			// vNIC and out through the vSwitch's (flannel hostgw_windows.go enables both).
			HostEffect{Kind: EffectForwarding, Interface: forwardingHostEndpoint, Alias: vEthernet(l.EndpointName)},
			HostEffect{Kind: EffectForwarding, Interface: forwardingClusterSwitch, Alias: vEthernet(w.AdapterName)},
		)
	}
	for i := range w.Routes {
		r := w.Routes[i]
		out = append(out, HostEffect{Kind: EffectRoute, Route: &r})
	}
	out = append(out, HostEffect{Kind: EffectPreserveRoute, Destination: metadataRouteDestination})
	host, err := windowsHostEffects(p, n, func(string) bool { return true })
	if err != nil {
		return nil, err
	}
	return append(append(out, host...), windowsACLs(w)...), nil
}

// windowsHostEffects are the effects every Windows node has whoever makes its pod network: the
// firewall rules, the services that keep (the ones keep accepts, in start order) and the
// registry hosts.
func windowsHostEffects(p *plan.Plan, n plan.NodePlan, keep func(service string) bool) ([]HostEffect, error) {
	var out []HostEffect
	rules, err := FirewallRules(n)
	if err != nil {
		return nil, err
	}
	for i := range rules {
		out = append(out, HostEffect{Kind: EffectFirewallRule, FirewallRule: &rules[i]})
	}
	svcs, err := WindowsServices(p, n)
	if err != nil {
		return nil, err
	}
	for i := range svcs {
		if keep(svcs[i].Name) {
			out = append(out, HostEffect{Kind: EffectService, Service: &svcs[i]})
		}
	}
	hosts, err := registryHosts(p)
	if err != nil {
		return nil, err
	}
	return append(out, hosts...), nil
}

// windowsACLs: the install dir's data (bootstrap token, keys, kubeconfigs) for SYSTEM and
// Administrators only — file modes mean nothing on Windows and a directory at C:\ lets every
// local user read it — and, when kube-proxy runs under an account of its own (seed 000 FAQ 6),
// read access for it to exactly what it reads, modify access to its log directory.
func windowsACLs(w *plan.WindowsNodePlan) []HostEffect {
	out := []HostEffect{{Kind: EffectACL, ACL: &ACLEffect{Target: ACLDataDir}}, {Kind: EffectACL, ACL: &ACLEffect{Target: ACLPKIDir}}}
	account := w.KubeProxyServiceAccount
	if strings.EqualFold(account, localSystem) {
		account = ""
	}
	grant := func(access string) []ACLGrant {
		if account == "" {
			return nil
		}
		return []ACLGrant{{Account: account, Access: access}}
	}
	for _, t := range []struct {
		target ACLTarget
		access string
	}{
		{ACLKubeProxyConfigDir, "R"}, {ACLKubeProxyKubeconfig, "R"}, {ACLKubeProxyBinary, "R"}, {ACLKubeLogRunner, "R"}, {ACLLogDir, "M"},
	} {
		out = append(out, HostEffect{Kind: EffectACL, ACL: &ACLEffect{Target: t.target, Grants: grant(t.access)}})
	}
	if account != "" {
		// kube-proxy uses the node's credential (internal/bootstrap): its account reads pki.
		out[1].ACL.Grants = grant("R")
	}
	return out
}

func linuxEffects(p *plan.Plan, n plan.NodePlan) ([]HostEffect, error) {
	l := n.Linux
	var out []HostEffect
	mods := append([]string(nil), l.Modules...)
	sort.Strings(mods)
	for _, m := range mods {
		out = append(out, HostEffect{Kind: EffectModule, Module: m})
	}
	for _, k := range sortedKeys(l.Sysctls) {
		out = append(out, HostEffect{Kind: EffectSysctl, Sysctl: &Sysctl{Key: k, Value: l.Sysctls[k]}})
	}
	for i := range l.Routes {
		r := l.Routes[i]
		out = append(out, HostEffect{Kind: EffectRoute, Route: &r})
	}
	hosts, err := registryHosts(p)
	if err != nil {
		return nil, err
	}
	return append(out, hosts...), nil
}

// registryHosts: a hosts.toml per plain-HTTP registry the cluster pulls from (containerd's
// registry.config_path names certs.d; without the file containerd speaks HTTPS to it and every
// pull fails, the pause image's included).
func registryHosts(p *plan.Plan) ([]HostEffect, error) {
	hosts := append([]string(nil), p.Images.InsecureRegistries...)
	sort.Strings(hosts)
	var out []HostEffect
	for _, h := range hosts {
		data, err := RegistryHostsTOML(h)
		if err != nil {
			return nil, err
		}
		out = append(out, HostEffect{Kind: EffectRegistryHost, RegistryHost: &RegistryHost{Host: h, Dir: RegistryHostDir(h), Data: data}})
	}
	return out, nil
}

// EffectsOf returns the effects of one kind, in order.
func EffectsOf(effects []HostEffect, kind EffectKind) []HostEffect {
	var out []HostEffect
	for _, e := range effects {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// ACLPath resolves an ACL target against a layout (Windows paths; the kube-proxy binaries are
// in BinDir).
func ACLPath(t ACLTarget, paths NodePaths) (string, error) {
	switch t {
	case ACLDataDir:
		return paths.DataDir, nil
	case ACLPKIDir:
		return paths.PKIDir, nil
	case ACLKubeProxyConfigDir:
		return paths.KubeProxyConfigDir, nil
	case ACLKubeProxyKubeconfig:
		return paths.KubeProxyKubeconfig(), nil
	case ACLKubeProxyBinary:
		return filepath.Join(paths.BinDir, "kube-proxy.exe"), nil
	case ACLKubeLogRunner:
		return filepath.Join(paths.BinDir, "kube-log-runner.exe"), nil
	case ACLLogDir:
		return paths.LogDir, nil
	}
	return "", fmt.Errorf("ACL target %q: unknown", t)
}
