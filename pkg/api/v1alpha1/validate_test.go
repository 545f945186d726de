package v1alpha1

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const specsDir = "../../../testdata/specs"

// edit replaces the first occurrence of old with new.
type edit struct{ old, new string }

// ruleCase breaks one rule by editing a valid spec and says where the error must point.
type ruleCase struct {
	name  string
	base  string // file under testdata/specs/good; "" is the embedded example
	edits []edit
	field string // expected FieldError.Field
	at    string // text whose first line in the edited document is the expected line; "" = first edit
	msg   string // fragment of Message or Expected
	n     int    // expected number of errors; 0 means exactly 1, -1 means any
}

func e(old, new string) []edit { return []edit{{old, new}} }

func loadBase(t *testing.T, base string) string {
	t.Helper()
	if base == "" {
		return string(ExampleYAML())
	}
	data, err := os.ReadFile(filepath.Join(specsDir, "good", base))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// applyEdits returns the edited document and the line of the first edit.
func applyEdits(t *testing.T, doc string, edits []edit) (string, int) {
	t.Helper()
	line := 0
	for i, ed := range edits {
		k := strings.Index(doc, ed.old)
		if k < 0 {
			t.Fatalf("edit %d: %q not found in base document", i, ed.old)
		}
		if i == 0 {
			line = strings.Count(doc[:k], "\n") + 1
		}
		doc = doc[:k] + ed.new + doc[k+len(ed.old):]
	}
	return doc, line
}

func lineOf(t *testing.T, doc, at string) int {
	t.Helper()
	k := strings.Index(doc, at)
	if k < 0 {
		t.Fatalf("%q not found in edited document", at)
	}
	return strings.Count(doc[:k], "\n") + 1
}

// Node indices in the example: master1-3 are 0-2, node001-008 are 3-10, node009 (Windows) is 11.
var ruleCases = []ruleCase{
	// Document shape and strict decoding.
	{name: "apiVersion", edits: e("apiVersion: kubewin.io/v1alpha1", "apiVersion: kubewin.io/v1beta1"), field: "apiVersion", msg: `found "kubewin.io/v1beta1"`},
	{name: "kind", edits: e("kind: Cluster", "kind: Clusters"), field: "kind", msg: "expected"},
	{name: "metadata name invalid", edits: e("name: mylan", "name: My_Lan"), field: "metadata.name", msg: "not a valid name"},
	{name: "metadata name missing", edits: e("metadata:\n  name: mylan\n", "metadata: {}\n"), field: "metadata.name", at: "metadata: {}", msg: "missing"},
	{name: "unknown field", edits: e("  design: upstream-tor/keepalived", "  desgin: upstream-tor/keepalived"), field: "spec.desgin", msg: `did you mean "design"`, n: 2},
	{name: "unknown field case", edits: e("podCIDRs: [10.160.0.0/12]", "podCidrs: [10.160.0.0/12]"), field: "spec.networking.podCidrs", msg: `did you mean "podCIDRs"`, n: 2},
	{name: "wrong type string for int", edits: e("nodeCIDRMaskSize: 24", `nodeCIDRMaskSize: "24"`), field: "spec.networking.nodeCIDRMaskSize", msg: `found string "24"`},
	{name: "wrong type number for string", edits: e("windowsBuild: 10.0.20348", "windowsBuild: 1809"), field: "spec.nodes[11].windowsBuild", msg: `quote it: "1809"`},
	{name: "wrong type scalar for list", edits: e("dnsSearch: [mylan.k8s]", "dnsSearch: mylan.k8s"), field: "spec.networking.dnsSearch", msg: "a list"},
	{name: "wrong type list for mapping", edits: e("  containerRuntime:\n    name: containerd\n    cgroupDriver: systemd\n", "  containerRuntime: [containerd]\n"), field: "spec.containerRuntime", msg: "found list"},
	{name: "wrong type bool", edits: e("taint: true", "taint: sometimes"), field: "spec.windows.taint", msg: "true or false"},
	{name: "duplicate key", edits: e("    clusterDomain: cluster.local\n", "    clusterDomain: cluster.local\n    clusterDomain: example.local\n"), field: "spec.networking.clusterDomain", at: "clusterDomain: example.local", msg: "duplicate key"},
	{name: "integer overflow", edits: e("blockSize: 26", "blockSize: 99999999999999999999"), field: "spec.linuxCNI.calico.blockSize", msg: "found number 99999999999999999999 (expected an integer)"},
	{name: "syntax error", edits: e("kind: Cluster", "kind: Cluster: x"), field: "", msg: "syntax error"},
	{name: "two documents", edits: e("      dnsServers: [100.100.126.205, 100.100.126.206]\n", "      dnsServers: [100.100.126.205, 100.100.126.206]\n---\nfoo: bar\n"), field: "", at: "foo: bar", msg: "found 2 YAML documents"},

	// Kubernetes version and runtime.
	{name: "version unmaintained", edits: e("kubernetesVersion: v1.37.1", "kubernetesVersion: v1.24.0"), field: "spec.kubernetesVersion", msg: "no longer maintained"},
	{name: "version too new", edits: e("kubernetesVersion: v1.37.1", "kubernetesVersion: v1.99"), field: "spec.kubernetesVersion", msg: "newer than"},
	{name: "version garbage", edits: e("kubernetesVersion: v1.37.1", "kubernetesVersion: latest"), field: "spec.kubernetesVersion", msg: "not a Kubernetes version"},
	{name: "runtime docker", edits: e("name: containerd", "name: docker"), field: "spec.containerRuntime.name", msg: "removed dockershim"},
	{name: "runtime other", edits: e("name: containerd", "name: cri-o"), field: "spec.containerRuntime.name", msg: "not supported"},
	{name: "cgroup driver", edits: e("cgroupDriver: systemd", "cgroupDriver: Systemd"), field: "spec.containerRuntime.cgroupDriver", msg: "case-sensitive"},
	{name: "runtime version", edits: e("name: containerd\n", "name: containerd\n    version: two\n"), field: "spec.containerRuntime.version", at: "version: two", msg: "not a version"},

	// Networking.
	{name: "pod CIDR host bits", edits: e("podCIDRs: [10.160.0.0/12]", "podCIDRs: [10.161.0.0/12]"), field: "spec.networking.podCIDRs[0]", msg: "canonical form 10.160.0.0/12"},
	{name: "pod CIDR IPv6", edits: e("podCIDRs: [10.160.0.0/12]", "podCIDRs: [fd00::/8]"), field: "spec.networking.podCIDRs[0]", msg: "not IPv4"},
	{name: "pod CIDR plain IP", edits: e("podCIDRs: [10.160.0.0/12]", "podCIDRs: [10.160.0.0]"), field: "spec.networking.podCIDRs[0]", msg: "no prefix length"},
	{name: "pod CIDRs missing", edits: e("    podCIDRs: [10.160.0.0/12]\n", ""), field: "spec.networking.podCIDRs", at: "  networking:", msg: "missing"},
	{name: "pod CIDRs overlap", edits: e("podCIDRs: [10.160.0.0/12]", "podCIDRs: [10.160.0.0/12, 10.160.0.0/16]"), field: "spec.networking.podCIDRs[1]", msg: "overlaps spec.networking.podCIDRs[0]"},
	{name: "service CIDR overlaps pods", edits: e("serviceCIDR: 10.176.0.0/12", "serviceCIDR: 10.168.0.0/16"), field: "spec.networking.serviceCIDR", msg: "overlaps spec.networking.podCIDRs[0]", n: 2},
	{name: "service CIDR missing", edits: e("    serviceCIDR: 10.176.0.0/12\n", ""), field: "spec.networking.serviceCIDR", at: "  networking:", msg: "missing"},
	{name: "mask size range", edits: e("nodeCIDRMaskSize: 24", "nodeCIDRMaskSize: 33"), field: "spec.networking.nodeCIDRMaskSize", msg: "33 is out of range (expected 1-29)"},
	{name: "mask size not below pod prefix", base: "flannel-vxlan.yaml", edits: e("    clusterDNS: 10.96.0.10\n", "    clusterDNS: 10.96.0.10\n    nodeCIDRMaskSize: 16\n"), field: "spec.networking.nodeCIDRMaskSize", at: "nodeCIDRMaskSize: 16", msg: "not smaller than the pod CIDR"},
	{name: "cluster DNS outside", edits: e("clusterDNS: 10.176.0.10", "clusterDNS: 10.192.0.10"), field: "spec.networking.clusterDNS", msg: "outside the service CIDR"},
	{name: "cluster DNS first address", edits: e("clusterDNS: 10.176.0.10", "clusterDNS: 10.176.0.1"), field: "spec.networking.clusterDNS", msg: "kubernetes Service"},
	{name: "cluster DNS network address", edits: e("clusterDNS: 10.176.0.10", "clusterDNS: 10.176.0.0"), field: "spec.networking.clusterDNS", msg: "network address"},
	{name: "cluster DNS not IP", edits: e("clusterDNS: 10.176.0.10", "clusterDNS: 10.176.0.300"), field: "spec.networking.clusterDNS", msg: "not an IP address"},
	{name: "cluster DNS missing", edits: e("    clusterDNS: 10.176.0.10\n", ""), field: "spec.networking.clusterDNS", at: "  networking:", msg: "missing"},
	{name: "cluster domain", edits: e("clusterDomain: cluster.local", "clusterDomain: cluster_local"), field: "spec.networking.clusterDomain", msg: "not a DNS domain"},
	{name: "dns search invalid", edits: e("dnsSearch: [mylan.k8s]", "dnsSearch: [mylan.k8s, -bad-]"), field: "spec.networking.dnsSearch[1]", msg: "not a DNS domain"},
	{name: "dns search duplicate", edits: e("dnsSearch: [mylan.k8s]", "dnsSearch: [mylan.k8s, MYLAN.k8s.]"), field: "spec.networking.dnsSearch[1]", msg: "repeats dnsSearch[0]"},
	{name: "dns search too many", edits: e("dnsSearch: [mylan.k8s]", "dnsSearch: [a1.x, a2.x, a3.x, a4.x, a5.x, a6.x, a7.x, a8.x, a9.x, a10.x, a11.x, a12.x, a13.x, a14.x, a15.x, a16.x, a17.x, a18.x, a19.x, a20.x, a21.x, a22.x, a23.x, a24.x, a25.x, a26.x, a27.x, a28.x, a29.x, a30.x]"), field: "spec.networking.dnsSearch", msg: "limit of 32"},
	{name: "node subnet overlaps service", edits: e("    dnsSearch: [mylan.k8s]\n", "    dnsSearch: [mylan.k8s]\n    nodeSubnets: [10.176.0.0/16]\n"), field: "spec.networking.nodeSubnets[0]", at: "nodeSubnets", msg: "overlaps the service CIDR"},
	{name: "NIC subnet overlaps pods", base: "hostgw.yaml", edits: e("nics: [{name: ens3, ip: 10.0.0.11, prefix: 24}]", "nics: [{name: ens3, ip: 10.201.128.11, prefix: 17}]"), field: "spec.nodes[0].nics[0].ip", msg: "overlaps the pod CIDR 10.201.0.0/16", n: 2},

	// Design and CNI.
	{name: "design unknown", edits: e("design: upstream-tor/keepalived", "design: upstream-tor"), field: "spec.design", msg: `"upstream-tor" is not supported`},
	{name: "design missing", base: "router.yaml", edits: e("  design: upstream-tor/router\n", ""), field: "spec.design", at: "spec:", msg: "missing"},
	{name: "cni type", edits: e("type: calico", "type: weave"), field: "spec.linuxCNI.type", msg: "one of calico, flannel, bridge, other"},
	{name: "calico ipip", edits: e("ipipMode: Always", "ipipMode: always"), field: "spec.linuxCNI.calico.ipipMode", msg: `case-sensitive: "Always"`},
	{name: "calico block size range", edits: e("blockSize: 26", "blockSize: 19"), field: "spec.linuxCNI.calico.blockSize", msg: "(expected 20-32)"},
	{name: "calico block larger than pool", edits: e("ipPools: [10.160.0.0/12]", "ipPools: [10.160.0.0/28]"), field: "spec.linuxCNI.calico.blockSize", at: "blockSize: 26", msg: "do not fit in the pool"},
	{name: "calico pool not canonical", edits: e("ipPools: [10.160.0.0/12]", "ipPools: [10.160.0.1/12]"), field: "spec.linuxCNI.calico.ipPools[0]", msg: "canonical form 10.160.0.0/12"},
	{name: "calico reservation", edits: e("reservation: IPReservation", "reservation: Reserve"), field: "spec.linuxCNI.calico.reservation", msg: "IPReservation, PoolExclusion"},
	{name: "calico settings for other CNI", base: "router.yaml", edits: e("    type: other\n", "    type: other\n    calico: {ipipMode: Never}\n"), field: "spec.linuxCNI.calico", at: "calico:", msg: "linuxCNI.type is \"other\""},
	{name: "flannel settings for calico", edits: e("    type: calico\n", "    type: calico\n    flannel: {backend: vxlan}\n"), field: "spec.linuxCNI.flannel", at: "flannel:", msg: "flannel settings are given"},
	// issue 11 item 2: calico-ipam ignores spec.podCIDR, so host-gw's per-node routes miss its pods.
	{name: "host-gw with calico IPAM", base: "hostgw.yaml", edits: e("linuxCNI: {type: other}", "linuxCNI: {type: calico}"), field: "spec.linuxCNI.type", msg: "calico-ipam assigns /26 blocks anywhere"},
	{name: "flannel design needs flannel", base: "flannel-hostgw.yaml", edits: e("linuxCNI: {type: flannel}", "linuxCNI: {type: calico}"), field: "spec.linuxCNI.type", msg: "runs flanneld on every node"},
	{name: "flannel backend enum", base: "flannel-vxlan.yaml", edits: e("backend: vxlan", "backend: udp"), field: "spec.linuxCNI.flannel.backend", msg: "host-gw, vxlan"},
	{name: "flannel backend contradicts design", base: "flannel-vxlan.yaml", edits: e("flannel: {backend: vxlan, vni: 4096, port: 4789}", "flannel: {backend: host-gw}"), field: "spec.linuxCNI.flannel.backend", msg: "contradicts design flannel/vxlan"},
	{name: "flannel vni for host-gw", base: "flannel-hostgw.yaml", edits: e("linuxCNI: {type: flannel}", "linuxCNI: {type: flannel, flannel: {vni: 4096}}"), field: "spec.linuxCNI.flannel", msg: "vni/port are set"},
	{name: "flannel windows vni", base: "flannel-vxlan.yaml", edits: e("vni: 4096", "vni: 1"), field: "spec.linuxCNI.flannel.vni", msg: "smallest VNI Windows"},
	{name: "flannel vni range", base: "flannel-vxlan.yaml", edits: e("vni: 4096", "vni: 16777216"), field: "spec.linuxCNI.flannel.vni", msg: "(expected 1-16777215)"},
	{name: "flannel windows port", base: "flannel-vxlan.yaml", edits: e("port: 4789", "port: 8472"), field: "spec.linuxCNI.flannel.port", msg: "UDP port 4789"},
	// Designs calico/hostprocess and flannel/hostprocess (issue 26).
	{name: "calico hostprocess needs calico", base: "calico-hostprocess.yaml", edits: e("    type: calico\n    calico: {ipipMode: Never, vxlanMode: Always, strictAffinity: false, windowsDataplane: Disabled, bgp: Disabled}\n", "    type: other\n"), field: "spec.linuxCNI.type", at: "type: other", msg: "Calico for Windows"},
	{name: "calico hostprocess ipip", base: "calico-hostprocess.yaml", edits: e("ipipMode: Never", "ipipMode: Always"), field: "spec.linuxCNI.calico.ipipMode", msg: "no IP-in-IP"},
	{name: "calico hostprocess dataplane", base: "calico-hostprocess.yaml", edits: e("windowsDataplane: Disabled", "windowsDataplane: hns"), field: "spec.linuxCNI.calico.windowsDataplane", msg: `case-sensitive: "HNS"`},
	{name: "calico hostprocess bgp", base: "calico-hostprocess.yaml", edits: e("bgp: Disabled", "bgp: Off"), field: "spec.linuxCNI.calico.bgp", msg: "Enabled, Disabled"},
	{name: "hostprocess api server missing", base: "calico-hostprocess.yaml", edits: e("    apiServerEndpoint: 10.0.0.10:6443\n", ""), field: "spec.networking.apiServerEndpoint", at: "networking:", msg: "cannot use the kubernetes Service"},
	{name: "hostprocess api server form", base: "flannel-hostprocess.yaml", edits: e("apiServerEndpoint: 172.20.0.10:6443", "apiServerEndpoint: https://172.20.0.10"), field: "spec.networking.apiServerEndpoint", msg: "is not host:port"},
	{name: "hostprocess daemonset component", base: "calico-hostprocess.yaml", edits: e("component: calico-node", "component: felix"), field: "spec.windows.daemonSets[0].component", msg: "kube-proxy, flannel, calico-node, other"},
	{name: "flannel hostprocess needs flannel", base: "flannel-hostprocess.yaml", edits: e("    type: flannel\n", "    type: calico\n"), field: "spec.linuxCNI.type", msg: "runs flanneld on every node"},
	{name: "flannel hostprocess windows vni", base: "flannel-hostprocess.yaml", edits: e("vni: 4096", "vni: 1"), field: "spec.linuxCNI.flannel.vni", msg: "smallest VNI Windows"},
	{name: "flannel hostprocess windows port", base: "flannel-hostprocess.yaml", edits: e("port: 4789", "port: 8472"), field: "spec.linuxCNI.flannel.port", msg: "UDP port 4789"},

	// Windows settings and images.
	{name: "install dir", edits: e(`installDir: 'C:\k'`, "installDir: /opt/k"), field: "spec.windows.installDir", msg: "absolute Windows path"},
	{name: "hns network name", edits: e("hnsNetworkName: l2bridge", `hnsNetworkName: 'l2"bridge'`), field: "spec.windows.hnsNetworkName", msg: "PowerShell"},
	{name: "system reserved memory", edits: e("systemReservedMemory: 2Gi", "systemReservedMemory: 2GB"), field: "spec.windows.systemReservedMemory", msg: "not a memory quantity"},
	{name: "registry prefix", edits: e("  images:\n", "  images:\n    registry: http://repo.mylan.k8s:9999\n"), field: "spec.images.registry", at: "registry: http", msg: "not a registry prefix"},
	{name: "pause image untagged", edits: e("  images:\n", "  images:\n    windowsPause: mcr.microsoft.com/oss/kubernetes/pause\n"), field: "spec.images.windowsPause", at: "windowsPause", msg: "no tag or digest"},
	{name: "pause image invalid", edits: e("  images:\n", "  images:\n    linuxPause: registry.k8s.io/Pause:3.10\n"), field: "spec.images.linuxPause", at: "linuxPause", msg: "not an image reference"},
	{name: "insecure registry scheme", edits: e("repo.mylan.k8s:9999]", "http://repo.mylan.k8s:9999]"), field: "spec.images.insecureRegistries[1]", msg: "not a registry host"},
	{name: "insecure registry port", edits: e("repo.mylan.k8s:9999]", "repo.mylan.k8s:99999]"), field: "spec.images.insecureRegistries[1]", msg: "not a registry host"},
	{name: "insecure registry duplicate", edits: e("repo.mylan.k8s:9999]", "repo.mylan.k8s:8888]"), field: "spec.images.insecureRegistries[1]", msg: "repeats insecureRegistries[0]"},

	// Nodes.
	{name: "nodes missing", base: "flannel-hostgw.yaml", edits: e("  nodes:\n  - name: master\n    os: linux\n    nics: [{name: eth0, ip: 172.20.0.10, prefix: 16}]\n  - name: win-1\n    os: windows\n    windowsBuild: ltsc2019\n    nics: [{name: Ethernet, ip: 172.20.1.10, prefix: 16}]\n", ""), field: "spec.nodes", at: "spec:", msg: "missing"},
	{name: "node name duplicate", edits: e("name: master2", "name: master1"), field: "spec.nodes[1].name", msg: "repeats spec.nodes[0]", n: 2},
	{name: "node name invalid", edits: e("name: node001", "name: Node_001"), field: "spec.nodes[3].name", msg: "not a valid node name"},
	{name: "node name missing", base: "router.yaml", edits: e("  - name: win2\n    os: windows", "  - os: windows"), field: "spec.nodes[2].name", msg: "missing"},
	{name: "node os", edits: e("os: windows", "os: Windows"), field: "spec.nodes[11].os", msg: `case-sensitive: "windows"`},
	{name: "node role", edits: e("role: worker\n    windowsBuild", "role: master\n    windowsBuild"), field: "spec.nodes[11].role", msg: "control-plane, worker"},
	{name: "windows control plane", edits: e("role: worker\n    windowsBuild", "role: control-plane\n    windowsBuild"), field: "spec.nodes[11].role", msg: "control plane runs on Linux"},
	{name: "windows build missing", edits: e("    windowsBuild: 10.0.20348      # the seed's node ran 10.0.17763 (Windows Server 2019); see the header\n", ""), field: "spec.nodes[11].windowsBuild", at: "name: node009", msg: "missing"},
	{name: "windows build unknown", edits: e("windowsBuild: 10.0.20348", "windowsBuild: 10.0.12345"), field: "spec.nodes[11].windowsBuild", msg: "not a Windows Server build kubewin knows"},
	{name: "windows build unsupported", edits: e("windowsBuild: 10.0.20348", `windowsBuild: "1803"`), field: "spec.nodes[11].windowsBuild", msg: "10.0.17763 (ltsc2019), 10.0.20348 (ltsc2022)"},
	{name: "windows build on linux", edits: e("name: node001\n    os: linux\n", "name: node001\n    os: linux\n    windowsBuild: ltsc2019\n"), field: "spec.nodes[3].windowsBuild", at: "windowsBuild: ltsc2019", msg: "Linux node"},
	{name: "nics missing", base: "router.yaml", edits: e("    nics:\n    - {name: Ethernet0, ip: 192.168.7.22, prefix: 24, gateway: 192.168.7.1}\n", "    nics: []\n"), field: "spec.nodes[2].nics", at: "nics: []", msg: "missing"},
	{name: "nic name duplicate", base: "router.yaml", edits: e("    - {name: eth0, ip: 192.168.7.10, prefix: 24, gateway: 192.168.7.1}\n", "    - {name: eth0, ip: 192.168.7.10, prefix: 24, gateway: 192.168.7.1}\n    - {name: eth0, ip: 10.9.9.9, prefix: 24}\n"), field: "spec.nodes[0].nics[1].name", at: "10.9.9.9", msg: "repeats nics[0]", n: 2},
	{name: "nic name missing", base: "router.yaml", edits: e("{name: Ethernet0, ip: 192.168.7.22,", "{ip: 192.168.7.22,"), field: "spec.nodes[2].nics[0].name", msg: "missing"},
	{name: "mac", edits: e("mac: 00-15-00-00-00-01", "mac: 00-15-00-00-00"), field: "spec.nodes[11].nics[0].mac", msg: "not a MAC address"},
	{name: "mac dotted", edits: e("mac: 00-15-00-00-00-01", "mac: 0015.0000.0001"), field: "spec.nodes[11].nics[0].mac", msg: "00-15-00-00-00-02 or 00:15:00:00:00:02"},
	{name: "prefix range", edits: e("prefix: 23\n      dnsServers", "prefix: 33\n      dnsServers"), field: "spec.nodes[11].nics[1].prefix", msg: "33 is out of range (expected 1-32)"},
	{name: "prefix missing", base: "router.yaml", edits: e("ip: 192.168.7.21, prefix: 24,", "ip: 192.168.7.21,"), field: "spec.nodes[1].nics[0].prefix", msg: "missing"},
	{name: "ip invalid", edits: e("ip: 172.16.126.216", "ip: 172.16.126"), field: "spec.nodes[11].nics[0].ip", msg: "not an IP address"},
	{name: "ip missing", base: "router.yaml", edits: e("ip: 192.168.7.21, ", ""), field: "spec.nodes[1].nics[0].ip", at: "name: Ethernet0, mac", msg: "missing"},
	{name: "ip network address", base: "router.yaml", edits: e("ip: 192.168.7.22", "ip: 192.168.7.0"), field: "spec.nodes[2].nics[0].ip", msg: "network address of 192.168.7.0/24"},
	{name: "ip broadcast address", base: "router.yaml", edits: e("ip: 192.168.7.22", "ip: 192.168.7.255"), field: "spec.nodes[2].nics[0].ip", msg: "broadcast address"},
	{name: "ip loopback", base: "router.yaml", edits: e("ip: 192.168.7.22", "ip: 127.0.0.22"), field: "spec.nodes[2].nics[0].ip", msg: "not a unicast host address"},
	{name: "ip duplicate across nodes", base: "router.yaml", edits: e("ip: 192.168.7.22", "ip: 192.168.7.21"), field: "spec.nodes[2].nics[0].ip", msg: "already the address of spec.nodes[1].nics[0].ip"},
	{name: "nic gateway outside subnet", base: "router.yaml", edits: e("192.168.7.22, prefix: 24, gateway: 192.168.7.1", "192.168.7.22, prefix: 24, gateway: 192.168.8.1"), field: "spec.nodes[2].nics[0].gateway", msg: "outside the NIC's subnet 192.168.7.0/24"},
	{name: "nic gateway own address", base: "router.yaml", edits: e("192.168.7.22, prefix: 24, gateway: 192.168.7.1", "192.168.7.22, prefix: 24, gateway: 192.168.7.22"), field: "spec.nodes[2].nics[0].gateway", msg: "own address"},
	{name: "dns server", edits: e("dnsServers: [100.100.126.205, 100.100.126.206]", "dnsServers: [100.100.126.205, dns1]"), field: "spec.nodes[11].nics[1].dnsServers[1]", msg: "not an IP address"},
	{name: "cluster NIC missing", edits: e("    clusterNIC: eth1\n    podCIDR: 10.160.11.0/24", "    podCIDR: 10.160.11.0/24"), field: "spec.nodes[11].clusterNIC", at: "name: node009", msg: "the node has 2 NICs"},
	{name: "cluster NIC unknown", edits: e("clusterNIC: eth1\n    podCIDR: 10.160.11.0/24", "clusterNIC: eth7\n    podCIDR: 10.160.11.0/24"), field: "spec.nodes[11].clusterNIC", msg: `"eth7" is not a NIC of this node (expected one of eth0, eth1)`},
	{name: "pod CIDR of node not canonical", edits: e("podCIDR: 10.160.11.0/24", "podCIDR: 10.160.11.1/24"), field: "spec.nodes[11].podCIDR", msg: "canonical form 10.160.11.0/24"},
	{name: "pod CIDR of node outside", edits: e("podCIDR: 10.160.11.0/24", "podCIDR: 10.200.11.0/24"), field: "spec.nodes[11].podCIDR", msg: "outside every pod CIDR"},
	{name: "pod CIDR of node mask", edits: e("podCIDR: 10.160.11.0/24", "podCIDR: 10.160.11.0/25"), field: "spec.nodes[11].podCIDR", msg: "is a /25"},
	{name: "pod CIDR of node duplicate", edits: e("podCIDR: 10.160.11.0/24", "podCIDR: 10.160.10.0/24"), field: "spec.nodes[11].podCIDR", msg: `10.160.10.0/24 is also the pod CIDR of node "node008" (spec.nodes[10].podCIDR)`},
	{name: "pod CIDR of node overlapping", base: "hostgw.yaml", edits: e("podCIDR: 10.200.0.128/25", "podCIDR: 10.200.0.0/24"), field: "spec.nodes[1].podCIDR", msg: `overlaps 10.200.0.0/25, the pod CIDR of node "linux-a" (spec.nodes[0].podCIDR)`, n: 2},
	{name: "label key", base: "router.yaml", edits: e("example.com/rack: r7", "example.com/rack/x: r7"), field: "spec.nodes[1].labels[example.com/rack/x]", msg: "not a valid label key"},
	{name: "label value", base: "router.yaml", edits: e("example.com/rack: r7", "example.com/rack: -r7-"), field: "spec.nodes[1].labels[example.com/rack]", msg: "not a valid label value"},
	{name: "label restricted", base: "router.yaml", edits: e("example.com/rack: r7", `node-role.kubernetes.io/worker: ""`), field: "spec.nodes[1].labels[node-role.kubernetes.io/worker]", msg: "kubelet refuses"},

	// Gateway groups.
	{name: "group name", edits: e("- name: win-gw", "- name: Win_GW"), field: "spec.gatewayGroups[0].name", msg: "not a DNS-1123 label"},
	{name: "group name duplicate", edits: e("  nodes:\n  - name: master1", "  - name: win-gw\n    members: [{node: node001}]\n    vridRange: {first: 1, last: 100}\n  nodes:\n  - name: master1"), field: "spec.gatewayGroups[1].name", at: "- name: win-gw\n    members: [", msg: "repeats gatewayGroups[0]", n: 2},
	{name: "members missing", edits: e("    members:\n    - {node: master1, priority: 150}\n    - {node: master2, priority: 140}\n    - {node: master3, priority: 130}\n", "    members: []\n"), field: "spec.gatewayGroups[0].members", at: "members: []", msg: "missing"},
	{name: "member unknown", edits: e("{node: master2, priority: 140}", "{node: master9, priority: 140}"), field: "spec.gatewayGroups[0].members[1].node", msg: `"master9" is not a node`},
	{name: "member windows", edits: e("{node: master2, priority: 140}", "{node: node009, priority: 140}"), field: "spec.gatewayGroups[0].members[1].node", msg: "keepalived gateways run on Linux"},
	{name: "member repeated", edits: e("{node: master2, priority: 140}", "{node: master1, priority: 140}"), field: "spec.gatewayGroups[0].members[1].node", msg: "repeats members[0]"},
	{name: "priority range", edits: e("{node: master1, priority: 150}", "{node: master1, priority: 255}"), field: "spec.gatewayGroups[0].members[0].priority", msg: "(expected 1-254)"},
	{name: "priority duplicate", edits: e("{node: master2, priority: 140}", "{node: master2, priority: 150}"), field: "spec.gatewayGroups[0].members[1].priority", msg: "repeats members[0]"},
	{name: "interface not on member", edits: e("interface: eth1", "interface: eth2"), field: "spec.gatewayGroups[0].interface", msg: `member "master1" has no NIC "eth2"`, n: 3},
	{name: "interface ambiguous", edits: []edit{{"    interface: eth1\n", ""}, {"clusterNIC: eth1\n    podCIDR: 10.160.1.0/24", "clusterNIC: eth0\n    podCIDR: 10.160.1.0/24"}}, field: "spec.gatewayGroups[0].interface", at: "- name: win-gw", msg: "members' cluster NICs differ (master1: eth1, master2: eth0, master3: eth1)"},
	{name: "vrid range bounds", edits: e("vridRange: {first: 188, last: 255}", "vridRange: {first: 0, last: 255}"), field: "spec.gatewayGroups[0].vridRange.first", msg: "0 is out of range (expected 1-255)"},
	{name: "vrid range order", edits: e("vridRange: {first: 188, last: 255}", "vridRange: {first: 200, last: 188}"), field: "spec.gatewayGroups[0].vridRange", msg: "first 200 is above last 188"},
	{name: "vips per instance", edits: e("    vrrpVersion: 3\n", "    vrrpVersion: 3\n    vipsPerInstance: 256\n"), field: "spec.gatewayGroups[0].vipsPerInstance", at: "vipsPerInstance", msg: "(expected 1-255)"},
	{name: "vrrp version", edits: e("vrrpVersion: 3", "vrrpVersion: 4"), field: "spec.gatewayGroups[0].vrrpVersion", msg: "one of 2, 3"},
	{name: "advert interval syntax", edits: e("advertInterval: 50ms", "advertInterval: fast"), field: "spec.gatewayGroups[0].advertInterval", msg: "not a duration"},
	{name: "advert interval zero", edits: e("advertInterval: 50ms", "advertInterval: 0s"), field: "spec.gatewayGroups[0].advertInterval", msg: "not positive"},
	{name: "advert interval v2 sub-second", edits: e("vrrpVersion: 3", "vrrpVersion: 2"), field: "spec.gatewayGroups[0].advertInterval", at: "advertInterval: 50ms", msg: "VRRPv2 carries the advert interval in whole seconds"},
	{name: "advert interval v3 centiseconds", edits: e("advertInterval: 50ms", "advertInterval: 105ms"), field: "spec.gatewayGroups[0].advertInterval", msg: "multiple of 10ms"},
	{name: "advert interval v3 too long", edits: e("advertInterval: 50ms", "advertInterval: 41s"), field: "spec.gatewayGroups[0].advertInterval", msg: "40.95s"},
	{name: "windows nodes unknown", edits: e("    vrrpVersion: 3\n", "    vrrpVersion: 3\n    windowsNodes: [node010]\n"), field: "spec.gatewayGroups[0].windowsNodes[0]", at: "windowsNodes", msg: `"node010" is not a node`, n: 2},
	{name: "windows nodes linux", edits: e("    vrrpVersion: 3\n", "    vrrpVersion: 3\n    windowsNodes: [node001]\n"), field: "spec.gatewayGroups[0].windowsNodes[0]", at: "windowsNodes", msg: "gateways serve Windows nodes", n: 2},
	{name: "windows nodes repeated", edits: e("    vrrpVersion: 3\n", "    vrrpVersion: 3\n    windowsNodes: [node009, node009]\n"), field: "spec.gatewayGroups[0].windowsNodes[1]", at: "windowsNodes", msg: "repeats windowsNodes[0]"},
	{name: "windows node not served", edits: e("    vrrpVersion: 3\n", "    vrrpVersion: 3\n    windowsNodes: [node010]\n"), field: "spec.nodes[11]", at: "name: node009", msg: `Windows node "node009" is not served`, n: 2},
	{name: "windows node served twice", edits: e("  nodes:\n  - name: master1", "  - name: win-gw2\n    members: [{node: node001}]\n    vridRange: {first: 1, last: 100}\n  nodes:\n  - name: master1"), field: "spec.gatewayGroups[1].windowsNodes", at: "- name: win-gw2", msg: `"node009" is already served by gatewayGroups[0] ("win-gw")`},
	{name: "vrid ranges intersect", edits: e("  nodes:\n  - name: master1", "  - name: win-gw2\n    members: [{node: node001}]\n    windowsNodes: []\n    vridRange: {first: 1, last: 188}\n  nodes:\n  - name: master1"), field: "spec.gatewayGroups[1].vridRange", at: "first: 1, last: 188", msg: "1-188 intersects 188-255", n: 2},
	{name: "router VIP outside", edits: e("    vrrpVersion: 3\n", "    vrrpVersion: 3\n    routerVIPs: [172.16.126.250]\n"), field: "spec.gatewayGroups[0].routerVIPs[0]", at: "routerVIPs", msg: "outside the subnet of member master1 eth1 (100.100.126.0/23)"},
	{name: "router VIP is node address", edits: e("    vrrpVersion: 3\n", "    vrrpVersion: 3\n    routerVIPs: [100.100.126.202]\n"), field: "spec.gatewayGroups[0].routerVIPs[0]", at: "routerVIPs", msg: "already the address of spec.nodes[0].nics[1].ip"},
	{name: "router VIP broadcast", edits: e("    vrrpVersion: 3\n", "    vrrpVersion: 3\n    routerVIPs: [100.100.127.255]\n"), field: "spec.gatewayGroups[0].routerVIPs[0]", at: "routerVIPs", msg: "broadcast address"},
	{name: "router VIP repeated", edits: e("    vrrpVersion: 3\n", "    vrrpVersion: 3\n    routerVIPs: [100.100.126.250, 100.100.126.250]\n"), field: "spec.gatewayGroups[0].routerVIPs[1]", at: "routerVIPs", msg: "repeats spec.gatewayGroups[0].routerVIPs[0]"},
	{name: "router VIP invalid", edits: e("    vrrpVersion: 3\n", "    vrrpVersion: 3\n    routerVIPs: [vip]\n"), field: "spec.gatewayGroups[0].routerVIPs[0]", at: "routerVIPs", msg: "not an IP address"},

	// What each design requires.
	{name: "keepalived members off the windows segment", edits: e("interface: eth1", "interface: eth0"), field: "spec.gatewayGroups[0].members[0].node", at: "node: master1", msg: "not on the cluster subnet of Windows node node009 (100.100.126.216/23)", n: 3},
	{name: "keepalived needs groups", edits: e("  gatewayGroups:\n  - name: win-gw\n    interface: eth1\n    members:\n    - {node: master1, priority: 150}\n    - {node: master2, priority: 140}\n    - {node: master3, priority: 130}\n    vridRange: {first: 188, last: 255}\n    vrrpVersion: 3\n    advertInterval: 50ms\n", ""), field: "spec.gatewayGroups", at: "spec:", msg: "needs gateway groups"},
	{name: "groups need keepalived design", base: "router.yaml", edits: e("  nodes:\n", "  gatewayGroups:\n  - name: gw\n    members: [{node: cp1}]\n  nodes:\n"), field: "spec.gatewayGroups", at: "gatewayGroups:", msg: "only used by design upstream-tor/keepalived"},
	{name: "tor router needs router design", edits: e("  nodes:\n", "  torRouter: {ip: 100.100.126.1}\n  nodes:\n"), field: "spec.torRouter", at: "torRouter:", msg: "only used by design upstream-tor/router"},
	{name: "router design needs tor router", base: "router.yaml", edits: e("  torRouter:\n    name: tor-r7\n    ip: 192.168.7.1\n", ""), field: "spec.torRouter", at: "spec:", msg: "needs the router"},
	{name: "tor router outside node subnet", base: "router.yaml", edits: e("    ip: 192.168.7.1\n", "    ip: 192.168.8.1\n"), field: "spec.torRouter.ip", at: "192.168.8.1", msg: "outside the cluster subnet (192.168.7.0/24) of node cp1, win1, win2"},
	{name: "tor router is a node", base: "router.yaml", edits: e("    ip: 192.168.7.1\n", "    ip: 192.168.7.10\n"), field: "spec.torRouter.ip", at: "ip: 192.168.7.10\n", msg: "address of spec.nodes[0].nics[0].ip"},
	{name: "host-gw one segment", base: "hostgw.yaml", edits: e("ip: 10.0.0.21, prefix: 24", "ip: 10.0.1.21, prefix: 24"), field: "spec.nodes[2].nics[0].ip", msg: `not on the subnet of node "linux-a"`},

	// JSON input has positions too.
	{name: "json unknown field", base: "cluster.json", edits: e(`"clusterDNS": "10.96.0.10"`, `"clusterDNS": "10.96.0.10", "clusterDns": "x"`), field: "spec.networking.clusterDns", msg: `did you mean "clusterDNS"`},
	{name: "json wrong type", base: "cluster.json", edits: e(`"priority": 200`, `"priority": "200"`), field: "spec.gatewayGroups[0].members[0].priority", msg: "an integer"},
	{name: "json duplicate key", base: "cluster.json", edits: e(`{"name": "json"}`, `{"name": "json", "name": "again"}`), field: "metadata.name", msg: "duplicate key"},
}

func TestValidationRules(t *testing.T) {
	for _, tc := range ruleCases {
		t.Run(tc.name, func(t *testing.T) {
			doc, line := applyEdits(t, loadBase(t, tc.base), tc.edits)
			if tc.at != "" {
				line = lineOf(t, doc, tc.at)
			}
			_, _, err := Parse("test.yaml", []byte(doc))
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Parse error = %v, want an ErrorList", err)
			}
			want := tc.n
			if want == 0 {
				want = 1
			}
			if want > 0 && len(list) != want {
				t.Errorf("got %d errors, want %d:\n%v", len(list), want, list)
			}
			for _, fe := range list {
				if fe.Field == tc.field && fe.Line == line && fe.File == "test.yaml" && fe.Line > 0 &&
					strings.Contains(fe.Message+" (expected "+fe.Expected+")", tc.msg) {
					return
				}
			}
			t.Errorf("no error at line %d for %q containing %q; got:\n%v", line, tc.field, tc.msg, list)
		})
	}
}

// Every rule also holds for a Cluster built in Go (the planner's and discover's path): Validate
// finds the problem without positions.
func TestValidateWithoutSource(t *testing.T) {
	c, _, err := ParseExample()
	if err != nil {
		t.Fatal(err)
	}
	c.Spec.Nodes[11].NICs[1].Prefix = 33
	errs := Validate(c)
	if len(errs) != 1 || errs[0].Field != "spec.nodes[11].nics[1].prefix" || errs[0].Line != 0 {
		t.Fatalf("Validate = %v", errs)
	}
	if got, want := errs[0].Error(), "spec.nodes[11].nics[1].prefix: 33 is out of range (expected 1-32)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// Validate must not depend on SetDefaults having run: an undefaulted valid spec is valid.
func TestValidateUndefaulted(t *testing.T) {
	for _, name := range goodSpecs(t) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		c, _, errs, _ := decodeDocument(name, data)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", name, errs)
		}
		if errs := Validate(c); len(errs) > 0 {
			t.Errorf("%s undefaulted: %v", name, errs)
		}
	}
}

func goodSpecs(t *testing.T) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(specsDir, "good", "*"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no good specs: %v", err)
	}
	return names
}
