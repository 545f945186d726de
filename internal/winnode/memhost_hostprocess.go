package winnode

import (
	"fmt"
	"strings"
)

// byHostProcess marks the network-create event of a network a HostProcess pod made.
const byHostProcess = " by HostProcess pod "

// What MemHost models for the designs whose pod network a CNI DaemonSet's HostProcess pod
// makes (calico/hostprocess, flannel/hostprocess), in the form of the table on MemHost:
//
//	behaviour                                   | MemHost                                   | source
//	--------------------------------------------+-------------------------------------------+------------------------------------------------
//	a HostProcess container                     | a process on the host, outside any pod    | kubernetes.io/docs/tasks/configure-pod-container/create-hostprocess-pod ("HostProcess containers run
//	                                            | network: its HNS calls are the host's     | directly on the host", "Networking: hostNetwork must be true"); learn.microsoft.com/azure/aks/use-windows-hpc
//	the CNI pod's network (RunHostProcess)      | created by the pod's process once it      | flannel-io/flannel pkg/backend/vxlan/vxlan_windows.go (flanneld creates the Overlay network "flannel.<VNI>"
//	                                            | runs, after its start-up work; recorded   | after it holds its lease); projectcalico/calico node/pkg/... calico-node-windows creates "Calico"
//	                                            | as created by that pod, not by kubewin    | (docs.tigera.io "Calico for Windows" architecture: the HNS network is made by calico-node on start)
//	a CNI container that exits (CrashHostProcess)| no network is created; an event records  | a HostProcess container is an ordinary container to the kubelet: it restarts it with back-off
//	                                            | the exit (the kubelet's back-off is the   | (kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go, CrashLoopBackOff)
//	                                            | harness's, on the Pod's status)           |
//	HostProcess containers at a reboot          | end with every process (Reboot); the      | they are containers the kubelet starts again after the boot; the network they made follows
//	                                            | network follows Model.NetworksPersist     | Model.NetworksPersist like any HNS network (MemHost table above)
//	containerd versions                         | HostProcess containers need containerd    | kubernetes.io create-hostprocess-pod ("containerd 1.6 or higher"); learn.microsoft.com/azure/aks/use-windows-hpc
//	                                            | >= 1.6 (join refuses older; not modelled  |
//	                                            | here)                                     |

// RunHostProcess models the CNI DaemonSet's HostProcess container pod running on the host:
// it creates spec (unless a network of that name exists) bound to the adapter named in spec,
// as calico-node-windows or flanneld do, and records the network as made by pod.
func (h *MemHost) RunHostProcess(pod string, spec NetworkSpec) (Network, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.noContainers || h.hnsPID == 0 {
		h.event("hostprocess-failed", pod, "the Host Network Service is not running")
		return Network{}, fmt.Errorf("HostProcess pod %s: the Host Network Service is not running", pod)
	}
	h.event("hostprocess-start", pod, "")
	if n := h.networkByName(spec.Name); n != nil {
		return cloneNetworks([]Network{*n})[0], nil
	}
	n, err := h.createNetwork(spec)
	if err != nil {
		h.event("hostprocess-failed", pod, err.Error())
		return Network{}, err
	}
	// The network-create event createNetwork recorded says who made the network.
	for i := len(h.events) - 1; i >= 0; i-- {
		if h.events[i].Kind == "network-create" && h.events[i].Name == spec.Name {
			h.events[i].Detail += byHostProcess + pod
			break
		}
	}
	return n, nil
}

// CrashHostProcess models the CNI container exiting before it made its network.
func (h *MemHost) CrashHostProcess(pod, why string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.event("hostprocess-exit", pod, why)
}

// NetworksMadeByHost are the names of the HNS networks created through the Host interface
// (CreateNetwork: kubewin's Reconciler), not by a HostProcess pod, in creation order.
func (h *MemHost) NetworksMadeByHost() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, e := range h.events {
		if e.Kind != "network-create" {
			continue
		}
		if !strings.Contains(e.Detail, byHostProcess) {
			out = append(out, e.Name)
		}
	}
	return out
}
