package discover

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	daemonutil "k8s.io/kubernetes/pkg/controller/daemon/util"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/testenv"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func prereqIDs(res *Result) []string {
	var out []string
	for _, p := range res.WindowsPrerequisites {
		out = append(out, p.ID)
	}
	sort.Strings(out)
	return out
}

// windowsNodeObject is a Node as a Windows kubelet registers it with kubewin's taint.
func windowsNodeObject(name string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			corev1.LabelOSStable: "windows", corev1.LabelArchStable: "amd64", corev1.LabelHostname: name,
			"node.kubernetes.io/windows-build": "10.0.20348"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}}},
	}
}

// withWindowsNode completes a discovered spec as its operator would: the nodes with their NICs,
// one of them a Windows node to join.
func withWindowsNode(c *v1alpha1.Cluster, linuxIP, windowsIP string) {
	c.Spec.Nodes = []v1alpha1.Node{
		{Name: "cp1", OS: v1alpha1.OSLinux, Role: v1alpha1.RoleControlPlane, NICs: []v1alpha1.NIC{{Name: "eth0", IP: linuxIP, Prefix: 24}}},
		{Name: "win-1", OS: v1alpha1.OSWindows, WindowsBuild: "ltsc2022", NICs: []v1alpha1.NIC{{Name: "Ethernet", IP: windowsIP, Prefix: 24}}},
	}
}

// applyRendered server-side applies every object of the rendered cluster/hostprocess files, as
// `kubectl apply --server-side --field-manager=kubewin` does, with strict field validation.
func applyRendered(t *testing.T, cp *testenv.ControlPlane, c *v1alpha1.Cluster) map[string]int {
	t.Helper()
	p, err := plan.New(c)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	files, err := render.Render(p)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kinds := map[string]int{}
	for _, f := range files {
		if !strings.HasPrefix(f.Path, "cluster/hostprocess/") {
			continue
		}
		objs, err := testenv.DecodeObjects(f.Data)
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		for _, o := range objs {
			gvk := o.GroupVersionKind()
			m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				t.Fatalf("%s: %s is not served: %v", f.Path, gvk, err)
			}
			var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
			if m.Scope.Name() == meta.RESTScopeNameNamespace {
				ri = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
			}
			body, err := json.Marshal(o.Object)
			if err != nil {
				t.Fatal(err)
			}
			// As each file's header says: calico-windows.yaml takes its fields over
			// (--force-conflicts); the DaemonSets and their ConfigMaps are kubewin's own.
			force := strings.HasSuffix(f.Path, "calico-windows.yaml")
			if _, err := ri.Patch(ctx, o.GetName(), types.ApplyPatchType, body,
				metav1.PatchOptions{FieldManager: "kubewin", FieldValidation: "Strict", Force: &force}); err != nil {
				t.Fatalf("%s: server-side apply %s %s: %v", f.Path, gvk.Kind, o.GetName(), err)
			}
			kinds[gvk.Kind]++
		}
	}
	return kinds
}

// checkSchedules reads a DaemonSet back and decides, with the predicates the DaemonSet
// controller uses (kubernetes v1.37.1 pkg/controller/daemon/daemon_controller.go NewPod and
// predicates: required node affinity from the pod template, and no untolerated
// NoSchedule/NoExecute taint), on which of the nodes it runs. The Nodes were created through
// the API, so the TaintNodesByCondition admission plugin gave them node.kubernetes.io/not-ready
// as a kubelet's new Node gets it: a CNI DaemonSet must tolerate it to bring the node up.
// A pod bound to each such node must pass the API server's validation (HostProcess rules) in a
// dry run.
func checkSchedules(t *testing.T, cp *testenv.ControlPlane, ns, name string, nodes []*corev1.Node) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := cp.Clientset(t)
	ds, err := cs.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get DaemonSet %s/%s: %v", ns, name, err)
	}
	var runs []string
	for _, n := range nodes {
		pod := &corev1.Pod{ObjectMeta: *ds.Spec.Template.ObjectMeta.DeepCopy(), Spec: *ds.Spec.Template.Spec.DeepCopy()}
		// The tolerations the DaemonSet controller adds to every daemon pod (NewPod).
		daemonutil.AddOrUpdateDaemonPodTolerations(&pod.Spec)
		affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
		fits, _ := affinity.Match(n)
		_, untolerated := v1helper.FindMatchingUntoleratedTaint(logr.Discard(), n.Spec.Taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoExecute || t.Effect == corev1.TaintEffectNoSchedule
		}, false)
		if !fits || untolerated {
			continue
		}
		runs = append(runs, n.Name)
		pod.Namespace, pod.Name, pod.Spec.NodeName = ns, name+"-"+n.Name, n.Name
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"}); err != nil {
			t.Errorf("a %s pod on %s is refused: %v", name, n.Name, err)
		}
	}
	return runs
}

