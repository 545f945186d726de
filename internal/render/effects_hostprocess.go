package render

import (
	"slices"

	"github.com/kubewin/kubewin/internal/plan"
)

// cniOwnedServices are the node services of kubewin's own Windows designs that a CNI
// DaemonSet's HostProcess pods replace (plan.NetworkOwnerDaemonSet): kube-proxy runs as a
// HostProcess DaemonSet and flanneld in flannel's.
var cniOwnedServices = []string{"kube-proxy", "flanneld"}

// cniOwnedWindowsEffects are the host effects of a Windows node whose HNS network a CNI
// DaemonSet's HostProcess pod creates and owns (designs calico/hostprocess and
// flannel/hostprocess): no network, host endpoint, forwarding or routes — the pod makes and
// keeps them, and anything else touching them fights it — and of the services only containerd
// and the kubelet; the firewall rules, registry hosts and the data and pki directories' ACLs
// as on every Windows node.
func cniOwnedWindowsEffects(p *plan.Plan, n plan.NodePlan) ([]HostEffect, error) {
	out := []HostEffect{{Kind: EffectSystemService, SystemService: "hns"}}
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
		if !slices.Contains(cniOwnedServices, svcs[i].Name) {
			out = append(out, HostEffect{Kind: EffectService, Service: &svcs[i]})
		}
	}
	hosts, err := registryHosts(p)
	if err != nil {
		return nil, err
	}
	out = append(out, hosts...)
	for _, t := range []ACLTarget{ACLDataDir, ACLPKIDir, ACLLogDir} {
		out = append(out, HostEffect{Kind: EffectACL, ACL: &ACLEffect{Target: t}})
	}
	return out, nil
}
