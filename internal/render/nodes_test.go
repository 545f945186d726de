package render

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/kubernetes/pkg/controller/nodeipam/ipam"

	"github.com/kubewin/kubewin/internal/testenv"
)

// TestWindowsNodeObjectsKeepTheirPodCIDR (issue 11 item 10): the Node objects of
// cluster/windows-nodes.yaml, applied to a real kube-apiserver before any kubelet registers,
// keep their pod CIDR while kube-controller-manager's range allocator — its real code
// (k8s.io/kubernetes/pkg/controller/nodeipam/ipam, the --allocate-node-cidrs allocator), run
// in-process against that API server — hands CIDRs to Linux nodes that register without one;
// no other node gets the Windows node's CIDR; and a kubelet registering under the same name
// meets the existing object (AlreadyExists), which it adopts.
func TestWindowsNodeObjectsKeepTheirPodCIDR(t *testing.T) {
	p := examplePlan(t)
	data, err := WindowsNodeObjects(p)
	if err != nil || len(data) == 0 {
		t.Fatalf("windows-nodes.yaml: %v (%d bytes)", err, len(data))
	}
	file := filepath.Join(t.TempDir(), "windows-nodes.yaml")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cp := testenv.StartControlPlane(t, testenv.WithServiceCIDR(p.Networking.ServiceCIDR))
	client := cp.Clientset(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := cp.CreateFiles(ctx, file); err != nil {
		t.Fatal(err)
	}
	// Linux kubelets register without a pod CIDR (their spec CIDRs are what the allocator will
	// give them; the test only needs them to compete for the same range).
	var linux []string
	for _, n := range p.Nodes {
		if n.Windows == nil {
			linux = append(linux, n.Name)
			if _, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var clusterCIDRs []*net.IPNet
	for _, c := range p.Networking.ClusterCIDRs {
		_, n, err := net.ParseCIDR(c)
		if err != nil {
			t.Fatal(err)
		}
		clusterCIDRs = append(clusterCIDRs, n)
	}
	_, svc, err := net.ParseCIDR(p.Networking.ServiceCIDR)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	alloc, err := ipam.NewCIDRRangeAllocator(ctx, client, factory.Core().V1().Nodes(), ipam.CIDRAllocatorParams{
		ClusterCIDRs: clusterCIDRs, ServiceCIDR: svc, NodeCIDRMaskSizes: []int{p.Networking.NodeCIDRMaskSize}}, nodes)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	go alloc.Run(ctx)
	t.Cleanup(factory.Shutdown)
	t.Cleanup(cancel)

	got := map[string]string{}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, n := range l.Items {
			got[n.Name] = n.Spec.PodCIDR
		}
		for _, n := range linux {
			if got[n] == "" {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the range allocator did not give every Linux node a pod CIDR: %v (%v)", err, got)
	}
	want := ""
	for _, n := range p.Nodes {
		if n.Name == "node009" {
			want = n.PodCIDR
		}
	}
	if got["node009"] != want {
		t.Errorf("node009 podCIDR = %q after the allocator ran, want the planned %q", got["node009"], want)
	}
	for _, n := range linux {
		if got[n] == want {
			t.Errorf("%s was given node009's pod CIDR %s", n, want)
		}
	}
	// The kubelet's registration: create, AlreadyExists, then it reads and reconciles the
	// existing Node (pkg/kubelet/kubelet_node_status.go tryRegisterWithAPIServer).
	_, err = client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node009"}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		t.Errorf("kubelet-style registration of node009: err = %v, want AlreadyExists", err)
	}
	n9, err := client.CoreV1().Nodes().Get(ctx, "node009", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(n9.Spec.Taints) == 0 || n9.Labels["kubernetes.io/os"] != "windows" {
		t.Errorf("node009 lost the planned taints/labels: %+v %v", n9.Spec.Taints, n9.Labels)
	}
}
