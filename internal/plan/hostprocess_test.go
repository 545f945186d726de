package plan

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func loadGood(t *testing.T, name string) *v1alpha1.Cluster {
	t.Helper()
	c, _, err := v1alpha1.Load(filepath.Join("..", "..", "testdata", "specs", "good", name))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestHostProcessPlan(t *testing.T) {
	yes := true
	cases := []struct {
		name   string
		spec   string
		mutate func(*v1alpha1.Cluster)
		check  func(t *testing.T, p *Plan)
	}{
		{name: "calico vxlan", spec: "calico-hostprocess.yaml", check: func(t *testing.T, p *Plan) {
			hp := p.HostProcess
			if hp.CNI != "calico" || hp.NetworkName != "Calico" || hp.NetworkType != "Overlay" || hp.SourceVIP != SourceVIPFromEndpoint {
				t.Errorf("calico VXLAN: %+v", hp)
			}
			if hp.APIServerHost != "10.0.0.10" || hp.APIServerPort != "6443" {
				t.Errorf("API server %s:%s", hp.APIServerHost, hp.APIServerPort)
			}
			if hp.Calico == nil || !hp.Calico.SetStrictAffinity || hp.Calico.WindowsDataplane != "HNS" || !reflect.DeepEqual(hp.Calico.ServiceCIDRs, []string{"10.96.0.0/12"}) {
				t.Errorf("calico settings: %+v", hp.Calico)
			}
			if hp.KubeProxy == nil || hp.KubeProxy.Name != KubeProxyWindowsName || hp.Flannel != nil {
				t.Errorf("daemonsets: kube-proxy %+v flannel %+v", hp.KubeProxy, hp.Flannel)
			}
			if len(hp.Tolerations) != 1 || hp.Tolerations[0].Key != "os" || hp.NodeSelector["kubernetes.io/os"] != "windows" {
				t.Errorf("placement: %v %v", hp.NodeSelector, hp.Tolerations)
			}
			w := p.Nodes[1].Windows
			if w.NetworkOwner != NetworkOwnerDaemonSet || w.CNIPlugin != "calico" || w.HNSNetworkType != "Overlay" || w.Gateway != "" || len(w.Routes) != 0 {
				t.Errorf("windows node: %+v", w)
			}
			// Calico IPAM, not the node's pod CIDR, addresses Windows pods: nothing to reserve.
			if p.Calico == nil || len(p.Calico.ReservedCIDRs) != 0 {
				t.Errorf("calico reservations: %+v", p.Calico)
			}
		}},
		{name: "calico bgp, strict affinity set, kube-proxy present", spec: "calico-hostprocess.yaml", mutate: func(c *v1alpha1.Cluster) {
			c.Spec.LinuxCNI.Calico.VXLANMode = "Never"
			c.Spec.LinuxCNI.Calico.StrictAffinity = &yes
			c.Spec.Windows.DaemonSets = append(c.Spec.Windows.DaemonSets,
				v1alpha1.WindowsDaemonSet{Namespace: "kube-system", Name: "kube-proxy-windows", Component: "kube-proxy", HostProcess: true})
		}, check: func(t *testing.T, p *Plan) {
			hp := p.HostProcess
			if hp.NetworkType != "L2Bridge" || hp.SourceVIP != "" || hp.Calico.SetStrictAffinity || hp.KubeProxy != nil {
				t.Errorf("calico BGP: %+v %+v", hp, hp.Calico)
			}
		}},
		{name: "flannel vxlan, old kube-proxy", spec: "flannel-hostprocess.yaml", mutate: func(c *v1alpha1.Cluster) {
			c.Spec.Windows.DaemonSets = []v1alpha1.WindowsDaemonSet{{Namespace: "kube-system", Name: "kube-proxy-windows", Component: "kube-proxy"}}
		}, check: func(t *testing.T, p *Plan) {
			hp := p.HostProcess
			if hp.CNI != "flannel" || hp.NetworkName != "flannel.4096" || hp.NetworkType != "Overlay" || hp.SourceVIP != SourceVIPFromHostLocal {
				t.Errorf("flannel vxlan: %+v", hp)
			}
			want := &FlannelHostProcessPlan{DaemonSetPlan: DaemonSetPlan{Namespace: FlannelNamespace, Name: FlannelWindowsName, ServiceAccount: FlannelServiceAccount},
				Network: "10.244.0.0/16", Backend: "vxlan", VNI: 4096, Port: 4789}
			if !reflect.DeepEqual(hp.Flannel, want) {
				t.Errorf("flannel = %+v, want %+v", hp.Flannel, want)
			}
			if hp.KubeProxy == nil || !reflect.DeepEqual(hp.Replace, []string{"kube-system/kube-proxy-windows"}) {
				t.Errorf("a non-HostProcess kube-proxy is replaced: %+v %v", hp.KubeProxy, hp.Replace)
			}
			if w := p.Nodes[1].Windows; w.CNIDelegate != "win-overlay" || w.NetworkOwner != NetworkOwnerDaemonSet || w.HNSNetworkName != "flannel.4096" {
				t.Errorf("windows node: %+v", w)
			}
		}},
		{name: "flannel host-gw", spec: "flannel-hostprocess.yaml", mutate: func(c *v1alpha1.Cluster) {
			c.Spec.LinuxCNI.Flannel = &v1alpha1.FlannelSettings{Backend: "host-gw"}
			c.Spec.Windows.HNSNetworkName = "" // Load defaulted it for vxlan
		}, check: func(t *testing.T, p *Plan) {
			hp := p.HostProcess
			if hp.NetworkName != "cbr0" || hp.NetworkType != "L2Bridge" || hp.SourceVIP != "" || hp.Flannel.VNI != 0 {
				t.Errorf("flannel host-gw: %+v %+v", hp, hp.Flannel)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := loadGood(t, tc.spec)
			if tc.mutate != nil {
				tc.mutate(c)
			}
			p, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			if p.HostProcess == nil {
				t.Fatal("no HostProcess plan")
			}
			tc.check(t, p)
		})
	}
	// Other designs have no HostProcess plan.
	p, err := New(loadGood(t, "flannel-vxlan.yaml"))
	if err != nil || p.HostProcess != nil || p.Nodes[1].Windows.NetworkOwner != "" {
		t.Errorf("flannel/vxlan: %v %+v", err, p)
	}
}
