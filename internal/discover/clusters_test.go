package discover

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func TestDiscoverFlannel(t *testing.T) {
	cp := startCluster(t, "flannel", "10.96.0.0/12", false)
	res := discoverT(t, cp, Options{KubeconfigCluster: "flannel-lab"})
	s := res.Cluster.Spec

	want(t, res, "metadata.name", res.Cluster.Metadata.Name, "flannel-lab", "kubeconfig cluster name")
	want(t, res, "spec.kubernetesVersion", s.KubernetesVersion, "v1.37.1", "/version")
	want(t, res, "spec.containerRuntime.version", s.ContainerRuntime.Version, "1.7.24", "2 of 2 Nodes")
	want(t, res, "spec.networking.podCIDRs", s.Networking.PodCIDRs, []string{"10.244.0.0/16"}, "kube-proxy")
	if ag := res.Provenance["spec.networking.podCIDRs"].Agrees; len(ag) != 1 || !strings.Contains(ag[0], "kube-flannel/kube-flannel-cfg") {
		t.Errorf("podCIDRs agreeing sources = %q, want flannel's net-conf.json", ag)
	}
	want(t, res, "spec.networking.serviceCIDR", s.Networking.ServiceCIDR, "10.96.0.0/12", "ServiceCIDR kubernetes")
	want(t, res, "spec.networking.nodeCIDRMaskSize", s.Networking.NodeCIDRMaskSize, 24, "inferred: 2 of 2 Nodes")
	want(t, res, "spec.networking.clusterDNS", s.Networking.ClusterDNS, "10.96.0.10", "kube-dns")
	want(t, res, "spec.networking.clusterDomain", s.Networking.ClusterDomain, "lab.internal", "Corefile")
	want(t, res, "spec.linuxCNI.type", s.LinuxCNI.Type, "flannel", "DaemonSet kube-flannel/kube-flannel-ds")
	// No Windows node runs flannel yet: the maintained path, flanneld as a HostProcess DaemonSet.
	want(t, res, "spec.design", s.Design, v1alpha1.DesignFlannelHostProcess, "Backend.Type vxlan")
	if s.LinuxCNI.Flannel == nil {
		t.Fatal("no flannel settings")
	}
	want(t, res, "spec.linuxCNI.flannel.backend", s.LinuxCNI.Flannel.Backend, "vxlan", "net-conf.json")
	// flannel's Linux defaults are reported as they are: Windows needs 4096/4789, and check says so.
	want(t, res, "spec.linuxCNI.flannel.vni", s.LinuxCNI.Flannel.VNI, 1, "flannel's default 1")
	want(t, res, "spec.linuxCNI.flannel.port", s.LinuxCNI.Flannel.Port, 8472, "default 8472")
	if s.LinuxCNI.Calico != nil {
		t.Errorf("calico settings on a flannel cluster: %+v", s.LinuxCNI.Calico)
	}

	lab1 := findNode(t, res.Cluster, "lab-1")
	// The ExternalIP is not a NIC of the cluster network.
	want(t, res, "spec.nodes[lab-1].nics[0].ip", lab1.NICs, []v1alpha1.NIC{{Name: "eth0", IP: "192.168.56.11"}}, "InternalIP")
	want(t, res, "spec.nodes[lab-1].nics[0].name", lab1.ClusterNIC, "eth0", "flanneld --iface=eth0")
	want(t, res, "spec.nodes[lab-1].role", lab1.Role, v1alpha1.RoleControlPlane, "")

	if got := missingFields(res); !reflect.DeepEqual(got, []string{"spec.nodes[*].nics[0].prefix"}) {
		t.Errorf("missing = %v", got)
	}
	if m := res.Missing[0]; !reflect.DeepEqual(m.Nodes, []string{"lab-1", "lab-2"}) {
		t.Errorf("prefix missing on %v, want both nodes", m.Nodes)
	}
	if len(res.Conflicts) != 0 {
		t.Errorf("conflicts: %+v", res.Conflicts)
	}
	if res.MadeBy.Tool != "unknown" {
		t.Errorf("made by %+v, want unknown", res.MadeBy)
	}
	if !containsNote(res, "no kube-apiserver or kube-controller-manager pods are visible") {
		t.Errorf("notes: %q", res.Notes)
	}
	// Both nodes are amd64 (status.nodeInfo.architecture, no arch label): nothing to point out.
	if containsNote(res, "amd64") {
		t.Errorf("notes on an amd64 cluster name an architecture: %q", res.Notes)
	}
}

