package gateway

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Status keys of a member's status ConfigMap.
const (
	StatusKeyHeld       = "held"
	StatusKeyInstances  = "instances"
	StatusKeyConfigured = "configured"
	StatusKeyConfigHash = "configHash"
	StatusKeyHeartbeat  = "heartbeat"
	StatusLabelGroup    = "kubewin.io/gateway-group"
	StatusLabelMember   = "kubewin.io/gateway-member"

	// The Calico reservation (CalicoReserver): the CIDRs reserved, the wanted ones not
	// reserved, and the conflicts, one per line; the error of its last sync, if any.
	StatusKeyCalicoReserved   = "calicoReserved"
	StatusKeyCalicoUnreserved = "calicoUnreserved"
	StatusKeyCalicoConflicts  = "calicoConflicts"
	StatusKeyCalicoError      = "calicoError"
)

// StatusName is the name of member's status ConfigMap in group.
//
// Why a ConfigMap in kubewin's namespace and not a Node annotation: writing Node objects needs
// patch on nodes, a privilege that also reaches labels and taints of the gateway nodes, and
// every Node write wakes every Node watcher in the cluster. A ConfigMap per member is
// pre-created by the manifests, so the member needs only get/update on its group's status
// objects (resourceNames), nothing cluster-wide.
func StatusName(group, member string) string {
	return "kubewin-gateway-" + group + "-" + member
}

func statusLabels(group, member string) map[string]string {
	return map[string]string{StatusLabelGroup: group, StatusLabelMember: member}
}

// ParseHeld returns the VIPs a status object says its member holds.
func ParseHeld(cm *corev1.ConfigMap) []string {
	s := cm.Data[StatusKeyHeld]
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
