package discover

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// The mapping of single Node objects to spec nodes, for shapes the fixture clusters do not have.
func TestNodeMapping(t *testing.T) {
	tests := []struct {
		name     string
		node     corev1.Node
		nicName  string
		want     v1alpha1.Node
		conflict bool
		missing  func(*nodeStats) []string
	}{
		{
			name: "legacy role label, beta os label, Calico annotation of another address ignored",
			node: corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "old", Labels: map[string]string{"kubernetes.io/role": "master", "beta.kubernetes.io/os": "linux"},
				Annotations: map[string]string{annotationCalicoIPv4: "192.0.2.99/24"}},
				Spec:   corev1.NodeSpec{PodCIDR: "10.0.5.0/24"},
				Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "fd00::5"}, {Type: corev1.NodeInternalIP, Address: "192.0.2.5"}}}},
			nicName: "ens3",
			want: v1alpha1.Node{Name: "old", OS: v1alpha1.OSLinux, Role: v1alpha1.RoleControlPlane, ClusterNIC: "ens3", PodCIDR: "10.0.5.0/24",
				NICs: []v1alpha1.NIC{{Name: "ens3", IP: "192.0.2.5"}}},
			missing: func(st *nodeStats) []string { return st.missingPrefix },
		},
		{
			name: "Windows build label disagrees with the kernel; no address; dual-stack pod CIDRs",
			node: corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win", Labels: map[string]string{corev1.LabelOSStable: "windows", labelWindowsBuild: "10.0.20348"}},
				Spec:   corev1.NodeSpec{PodCIDRs: []string{"fd00:1::/64", "10.0.9.0/24"}},
				Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KernelVersion: "10.0.26100.1"}}},
			nicName:  "ens3",
			want:     v1alpha1.Node{Name: "win", OS: v1alpha1.OSWindows, Role: v1alpha1.RoleWorker, WindowsBuild: "10.0.20348", PodCIDR: "10.0.9.0/24", NICs: []v1alpha1.NIC{}},
			conflict: true,
			missing:  func(st *nodeStats) []string { return st.missingIP },
		},
		{
			name: "os from nodeInfo, Windows build unknown",
			node: corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "bare"},
				Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{OperatingSystem: "windows"},
					Addresses: []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "203.0.113.1"}, {Type: corev1.NodeInternalIP, Address: "10.9.9.9"}}}},
			want:    v1alpha1.Node{Name: "bare", OS: v1alpha1.OSWindows, Role: v1alpha1.RoleWorker, NICs: []v1alpha1.NIC{{IP: "10.9.9.9"}}},
			missing: func(st *nodeStats) []string { return st.missingWindowsBuild },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &reader{res: &Result{Cluster: newCluster(), Provenance: map[string]Provenance{}}}
			r.cni.nicName, r.cni.nicSource = tc.nicName, "test"
			st := &nodeStats{runtimes: map[string]int{}, runtimeVersions: map[string]int{}, kubeletVersions: map[string]int{},
				maskSizes: map[int]int{}, providers: map[string]int{}, labelled: map[string]int{}}
			r.node(&tc.node, st)
			got := r.res.Cluster.Spec.Nodes[0]
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("node = %+v, want %+v", got, tc.want)
			}
			if (len(r.res.Conflicts) > 0) != tc.conflict {
				t.Errorf("conflicts = %+v", r.res.Conflicts)
			}
			if m := tc.missing(st); !reflect.DeepEqual(m, []string{tc.node.Name}) {
				t.Errorf("missing list = %v, want the node", m)
			}
		})
	}
}