func TestDiscoverKops(t *testing.T) {
	cp := startCluster(t, "kops", "100.64.0.0/13", false)
	res := discoverT(t, cp, Options{KubeconfigCluster: "ignored-when-the-cluster-names-itself"})
	s := res.Cluster.Spec

	want(t, res, "metadata.name", res.Cluster.Metadata.Name, "k8s.example.com", "--cluster-name")
	// go-runner's own --log-file is not taken for the controller-manager's flags.
	want(t, res, "spec.networking.podCIDRs", s.Networking.PodCIDRs, []string{"100.96.0.0/11"}, "kube-controller-manager-i-0a1b2c3d4e5f60001 --cluster-cidr")
	if ag := strings.Join(res.Provenance["spec.networking.podCIDRs"].Agrees, "|"); !strings.Contains(ag, "Pod kube-system/kube-proxy-i-0a1b2c3d4e5f60002 --cluster-cidr") {
		t.Errorf("podCIDRs agreeing sources %q lack the kube-proxy static pod", ag)
	}
	want(t, res, "spec.networking.serviceCIDR", s.Networking.ServiceCIDR, "100.64.0.0/13", "ServiceCIDR kubernetes")
	// The shell-wrapped kube-apiserver flags are read.
	if ag := strings.Join(res.Provenance["spec.networking.serviceCIDR"].Agrees, "|"); !strings.Contains(ag, "kube-apiserver-i-0a1b2c3d4e5f60001 --service-cluster-ip-range") {
		t.Errorf("serviceCIDR agreeing sources %q lack the shell-wrapped kube-apiserver", ag)
	}
	want(t, res, "spec.networking.clusterDNS", s.Networking.ClusterDNS, "100.64.0.10", "kube-dns")
	want(t, res, "spec.networking.clusterDomain", s.Networking.ClusterDomain, "cluster.local", "Corefile")
	want(t, res, "spec.linuxCNI.type", s.LinuxCNI.Type, "other", "DaemonSet kube-system/cilium (cilium)")
	want(t, res, "spec.containerRuntime.version", s.ContainerRuntime.Version, "1.7.28", "")

	cpNode := findNode(t, res.Cluster, "i-0a1b2c3d4e5f60001")
	want(t, res, "spec.nodes[i-0a1b2c3d4e5f60001].role", cpNode.Role, v1alpha1.RoleControlPlane, "")
	worker := findNode(t, res.Cluster, "i-0a1b2c3d4e5f60002")
	want(t, res, "spec.nodes[i-0a1b2c3d4e5f60002].role", worker.Role, v1alpha1.RoleWorker, "")
	want(t, res, "spec.nodes[i-0a1b2c3d4e5f60002].nics[0].ip", worker.NICs, []v1alpha1.NIC{{IP: "172.20.40.7"}}, "InternalIP")

	if res.MadeBy.Tool != "kops" {
		t.Fatalf("made by %+v, want kops", res.MadeBy)
	}
	ev := strings.Join(res.MadeBy.Evidence, "|")
	for _, e := range []string{"kops.k8s.io/instancegroup", "DaemonSet kube-system/kops-controller", "k8s-app=kube-controller-manager", "providerID aws://"} {
		if !strings.Contains(ev, e) {
			t.Errorf("kops evidence %q lacks %q", ev, e)
		}
	}
	want2 := []string{"spec.design", "spec.nodes[*].nics[0].name", "spec.nodes[*].nics[0].prefix"}
	if got := missingFields(res); !reflect.DeepEqual(got, want2) {
		t.Errorf("missing = %v, want %v", got, want2)
	}
	if len(res.Conflicts) != 0 {
		t.Errorf("conflicts: %+v", res.Conflicts)
	}

	// Same cluster, same bytes.
	first, err := res.JSON()
	if err != nil {
		t.Fatal(err)
	}
	again, err := discoverT(t, cp, Options{KubeconfigCluster: "ignored-when-the-cluster-names-itself"}).JSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(first) != string(again) {
		t.Error("two discoveries of the same cluster differ")
	}
}

