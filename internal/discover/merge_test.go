package discover

import (
	"reflect"
	"testing"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func TestMerge(t *testing.T) {
	tru, fls := true, false
	discovered := &v1alpha1.Cluster{
		APIVersion: v1alpha1.GroupVersion, Kind: v1alpha1.KindCluster,
		Metadata: v1alpha1.ObjectMeta{Name: "kubernetes"},
		Spec: v1alpha1.ClusterSpec{
			KubernetesVersion: "v1.37.1",
			ContainerRuntime:  v1alpha1.ContainerRuntime{Name: "containerd", Version: "2.1.4"},
			Networking: v1alpha1.Networking{PodCIDRs: []string{"10.160.0.0/12"}, ServiceCIDR: "10.176.0.0/12",
				ClusterDNS: "10.176.0.10", ClusterDomain: "cluster.local"},
			LinuxCNI: v1alpha1.LinuxCNI{Type: "calico", Calico: &v1alpha1.CalicoSettings{IPPools: []string{"10.160.0.0/12"}, IPIPMode: "Always"}},
			Windows:  v1alpha1.WindowsSettings{Taint: &tru},
			Nodes: []v1alpha1.Node{
				{Name: "m1", OS: v1alpha1.OSLinux, Role: v1alpha1.RoleControlPlane, ClusterNIC: "eth1",
					NICs: []v1alpha1.NIC{{Name: "eth1", IP: "100.100.126.202", Prefix: 23}}, PodCIDR: "10.160.0.0/24",
					Labels: map[string]string{"a": "discovered", "b": "discovered"}},
				{Name: "w9", OS: v1alpha1.OSWindows, WindowsBuild: "10.0.17763", NICs: []v1alpha1.NIC{{IP: "100.100.126.216"}}, PodCIDR: "10.160.11.0/24"},
				{Name: "untouched", OS: v1alpha1.OSLinux, NICs: []v1alpha1.NIC{{Name: "eth1", IP: "100.100.126.210", Prefix: 23}}},
			},
		},
	}
	user := &v1alpha1.Cluster{
		Metadata: v1alpha1.ObjectMeta{Name: "mylan"},
		Spec: v1alpha1.ClusterSpec{
			Design:     v1alpha1.DesignUpstreamToRKeepalived,
			Networking: v1alpha1.Networking{DNSSearch: []string{"mylan.k8s"}, ClusterDNS: "10.176.0.11"},
			LinuxCNI:   v1alpha1.LinuxCNI{Calico: &v1alpha1.CalicoSettings{Reservation: "PoolExclusion"}},
			Windows:    v1alpha1.WindowsSettings{Taint: &fls, InstallDir: `D:\k`},
			Nodes: []v1alpha1.Node{
				{Name: "new-win", OS: v1alpha1.OSWindows, WindowsBuild: "10.0.20348", NICs: []v1alpha1.NIC{{Name: "Ethernet", IP: "100.100.126.230", Prefix: 23}}},
				{Name: "w9", ClusterNIC: "eth1", NICs: []v1alpha1.NIC{
					{Name: "eth0", IP: "172.16.126.216", Prefix: 24},
					{Name: "eth1", MAC: "00-15-00-00-00-02", IP: "100.100.126.216", Prefix: 23}}},
				{Name: "m1", NICs: []v1alpha1.NIC{{Name: "bond0", IP: "100.100.126.202", Prefix: 23}}, Labels: map[string]string{"b": "user", "c": "user"}},
			},
			GatewayGroups: []v1alpha1.GatewayGroup{{Name: "gw", Members: []v1alpha1.GatewayMember{{Node: "m1"}}}},
		},
	}
	before := deepCopy(discovered)
	userBefore := deepCopy(user)
	got := Merge(discovered, user)
	if !reflect.DeepEqual(discovered, before) || !reflect.DeepEqual(user, userBefore) {
		t.Fatal("Merge modified its inputs")
	}

	want := deepCopy(discovered)
	want.Metadata.Name = "mylan"
	want.Spec.Design = v1alpha1.DesignUpstreamToRKeepalived
	want.Spec.Networking.DNSSearch = []string{"mylan.k8s"}
	want.Spec.Networking.ClusterDNS = "10.176.0.11"
	want.Spec.LinuxCNI.Calico.Reservation = "PoolExclusion"
	want.Spec.Windows = v1alpha1.WindowsSettings{Taint: &fls, InstallDir: `D:\k`}
	want.Spec.GatewayGroups = user.Spec.GatewayGroups
	// m1: the user's NICs replace the discovered ones; the discovered cluster NIC (eth1) names
	// none of them, so it is dropped; labels merge key by key.
	want.Spec.Nodes[0].NICs = user.Spec.Nodes[2].NICs
	want.Spec.Nodes[0].ClusterNIC = ""
	want.Spec.Nodes[0].Labels = map[string]string{"a": "discovered", "b": "user", "c": "user"}
	// w9: user NICs and cluster NIC; discovered OS, build and pod CIDR stay.
	want.Spec.Nodes[1].NICs = user.Spec.Nodes[1].NICs
	want.Spec.Nodes[1].ClusterNIC = "eth1"
	// A node to join is appended.
	want.Spec.Nodes = append(want.Spec.Nodes, user.Spec.Nodes[0])

	if !reflect.DeepEqual(got, want) {
		t.Errorf("Merge:\n got %+v\nwant %+v", got, want)
	}
}

func TestMergeNil(t *testing.T) {
	c := &v1alpha1.Cluster{Metadata: v1alpha1.ObjectMeta{Name: "x"}}
	if got := Merge(c, nil); !reflect.DeepEqual(got, c) || got == c {
		t.Errorf("Merge(c, nil) = %+v, want a copy of c", got)
	}
	if got := Merge(nil, c); !reflect.DeepEqual(got, c) {
		t.Errorf("Merge(nil, c) = %+v", got)
	}
	if got := Merge(nil, nil); !reflect.DeepEqual(got, &v1alpha1.Cluster{}) {
		t.Errorf("Merge(nil, nil) = %+v", got)
	}
}
