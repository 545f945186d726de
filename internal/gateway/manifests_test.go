//go:build linux

package gateway_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubewin/kubewin/internal/gateway"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/testenv"
	"github.com/kubewin/kubewin/internal/testenv/netns"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

func manifestOptions() gateway.ManifestOptions {
	return gateway.ManifestOptions{Image: "registry.example/kubewin:v0.1.0"}
}

// decodeAll decodes every YAML document strictly with the official scheme.
func decodeAll(t *testing.T, data []byte) []runtime.Object {
	t.Helper()
	codecs := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict)
	dec := codecs.UniversalDeserializer()
	var out []runtime.Object
	for i, doc := range strings.Split(string(data), "\n---\n") {
		if strings.TrimSpace(doc) == "" || strings.HasPrefix(strings.TrimSpace(doc), "#") && !strings.Contains(doc, "kind:") {
			continue
		}
		obj, _, err := dec.Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("document %d does not decode with the official scheme: %v\n%s", i, err, doc)
		}
		out = append(out, obj)
	}
	return out
}

func TestManifestsGoldenAndDeterministic(t *testing.T) {
	a, err := gateway.Manifests(groupConfig(0.05), manifestOptions())
	if err != nil {
		t.Fatal(err)
	}
	b, err := gateway.Manifests(groupConfig(0.05), manifestOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("same input rendered different bytes")
	}
	golden := filepath.Join("testdata", "manifests-wingw.golden.yaml")
	if *update {
		if err := os.WriteFile(golden, a, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (regenerate with go test ./internal/gateway -run Golden -update)", err)
	}
	if !bytes.Equal(a, want) {
		t.Fatalf("manifests differ from %s (go test ./internal/gateway -run Golden -update)", golden)
	}
}

func TestManifestsLeastPrivilege(t *testing.T) {
	cfg := groupConfig(0.05)
	data, err := gateway.Manifests(cfg, manifestOptions())
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var ds []*appsv1.DaemonSet
	for _, obj := range decodeAll(t, data) {
		kinds = append(kinds, obj.GetObjectKind().GroupVersionKind().Kind)
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}}}
			if strings.HasSuffix(o.Name, "-calico-reservation") {
				// Reading pools and blocks, creating reservations; every other write only
				// to kubewin's own reservation, by name.
				calico := []string{"crd.projectcalico.org", "projectcalico.org"}
				want = []rbacv1.PolicyRule{
					{APIGroups: calico, Resources: []string{"ipamblocks", "ippools"}, Verbs: []string{"list"}},
					{APIGroups: calico, Resources: []string{"ipreservations"}, Verbs: []string{"create"}},
					{APIGroups: calico, Resources: []string{"ipreservations"}, ResourceNames: []string{gateway.CalicoReservationName}, Verbs: []string{"delete", "get", "update"}},
				}
			}
			if !reflect.DeepEqual(o.Rules, want) {
				t.Errorf("ClusterRole %s rules %+v, want %+v", o.Name, o.Rules, want)
			}
		case *rbacv1.Role:
			if len(o.Rules) != 1 || !reflect.DeepEqual(o.Rules[0].Verbs, []string{"get", "update", "patch"}) ||
				!reflect.DeepEqual(o.Rules[0].Resources, []string{"configmaps"}) || len(o.Rules[0].ResourceNames) != len(cfg.Members) {
				t.Errorf("Role %s rules %+v, want get/update/patch on the %d member status ConfigMaps by name", o.Name, o.Rules, len(cfg.Members))
			}
		case *corev1.ConfigMap:
			if d, ok := o.Data[cfg.Name+".json"]; ok {
				got, err := gateway.ParseGroupConfig([]byte(d))
				if err != nil {
					t.Fatalf("group ConfigMap: %v", err)
				}
				if !reflect.DeepEqual(got.Members, cfg.Members) || got.Name != cfg.Name || !reflect.DeepEqual(got.RouterVIPs, cfg.RouterVIPs) {
					t.Errorf("group ConfigMap does not round-trip: %+v", got)
				}
			}
		case *appsv1.DaemonSet:
			ds = append(ds, o)
		}
	}
	for _, want := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ConfigMap", "DaemonSet"} {
		if !slices.Contains(kinds, want) {
			t.Errorf("no %s in the manifests (have %v)", want, kinds)
		}
	}
	if len(ds) != 2 {
		t.Fatalf("%d DaemonSets, want gateway + routes", len(ds))
	}
	gw, routes := ds[0], ds[1]
	if !gw.Spec.Template.Spec.HostNetwork || !routes.Spec.Template.Spec.HostNetwork {
		t.Error("DaemonSets must use the host network")
	}
	var on []string
	for _, term := range gw.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		on = append(on, term.MatchFields[0].Values...)
	}
	if !reflect.DeepEqual(on, []string{"gw1", "gw2", "gw3"}) {
		t.Errorf("gateway DaemonSet runs on %v, want the members", on)
	}
	caps := map[string][]corev1.Capability{}
	for _, c := range append(gw.Spec.Template.Spec.InitContainers, gw.Spec.Template.Spec.Containers...) {
		caps[c.Name] = c.SecurityContext.Capabilities.Add
		if !slices.Equal(c.SecurityContext.Capabilities.Drop, []corev1.Capability{"ALL"}) {
			t.Errorf("container %s does not drop all capabilities", c.Name)
		}
	}
	if !slices.Contains(caps["keepalived"], "NET_ADMIN") || len(caps["gateway"]) != 0 || len(caps["install-config"]) != 0 {
		t.Errorf("capabilities %v: want NET_ADMIN (+NET_RAW, SYS_NICE) for keepalived only", caps)
	}
	if c := routes.Spec.Template.Spec.Containers[0]; !slices.Equal(c.SecurityContext.Capabilities.Add, []corev1.Capability{"NET_ADMIN"}) {
		t.Errorf("route keeper capabilities %v, want NET_ADMIN only", c.SecurityContext.Capabilities.Add)
	}
	if !strings.Contains(strings.Join(gw.Spec.Template.Spec.Containers[0].Args, " "), "--no-syslog") {
		t.Error("keepalived must run with --no-syslog (no /dev/log in the container)")
	}
	// Real-time scheduling through kubewin gateway exec, which falls back to nice -20 where the
	// kernel refuses it; chrt alone would make the container crash-loop there (TestExecRealtime).
	if c := gw.Spec.Template.Spec.Containers[0]; strings.Join(c.Command, " ") != "kubewin gateway exec --rt-priority 10 -- keepalived" {
		t.Errorf("keepalived command %q, want kubewin gateway exec --rt-priority 10 -- keepalived", c.Command)
	}

	cfg.RouterVIPs, cfg.RouterVIPsRequired = nil, false
	data, err = gateway.Manifests(cfg, manifestOptions())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(data), "kind: DaemonSet") != 1 {
		t.Error("a group without router VIPs needs no route keeper DaemonSet")
	}
}

