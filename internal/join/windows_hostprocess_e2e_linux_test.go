package join_test

// The Windows join of design flannel/hostprocess against a real control plane and winnode.MemHost
// (see windows_e2e_linux_test.go for what the harness plays). The cluster side is real: the
// DaemonSet kubewin renders (render.FlannelWindowsDaemonSet) is applied to the API server and
// kube-controller-manager's DaemonSet controller makes its pod for the Windows Node. What the
// harness plays in place of Windows and its kubelet, per scenario: the scheduler's binding of
// that pod, the kubelet's status of it (Running, CrashLoopBackOff, ImagePullBackOff), the
// container log file the kubelet writes (C:\var\log\pods\<ns>_<pod>_<uid>\<container>\N.log,
// k8s.io/kubernetes pkg/kubelet/kuberuntime/helpers.go BuildContainerLogsDirectory) and, through
// MemHost.RunHostProcess, the HostProcess container creating flanneld's HNS network.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"

	kwbootstrap "github.com/kubewin/kubewin/internal/bootstrap"
	"github.com/kubewin/kubewin/internal/join"
	"github.com/kubewin/kubewin/internal/nodestatus"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/winnode"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

const hostProcessSpec = `apiVersion: kubewin.io/v1alpha1
kind: Cluster
metadata:
  name: win-e2e
spec:
  kubernetesVersion: v1.37.1
  design: flannel/hostprocess
  linuxCNI:
    type: flannel
    flannel: {backend: vxlan, vni: 4096, port: 4789}
  networking:
    podCIDRs: [10.244.0.0/16]
    serviceCIDR: 10.96.0.0/12
    clusterDNS: 10.96.0.10
    nodeCIDRMaskSize: 24
    apiServerEndpoint: %s
  nodes:
  - name: cp1
    os: linux
    role: control-plane
    nics:
    - {name: eth0, ip: 192.168.7.10, prefix: 24, gateway: 192.168.7.1}
`

// cniPlay is what the harness does with the CNI pod once it is bound to the node.
type cniPlay func(ctx context.Context, w *windowsJoin, pod *corev1.Pod) error

// newHostProcessJoin publishes the flannel/hostprocess description, applies the rendered
// flannel Windows DaemonSet, stages binaries with win-overlay, and plays the CNI pod with play.
func newHostProcessJoin(t *testing.T, play cniPlay) (*windowsJoin, *plan.Plan) {
	t.Helper()
	w := newWindowsJoin(t)
	ctx := context.Background()
	u, err := url.Parse(w.cp.Host)
	if err != nil {
		t.Fatal(err)
	}
	spec := fmt.Sprintf(hostProcessSpec, u.Host)
	if _, err := kwbootstrap.Publish(ctx, w.admin, []byte(spec)); err != nil {
		t.Fatal(err)
	}
	c, _, err := v1alpha1.Parse("cluster.yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.New(c)
	if err != nil {
		t.Fatal(err)
	}
	// The flannel delegate of a vxlan node is win-overlay (official CNI plugins release).
	data := []byte("windows binary cni/win-overlay.exe")
	writeFile(t, filepath.Join(w.binaries, "cni", "win-overlay.exe"), string(data))
	sums, err := os.ReadFile(filepath.Join(w.binaries, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.binaries, "SHA256SUMS"), string(sums)+sha256Hex(data)+"  cni/win-overlay.exe\n")

	manifest, err := render.FlannelWindowsDaemonSet(p)
	if err != nil {
		t.Fatal(err)
	}
	hp := p.HostProcess.Flannel
	if _, err := w.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hp.Namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.admin.CoreV1().ServiceAccounts(hp.Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: hp.ServiceAccount}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(manifest), "\n---\n") {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("decode the rendered manifest: %v", err)
		}
		switch o := obj.(type) {
		case *corev1.ConfigMap:
			_, err = w.admin.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *appsv1.DaemonSet:
			_, err = w.admin.AppsV1().DaemonSets(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			err = fmt.Errorf("unexpected %T", obj)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	startCNIPlay(t, w, hp.Namespace, hp.Name, play)
	return w, p
}

// startCNIPlay plays the pod of DaemonSet ns/ds on the Windows Node until the test ends.
func startCNIPlay(t *testing.T, w *windowsJoin, ns, ds string, play cniPlay) {
	t.Helper()
	pctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- playCNIPod(pctx, w, ns, ds, play) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("harness CNI pod: %v", err)
		}
	})
}

