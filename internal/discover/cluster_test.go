package discover

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kubewin/kubewin/internal/testenv"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

const clustersDir = "../../testdata/clusters"

// startCluster starts a control plane and creates the fixture objects of testdata/clusters/NAME
// (with Calico's CRDs first when calico is set).
func startCluster(t *testing.T, name, serviceCIDR string, calico bool) *testenv.ControlPlane {
	t.Helper()
	cp := testenv.StartControlPlane(t, testenv.WithServiceCIDR(serviceCIDR))
	files := []string{}
	if calico {
		files = append(files, filepath.Join(clustersDir, "crds", "calico.yaml"),
			filepath.Join(clustersDir, "crds", "calico-ipamconfig.yaml"), filepath.Join(clustersDir, "crds", "tigera-operator.yaml"))
	}
	files = append(files, filepath.Join(clustersDir, name, "objects.yaml"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cp.CreateFiles(ctx, files...); err != nil {
		t.Fatalf("create %s fixtures: %v", name, err)
	}
	return cp
}

func discoverT(t *testing.T, cp *testenv.ControlPlane, opts Options) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Discover(ctx, cp.Config, opts)
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	return res
}

// want asserts one spec value and, when source is not empty, that its provenance mentions it.
func want(t *testing.T, res *Result, field string, got, wantV any, source string) {
	t.Helper()
	if !reflect.DeepEqual(got, wantV) {
		t.Errorf("%s = %#v, want %#v", field, got, wantV)
	}
	if source != "" {
		if p := res.Provenance[field].Source; !strings.Contains(p, source) {
			t.Errorf("%s provenance = %q, want it to mention %q", field, p, source)
		}
	}
}

func missingFields(res *Result) []string {
	var out []string
	for _, m := range res.Missing {
		out = append(out, m.Field)
	}
	return out
}

func findNode(t *testing.T, c *v1alpha1.Cluster, name string) v1alpha1.Node {
	t.Helper()
	for _, n := range c.Spec.Nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("node %s not discovered", name)
	return v1alpha1.Node{}
}

func TestDiscoverKubeadmCalico(t *testing.T) {
	cp := startCluster(t, "kubeadm-calico", "10.96.0.0/12", true)
	res := discoverT(t, cp, Options{PageSize: 2})
	s := res.Cluster.Spec

	want(t, res, "metadata.name", res.Cluster.Metadata.Name, "prod-east", "kubeadm-config")
	want(t, res, "spec.kubernetesVersion", s.KubernetesVersion, "v1.37.1", "/version")
	want(t, res, "spec.containerRuntime.name", s.ContainerRuntime.Name, "containerd", "3 of 3 Nodes")
	want(t, res, "spec.containerRuntime.version", s.ContainerRuntime.Version, "2.1.4", "")
	want(t, res, "spec.containerRuntime.cgroupDriver", s.ContainerRuntime.CgroupDriver, "systemd", "kubelet-config")
	want(t, res, "spec.networking.podCIDRs", s.Networking.PodCIDRs, []string{"192.168.0.0/16"}, "kubeadm-config")
	want(t, res, "spec.networking.serviceCIDR", s.Networking.ServiceCIDR, "10.96.0.0/12", "ServiceCIDR kubernetes")
	want(t, res, "spec.networking.nodeCIDRMaskSize", s.Networking.NodeCIDRMaskSize, 24, "kubeadm-config")
	want(t, res, "spec.networking.clusterDNS", s.Networking.ClusterDNS, "10.96.0.10", "Service kube-system/kube-dns")
	want(t, res, "spec.networking.clusterDomain", s.Networking.ClusterDomain, "cluster.local", "kubeadm-config")
	want(t, res, "spec.linuxCNI.type", s.LinuxCNI.Type, "calico", "IPPools default-ipv4-ippool")
	if s.LinuxCNI.Calico == nil {
		t.Fatal("no Calico settings")
	}
	// The disabled pool is not one Windows pod CIDRs must be kept out of.
	want(t, res, "spec.linuxCNI.calico.ipPools", s.LinuxCNI.Calico.IPPools, []string{"192.168.0.0/16"}, "IPPools default-ipv4-ippool")
	want(t, res, "spec.linuxCNI.calico.ipipMode", s.LinuxCNI.Calico.IPIPMode, "CrossSubnet", "IPPool default-ipv4-ippool")
	want(t, res, "spec.linuxCNI.calico.blockSize", s.LinuxCNI.Calico.BlockSize, 26, "IPPool default-ipv4-ippool")
	want(t, res, "spec.design", s.Design, v1alpha1.NetworkDesign(""), "")
	if s.LinuxCNI.Flannel != nil {
		t.Errorf("flannel settings on a Calico cluster: %+v", s.LinuxCNI.Flannel)
	}

	// Every less trusted source of the service CIDR agrees and is named.
	agrees := strings.Join(res.Provenance["spec.networking.serviceCIDR"].Agrees, "|")
	for _, src := range []string{"kubeadm-config", "kube-controller-manager-cp1", "kube-apiserver-cp1"} {
		if !strings.Contains(agrees, src) {
			t.Errorf("serviceCIDR agreeing sources %q lack %s", agrees, src)
		}
	}

	if len(s.Nodes) != 3 {
		t.Fatalf("nodes = %d, want 3", len(s.Nodes))
	}
	cp1 := findNode(t, res.Cluster, "cp1")
	want(t, res, "spec.nodes[cp1].role", cp1.Role, v1alpha1.RoleControlPlane, "node-role.kubernetes.io/control-plane")
	want(t, res, "spec.nodes[cp1].os", cp1.OS, v1alpha1.OSLinux, "kubernetes.io/os")
	want(t, res, "spec.nodes[cp1].podCIDR", cp1.PodCIDR, "192.168.0.0/24", "spec.podCIDRs")
	want(t, res, "spec.nodes[cp1].nics[0].ip", cp1.NICs, []v1alpha1.NIC{{Name: "ens192", IP: "10.0.0.10", Prefix: 24}}, "InternalIP")
	want(t, res, "spec.nodes[cp1].nics[0].name", cp1.ClusterNIC, "ens192", "IP_AUTODETECTION_METHOD=interface=ens192")
	want(t, res, "spec.nodes[cp1].nics[0].prefix", cp1.NICs[0].Prefix, 24, "projectcalico.org/IPv4Address")
	w2 := findNode(t, res.Cluster, "w2")
	want(t, res, "spec.nodes[w2].role", w2.Role, v1alpha1.RoleWorker, "")
	want(t, res, "spec.nodes[w2].nics[0].ip", w2.NICs, []v1alpha1.NIC{{Name: "ens192", IP: "10.0.0.22", Prefix: 24}}, "")

	if len(res.Conflicts) != 0 {
		t.Errorf("conflicts: %+v", res.Conflicts)
	}
	if got := missingFields(res); !reflect.DeepEqual(got, []string{"spec.design"}) {
		t.Errorf("missing = %v, want only spec.design", got)
	}
	if len(res.Denied) != 0 {
		t.Errorf("denied: %v", res.Denied)
	}
	if res.MadeBy.Tool != "kubeadm" {
		t.Errorf("made by %+v, want kubeadm", res.MadeBy)
	}
	if !containsNote(res, "kubelet versions in use: v1.37.1 (2), v1.36.4 (1)") {
		t.Errorf("notes lack the kubelet version skew: %q", res.Notes)
	}
}

func containsNote(res *Result, sub string) bool {
	for _, n := range res.Notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}
