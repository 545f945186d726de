package discover

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestChooseMadeBy(t *testing.T) {
	tests := []struct {
		name     string
		evidence map[string][]string
		want     MadeBy
	}{
		{"nothing", nil, MadeBy{Tool: "unknown"}},
		{"kubeadm", map[string][]string{"kubeadm": {"k"}}, MadeBy{Tool: "kubeadm", Evidence: []string{"k"}}},
		{"kubespray drives kubeadm", map[string][]string{"kubeadm": {"k"}, "kubespray": {"s"}}, MadeBy{Tool: "kubespray", Evidence: []string{"s", "k"}}},
		{"kubespray hints without kubeadm are weak", map[string][]string{"kubespray": {"s"}}, MadeBy{Tool: "unknown"}},
		{"kops on AWS", map[string][]string{"kops": {"ig"}, "aws": {"aws://"}}, MadeBy{Tool: "kops", Evidence: []string{"ig", "aws://"}}},
		{"AWS alone is a cloud, not a tool", map[string][]string{"aws": {"aws://"}}, MadeBy{Tool: "unknown", Evidence: []string{"aws://"}}},
		{"managed service wins", map[string][]string{"eks": {"nodegroup"}, "kubeadm": {"k"}}, MadeBy{Tool: "eks", Evidence: []string{"nodegroup"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &reader{madeBy: tc.evidence}
			if got := r.chooseMadeBy(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Managed clusters are recognised from what their nodes carry.
func TestManagedNodes(t *testing.T) {
	tests := []struct {
		tool       string
		labels     map[string]string
		providerID string
		name       string
	}{
		{"eks", map[string]string{labelEKSNodegroup: "ng-1", labelEksctlCluster: "shop"}, "aws:///eu-west-1a/i-1", "shop"},
		{"aks", map[string]string{labelAKSCluster: "MC_rg_aks_westeurope"}, "azure:///subscriptions/x/vm-0", ""},
		{"gke", map[string]string{labelGKENodepool: "default-pool"}, "gce://proj/europe-west1-b/gke-node-1", ""},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			r := &reader{res: &Result{Cluster: newCluster(), Provenance: map[string]Provenance{}}, fields: map[string][]candidate{}}
			st := &nodeStats{runtimes: map[string]int{}, runtimeVersions: map[string]int{}, kubeletVersions: map[string]int{},
				maskSizes: map[int]int{}, providers: map[string]int{}, labelled: map[string]int{}}
			labels := map[string]string{corev1.LabelOSStable: "linux"}
			for k, v := range tc.labels {
				labels[k] = v
			}
			r.node(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels}, Spec: corev1.NodeSpec{ProviderID: tc.providerID}}, st)
			r.nodeAggregates(st)
			r.resolve()
			if got := r.chooseMadeBy(); got.Tool != tc.tool || len(got.Evidence) != 2 {
				t.Errorf("made by %+v, want %s from the label and the provider ID", got, tc.tool)
			}
			if r.res.Cluster.Metadata.Name != tc.name {
				t.Errorf("name = %q, want %q", r.res.Cluster.Metadata.Name, tc.name)
			}
		})
	}
}
