package discover

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// TestSeedClusterPlansLikeTheExample recreates the seed 000 cluster as objects, discovers it,
// adds only what the API cannot show (testdata/clusters/seed000/user.yaml, the -f file of
// `kubewin plan --from-cluster`), and checks that the plan equals the embedded example's plan.
func TestSeedClusterPlansLikeTheExample(t *testing.T) {
	example, _, err := v1alpha1.ParseExample()
	if err != nil {
		t.Fatal(err)
	}
	cp := startCluster(t, "seed000", "10.176.0.0/12", true)
	res := discoverT(t, cp, Options{})
	d := res.Cluster

	// What discovery finds on its own matches the example field by field.
	ex := example.Spec
	want(t, res, "metadata.name", d.Metadata.Name, example.Metadata.Name, "kubeadm-config")
	want(t, res, "spec.kubernetesVersion", d.Spec.KubernetesVersion, ex.KubernetesVersion, "/version")
	want(t, res, "spec.containerRuntime.name", d.Spec.ContainerRuntime.Name, ex.ContainerRuntime.Name, "")
	want(t, res, "spec.containerRuntime.cgroupDriver", d.Spec.ContainerRuntime.CgroupDriver, ex.ContainerRuntime.CgroupDriver, "kubelet-config")
	want(t, res, "spec.networking.podCIDRs", d.Spec.Networking.PodCIDRs, ex.Networking.PodCIDRs, "kubeadm-config")
	want(t, res, "spec.networking.serviceCIDR", d.Spec.Networking.ServiceCIDR, ex.Networking.ServiceCIDR, "ServiceCIDR kubernetes")
	want(t, res, "spec.networking.nodeCIDRMaskSize", d.Spec.Networking.NodeCIDRMaskSize, ex.Networking.NodeCIDRMaskSize, "--node-cidr-mask-size")
	want(t, res, "spec.networking.clusterDNS", d.Spec.Networking.ClusterDNS, ex.Networking.ClusterDNS, "kube-dns")
	want(t, res, "spec.networking.clusterDomain", d.Spec.Networking.ClusterDomain, ex.Networking.ClusterDomain, "kubeadm-config")
	want(t, res, "spec.linuxCNI.type", d.Spec.LinuxCNI.Type, ex.LinuxCNI.Type, "IPPools")
	want(t, res, "spec.linuxCNI.calico.ipPools", d.Spec.LinuxCNI.Calico.IPPools, ex.LinuxCNI.Calico.IPPools, "IPPools")
	want(t, res, "spec.linuxCNI.calico.ipipMode", d.Spec.LinuxCNI.Calico.IPIPMode, ex.LinuxCNI.Calico.IPIPMode, "IPPool")
	want(t, res, "spec.linuxCNI.calico.blockSize", d.Spec.LinuxCNI.Calico.BlockSize, ex.LinuxCNI.Calico.BlockSize, "IPPool")
	want(t, res, "spec.windows.taint", *d.Spec.Windows.Taint, *ex.Windows.Taint, "1 of 1 Windows Nodes")
	if len(d.Spec.Nodes) != len(ex.Nodes) {
		t.Fatalf("discovered %d nodes, the example has %d", len(d.Spec.Nodes), len(ex.Nodes))
	}
	for _, en := range ex.Nodes {
		dn := findNode(t, d, en.Name)
		base := "spec.nodes[" + en.Name + "]."
		want(t, res, base+"os", dn.OS, en.OS, "kubernetes.io/os")
		want(t, res, base+"role", dn.Role, en.Role, "")
		want(t, res, base+"podCIDR", dn.PodCIDR, en.PodCIDR, "spec.podCIDRs")
		want(t, res, base+"windowsBuild", dn.WindowsBuild, en.WindowsBuild, "")
		var cluster v1alpha1.NIC
		for _, nic := range en.NICs {
			if nic.Name == en.ClusterNIC {
				cluster = nic
			}
		}
		if len(dn.NICs) != 1 || dn.NICs[0].IP != cluster.IP {
			t.Errorf("%s: discovered NICs %+v, want the cluster NIC's address %s", en.Name, dn.NICs, cluster.IP)
			continue
		}
		if en.OS == v1alpha1.OSLinux {
			want(t, res, base+"nics[0].name", dn.NICs[0].Name, cluster.Name, "IP_AUTODETECTION_METHOD=interface=eth1")
			want(t, res, base+"nics[0].prefix", dn.NICs[0].Prefix, cluster.Prefix, "projectcalico.org/IPv4Address")
		}
	}
	// The rest is reported missing: the design and node009's NIC, which user.yaml supplies.
	var missing []string
	for _, m := range res.Missing {
		missing = append(missing, m.Field+" "+strings.Join(m.Nodes, ","))
	}
	wantMissing := []string{"spec.design ", "spec.nodes[*].nics[0].name node009", "spec.nodes[*].nics[0].prefix node009"}
	if !reflect.DeepEqual(missing, wantMissing) {
		t.Errorf("missing = %q, want %q", missing, wantMissing)
	}
	if len(res.Conflicts) != 0 || len(res.Denied) != 0 {
		t.Errorf("conflicts %+v, denied %+v", res.Conflicts, res.Denied)
	}

	data, err := os.ReadFile(filepath.Join(clustersDir, "seed000", "user.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var user v1alpha1.Cluster
	if err := yaml.UnmarshalStrict(data, &user); err != nil {
		t.Fatalf("user.yaml: %v", err)
	}
	merged, err := yaml.Marshal(Merge(d, &user))
	if err != nil {
		t.Fatal(err)
	}
	spec, _, err := v1alpha1.Parse("discovered+user.yaml", merged)
	if err != nil {
		t.Fatalf("merged spec does not parse: %v\n%s", err, merged)
	}
	got, err := plan.New(spec)
	if err != nil {
		t.Fatalf("plan of the discovered cluster: %v", err)
	}
	wantPlan, err := plan.New(example)
	if err != nil {
		t.Fatalf("plan of the example: %v", err)
	}
	gj, _ := json.MarshalIndent(got, "", " ")
	wj, _ := json.MarshalIndent(wantPlan, "", " ")
	if !bytes.Equal(gj, wj) {
		t.Errorf("plan of the discovered seed cluster differs from the example's:\n%s", firstDiff(string(gj), string(wj)))
	}
}

// firstDiff shows the first differing line of two texts with some context.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			lo := max(0, i-5)
			return "discovered:\n" + strings.Join(al[lo:min(len(al), i+3)], "\n") + "\nexample:\n" + strings.Join(bl[lo:min(len(bl), i+3)], "\n")
		}
	}
	return "lengths differ"
}
