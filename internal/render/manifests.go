package render

import (
	"bytes"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"

	"github.com/kubewin/kubewin/internal/plan"
)

// RuntimeClasses renders cluster/runtimeclasses.yaml: one node.k8s.io/v1 RuntimeClass per
// planned class, as a multi-document YAML stream.
func RuntimeClasses(p *plan.Plan) ([]byte, error) {
	var b bytes.Buffer
	e := newYAMLEncoder()
	for i, rc := range p.RuntimeClasses {
		obj := &nodev1.RuntimeClass{Handler: rc.Handler}
		obj.APIVersion = nodev1.SchemeGroupVersion.String()
		obj.Kind = "RuntimeClass"
		obj.Name = rc.Name
		obj.Scheduling = &nodev1.Scheduling{NodeSelector: rc.NodeSelector}
		for _, t := range rc.Tolerations {
			obj.Scheduling.Tolerations = append(obj.Scheduling.Tolerations, corev1.Toleration{
				Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
		}
		header := fmt.Sprintf("RuntimeClass %s: pods naming it run with containerd handler %s.", rc.Name, rc.Handler)
		if i == 0 {
			header = fmt.Sprintf("RuntimeClasses for the Windows nodes of %s; apply with kubectl apply -f.\n%s\n%s", p.Cluster.Name, generatedBy, header)
		}
		doc, err := e.minimalYAML(obj, header)
		if err != nil {
			return nil, fmt.Errorf("render RuntimeClass %s: %w", rc.Name, err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(doc)
	}
	return b.Bytes(), nil
}

// CalicoReservationName names the IPReservation kubewin renders.
const CalicoReservationName = "kubewin-windows-pod-cidrs"

// CalicoReservation renders cluster/calico-ipreservation.yaml: a projectcalico.org/v3
// IPReservation of every Windows pod CIDR inside a Calico pool (Calico IPAM hands out /26 blocks
// anywhere in its pools and ignores node.spec.podCIDR), or, for PoolExclusion, the steps that
// keep those CIDRs out of the pools. Nil when nothing needs reserving.
func CalicoReservation(p *plan.Plan) ([]byte, error) {
	c := p.Calico
	if c == nil || len(c.ReservedCIDRs) == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	switch c.Reservation {
	case "IPReservation":
		fmt.Fprintf(&b, "# Keeps Calico IPAM away from the Windows pod CIDRs of %s; apply with\n", p.Cluster.Name)
		b.WriteString("# kubectl apply -f (Calico API server installed) or calicoctl apply -f.\n")
		b.WriteString("#\n# A reservation only stops new allocations: addresses Calico already handed out inside\n")
		b.WriteString("# these CIDRs stay in use (Calico docs, IPReservation). Before the Windows node joins, look:\n")
		b.WriteString("#   calicoctl ipam show --show-blocks     (blocks inside a CIDR below are a problem)\n")
		b.WriteString("#   calicoctl ipam show --ip=<address>    (which pod holds an address)\n")
		b.WriteString("# then recreate the pods holding such addresses (they get new ones outside the reservation),\n")
		b.WriteString("# and run calicoctl ipam check / calicoctl ipam release --from-report=<report> for leaks.\n")
		fmt.Fprintf(&b, "# %s\n", generatedBy)
		b.WriteString("apiVersion: projectcalico.org/v3\nkind: IPReservation\nmetadata:\n")
		fmt.Fprintf(&b, "  name: %s\nspec:\n  reservedCIDRs:\n", CalicoReservationName)
		for _, cidr := range c.ReservedCIDRs {
			fmt.Fprintf(&b, "  - %s\n", cidr)
		}
	case "PoolExclusion":
		fmt.Fprintf(&b, "# Calico IP pools of %s must not contain the Windows pod CIDRs below\n", p.Cluster.Name)
		b.WriteString("# (spec.linuxCNI.calico.reservation: PoolExclusion). Calico pools cannot exclude ranges,\n")
		b.WriteString("# so replace each pool that contains one by pools covering the rest of its range:\n")
		b.WriteString("#   1. calicoctl create the new pools;\n")
		b.WriteString("#   2. calicoctl patch ippool <old> -p '{\"spec\":{\"disabled\":true}}';\n")
		b.WriteString("#   3. recreate the pods that hold addresses of the old pool, then delete it.\n")
		fmt.Fprintf(&b, "# Current pools: %s\n", strings.Join(c.IPPools, ", "))
		fmt.Fprintf(&b, "# %s\n#\n# CIDRs to exclude:\n", generatedBy)
		for _, cidr := range c.ReservedCIDRs {
			fmt.Fprintf(&b, "#   %s\n", cidr)
		}
	default:
		return nil, fmt.Errorf("render Calico reservation: unknown reservation mode %q", c.Reservation)
	}
	return b.Bytes(), nil
}
