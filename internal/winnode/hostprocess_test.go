package winnode

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// hostProcessNode is a Windows node of a HostProcess design on a MemHost: the services render
// installs (which the Reconciler must not start beyond containerd and the kubelet) and the
// CNI network the pod would make.
func hostProcessNode(t *testing.T, specFile string, m Model) (*MemHost, *Reconciler, NetworkSpec) {
	t.Helper()
	c, _, err := v1alpha1.Load(filepath.Join("..", "..", "testdata", "specs", "good", specFile))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.New(c)
	if err != nil {
		t.Fatal(err)
	}
	n := windowsNode(t, p)
	d, err := DesiredFromPlan(p, n)
	if err != nil {
		t.Fatal(err)
	}
	d.CNINetwork.Owner = "kube-system/cni-windows"
	h := NewMemHostModel(m, Adapter{Name: n.Windows.AdapterName, MAC: n.ClusterNICMAC, IPv4: []string{n.NodeIP}})
	svcs, err := render.WindowsServices(p, n)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range svcs {
		cfg := ServiceConfig{Name: s.Name, Binary: s.Binary, DependsOn: s.DependsOn, StartType: StartAutomatic}
		if s.Manual {
			cfg.StartType = StartManual
		}
		if err := h.InstallService(testCtx(t), cfg); err != nil {
			t.Fatal(err)
		}
	}
	prefix := n.PodCIDR
	if prefix == "" {
		prefix = "10.244.9.0/24"
	}
	gw := strings.TrimSuffix(prefix, ".0/24") + ".1"
	spec := NetworkSpec{Name: n.Windows.HNSNetworkName, Type: n.Windows.HNSNetworkType, Prefix: prefix, Gateway: gw, AdapterName: n.Windows.AdapterName}
	return h, &Reconciler{Host: h, Desired: d}, spec
}

func TestHostProcessDesigns(t *testing.T) {
	for _, specFile := range []string{"flannel-hostprocess.yaml", "calico-hostprocess.yaml"} {
		for name, m := range Models() {
			t.Run(specFile+"/"+name, func(t *testing.T) {
				h, r, spec := hostProcessNode(t, specFile, m)
				if len(r.Desired.Networks) != 0 || r.Desired.HostEndpoint != nil || len(r.Desired.Routes) != 0 || r.Desired.KubeProxy != "" {
					t.Fatalf("desired state of a CNI-owned node has kubewin's own network parts: %+v", r.Desired)
				}
				diagnosis := "pod kube-system/cni-windows-x: container cni is in CrashLoopBackOff"
				failing := true
				r.CNIDiagnosis = func(context.Context) string {
					if failing {
						return diagnosis
					}
					return ""
				}
				ctx := testCtx(t)
				// Before the pod made it: unhealthy, named, nothing created; the kubelet runs
				// (it runs the pod that makes the network), kube-proxy and flanneld do not.
				rep, err := r.Reconcile(ctx)
				if err != nil || rep.Healthy || rep.CNINetworkReady {
					t.Fatalf("pass without the network: healthy=%v err=%v", rep.Healthy, err)
				}
				for _, want := range []string{"HNS network " + spec.Name + " does not exist", "kube-system/cni-windows", diagnosis} {
					if !strings.Contains(rep.CNIProblem, want) || !strings.Contains(rep.Reason(), want) {
						t.Errorf("problem %q lacks %q", rep.CNIProblem, want)
					}
				}
				assertServices(t, h, map[string]ServiceState{"containerd": ServiceRunning, "kubelet": ServiceRunning, "kube-proxy": ServiceStopped, "flanneld": ServiceStopped})
				// The pod makes the network.
				failing = false
				if _, err := h.RunHostProcess("kube-system/cni-windows-x", spec); err != nil {
					t.Fatal(err)
				}
				if rep, err := r.Reconcile(ctx); err != nil || !rep.Healthy || !rep.CNINetworkReady {
					t.Fatalf("pass with the network: %s (%v)", rep.Reason(), err)
				}
				// A reboot: the network persists or not (Model); either way kubewin does not make it.
				h.Reboot()
				rep, err = r.Reconcile(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if m.NetworksPersist != rep.Healthy {
					t.Errorf("after a reboot (networks persist: %v): healthy %v: %s", m.NetworksPersist, rep.Healthy, rep.Reason())
				}
				if !m.NetworksPersist && !strings.Contains(rep.CNIProblem, "does not exist") {
					t.Errorf("a lost CNI network is not reported: %q", rep.CNIProblem)
				}
				assertServices(t, h, map[string]ServiceState{"kubelet": ServiceRunning, "kube-proxy": ServiceStopped})
				if made := h.NetworksMadeByHost(); len(made) != 0 {
					t.Errorf("kubewin created HNS networks %v on a CNI-owned node; events %v", made, h.Events())
				}
				// A network of the wrong type is reported, never deleted.
				if !m.NetworksPersist {
					wrong := spec
					wrong.Type = map[string]string{"Overlay": "L2Bridge", "L2Bridge": "Overlay"}[spec.Type]
					if _, err := h.RunHostProcess("kube-system/cni-windows-x", wrong); err != nil {
						t.Fatal(err)
					}
					rep, _ = r.Reconcile(ctx)
					if rep.Healthy || !strings.Contains(rep.CNIProblem, "the design needs "+spec.Type) {
						t.Errorf("wrong network type: healthy %v, %q", rep.Healthy, rep.CNIProblem)
					}
					if slices.ContainsFunc(h.Events(), func(e Event) bool { return e.Kind == "network-delete" }) {
						t.Errorf("the CNI's network was deleted: %v", h.Events())
					}
				}
			})
		}
	}
}

func assertServices(t *testing.T, h *MemHost, want map[string]ServiceState) {
	t.Helper()
	for name, st := range want {
		s, err := h.ServiceStatus(context.Background(), name)
		if err != nil {
			if st == ServiceStopped {
				continue // not installed in this design
			}
			t.Fatalf("service %s: %v", name, err)
		}
		if s.State != st {
			t.Errorf("service %s is %v, want %v", name, s.State, st)
		}
	}
}
