package render

import (
	"bytes"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubewin/kubewin/internal/plan"
)

// WindowsNodeObjects renders cluster/windows-nodes.yaml: a Node object per Windows node whose
// pod CIDR the plan took from the spec, to apply before that node's kubelet first starts.
//
// Why: the HNS network, its .1/.2 and the Calico reservation are built for the planned pod CIDR,
// but by default kube-controller-manager's range allocator hands the next free CIDR to the Node
// when the kubelet registers — the two would silently disagree. A Node that already carries
// spec.podCIDR(s) keeps it: the range allocator only occupies an existing podCIDR
// (kubernetes v1.37.1 pkg/controller/nodeipam/ipam/range_allocator.go AllocateOrOccupyCIDR ->
// occupyCIDRs; TestWindowsNodeObjectsKeepTheirPodCIDR runs that allocator against a real API
// server), and the kubelet adopts an existing Node of its name instead of creating one
// (pkg/kubelet/kubelet_node_status.go tryRegisterWithAPIServer: on AlreadyExists it reads and
// reconciles the existing object). That reconciliation sets only the default labels
// (updateDefaultLabels) and never the kubelet's --node-labels or registration taints, so the
// object carries the plan's labels and taints itself. Nodes whose pod CIDR was allocated by the
// plan get no object: their CIDR is only a forecast of what the allocator will assign.
func WindowsNodeObjects(p *plan.Plan) ([]byte, error) {
	var b bytes.Buffer
	e := newYAMLEncoder()
	n := 0
	for _, np := range p.Nodes {
		if np.Windows == nil || np.PodCIDRSource == plan.PodCIDRAllocated {
			continue
		}
		obj := &corev1.Node{Spec: corev1.NodeSpec{PodCIDR: np.PodCIDR, PodCIDRs: []string{np.PodCIDR}}}
		obj.APIVersion = "v1"
		obj.Kind = "Node"
		obj.Name = np.Name
		if len(np.Labels) > 0 {
			obj.Labels = np.Labels
		}
		for _, t := range np.Taints {
			obj.Spec.Taints = append(obj.Spec.Taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
		}
		header := fmt.Sprintf("Node %s with the pod CIDR its HNS network is built for.", np.Name)
		if n == 0 {
			header = fmt.Sprintf("Windows Nodes of %s, to apply (kubectl apply -f) before each node's kubelet first starts:\n"+
				"kube-controller-manager keeps a podCIDR that is already set, and the kubelet adopts the\n"+
				"existing Node, so the pod CIDR is the one the node's files were rendered for.\n%s\n%s", p.Cluster.Name, generatedBy, header)
		}
		doc, err := e.minimalYAML(obj, header)
		if err != nil {
			return nil, fmt.Errorf("render Node %s: %w", np.Name, err)
		}
		if n > 0 {
			b.WriteString("---\n")
		}
		b.Write(doc)
		n++
	}
	if n == 0 {
		return nil, nil
	}
	return b.Bytes(), nil
}