const calicoHostProcessSpec = `apiVersion: kubewin.io/v1alpha1
kind: Cluster
metadata:
  name: win-e2e-calico
spec:
  kubernetesVersion: v1.37.1
  design: calico/hostprocess
  linuxCNI:
    type: calico
    calico: {ipipMode: Never, vxlanMode: Always, strictAffinity: true, windowsDataplane: HNS, bgp: Disabled}
  networking:
    podCIDRs: [10.244.0.0/16]
    serviceCIDR: 10.96.0.0/12
    clusterDNS: 10.96.0.10
    apiServerEndpoint: %s
  windows:
    daemonSets:
    - {namespace: calico-system, name: calico-node-windows, component: calico-node, hostProcess: true}
  nodes:
  - name: cp1
    os: linux
    role: control-plane
    nics:
    - {name: eth0, ip: 192.168.7.10, prefix: 24, gateway: 192.168.7.1}
`

// newCalicoHostProcessJoin is a Calico cluster as discover finds one that was set up without
// node CIDRs (kubeadm init without --pod-network-cidr): kube-controller-manager allocates none,
// so the Windows Node never gets a spec.podCIDR. It publishes the calico/hostprocess description
// (the operator's calico-node-windows listed as the HostProcess CNI DaemonSet), applies that
// DaemonSet as the Tigera operator renders it for windowsDataplane HNS (tigera/operator
// pkg/render/windows.go: calico-node-windows in calico-system, ServiceAccount calico-node,
// HostProcess containers on Windows nodes) and plays its pod with play.
func newCalicoHostProcessJoin(t *testing.T, play cniPlay) (*windowsJoin, *plan.Plan) {
	t.Helper()
	w := newWindowsJoin(t, "--allocate-node-cidrs=false")
	ctx := context.Background()
	u, err := url.Parse(w.cp.Host)
	if err != nil {
		t.Fatal(err)
	}
	spec := fmt.Sprintf(calicoHostProcessSpec, u.Host)
	if _, err := kwbootstrap.Publish(ctx, w.admin, []byte(spec)); err != nil {
		t.Fatal(err)
	}
	c, _, err := v1alpha1.Parse("cluster.yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.New(c)
	if err != nil {
		t.Fatal(err)
	}
	const ns, name, sa = "calico-system", "calico-node-windows", "calico-node"
	if _, err := w.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hostProcess, system := true, `NT AUTHORITY\system`
	labels := map[string]string{"k8s-app": name}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: sa,
					HostNetwork:        true,
					NodeSelector:       map[string]string{"kubernetes.io/os": "windows"},
					SecurityContext: &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
						HostProcess: &hostProcess, RunAsUserName: &system}},
					Containers: []corev1.Container{{Name: "node", Image: "docker.io/calico/node-windows:v3.30.0"}},
				},
			},
		},
	}
	if _, err := w.admin.AppsV1().DaemonSets(ns).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	startCNIPlay(t, w, ns, name, play)
	return w, p
}

// playCNIPod waits for the DaemonSet controller's pod for the Windows Node, binds it there (the
// scheduler's part) and hands it to play (the kubelet's and the container's part).
func playCNIPod(ctx context.Context, w *windowsJoin, ns, ds string, play cniPlay) error {
	for {
		pods, err := w.admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err == nil {
			for i := range pods.Items {
				pod := &pods.Items[i]
				if !strings.HasPrefix(pod.Name, ds+"-") {
					continue
				}
				if pod.Spec.NodeName == "" {
					b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name}, Target: corev1.ObjectReference{Kind: "Node", Name: winNode}}
					if err := w.admin.CoreV1().Pods(ns).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
						return fmt.Errorf("bind %s: %w", pod.Name, err)
					}
					if pod, err = w.admin.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{}); err != nil {
						return err
					}
				}
				return play(ctx, w, pod)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// setStatus is the kubelet's status update of the pod.