func TestManifestsRejects(t *testing.T) {
	bad := groupConfig(0.05)
	bad.Name = "Not_A_DNS_Name"
	tests := []struct {
		name string
		cfg  gateway.GroupConfig
		o    gateway.ManifestOptions
		want string
	}{
		{"no image", groupConfig(0.05), gateway.ManifestOptions{}, "no image"},
		{"bad group name", bad, manifestOptions(), "valid object names"},
		{"bad port", groupConfig(0.05), gateway.ManifestOptions{Image: "x", MetricsPort: 70000}, "outside 1-65535"},
		{"bad namespace", groupConfig(0.05), gateway.ManifestOptions{Image: "x", Namespace: "Kube_System"}, "namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := gateway.Manifests(tt.cfg, tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestManifestsRBACAgainstAPIServer applies the manifests to a real API server and acts as the
// two service accounts: what the controller and the route keeper need is allowed, everything
// around it is not; then a controller running as the gateway account reports its status.
func TestManifestsRBACAgainstAPIServer(t *testing.T) {
	cp := testenv.StartControlPlane(t)
	cfg := groupConfig(0.05)
	data, err := gateway.Manifests(cfg, manifestOptions())
	if err != nil {
		t.Fatal(err)
	}
	objs, err := testenv.DecodeObjects(data)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := cp.CreateObjects(ctx, objs...); err != nil {
		t.Fatal(err)
	}
	as := func(sa string) kubernetes.Interface {
		c := rest.CopyConfig(cp.Config)
		c.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:kubewin-system:" + sa}
		cs, err := kubernetes.NewForConfig(c)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	gw, routes := as("kubewin-gateway-wingw"), as("kubewin-gateway-wingw-routes")
	cms := func(c kubernetes.Interface) interface {
		Get(context.Context, string, metav1.GetOptions) (*corev1.ConfigMap, error)
	} {
		return c.CoreV1().ConfigMaps(statusNS)
	}
	allowed := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: want allowed, got %v", what, err)
		}
	}
	forbidden := func(what string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s: want Forbidden, got %v", what, err)
		}
	}
	for name, c := range map[string]kubernetes.Interface{"gateway": gw, "routes": routes} {
		_, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/os=windows"})
		allowed(name+" lists nodes", err)
		w, err := c.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{})
		allowed(name+" watches nodes", err)
		if w != nil {
			w.Stop()
		}
		_, err = c.CoreV1().Nodes().Patch(ctx, "gw1", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
		forbidden(name+" patches a node", err)
		_, err = c.CoreV1().Secrets(statusNS).List(ctx, metav1.ListOptions{})
		forbidden(name+" lists secrets", err)
		_, err = c.CoreV1().ConfigMaps(statusNS).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
		forbidden(name+" creates a ConfigMap", err)
	}
	own, err := cms(gw).Get(ctx, gateway.StatusName("wingw", "gw1"), metav1.GetOptions{})
	allowed("gateway gets a member status", err)
	if own != nil {
		own.Data = map[string]string{"held": ""}
		_, err = gw.CoreV1().ConfigMaps(statusNS).Update(ctx, own, metav1.UpdateOptions{})
		allowed("gateway updates a member status", err)
	}
	_, err = cms(gw).Get(ctx, "kubewin-gateway-wingw", metav1.GetOptions{})
	forbidden("gateway reads the group ConfigMap through the API (it is mounted)", err)
	_, err = cms(routes).Get(ctx, gateway.StatusName("wingw", "gw1"), metav1.GetOptions{})
	forbidden("route keeper reads a status", err)

	// The controller itself, as the gateway account, in a namespace with the group interface.
	ns := netns.New(t, "rbac")
	sw := netns.New(t, "rbacsw")
	netns.Veth(t, ns, gwInterface, sw, "p0")
	ns.AddAddr(t, gwInterface, "192.168.50.11/24")
	h := ns.NsHandle()
	dir := t.TempDir()
	if _, err := gw.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cp.Clientset(t).CoreV1().Nodes().Create(ctx, windowsNode("win-a", podCIDR), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrl, err := gateway.NewController(gateway.Options{
		Config: cfg, NodeName: "gw1", Client: gw, ConfigPath: filepath.Join(dir, "keepalived.conf"),
		Validate:        func(ctx context.Context, p string) error { return render.ValidateKeepalivedInNetns(ctx, ns.Name, p) },
		NetNS:           &h,
		StatusNamespace: statusNS, Heartbeat: time.Second, Resync: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = ctrl.Run(cctx) }()
	t.Cleanup(func() { cancel(); <-done })
	eventually(t, 30*time.Second, "gw1 reports its status as the gateway account", func() (bool, string) {
		cm, err := cp.Clientset(t).CoreV1().ConfigMaps(statusNS).Get(ctx, gateway.StatusName("wingw", "gw1"), metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cm.Data[gateway.StatusKeyConfigured] == "1", cm.Data[gateway.StatusKeyConfigured]
	})
}
