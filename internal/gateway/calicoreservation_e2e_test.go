//go:build linux

package gateway_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubewin/kubewin/internal/gateway"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/testenv"
	"github.com/kubewin/kubewin/internal/testenv/netns"
)

var (
	calicoV1 = schema.GroupVersion{Group: "crd.projectcalico.org", Version: "v1"}
	calicoV3 = schema.GroupVersion{Group: "projectcalico.org", Version: "v3"}
)

// calicoCluster is a real API server with Calico's own CRDs and the gateway group's manifests
// applied, and a client acting as the gateway's service account (so every test also checks
// that the rendered RBAC is enough, and no more).
type calicoCluster struct {
	cp    *testenv.ControlPlane
	admin kubernetes.Interface
	dyn   dynamic.Interface
	gv    schema.GroupVersion
	gw    kubernetes.Interface
	gwDyn dynamic.Interface
}

func newCalicoCluster(t *testing.T, crds string, gv schema.GroupVersion) *calicoCluster {
	t.Helper()
	cp := testenv.StartControlPlane(t)
	ctx := context.Background()
	if err := cp.CreateFiles(ctx, filepath.Join("testdata", "calico", crds)); err != nil {
		t.Fatal(err)
	}
	data, err := gateway.Manifests(groupConfig(0.05), manifestOptions())
	if err != nil {
		t.Fatal(err)
	}
	objs, err := testenv.DecodeObjects(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.CreateObjects(ctx, objs...); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	gwCfg := rest.CopyConfig(cp.Config)
	gwCfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + statusNS + ":kubewin-gateway-" + groupName}
	gw, err := kubernetes.NewForConfig(gwCfg)
	if err != nil {
		t.Fatal(err)
	}
	gwDyn, err := dynamic.NewForConfig(gwCfg)
	if err != nil {
		t.Fatal(err)
	}
	return &calicoCluster{cp: cp, admin: cp.Clientset(t), dyn: dyn, gv: gv, gw: gw, gwDyn: gwDyn}
}

func (c *calicoCluster) res(resource string) dynamic.NamespaceableResourceInterface {
	return c.dyn.Resource(c.gv.WithResource(resource))
}

func (c *calicoCluster) create(t *testing.T, resource, name string, spec map[string]any, labels map[string]string) *unstructured.Unstructured {
	t.Helper()
	kinds := map[string]string{"ippools": "IPPool", "ipreservations": "IPReservation", "ipamblocks": "IPAMBlock"}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": c.gv.String(), "kind": kinds[resource],
		"metadata": map[string]any{"name": name}, "spec": spec,
	}}
	if labels != nil {
		u.SetLabels(labels)
	}
	out, err := c.res(resource).Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s %s: %v", resource, name, err)
	}
	return out
}

func (c *calicoCluster) pool(t *testing.T, name, cidr string, disabled bool) {
	c.create(t, "ippools", name, map[string]any{"cidr": cidr, "blockSize": int64(26), "ipipMode": "Never", "vxlanMode": "Never",
		"natOutgoing": true, "nodeSelector": "all()", "disabled": disabled}, nil)
}

// block creates an IPAM block affine to host with the given ordinals in use, shaped as Calico's
// IPAM writes it (libcalico-go/lib/backend/model/block.go AllocationBlock).
func (c *calicoCluster) block(t *testing.T, cidr, host string, inUse ...int) {
	size := 64
	allocs := make([]any, size)
	var attrs []any
	used := map[int]bool{}
	for i, o := range inUse {
		allocs[o] = int64(i)
		used[o] = true
		attrs = append(attrs, map[string]any{"handle_id": fmt.Sprintf("k8s-pod-network.%s-%d", host, o),
			"secondary": map[string]any{"node": host, "namespace": "default", "pod": fmt.Sprintf("p%d", o)}})
	}
	var free []any
	for i := range size {
		if !used[i] {
			free = append(free, int64(i))
		}
	}
	name := strings.NewReplacer(".", "-", "/", "-").Replace(cidr)
	c.create(t, "ipamblocks", name, map[string]any{"cidr": cidr, "affinity": "host:" + host, "allocations": allocs,
		"unallocated": free, "attributes": attrs, "strictAffinity": false}, nil)
}

