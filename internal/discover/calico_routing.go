package discover

import (
	"context"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// How Calico programs and exports routes decides whether the Linux nodes learn a gateway
// holder's route to a Windows pod CIDR (issue 11 items 1, 12 and 15):
//
//   - FelixConfiguration "default" spec.programClusterRoutes: Enabled — Felix programs the routes
//     to other nodes' IPAM blocks and BIRD keeps routes inside the IP pools out of the kernel
//     (opt-in since Calico 3.32; projectcalico/calico felix/config and confd's BIRD templates);
//     spec.ignoreLooseRPF lets Felix run with a loose net.ipv4.conf.all.rp_filter.
//   - Installation "default" (operator.tigera.io/v1) spec.calicoNetwork.clusterRoutingMode: Felix
//     is what the Tigera operator turns into that FelixConfiguration setting
//     (tigera/operator: clusterRoutingMode Felix -> programClusterRoutes Enabled).
//   - IPPool spec.vxlanMode (read with the pools): VXLAN pools are routed by Felix without BGP.

func operatorGVR(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "operator.tigera.io", Version: "v1", Resource: resource}
}

// getDefault reads the object named "default" of a cluster-scoped resource; nil when it or its
// resource type is absent or the read is refused (recorded).
func (r *reader) getDefault(ctx context.Context, gvr schema.GroupVersionResource) (*unstructured.Unstructured, error) {
	u, err := r.dyn.Resource(gvr).Get(ctx, "default", metav1.GetOptions{})
	if gone, err := r.absent(err, "get", gvr.Resource+"."+gvr.Group, "", "default"); gone {
		return nil, err
	}
	return u, nil
}

func (r *reader) readCalicoRouting(ctx context.Context) error {
	fc, err := r.getDefault(ctx, calicoGVR("felixconfigurations"))
	if err != nil {
		return err
	}
	if fc != nil {
		src := "FelixConfiguration default (crd.projectcalico.org/v1)"
		if v, ok, _ := unstructured.NestedString(fc.Object, "spec", "programClusterRoutes"); ok && v != "" {
			mode := v1alpha1.CalicoClusterRoutesBIRD
			if strings.EqualFold(v, "Enabled") {
				mode = v1alpha1.CalicoClusterRoutesFelix
			}
			r.add("spec.linuxCNI.calico.clusterRoutes", rankAPIObject, mode, src+" spec.programClusterRoutes "+v)
		}
		if v, ok, _ := unstructured.NestedBool(fc.Object, "spec", "ignoreLooseRPF"); ok {
			r.add("spec.linuxCNI.calico.ignoreLooseRPF", rankAPIObject, strconv.FormatBool(v), src+" spec.ignoreLooseRPF")
		}
	}
	inst, err := r.getDefault(ctx, operatorGVR("installations"))
	if err != nil {
		return err
	}
	if inst != nil {
		src := "Installation default (operator.tigera.io/v1)"
		if v, ok, _ := unstructured.NestedString(inst.Object, "spec", "calicoNetwork", "clusterRoutingMode"); ok && v != "" {
			mode := v1alpha1.CalicoClusterRoutesBIRD
			if strings.EqualFold(v, "Felix") {
				mode = v1alpha1.CalicoClusterRoutesFelix
			}
			// The operator writes FelixConfiguration from it; an equal rank lets a disagreement
			// between the two show as a conflict.
			r.add("spec.linuxCNI.calico.clusterRoutes", rankAPIObject, mode, src+" spec.calicoNetwork.clusterRoutingMode "+v)
		}
	}
	return nil
}

// calicoRoutingNotes says what the discovered routing means for Windows pod CIDRs.
func (r *reader) calicoRoutingNotes() {
	cs := r.res.Cluster.Spec.LinuxCNI.Calico
	if cs == nil {
		return
	}
	if cs.ClusterRoutes == v1alpha1.CalicoClusterRoutesFelix {
		r.note("Calico: Felix programs cluster routes (%s); BIRD keeps routes inside the IP pools out of the kernel, so a gateway holder's exported route to a Windows pod CIDR in a pool does not reach the other Linux nodes: give the gateway group routerVIPs and set exportsConnectedRoutes: false so kubewin's route keeper routes it",
			r.res.Provenance["spec.linuxCNI.calico.clusterRoutes"].Source)
	}
	if cs.VXLANMode != "" && cs.VXLANMode != "Never" {
		r.note("Calico: IP pools use VXLAN (vxlanMode %s): no BGP runs, so nothing exports a gateway holder's route to a Windows pod CIDR: give the gateway group routerVIPs and set exportsConnectedRoutes: false so kubewin's route keeper routes it", cs.VXLANMode)
	}
}

func (r *reader) setCalicoRouting(path, v string, cs *v1alpha1.CalicoSettings) bool {
	switch path {
	case "spec.linuxCNI.calico.clusterRoutes":
		cs.ClusterRoutes = v
	case "spec.linuxCNI.calico.vxlanMode":
		cs.VXLANMode = v
	case "spec.linuxCNI.calico.ignoreLooseRPF":
		cs.IgnoreLooseRPF = v == "true"
	default:
		return false
	}
	return true
}
