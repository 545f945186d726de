package render

import (
	"github.com/kubewin/kubewin/internal/plan"
)

// cniOwnedService says whether a node service of kubewin's own Windows designs is replaced by a
// CNI DaemonSet's HostProcess pods (plan.NetworkOwnerDaemonSet): kube-proxy runs as a
// HostProcess DaemonSet and flanneld in flannel's.
func cniOwnedService(name string) bool { return name == "kube-proxy" || name == "flanneld" }

// cniOwnedWindowsEffects are the host effects of a Windows node whose HNS network a CNI
// DaemonSet's HostProcess pod creates and owns (designs calico/hostprocess and
// flannel/hostprocess): no network, host endpoint, forwarding or routes — the pod makes and
// keeps them, and anything else touching them fights it — and of the services only containerd
// and the kubelet; the firewall rules, registry hosts and the data and pki directories' ACLs
// as on every Windows node.
func cniOwnedWindowsEffects(p *plan.Plan, n plan.NodePlan) ([]HostEffect, error) {
	host, err := windowsHostEffects(p, n, func(name string) bool { return !cniOwnedService(name) })
	if err != nil {
		return nil, err
	}
	out := append([]HostEffect{{Kind: EffectSystemService, SystemService: "hns"}}, host...)
	for _, t := range []ACLTarget{ACLDataDir, ACLPKIDir, ACLLogDir} {
		out = append(out, HostEffect{Kind: EffectACL, ACL: &ACLEffect{Target: t}})
	}
	return out, nil
}
