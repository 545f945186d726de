package render

import (
	"bytes"
	"fmt"
	"text/template"

	"github.com/kubewin/kubewin/internal/plan"
)

// Ports a Windows node must accept. The firewall stays on; only these are opened.
const (
	kubeletPort          = 10250
	kubeProxyHealthPort  = 10256
	nodePortRange        = "30000-32767" // kube-apiserver --service-node-port-range default
	vxlanPort            = 4789
	firewallGroup        = "kubewin"
	firewallRuleIDPrefix = "kubewin-"
)

type firewallRule struct {
	Name, DisplayName, Protocol, LocalPort string
}

// FirewallRules returns the inbound rules of a Windows node, in order.
func FirewallRules(n plan.NodePlan) ([]firewallRule, error) {
	w := n.Windows
	if w == nil {
		return nil, fmt.Errorf("render firewall rules for %s: not a Windows node", n.Name)
	}
	rules := []firewallRule{
		{firewallRuleIDPrefix + "kubelet", fmt.Sprintf("kubelet API (TCP %d)", kubeletPort), "TCP", fmt.Sprint(kubeletPort)},
		{firewallRuleIDPrefix + "kube-proxy-health", fmt.Sprintf("kube-proxy health check (TCP %d)", kubeProxyHealthPort), "TCP", fmt.Sprint(kubeProxyHealthPort)},
		{firewallRuleIDPrefix + "nodeport-tcp", "Service NodePorts (TCP " + nodePortRange + ")", "TCP", nodePortRange},
		{firewallRuleIDPrefix + "nodeport-udp", "Service NodePorts (UDP " + nodePortRange + ")", "UDP", nodePortRange},
	}
	if w.HNSNetworkType == "Overlay" {
		rules = append(rules, firewallRule{firewallRuleIDPrefix + "vxlan", fmt.Sprintf("VXLAN overlay (UDP %d)", vxlanPort), "UDP", fmt.Sprint(vxlanPort)})
	}
	return rules, nil
}

var firewallTmpl = template.Must(template.New("firewall").Funcs(psFuncs).Parse(`# Inbound firewall rules for {{.Node}}: exactly the ports Kubernetes needs on this node.
# The Windows firewall stays enabled. Rules are recreated by name, so running this again is safe.
# {{.Gen}}
#Requires -RunAsAdministrator
$ErrorActionPreference = 'Stop'

$Rules = @(
{{- range .Rules}}
    @{ Name = {{q .Name}}; DisplayName = {{q .DisplayName}}; Protocol = {{q .Protocol}}; LocalPort = {{q .LocalPort}} }
{{- end}}
)
foreach ($r in $Rules) {
    Get-NetFirewallRule -Name $r.Name -ErrorAction SilentlyContinue | Remove-NetFirewallRule
    New-NetFirewallRule -Name $r.Name -DisplayName $r.DisplayName -Group {{q .Group}} -Direction Inbound -Action Allow -Protocol $r.Protocol -LocalPort $r.LocalPort -Profile Any | Out-Null
    Write-Host "Allowed $($r.DisplayName)"
}
`))

// FirewallScript renders firewall/rules.ps1.
func FirewallScript(n plan.NodePlan) ([]byte, error) {
	rules, err := FirewallRules(n)
	if err != nil {
		return nil, err
	}
	effects := make([]HostEffect, len(rules))
	for i := range rules {
		effects[i] = HostEffect{Kind: EffectFirewallRule, FirewallRule: &rules[i]}
	}
	return firewallScript(n, effects)
}

// firewallScript renders the firewall rules of the node's host effects.
func firewallScript(n plan.NodePlan, effects []HostEffect) ([]byte, error) {
	var rules []firewallRule
	for _, e := range EffectsOf(effects, EffectFirewallRule) {
		rules = append(rules, *e.FirewallRule)
	}
	var b bytes.Buffer
	if err := firewallTmpl.Execute(&b, map[string]any{"Node": n.Name, "Gen": generatedBy, "Rules": rules, "Group": firewallGroup}); err != nil {
		return nil, fmt.Errorf("render firewall rules for %s: %w", n.Name, err)
	}
	return b.Bytes(), nil
}