func TestDiscoverCalicoOperatorForWindows(t *testing.T) {
	cp := startCluster(t, "calico-operator", "10.96.0.0/12", true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := discoverT(t, cp, Options{})
	s := res.Cluster.Spec
	want(t, res, "spec.design", s.Design, v1alpha1.DesignCalicoHostProcess, "Installation default")
	want(t, res, "spec.networking.apiServerEndpoint", s.Networking.APIServerEndpoint, "10.0.0.10:6443", "controlPlaneEndpoint")
	want(t, res, "spec.linuxCNI.calico.strictAffinity", *s.LinuxCNI.Calico.StrictAffinity, false, "IPAMConfig default (crd.projectcalico.org/v1) spec.strictAffinity")
	want(t, res, "spec.linuxCNI.calico.windowsDataplane", s.LinuxCNI.Calico.WindowsDataplane, "Disabled", "the operator's default Disabled")
	want(t, res, "spec.linuxCNI.calico.bgp", s.LinuxCNI.Calico.BGP, "Disabled", "spec.calicoNetwork.bgp")
	want(t, res, "spec.linuxCNI.calico.vxlanMode", s.LinuxCNI.Calico.VXLANMode, "Always", "IPPool default-ipv4-ippool")
	wantIDs := []string{"calico-service-cidrs", "calico-services-endpoint", "calico-strict-affinity", "calico-windows-dataplane", "kube-proxy-windows-daemonset"}
	if got := prereqIDs(res); !reflect.DeepEqual(got, wantIDs) {
		t.Errorf("prerequisites = %v, want %v", got, wantIDs)
	}
	for _, p := range res.WindowsPrerequisites {
		if p.Fix == "" || p.Source == "" || p.Problem == "" {
			t.Errorf("prerequisite without problem, source or fix: %+v", p)
		}
	}
	y, err := res.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(y), "# WINDOWS calico-strict-affinity: strictAffinity is false") {
		t.Errorf("the YAML does not name the prerequisites:\n%s", y)
	}

	// The operator of the cluster adds the Windows node; kubewin plans and renders, and the
	// rendered objects are applied to the API server.
	c := res.Cluster
	withWindowsNode(c, "10.0.0.10", "10.0.0.31")
	kinds := applyRendered(t, cp, c)
	if !reflect.DeepEqual(kinds, map[string]int{"ConfigMap": 2, "DaemonSet": 1, "IPAMConfig": 1, "Installation": 1}) {
		t.Errorf("applied %v", kinds)
	}
	// The Installation keeps what the operator's user wrote and gains the Windows fields.
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := dyn.Resource(operatorGVR("installations")).Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pools, _, _ := unstructured.NestedSlice(inst.Object, "spec", "calicoNetwork", "ipPools")
	dp, _, _ := unstructured.NestedString(inst.Object, "spec", "calicoNetwork", "windowsDataplane")
	bgp, _, _ := unstructured.NestedString(inst.Object, "spec", "calicoNetwork", "bgp")
	svc, _, _ := unstructured.NestedStringSlice(inst.Object, "spec", "serviceCIDRs")
	bin, _, _ := unstructured.NestedString(inst.Object, "spec", "windowsNodes", "cniBinDir")
	if len(pools) != 1 || dp != "HNS" || bgp != "Disabled" || !reflect.DeepEqual(svc, []string{"10.96.0.0/12"}) || bin != `C:\k\cni\bin` {
		t.Errorf("Installation after apply: pools %v windowsDataplane %q bgp %q serviceCIDRs %v cniBinDir %q", pools, dp, bgp, svc, bin)
	}

	nodes := []*corev1.Node{windowsNodeObject("win-1")}
	cpNode, err := cp.Clientset(t).CoreV1().Nodes().Get(ctx, "cp1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodes = append(nodes, cpNode)
	if _, err := cp.Clientset(t).CoreV1().Nodes().Create(ctx, nodes[0], metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if runs := checkSchedules(t, cp, "kube-system", "kube-proxy-windows", nodes); !reflect.DeepEqual(runs, []string{"win-1"}) {
		t.Errorf("kube-proxy-windows runs on %v, want win-1 only", runs)
	}

	// Discovered again, the cluster lacks nothing for Windows.
	again := discoverT(t, cp, Options{})
	if len(again.WindowsPrerequisites) != 0 {
		t.Errorf("prerequisites after applying the plan: %+v", again.WindowsPrerequisites)
	}
	as := again.Cluster.Spec
	if !*as.LinuxCNI.Calico.StrictAffinity || as.LinuxCNI.Calico.WindowsDataplane != "HNS" {
		t.Errorf("after apply: calico %+v", as.LinuxCNI.Calico)
	}
	wantDS := []v1alpha1.WindowsDaemonSet{{Namespace: "kube-system", Name: "kube-proxy-windows", Component: "kube-proxy", HostProcess: true}}
	if !reflect.DeepEqual(as.Windows.DaemonSets, wantDS) {
		t.Errorf("Windows DaemonSets = %+v, want %+v", as.Windows.DaemonSets, wantDS)
	}
	// The services-endpoint ConfigMap kubewin wrote agrees with kubeadm's controlPlaneEndpoint.
	if p := again.Provenance["spec.networking.apiServerEndpoint"]; !strings.Contains(p.Source, "kubernetes-services-endpoint") ||
		len(p.Agrees) != 1 || !strings.Contains(p.Agrees[0], "controlPlaneEndpoint") {
		t.Errorf("apiServerEndpoint provenance = %+v, want the services-endpoint ConfigMap agreeing with kubeadm", p)
	}
	// A second plan of the discovered spec renders no kube-proxy DaemonSet: the cluster has one.
	c2 := again.Cluster
	withWindowsNode(c2, "10.0.0.10", "10.0.0.31")
	p2, err := plan.New(c2)
	if err != nil {
		t.Fatal(err)
	}
	if p2.HostProcess.KubeProxy != nil || p2.HostProcess.Calico.SetStrictAffinity {
		t.Errorf("second plan: %+v", p2.HostProcess)
	}
}

func TestDiscoverFlannelForWindows(t *testing.T) {
	cp := startCluster(t, "flannel", "10.96.0.0/12", false)
	res := discoverT(t, cp, Options{KubeconfigCluster: "flannel-lab"})
	s := res.Cluster.Spec
	want(t, res, "spec.design", s.Design, v1alpha1.DesignFlannelHostProcess, "HostProcess")
	host := strings.TrimPrefix(cp.Host, "https://")
	want(t, res, "spec.networking.apiServerEndpoint", s.Networking.APIServerEndpoint, host, "the API server URL discover used")
	if !containsNote(res, "the cluster runs flannel v0.27.0 (DaemonSet kube-flannel/kube-flannel-ds)") {
		t.Errorf("notes lack the flannel release: %q", res.Notes)
	}
	wantIDs := []string{"flannel-vxlan-port", "flannel-vxlan-vni", "flannel-windows-daemonset", "kube-proxy-windows-daemonset"}
	if got := prereqIDs(res); !reflect.DeepEqual(got, wantIDs) {
		t.Errorf("prerequisites = %v, want %v", got, wantIDs)
	}
	// The spec is refused for Windows nodes as it is (VNI 1, port 8472) ...
	c := res.Cluster
	withWindowsNode(c, "192.168.56.11", "192.168.56.31")
	var fields []string
	for _, e := range v1alpha1.Validate(c) {
		fields = append(fields, e.Field)
	}
	if !reflect.DeepEqual(fields, []string{"spec.linuxCNI.flannel.port", "spec.linuxCNI.flannel.vni"}) {
		t.Errorf("validation of the discovered spec with a Windows node: %v, want the VNI and port refused", fields)
	}

	// ... so the fix is applied to the cluster's net-conf.json (Linux flannel would restart).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := cp.Clientset(t)
	cm, err := cs.CoreV1().ConfigMaps("kube-flannel").Get(ctx, "kube-flannel-cfg", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["net-conf.json"] = `{"Network": "10.244.0.0/16", "Backend": {"Type": "vxlan", "VNI": 4096, "Port": 4789}}`
	if _, err := cs.CoreV1().ConfigMaps("kube-flannel").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	res = discoverT(t, cp, Options{KubeconfigCluster: "flannel-lab"})
	if got := prereqIDs(res); !reflect.DeepEqual(got, []string{"flannel-windows-daemonset", "kube-proxy-windows-daemonset"}) {
		t.Errorf("prerequisites after the net-conf fix = %v", got)
	}
	c = res.Cluster
	withWindowsNode(c, "192.168.56.11", "192.168.56.31")
	kinds := applyRendered(t, cp, c)
	if !reflect.DeepEqual(kinds, map[string]int{"ConfigMap": 2, "DaemonSet": 2}) {
		t.Errorf("applied %v", kinds)
	}
	lab1, err := cs.CoreV1().Nodes().Get(ctx, "lab-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	win := windowsNodeObject("win-1")
	if _, err := cs.CoreV1().Nodes().Create(ctx, win, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nodes := []*corev1.Node{lab1, win}
	for _, d := range []struct{ ns, name string }{{"kube-flannel", "kube-flannel-ds-windows"}, {"kube-system", "kube-proxy-windows"}} {
		if runs := checkSchedules(t, cp, d.ns, d.name, nodes); !reflect.DeepEqual(runs, []string{"win-1"}) {
			t.Errorf("%s runs on %v, want win-1 only", d.name, runs)
		}
	}
	// The cluster's Linux flannel DaemonSet does not run on the Windows node.
	if runs := checkSchedules(t, cp, "kube-flannel", "kube-flannel-ds", nodes); slices.Contains(runs, "win-1") {
		t.Errorf("the Linux flannel DaemonSet runs on %v", runs)
	}

	again := discoverT(t, cp, Options{KubeconfigCluster: "flannel-lab"})
	if len(again.WindowsPrerequisites) != 0 {
		t.Errorf("prerequisites after applying the plan: %+v", again.WindowsPrerequisites)
	}
	if f := again.Cluster.Spec.LinuxCNI.Flannel; f.VNI != 4096 || f.Port != 4789 {
		t.Errorf("flannel after the fix: %+v", f)
	}
}
