package testgen

import (
	"fmt"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// DesignClusters are the embedded example in the designs whose Windows and Linux nodes
// together need every kind of host effect: the example itself (upstream-ToR, keepalived; its
// kube-proxy under an account of its own, so that ACLs carry grants), host-gw and flannel VXLAN
// (a flannel Linux CNI, the Windows pod network made by flanneld). Each is defaulted and valid.
func DesignClusters() (map[string]*v1alpha1.Cluster, error) {
	out := map[string]*v1alpha1.Cluster{}
	for _, design := range []v1alpha1.NetworkDesign{"", v1alpha1.DesignHostGW, v1alpha1.DesignFlannelVXLAN} {
		c, _, err := v1alpha1.ParseExample()
		if err != nil {
			return nil, err
		}
		name := "example"
		if design != "" {
			name = string(design)
			c.Spec.Design = design
			c.Spec.GatewayGroups = nil
			c.Spec.LinuxCNI = v1alpha1.LinuxCNI{Type: "flannel"}
			if design != v1alpha1.DesignHostGW {
				c.Spec.Windows.HNSNetworkName = ""
			}
			v1alpha1.SetDefaults(c)
		} else {
			c.Spec.Windows.KubeProxyServiceAccount = `NT AUTHORITY\NetworkService`
		}
		if errs := v1alpha1.Validate(c); len(errs) > 0 {
			return nil, fmt.Errorf("design %s: %v", name, errs)
		}
		out[name] = c
	}
	return out, nil
}
