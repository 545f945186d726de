package winnode

import (
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
)

// CNINetwork is the HNS network of a node whose pod network a CNI DaemonSet's HostProcess pod
// makes (plan.NetworkOwnerDaemonSet: designs calico/hostprocess and flannel/hostprocess). The
// Reconciler watches it and never creates, changes or deletes it: calico-node-windows and
// flanneld create it on start and re-create it themselves, and a network made by anyone else
// under that name would be taken over or deleted by them.
type CNINetwork struct {
	Name string
	// Type is the HCN type the CNI makes (Overlay for VXLAN, L2Bridge otherwise).
	Type string
	// Owner names the DaemonSet whose pod makes it ("namespace/name"), for the messages.
	Owner string
}

// networkMadeByNodeServices are the node services that make or need the pod network in
// kubewin's own designs and that the CNI's HostProcess pods replace: kube-proxy (a HostProcess
// DaemonSet then) and flanneld.
var networkMadeByNodeServices = []string{"kube-proxy", "flanneld"}

// desiredForCNINetwork is the Desired state of a node whose network a CNI pod owns: the OS
// services and the node's own services (containerd, the kubelet), the kubelet started without
// waiting for a network — it runs the very pods that make it — and the CNI's network watched.
func desiredForCNINetwork(n plan.NodePlan, effects []render.HostEffect, owner string) (Desired, error) {
	w := n.Windows
	d := Desired{Node: n.Name, ProxyNetwork: w.HNSNetworkName,
		CNINetwork: &CNINetwork{Name: w.HNSNetworkName, Type: w.HNSNetworkType, Owner: owner}}
	if mac, err := net.ParseMAC(n.ClusterNICMAC); err == nil {
		d.AdapterMAC = mac.String()
	}
	for _, e := range effects {
		switch e.Kind {
		case render.EffectSystemService:
			d.SystemServices = append(d.SystemServices, e.SystemService)
		case render.EffectService:
			if slices.Contains(networkMadeByNodeServices, e.Service.Name) {
				continue
			}
			d.Services = append(d.Services, ServiceSpec{Name: e.Service.Name, DependsOn: slices.Clone(e.Service.DependsOn), StartType: StartAutomatic})
		}
	}
	if len(d.Services) == 0 {
		return Desired{}, fmt.Errorf("winnode desired state for %s: no node services among the host effects", n.Name)
	}
	return d, nil
}

// watchCNINetwork checks that the CNI's network exists with its type; when it does not, the
// problem says so and — through CNIDiagnosis — why its pod has not made it. Nothing is created.
func (r *Reconciler) watchCNINetwork(st *passState) {
	ctx, rep, c := st.ctx, st.rep, r.Desired.CNINetwork
	networks, err := r.Host.ListNetworks(ctx)
	if err != nil {
		rep.problem("list HNS networks: %v", err)
		return
	}
	have := networkNamed(networks, c.Name)
	var problem string
	switch {
	case have == nil:
		problem = fmt.Sprintf("HNS network %s does not exist (the pod of DaemonSet %s makes it; kubewin does not)", c.Name, c.Owner)
	case c.Type != "" && !strings.EqualFold(have.Type, c.Type):
		problem = fmt.Sprintf("HNS network %s is %s, the design needs %s (made by the pod of DaemonSet %s)", c.Name, have.Type, c.Type, c.Owner)
	default:
		rep.CNINetworkReady = true
	}
	if r.CNIDiagnosis != nil {
		if why := r.CNIDiagnosis(ctx); why != "" {
			if problem == "" {
				problem = fmt.Sprintf("HNS network %s exists", c.Name)
			}
			problem += ": " + why
		}
	}
	if problem != "" {
		rep.CNIProblem = problem
		rep.problem("%s", problem)
	}
}