func TestDiscoverConflicts(t *testing.T) {
	cp := startCluster(t, "conflict", "10.96.0.0/12", false)
	res := discoverT(t, cp, Options{})
	s := res.Cluster.Spec

	// kubeadm-config (v1beta3, read without kubeadm's scheme) is more trusted than kube-proxy.
	want(t, res, "spec.networking.podCIDRs", s.Networking.PodCIDRs, []string{"10.244.0.0/16"}, "kubeadm-config")
	want(t, res, "spec.networking.nodeCIDRMaskSize", s.Networking.NodeCIDRMaskSize, 24, "extraArgs node-cidr-mask-size")
	want(t, res, "spec.networking.clusterDomain", s.Networking.ClusterDomain, "cluster.local", "kubeadm-config")

	byField := map[string][]Conflict{}
	for _, c := range res.Conflicts {
		byField[c.Field] = append(byField[c.Field], c)
	}
	pods := byField["spec.networking.podCIDRs"]
	if len(pods) != 2 {
		t.Fatalf("podCIDRs conflicts = %+v, want the source disagreement and the node ranges", pods)
	}
	wantValues := []SourcedValue{
		{Value: "10.244.0.0/16", Source: "ConfigMap kube-system/kubeadm-config (ClusterConfiguration networking.podSubnet)"},
		{Value: "10.32.0.0/12", Source: "ConfigMap kube-system/kube-proxy (KubeProxyConfiguration clusterCIDR)"},
	}
	if !reflect.DeepEqual(pods[0].Values, wantValues) || pods[0].Chosen != "10.244.0.0/16" {
		t.Errorf("podCIDRs conflict = %+v, want %+v", pods[0], wantValues)
	}
	if v := pods[1].Values[1].Value; !strings.Contains(v, "n1 10.32.0.0/24") {
		t.Errorf("node range conflict = %+v, want n1's pod CIDR outside 10.244.0.0/16", pods[1])
	}
	dom := byField["spec.networking.clusterDomain"]
	if len(dom) != 1 || dom[0].Chosen != "cluster.local" || dom[0].Values[1].Value != "corp.local" {
		t.Errorf("clusterDomain conflict = %+v", dom)
	}
	ver := byField["spec.kubernetesVersion"]
	if len(ver) != 1 || ver[0].Chosen != "v1.37.1" || ver[0].Values[1].Value != "v1.37.0" {
		t.Errorf("kubernetesVersion conflict = %+v", ver)
	}
	if len(res.Conflicts) != 4 {
		t.Errorf("conflicts = %+v, want 4", res.Conflicts)
	}
	if !res.HasFindings() {
		t.Error("HasFindings() = false with conflicts")
	}
	y, err := res.YAML()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"podCIDRs: [10.244.0.0/16] # CONFLICT: ConfigMap kube-system/kube-proxy (KubeProxyConfiguration clusterCIDR) says 10.32.0.0/12",
		"# CONFLICT spec.networking.podCIDRs: [10.244.0.0/16 from ConfigMap kube-system/kubeadm-config (ClusterConfiguration networking.podSubnet)] [10.32.0.0/12 from ConfigMap kube-system/kube-proxy (KubeProxyConfiguration clusterCIDR)]; using 10.244.0.0/16",
	} {
		if !strings.Contains(string(y), line) {
			t.Errorf("YAML lacks %q:\n%s", line, y)
		}
	}
}

func TestDiscoverWindowsJoined(t *testing.T) {
	cp := startCluster(t, "windows-joined", "10.96.0.0/12", false)
	res := discoverT(t, cp, Options{})
	s := res.Cluster.Spec

	want(t, res, "spec.design", s.Design, v1alpha1.DesignFlannelHostGW, "Backend.Type host-gw")
	want(t, res, "spec.linuxCNI.flannel.backend", s.LinuxCNI.Flannel.Backend, "host-gw", "kube-system/kube-flannel-cfg")
	want(t, res, "spec.windows.taint", *s.Windows.Taint, true, "2 of 2 Windows Nodes have the taint")
	w22 := findNode(t, res.Cluster, "win-2022")
	want(t, res, "spec.nodes[win-2022].os", w22.OS, v1alpha1.OSWindows, "kubernetes.io/os")
	want(t, res, "spec.nodes[win-2022].windowsBuild", w22.WindowsBuild, "10.0.20348", "node.kubernetes.io/windows-build")
	want(t, res, "spec.nodes[win-2022].podCIDR", w22.PodCIDR, "10.244.2.0/24", "")
	w19 := findNode(t, res.Cluster, "win-2019")
	want(t, res, "spec.nodes[win-2019].windowsBuild", w19.WindowsBuild, "10.0.17763", "kernelVersion")
	l1 := findNode(t, res.Cluster, "linux-1")
	if l1.WindowsBuild != "" {
		t.Errorf("Linux node has a Windows build %q", l1.WindowsBuild)
	}

	// Docker on one Linux node disagrees with containerd on the others.
	var rt *Conflict
	for i := range res.Conflicts {
		if res.Conflicts[i].Field == "spec.containerRuntime.name" {
			rt = &res.Conflicts[i]
		}
	}
	if rt == nil || rt.Chosen != "containerd" || rt.Values[1].Value != "docker" || rt.Values[1].Source != "1 of 4 Nodes (status.nodeInfo.containerRuntimeVersion)" {
		t.Errorf("runtime conflict = %+v", rt)
	}
	for _, n := range []string{
		"2 Windows nodes already joined: win-2019, win-2022",
		"DaemonSets for Windows nodes: kube-system/kube-flannel-ds-windows, kube-system/kube-proxy-windows",
		"1 of 4 Nodes run Docker",
	} {
		if !containsNote(res, n) {
			t.Errorf("notes lack %q: %q", n, res.Notes)
		}
	}
	for _, m := range res.Missing {
		if m.Field == "spec.nodes[*].nics[0].name" && !reflect.DeepEqual(m.Nodes, []string{"linux-1", "linux-2", "win-2019", "win-2022"}) {
			t.Errorf("NIC names missing on %v", m.Nodes)
		}
	}
	if got := missingFields(res); !reflect.DeepEqual(got, []string{"spec.nodes[*].nics[0].name", "spec.nodes[*].nics[0].prefix"}) {
		t.Errorf("missing = %v", got)
	}
}