func setStatus(ctx context.Context, w *windowsJoin, pod *corev1.Pod, phase corev1.PodPhase, st corev1.ContainerStatus) error {
	pod, err := w.admin.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	pod.Status.Phase = phase
	ready := corev1.ConditionFalse
	if st.Ready {
		ready = corev1.ConditionTrue
	}
	st.Name, st.Image = pod.Spec.Containers[0].Name, pod.Spec.Containers[0].Image
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: ready}}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{st}
	_, err = w.admin.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	return err
}

// writeContainerLog writes the container's log as the kubelet does (CRI log format).
func writeContainerLog(w *windowsJoin, pod *corev1.Pod, n int, lines ...string) error {
	dir := filepath.Join(w.paths.PodLogsDir, pod.Namespace+"_"+pod.Name+"_"+string(pod.UID), pod.Spec.Containers[0].Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "2026-11-28T20:00:00.000000000Z stderr F %s\n", l)
	}
	return os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.log", n)), []byte(b.String()), 0o644)
}

// cniNetwork is the network flanneld's pod makes for the Node's pod CIDR.
func cniNetwork(ctx context.Context, w *windowsJoin, p *plan.Plan) (winnode.NetworkSpec, error) {
	var n *corev1.Node
	for n == nil || n.Spec.PodCIDR == "" {
		var err error
		if n, err = w.admin.CoreV1().Nodes().Get(ctx, winNode, metav1.GetOptions{}); err != nil {
			return winnode.NetworkSpec{}, err
		}
		if n.Spec.PodCIDR == "" {
			select {
			case <-ctx.Done():
				return winnode.NetworkSpec{}, ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	gw := strings.TrimSuffix(n.Spec.PodCIDR, "0/24") + "1"
	return winnode.NetworkSpec{Name: p.HostProcess.NetworkName, Type: p.HostProcess.NetworkType, Prefix: n.Spec.PodCIDR, Gateway: gw,
		AdapterName: winAdapter, VSID: 4096}, nil
}

func TestWindowsJoinHostProcess(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root like the other join tests (CI runs as root)")
	}
	t.Run("the CNI pod makes its network: joined, no network made by kubewin; after a reboot the node service reports it missing and makes none", func(t *testing.T) {
		var p *plan.Plan
		var w *windowsJoin
		w, p = newHostProcessJoin(t, func(ctx context.Context, w *windowsJoin, pod *corev1.Pod) error {
			if err := setStatus(ctx, w, pod, corev1.PodPending, corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}); err != nil {
				return err
			}
			spec, err := cniNetwork(ctx, w, p)
			if err != nil {
				return err
			}
			// flanneld makes the network a while after its start.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(2 * time.Second):
			}
			if _, err := w.mem.RunHostProcess(pod.Namespace+"/"+pod.Name, spec); err != nil {
				return err
			}
			return setStatus(ctx, w, pod, corev1.PodRunning, corev1.ContainerStatus{Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
		})
		ctx := context.Background()
		var log strings.Builder
		o := w.options()
		o.Log = &log
		if _, err := join.Run(ctx, o, w.host, w.paths); err != nil {
			t.Fatalf("join: %v\n%s", err, log.String())
		}
		if made := w.mem.NetworksMadeByHost(); len(made) != 0 {
			t.Fatalf("kubewin made HNS networks %v; events %v", made, w.mem.Events())
		}
		if nets := w.mem.Networks(); len(nets) != 1 || nets[0].Name != p.HostProcess.NetworkName {
			t.Fatalf("HNS networks %+v, want only the CNI pod's %s", nets, p.HostProcess.NetworkName)
		}
		for _, svc := range []string{"kube-proxy", "flanneld"} {
			if _, ok := w.mem.ServiceDefinition(svc); ok {
				t.Errorf("service %s installed; it is a HostProcess pod in this design", svc)
			}
		}
		for _, svc := range []string{"containerd", "kubelet"} {
			if w.mem.State(svc) != winnode.ServiceRunning {
				t.Errorf("service %s is %v", svc, w.mem.State(svc))
			}
		}
		for _, d := range []string{w.paths.CNIConfDir, w.paths.CNIBinDir} {
			if _, err := os.Stat(d); err != nil {
				t.Errorf("CNI directory: %v", err)
			}
		}
		if confs, _ := os.ReadDir(w.paths.CNIConfDir); len(confs) != 0 {
			t.Errorf("kubewin wrote CNI configuration %v into the directory the CNI pod owns", confs)
		}

		// A reboot (networks do not persist in the default model); the pod is not back yet.
		w.mem.Reboot()
		ws := &join.WindowsNodeService{Host: w.host, Paths: w.paths}
		_, err := ws.Repair(ctx)
		var problem *nodestatus.Problem
		if !errors.As(err, &problem) || problem.Reason != nodestatus.ReasonCNINetworkFailing || !strings.Contains(err.Error(), "HNS network "+p.HostProcess.NetworkName+" does not exist") {
			t.Fatalf("node service after a reboot: %v (%#v)", err, problem)
		}
		if made := w.mem.NetworksMadeByHost(); len(made) != 0 || len(w.mem.Networks()) != 0 {
			t.Fatalf("the node service made HNS networks %v (%+v)", made, w.mem.Networks())
		}
		if w.mem.State("kubelet") != winnode.ServiceRunning {
			t.Errorf("the node service did not start the kubelet (it runs the CNI pod): %v", w.mem.State("kubelet"))
		}
		// The services it reports and reads logs of are this design's (its host effects):
		// kube-proxy is the cluster's HostProcess pod here, never a service waiting for join.
		var reported []string
		for _, ss := range ws.Status().Services {
			reported = append(reported, ss.Name)
		}
		m, merr := ws.Manifest()
		if merr != nil {
			t.Fatal(merr)
		}
		var logged []string
		for _, svc := range m.Services {
			logged = append(logged, svc.Name)
		}
		if want := []string{"containerd", "kubelet"}; !slices.Equal(reported, want) || !slices.Equal(logged, want) {
			t.Errorf("node service reports services %v and reads the logs of %v, want %v", reported, logged, want)
		}
		t.Logf("node condition after a reboot: %s: %s", problem.Reason, err)
	})

	t.Run("calico without node CIDRs: joined once calico-node-windows runs and its network exists, no pod CIDR awaited; after a reboot the node service reports it missing and makes none", func(t *testing.T) {
		w, p := newCalicoHostProcessJoin(t, func(ctx context.Context, w *windowsJoin, pod *corev1.Pod) error {
			if err := setStatus(ctx, w, pod, corev1.PodPending, corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}); err != nil {
				return err
			}
			// calico-node-windows makes the Overlay network "Calico" over the node's first IPAM
			// block (a /26 of the pool, not a pod CIDR) with Felix's VXLAN VNI, 4096
			// (projectcalico/calico felix/config/config_params.go VXLANVNI default).
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(2 * time.Second):
			}
			spec := winnode.NetworkSpec{Name: "Calico", Type: "Overlay", Prefix: "10.244.37.64/26",
				Gateway: "10.244.37.65", AdapterName: winAdapter, VSID: 4096}
			if _, err := w.mem.RunHostProcess(pod.Namespace+"/"+pod.Name, spec); err != nil {
				return err
			}
			return setStatus(ctx, w, pod, corev1.PodRunning, corev1.ContainerStatus{Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
		})
		if p.HostProcess.NetworkName != "Calico" || p.HostProcess.NetworkType != "Overlay" {
			t.Fatalf("plan: network %s %s, want Calico Overlay", p.HostProcess.NetworkName, p.HostProcess.NetworkType)
		}
		ctx := context.Background()
		var log strings.Builder
		o := w.options()
		o.Log = &log
		res, err := join.Run(ctx, o, w.host, w.paths)
		if err != nil {
			t.Fatalf("join: %v\n%s", err, log.String())
		}
		node, err := w.admin.CoreV1().Nodes().Get(ctx, winNode, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if node.Spec.PodCIDR != "" || res.PodCIDR != "" {
			t.Fatalf("pod CIDR: the Node has %q, join reports %q; this cluster allocates none", node.Spec.PodCIDR, res.PodCIDR)
		}
		st, err := join.ReadState(w.paths)
		if err != nil || !st.Joined || !st.WithoutPodCIDR || st.PodCIDR != "" {
			t.Fatalf("join state %+v (%v): want joined, planned without a pod CIDR", st, err)
		}
		if made := w.mem.NetworksMadeByHost(); len(made) != 0 {
			t.Fatalf("kubewin made HNS networks %v; events %v", made, w.mem.Events())
		}
		if nets := w.mem.Networks(); len(nets) != 1 || nets[0].Name != "Calico" {
			t.Fatalf("HNS networks %+v, want only calico-node-windows' Calico", nets)
		}
		if _, ok := w.mem.ServiceDefinition("kube-proxy"); ok {
			t.Error("service kube-proxy installed; it is a HostProcess pod in this design")
		}
		if confs, _ := os.ReadDir(w.paths.CNIConfDir); len(confs) != 0 {
			t.Errorf("kubewin wrote CNI configuration %v into the directory calico-node-windows owns", confs)
		}

		// A reboot; calico-node-windows is not back yet. The node service plans the node from
		// the state (no pod CIDR) and watches the network it does not make.
		w.mem.Reboot()
		ws := &join.WindowsNodeService{Host: w.host, Paths: w.paths}
		_, err = ws.Repair(ctx)
		var problem *nodestatus.Problem
		if !errors.As(err, &problem) || problem.Reason != nodestatus.ReasonCNINetworkFailing ||
			!strings.Contains(err.Error(), "HNS network Calico does not exist") || !strings.Contains(err.Error(), "calico-system/calico-node-windows") {
			t.Fatalf("node service after a reboot: %v (%#v)", err, problem)
		}
		if made := w.mem.NetworksMadeByHost(); len(made) != 0 || len(w.mem.Networks()) != 0 {
			t.Fatalf("the node service made HNS networks %v (%+v)", made, w.mem.Networks())
		}
		if w.mem.State("kubelet") != winnode.ServiceRunning {
			t.Errorf("the node service did not start the kubelet (it runs calico-node-windows): %v", w.mem.State("kubelet"))
		}
		t.Logf("node condition after a reboot: %s: %s", problem.Reason, err)
	})

	crash := func(ctx context.Context, w *windowsJoin, pod *corev1.Pod) error {
		if err := writeContainerLog(w, pod, 3, "I1128 flanneld starting", "E1128 main.go:350] Error registering network: VNI 1 is not supported on Windows: VXLAN needs VNI >= 4096"); err != nil {
			return err
		}
		return setStatus(ctx, w, pod, corev1.PodRunning, corev1.ContainerStatus{RestartCount: 4,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 1m20s restarting failed container"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}})
	}
	pull := func(ctx context.Context, w *windowsJoin, pod *corev1.Pod) error {
		return setStatus(ctx, w, pod, corev1.PodPending, corev1.ContainerStatus{
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0"`}}})
	}
	for _, c := range []struct {
		name string
		play cniPlay
		want []string
	}{
		{"CrashLoopBackOff", crash, []string{"CrashLoopBackOff, 4 restarts", "last exit code 1", "its log ends: E1128 main.go:350] Error registering network: VNI 1 is not supported on Windows"}},
		{"image pull", pull, []string{"cannot be pulled (ImagePullBackOff)", "Back-off pulling image"}},
	} {
		t.Run(c.name+" is named within the bound", func(t *testing.T) {
			w, _ := newHostProcessJoin(t, c.play)
			o := w.options()
			o.Timeout = 20 * time.Second
			var log strings.Builder
			o.Log = &log
			_, err := join.Run(context.Background(), o, w.host, w.paths)
			if err == nil {
				t.Fatalf("join succeeded with a failing CNI pod\n%s", log.String())
			}
			msg := err.Error()
			for _, want := range append([]string{"pod network: not within 20s", "HNS network flannel.4096 does not exist"}, c.want...) {
				if !strings.Contains(msg, want) {
					t.Errorf("join's error lacks %q:\n%s", want, msg)
				}
			}
			if made := w.mem.NetworksMadeByHost(); len(made) != 0 {
				t.Errorf("kubewin made HNS networks %v", made)
			}
		})
	}
}