// reserved returns kubewin's reservation (nil, false when absent).
func (c *calicoCluster) reserved(t *testing.T) ([]string, *unstructured.Unstructured) {
	t.Helper()
	u, err := c.res("ipreservations").Get(context.Background(), gateway.CalicoReservationName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	cidrs, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "reservedCIDRs")
	return cidrs, u
}

func (c *calicoCluster) waitReserved(t *testing.T, what string, want ...string) *unstructured.Unstructured {
	t.Helper()
	var obj *unstructured.Unstructured
	eventually(t, 30*time.Second, what, func() (bool, string) {
		var got []string
		got, obj = c.reserved(t)
		if obj == nil {
			return false, "no IPReservation " + gateway.CalicoReservationName
		}
		return reflect.DeepEqual(got, want), fmt.Sprint(got)
	})
	return obj
}

func (c *calicoCluster) node(t *testing.T, name, os, cidr string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/os": os}},
		Spec: corev1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}}}
	if _, err := c.admin.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (c *calicoCluster) deleteNode(t *testing.T, name string) {
	t.Helper()
	if err := c.admin.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// startReserver runs a CalicoReserver as the gateway's service account with short intervals;
// the returned function stops it and waits.
func (c *calicoCluster) startReserver(t *testing.T, reg prometheus.Registerer) (*gateway.CalicoReserver, func()) {
	t.Helper()
	r, err := gateway.NewCalicoReserver(gateway.CalicoReserverOptions{
		Client: c.gw, Metrics: gateway.NewMetrics(reg, groupName, "gw1"),
		Log:    slog.New(slog.NewTextHandler(t.Output(), nil)),
		Resync: 300 * time.Millisecond, BlockCheck: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := r.Run(ctx); err != nil {
			t.Errorf("reserver: %v", err)
		}
	}()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return r, stop
}

// TestCalicoReservation walks the scenario on a real API server with Calico's
// crd.projectcalico.org/v1 CRDs: two Windows nodes inside the pool are reserved, one outside
// and one in a disabled pool are not, a Linux node never is; Windows nodes joining and leaving
// change the reservation; a Linux node's IPAM block inside a Windows pod CIDR is reported;
// another reservation is never touched (and the gateway account cannot touch it); and the
// gateway controller itself keeps the reservation and reports it in its status object.
func TestCalicoReservation(t *testing.T) {
	c := newCalicoCluster(t, "crd.projectcalico.org_v1.yaml", calicoV1)
	ctx := context.Background()
	// Calico's default pool over the whole cluster CIDR (kubeadm --pod-network-cidr): every
	// pod CIDR kube-controller-manager hands a Windows node lies inside it.
	c.pool(t, "default-ipv4-ippool", clusterCIDR, false)
	c.pool(t, "retired-pool", "10.250.0.0/16", true)
	foreign := c.create(t, "ipreservations", "site-reserved", map[string]any{"reservedCIDRs": []any{"10.130.200.0/24"}},
		map[string]string{"app.kubernetes.io/managed-by": "site-admins"})
	c.node(t, "win-1", "windows", "10.130.10.0/24")
	c.node(t, "win-2", "windows", "10.130.11.0/24")
	c.node(t, "win-out", "windows", "172.20.5.0/24")
	c.node(t, "win-retired", "windows", "10.250.3.0/24")
	c.node(t, "lin-1", "linux", "10.130.12.0/24")
	c.block(t, "10.130.12.0/26", "lin-1", 0, 1) // lin-1's own block: no conflict

	reg := prometheus.NewRegistry()
	r, stop := c.startReserver(t, reg)

	t.Run("reserves exactly the Windows pod CIDRs inside enabled pools", func(t *testing.T) {
		obj := c.waitReserved(t, "reservation of win-1 and win-2", "10.130.10.0/24", "10.130.11.0/24")
		if obj.GetAPIVersion() != "crd.projectcalico.org/v1" || obj.GetLabels()["app.kubernetes.io/managed-by"] != "kubewin" {
			t.Errorf("reservation %s labels %v: want crd.projectcalico.org/v1 managed by kubewin", obj.GetAPIVersion(), obj.GetLabels())
		}
		eventually(t, 10*time.Second, "status and metrics", func() (bool, string) {
			st := r.Status()
			ok := st.APIVersion == "crd.projectcalico.org/v1" && st.Err == "" && len(st.Conflicts) == 0 && len(st.Unreserved) == 0 &&
				metricValue(t, reg, "kubewin_gateway_calico_reserved_cidrs") == 2
			return ok, fmt.Sprintf("%+v", st)
		})
	})

	t.Run("Linux node's IPAM block inside a Windows pod CIDR is a conflict", func(t *testing.T) {
		c.block(t, "10.130.11.0/26", "lin-1", 3, 17)
		want := gateway.CalicoConflict{Kind: gateway.CalicoConflictBlock, Node: "win-2", PodCIDR: "10.130.11.0/24",
			Block: "10.130.11.0/26", Owner: "lin-1", InUse: 2}
		eventually(t, 30*time.Second, "conflict reported", func() (bool, string) {
			st := r.Status()
			return reflect.DeepEqual(st.Conflicts, []gateway.CalicoConflict{want}) &&
				metricValue(t, reg, "kubewin_gateway_calico_ipam_conflicts") == 1, fmt.Sprintf("%+v", st.Conflicts)
		})
		if got, _ := c.reserved(t); !reflect.DeepEqual(got, []string{"10.130.10.0/24", "10.130.11.0/24"}) {
			t.Errorf("reservation changed by a conflict: %v", got)
		}
	})

	t.Run("joining Windows node is reserved", func(t *testing.T) {
		c.node(t, "win-3", "windows", "10.130.13.0/24")
		c.waitReserved(t, "win-3 added", "10.130.10.0/24", "10.130.11.0/24", "10.130.13.0/24")
	})

	t.Run("deleted Windows node leaves the reservation", func(t *testing.T) {
		c.deleteNode(t, "win-1")
		c.waitReserved(t, "win-1 removed", "10.130.11.0/24", "10.130.13.0/24")
	})

	t.Run("foreign reservation untouched and out of the gateway's reach", func(t *testing.T) {
		cur, err := c.res("ipreservations").Get(ctx, "site-reserved", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cur.GetResourceVersion() != foreign.GetResourceVersion() || !reflect.DeepEqual(cur.Object["spec"], foreign.Object["spec"]) {
			t.Errorf("site-reserved changed: %v -> %v", foreign.Object, cur.Object)
		}
		gwRes := c.gwDyn.Resource(calicoV1.WithResource("ipreservations"))
		_, err = gwRes.Update(ctx, cur, metav1.UpdateOptions{})
		if !apierrors.IsForbidden(err) {
			t.Errorf("gateway account updates site-reserved: %v, want Forbidden", err)
		}
		if err := gwRes.Delete(ctx, "site-reserved", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("gateway account deletes site-reserved: %v, want Forbidden", err)
		}
	})

	t.Run("no Windows node in a pool: reservation deleted", func(t *testing.T) {
		c.deleteNode(t, "win-2")
		c.deleteNode(t, "win-3")
		eventually(t, 30*time.Second, "reservation gone", func() (bool, string) {
			got, obj := c.reserved(t)
			return obj == nil, fmt.Sprint(got)
		})
		eventually(t, 10*time.Second, "conflict cleared with its node", func() (bool, string) {
			st := r.Status()
			return len(st.Conflicts) == 0 && len(st.Reserved) == 0, fmt.Sprintf("%+v", st)
		})
		if _, err := c.res("ipreservations").Get(ctx, "site-reserved", metav1.GetOptions{}); err != nil {
			t.Errorf("site-reserved: %v", err)
		}
	})
	stop()

	// The controller (not the standalone reserver above) now keeps the reservation: it shares
	// its Windows Node watch with it and reports it in the member's status object.
	t.Run("gateway controller keeps the reservation and reports it", func(t *testing.T) {
		ns := netns.New(t, "calres")
		sw := netns.New(t, "calressw")
		netns.Veth(t, ns, gwInterface, sw, "p0")
		ns.AddAddr(t, gwInterface, "192.168.50.11/24")
		h := ns.NsHandle()
		ctrlReg := prometheus.NewRegistry()
		ctrl, err := gateway.NewController(gateway.Options{
			Config: groupConfig(0.05), NodeName: "gw1", Client: c.gw, ConfigPath: filepath.Join(t.TempDir(), "keepalived.conf"),
			Validate: func(ctx context.Context, p string) error { return render.ValidateKeepalivedInNetns(ctx, ns.Name, p) },
			NetNS:    &h, StatusNamespace: statusNS, Heartbeat: time.Second, Resync: time.Second,
			CalicoBlockCheck: 500 * time.Millisecond, Metrics: gateway.NewMetrics(ctrlReg, groupName, "gw1"),
			Log: slog.New(slog.NewTextHandler(t.Output(), nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = ctrl.Run(cctx) }()
		t.Cleanup(func() { cancel(); <-done })

		c.node(t, "win-4", "windows", "10.130.11.0/24") // lin-1's block 10.130.11.0/26 is still there
		c.waitReserved(t, "controller reserves win-4", "10.130.11.0/24")
		eventually(t, 30*time.Second, "member status reports the reservation and the conflict", func() (bool, string) {
			cm, err := c.admin.CoreV1().ConfigMaps(statusNS).Get(ctx, gateway.StatusName(groupName, "gw1"), metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			d := cm.Data
			ok := d[gateway.StatusKeyCalicoReserved] == "10.130.11.0/24" && d[gateway.StatusKeyCalicoUnreserved] == "" &&
				strings.Contains(d[gateway.StatusKeyCalicoConflicts], "10.130.11.0/26") &&
				strings.Contains(d[gateway.StatusKeyCalicoConflicts], "node lin-1") && d[gateway.StatusKeyCalicoError] == ""
			return ok, fmt.Sprint(d)
		})
		if got := metricValue(t, ctrlReg, "kubewin_gateway_calico_ipam_conflicts"); got != 1 {
			t.Errorf("calico_ipam_conflicts = %v, want 1", got)
		}
		if got := ctrl.CalicoReservation(); !reflect.DeepEqual(got.Reserved, []string{"10.130.11.0/24"}) {
			t.Errorf("controller's reservation status %+v", got)
		}
	})
}

// TestCalicoReservationV3CRDs runs against Calico's projectcalico.org/v3 CRDs (Calico v3.32+
// without crd.projectcalico.org): the reservation is written in that group. An object of
// kubewin's name that kubewin does not own is left alone and the CIDR reported unreserved until
// it is gone.
func TestCalicoReservationV3CRDs(t *testing.T) {
	c := newCalicoCluster(t, "projectcalico.org_v3.yaml", calicoV3)
	ctx := context.Background()
	c.pool(t, "default-ipv4-ippool", clusterCIDR, false)
	squatter := c.create(t, "ipreservations", gateway.CalicoReservationName, map[string]any{"reservedCIDRs": []any{"10.130.99.0/24"}}, nil)
	c.node(t, "win-1", "windows", "10.130.10.0/24")

	reg := prometheus.NewRegistry()
	r, _ := c.startReserver(t, reg)

	t.Run("object of the same name without kubewin's label is left alone", func(t *testing.T) {
		eventually(t, 30*time.Second, "unreserved CIDR reported", func() (bool, string) {
			st := r.Status()
			ok := st.APIVersion == "projectcalico.org/v3" && reflect.DeepEqual(st.Unreserved, []string{"10.130.10.0/24"}) &&
				strings.Contains(st.Err, "not labelled") && metricValue(t, reg, "kubewin_gateway_calico_unreserved_cidrs") == 1
			return ok, fmt.Sprintf("%+v", st)
		})
		_, cur := c.reserved(t)
		if cur == nil || cur.GetResourceVersion() != squatter.GetResourceVersion() {
			t.Fatalf("the unowned %s was modified: %v", gateway.CalicoReservationName, cur)
		}
	})

	t.Run("once it is gone, kubewin's reservation takes its place", func(t *testing.T) {
		if err := c.res("ipreservations").Delete(ctx, gateway.CalicoReservationName, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		obj := c.waitReserved(t, "reservation in projectcalico.org/v3", "10.130.10.0/24")
		if obj.GetAPIVersion() != "projectcalico.org/v3" || obj.GetLabels()["app.kubernetes.io/managed-by"] != "kubewin" {
			t.Errorf("reservation %s labels %v", obj.GetAPIVersion(), obj.GetLabels())
		}
		eventually(t, 10*time.Second, "status clean", func() (bool, string) {
			st := r.Status()
			return st.Err == "" && len(st.Unreserved) == 0 && metricValue(t, reg, "kubewin_gateway_calico_unreserved_cidrs") == 0, fmt.Sprintf("%+v", st)
		})
	})
}
