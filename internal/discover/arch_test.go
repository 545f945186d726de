package discover

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDiscoverNodeArch: the spec has no architecture field and kubewin plans Windows nodes as amd64,
// so nodes of other architectures are named in notes, whichever of the label, the beta label or
// the kubelet's report says so; Windows ones get their own note.
func TestDiscoverNodeArch(t *testing.T) {
	cp := startCluster(t, "kubeadm-calico", "10.96.0.0/12", true)
	archNotes := func(res *Result) []string {
		var out []string
		for _, n := range res.Notes {
			if strings.Contains(n, "amd64") || strings.Contains(n, "(kubernetes.io/arch)") {
				out = append(out, n)
			}
		}
		return out
	}
	// The fixture's cp1 and w1 are amd64, w2 an arm64 Linux node (label and status).
	first := []string{"1 of 3 Nodes is arm64 (kubernetes.io/arch): w2"}
	if n := archNotes(discoverT(t, cp, Options{})); strings.Join(n, "\n") != strings.Join(first, "\n") {
		t.Errorf("architecture notes: %q, want %q", n, first)
	}

	ctx := context.Background()
	node := func(name, os string, labels map[string]string, arch string) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		n.Status.NodeInfo = corev1.NodeSystemInfo{OperatingSystem: os, Architecture: arch, KubeletVersion: "v1.37.1",
			ContainerRuntimeVersion: "containerd://2.1.4", KernelVersion: "10.0.26100.1000"}
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.99"}}
		return n
	}
	for _, n := range []*corev1.Node{
		node("lin-arm", "linux", map[string]string{corev1.LabelOSStable: "linux", corev1.LabelArchStable: "arm64"}, "arm64"),
		// An old kubelet's beta label; the status agrees.
		node("lin-arm-old", "linux", map[string]string{"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "arm64"}, "arm64"),
		node("lin-s390x", "linux", map[string]string{corev1.LabelOSStable: "linux", corev1.LabelArchStable: "s390x"}, "s390x"),
		// Only the kubelet's report: no arch label at all.
		node("win-arm", "windows", map[string]string{corev1.LabelOSStable: "windows"}, "arm64"),
		// The label is what the scheduler matches, so it wins over the status.
		node("lin-amd", "linux", map[string]string{corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64"}, "arm64"),
	} {
		if _, err := cp.Clientset(t).CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create node %s: %v", n.Name, err)
		}
	}
	res := discoverT(t, cp, Options{})
	want := []string{
		"4 of 8 Nodes are arm64 (kubernetes.io/arch): lin-arm, lin-arm-old, w2, win-arm",
		"1 of 8 Nodes is s390x (kubernetes.io/arch): lin-s390x",
		"Windows node is not amd64: win-arm; kubewin supports Windows nodes on amd64 only",
	}
	got := archNotes(res)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("architecture notes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Notes are in the YAML header, where a reader of the spec sees them.
	y, err := res.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(y), "# NOTE "+want[0]) {
		t.Errorf("YAML does not carry the architecture note:\n%s", y)
	}
	// The architecture changes no value: the arm64 nodes are in the spec like any other.
	if n := findNode(t, res.Cluster, "lin-arm"); n.OS != "linux" {
		t.Errorf("lin-arm: %+v", n)
	}
}
