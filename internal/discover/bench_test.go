package discover

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubewin/kubewin/internal/testenv"
)

const benchNodes = 5000

// BenchmarkDiscover5000Nodes discovers a kubeadm + Calico cluster of 5,000 Nodes (4,900 Linux,
// 100 Windows, kubelet-sized status) in a real kube-apiserver: "api" reads and resolves,
// "api+yaml" also renders the commented YAML the CLI prints. Reported: ns/op (target < 5 s),
// B/op and allocs/op (Go heap allocated per discovery) and peak-heap-MB (largest heap in use
// during one discovery, sampled every 5 ms).
func BenchmarkDiscover5000Nodes(b *testing.B) {
	cp := testenv.StartControlPlane(b)
	ctx := context.Background()
	if err := cp.CreateFiles(ctx, filepath.Join(clustersDir, "crds", "calico.yaml"), filepath.Join(clustersDir, "bench", "objects.yaml")); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	createNodes(b, cp, benchNodes)
	b.Logf("created %d Nodes in %s", benchNodes, time.Since(start).Round(time.Millisecond))

	// Sub-benchmarks share the one cluster (a parent with sub-benchmarks runs once).
	for _, withYAML := range []bool{false, true} {
		name := "api"
		if withYAML {
			name = "api+yaml"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var peak uint64
			for i := 0; i < b.N; i++ {
				runtime.GC()
				stop := sampleHeap(&peak)
				res, err := Discover(ctx, cp.Config, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if withYAML {
					if _, err := res.YAML(); err != nil {
						b.Fatal(err)
					}
				}
				stop()
				if len(res.Cluster.Spec.Nodes) != benchNodes {
					b.Fatalf("discovered %d nodes, want %d", len(res.Cluster.Spec.Nodes), benchNodes)
				}
			}
			b.ReportMetric(float64(atomic.LoadUint64(&peak))/(1<<20), "peak-heap-MB")
		})
	}
}

// sampleHeap records the largest HeapInuse seen until the returned stop is called.
func sampleHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			for {
				old := atomic.LoadUint64(peak)
				if ms.HeapInuse <= old || atomic.CompareAndSwapUint64(peak, old, ms.HeapInuse) {
					break
				}
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// createNodes creates n Node objects shaped like kubelet-registered ones, 32 at a time.
func createNodes(tb testing.TB, cp *testenv.ControlPlane, n int) {
	tb.Helper()
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		tb.Fatal(err)
	}
	jobs := make(chan int)
	errs := make(chan error, 32)
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if _, err := cs.CoreV1().Nodes().Create(context.Background(), benchNode(i), metav1.CreateOptions{}); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		tb.Fatalf("create nodes: %v", err)
	}
}

// Status parts every kubelet reports, so that the objects weigh what real Node objects weigh.
var (
	resources = corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("200Gi"),
	}
	conditions = func() []corev1.NodeCondition {
		now := metav1.Now()
		var out []corev1.NodeCondition
		for _, c := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure, corev1.NodeReady} {
			st, reason := corev1.ConditionFalse, "KubeletHasSufficientResources"
			if c == corev1.NodeReady {
				st, reason = corev1.ConditionTrue, "KubeletReady"
			}
			out = append(out, corev1.NodeCondition{Type: c, Status: st, Reason: reason, Message: "kubelet reports " + string(c),
				LastHeartbeatTime: now, LastTransitionTime: now})
		}
		return out
	}()
	images = func() []corev1.ContainerImage {
		var out []corev1.ContainerImage
		for i := 0; i < 25; i++ {
			out = append(out, corev1.ContainerImage{SizeBytes: int64(10_000_000 + i),
				Names: []string{fmt.Sprintf("registry.example.com/team/app-%02d@sha256:%064d", i, i), fmt.Sprintf("registry.example.com/team/app-%02d:v1.%d", i, i)}})
		}
		return out
	}()
)

func benchNode(i int) *corev1.Node {
	ip := fmt.Sprintf("10.%d.%d.%d", 1+i/(250*250), (i/250)%250, 1+i%250)
	cidr := fmt.Sprintf("10.%d.%d.0/24", 64+i/256, i%256)
	os, build, kernel, rt := "linux", "", "6.8.0-45-generic", "containerd://2.1.4"
	labels := map[string]string{corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64", corev1.LabelHostname: fmt.Sprintf("node-%05d", i)}
	annotations := map[string]string{annotationCalicoIPv4: ip + "/16"}
	var taints []corev1.Taint
	if i%50 == 49 {
		os, build, kernel = "windows", "10.0.20348", "10.0.20348.2849"
		labels[corev1.LabelOSStable] = "windows"
		labels[labelWindowsBuild] = build
		annotations = nil
		taints = []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}}
	}
	if i < 3 {
		labels[labelControlPlane] = ""
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%05d", i), Labels: labels, Annotations: annotations},
		Spec:       corev1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}, Taints: taints},
		Status: corev1.NodeStatus{
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: fmt.Sprintf("node-%05d", i)}},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.1", ContainerRuntimeVersion: rt, OperatingSystem: os,
				Architecture: "amd64", KernelVersion: kernel, OSImage: "bench"},
			Capacity:    resources,
			Allocatable: resources,
			Conditions:  conditions,
			Images:      images,
		},
	}
}
