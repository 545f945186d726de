package discover

import (
	"reflect"
	"strings"
	"testing"
)

func TestComponentArgs(t *testing.T) {
	tests := []struct {
		name          string
		command, args []string
		want          map[string]string
	}{
		{"kubeadm static pod", []string{"kube-controller-manager", "--cluster-cidr=10.0.0.0/16", "--allocate-node-cidrs=true"}, nil,
			map[string]string{"cluster-cidr": "10.0.0.0/16", "allocate-node-cidrs": "true"}},
		{"go-runner wrapper", []string{"/go-runner", "--log-file=/var/log/x.log", "--also-stdout", "/usr/local/bin/kube-controller-manager"},
			[]string{"--cluster-cidr", "100.96.0.0/11", "--v=2"},
			map[string]string{"cluster-cidr": "100.96.0.0/11", "v": "2"}},
		{"shell wrapper", []string{"/bin/sh", "-c", `exec /usr/local/bin/kube-controller-manager --cluster-cidr=10.1.0.0/16 --cluster-name="my cluster" 2>&1 | tee -a /var/log/kcm.log`}, nil,
			map[string]string{"cluster-cidr": "10.1.0.0/16", "cluster-name": "my cluster", "a": "/var/log/kcm.log"}},
		{"last flag wins", []string{"kube-controller-manager"}, []string{"--cluster-cidr=1.0.0.0/8", "--cluster-cidr=2.0.0.0/8"},
			map[string]string{"cluster-cidr": "2.0.0.0/8"}},
		{"binary not found: all flags", nil, []string{"--cluster-cidr=10.0.0.0/8", "-v=4", "--bool"},
			map[string]string{"cluster-cidr": "10.0.0.0/8", "v": "4", "bool": "true"}},
		{"positional arguments ignored", []string{"kube-controller-manager", "positional", "--", "-", "--=x"}, nil, map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := componentArgs("kube-controller-manager", tc.command, tc.args)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestShellWords(t *testing.T) {
	got := shellWords(`a 'b c' "d \"e\"" f\ g;h&&i|j`)
	want := []string{"a", "b c", `d "e"`, "f g", ";", "h", "&", "&", "i", "|", "j"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("shellWords = %q, want %q", got, want)
	}
}

func TestCorefileClusterDomains(t *testing.T) {
	tests := []struct {
		name, corefile string
		want           []string
		err            string
	}{
		{"kubeadm default", "# comment\n.:53 {\n    errors\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n       pods insecure\n    }\n    forward . /etc/resolv.conf {\n       max_concurrent 1000\n    }\n}\n",
			[]string{"cluster.local"}, ""},
		{"trailing dot and case", ".:53 {\n kubernetes Cluster.Local. in-addr.arpa\n}", []string{"cluster.local"}, ""},
		{"zones from the server block", "cluster.local:53 dns://example.org:53 {\n kubernetes\n}", []string{"cluster.local", "example.org"}, ""},
		{"two server blocks, import ignored", "import /etc/coredns/custom/*.server\nk8s.lan:53 {\n kubernetes k8s.lan\n}\n.:53 {\n import /etc/coredns/custom/*.override\n forward . 8.8.8.8\n}",
			[]string{"k8s.lan"}, ""},
		{"quoted braces in args", `.:53 { kubernetes "a{b}" }`, []string{"a{b}"}, ""},
		{"no kubernetes plugin", ".:53 {\n forward . 1.1.1.1\n}", nil, ""},
		{"unclosed server block", ".:53 {\n kubernetes cluster.local\n", nil, "line 1: server block \".:53\" is not closed"},
		{"unclosed plugin block", ".:53 {\n kubernetes cluster.local {\n pods insecure\n", nil, "line 2: block of kubernetes is not closed"},
		{"unterminated quote", ".:53 {\n kubernetes \"cluster.local\n}", nil, "line 2: unterminated quoted string"},
		{"stray closing brace", "}\n", nil, "line 1: unexpected }"},
		{"block without zone", "{\n}", nil, "line 1: server block without a zone"},
		{"server block without body", "\n\n.:53", nil, "line 3: server block \".:53\" has no body"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := corefileClusterDomains(tc.corefile)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("zones = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseFlannelNetConf(t *testing.T) {
	tests := []struct {
		name, in string
		want     flannelNetConf
		err      string
	}{
		{"vxlan with Windows values", `{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan","VNI":4096,"Port":4789}}`,
			flannelNetConf{Network: "10.244.0.0/16", Backend: backend("vxlan", 4096, 4789)}, ""},
		{"host-gw, case-insensitive keys, unmasked network", `{"network":"10.244.1.0/16","backend":{"type":"HOST-GW"}}`,
			flannelNetConf{Network: "10.244.0.0/16", Backend: backend("host-gw", 0, 0)}, ""},
		{"default backend", `{"Network":"10.5.0.0/16"}`, flannelNetConf{Network: "10.5.0.0/16", Backend: backend("udp", 0, 0)}, ""},
		{"IPv6 only", `{"EnableIPv4":false,"EnableIPv6":true,"IPv6Network":"fd00::/56","Backend":{"Type":"vxlan"}}`,
			flannelNetConf{IPv6Network: "fd00::/56", EnableIPv4: ptr(false), Backend: backend("vxlan", 0, 0)}, ""},
		{"bad network", `{"Network":"10.244.0.0"}`, flannelNetConf{}, `net-conf.json: Network "10.244.0.0" is not an IPv4 CIDR`},
		{"IPv6 network as IPv4", `{"Network":"fd00::/8"}`, flannelNetConf{}, `net-conf.json: Network "fd00::/8" is not an IPv4 CIDR`},
		{"VNI out of range", `{"Network":"10.0.0.0/8","Backend":{"Type":"vxlan","VNI":16777216}}`, flannelNetConf{}, "net-conf.json: Backend.VNI 16777216 is out of range 0-16777215"},
		{"port out of range", `{"Network":"10.0.0.0/8","Backend":{"Type":"vxlan","Port":70000}}`, flannelNetConf{}, "net-conf.json: Backend.Port 70000 is out of range 0-65535"},
		{"not JSON", `Network: 10.0.0.0/8`, flannelNetConf{}, "decode net-conf.json: invalid character 'N' looking for beginning of value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseFlannelNetConf(tc.in)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("got %+v, want %+v", *got, tc.want)
			}
		})
	}
}

func backend(typ string, vni, port int) (b struct {
	Type string `json:"Type"`
	VNI  int    `json:"VNI"`
	Port int    `json:"Port"`
}) {
	b.Type, b.VNI, b.Port = typ, vni, port
	return b
}

func ptr[T any](v T) *T { return &v }

func TestParseKubeadmClusterConfiguration(t *testing.T) {
	v1beta4 := `apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
clusterName: c1
kubernetesVersion: v1.37.1
networking: {podSubnet: "10.1.0.0/16,fd00::/56", serviceSubnet: 10.2.0.0/16, dnsDomain: c1.local}
controllerManager:
  extraArgs:
  - {name: node-cidr-mask-size-ipv4, value: "25"}
`
	got, err := parseKubeadmClusterConfiguration([]byte(v1beta4))
	if err != nil {
		t.Fatal(err)
	}
	want := &kubeadmFacts{APIVersion: "kubeadm.k8s.io/v1beta4", KubernetesVersion: "v1.37.1", ClusterName: "c1",
		PodSubnet: "10.1.0.0/16,fd00::/56", ServiceSubnet: "10.2.0.0/16", DNSDomain: "c1.local",
		ControllerManagerArgs: map[string]string{"node-cidr-mask-size-ipv4": "25"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("v1beta4: got %+v, want %+v", got, want)
	}

	// Absent fields stay absent: no kubeadm defaults (10.96.0.0/12, cluster.local) are invented.
	got, err = parseKubeadmClusterConfiguration([]byte("apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got.ServiceSubnet != "" || got.DNSDomain != "" || got.PodSubnet != "" {
		t.Errorf("defaults invented: %+v", got)
	}

	legacy := "apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\nnetworking: {podSubnet: 10.9.0.0/16}\ncontrollerManager: {extraArgs: {node-cidr-mask-size: \"26\"}}\n"
	got, err = parseKubeadmClusterConfiguration([]byte(legacy))
	if err != nil {
		t.Fatal(err)
	}
	if got.PodSubnet != "10.9.0.0/16" || got.ControllerManagerArgs["node-cidr-mask-size"] != "26" || got.APIVersion != "kubeadm.k8s.io/v1beta2" {
		t.Errorf("v1beta2: got %+v", got)
	}

	for _, bad := range []struct{ in, err string }{
		{"apiVersion: kubeadm.k8s.io/v9\nkind: ClusterConfiguration\n", `unsupported ClusterConfiguration apiVersion "kubeadm.k8s.io/v9"`},
		{"apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\n", `kind is "InitConfiguration", expected ClusterConfiguration`},
		{"{", "decode ClusterConfiguration"},
	} {
		if _, err := parseKubeadmClusterConfiguration([]byte(bad.in)); err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("%q: error %v, want %q", bad.in, err, bad.err)
		}
	}
}

func TestParseComponentConfigs(t *testing.T) {
	kp, err := parseKubeProxyConfiguration([]byte("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclusterCIDR: 10.0.0.0/8\n"))
	if err != nil || kp.ClusterCIDR != "10.0.0.0/8" {
		t.Errorf("kube-proxy: %+v, %v", kp, err)
	}
	if _, err := parseKubeProxyConfiguration([]byte("apiVersion: v1\nkind: ConfigMap\n")); err == nil {
		t.Error("kube-proxy config of another kind: want an error")
	}
	kc, err := parseKubeletConfiguration([]byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: cgroupfs\nclusterDNS: [169.254.25.10]\n"))
	if err != nil || kc.CgroupDriver != "cgroupfs" || len(kc.ClusterDNS) != 1 {
		t.Errorf("kubelet: %+v, %v", kc, err)
	}
}

func TestReleaseVersion(t *testing.T) {
	for in, want := range map[string]string{
		"v1.37.1": "v1.37.1", "1.30.4": "v1.30.4", "v1.30.4-eks-a737599": "v1.30.4", "v1.31.2-gke.1059000": "v1.31.2",
		"v1.29.0+k3s1": "v1.29.0", "v0.0.0-master+$Format:%H$": "", "v2.0.1": "", "v1.x.1": "", "": "",
	} {
		got, ok := releaseVersion(in)
		if got != want || ok != (want != "") {
			t.Errorf("releaseVersion(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestWindowsBuildOfKernel(t *testing.T) {
	for in, want := range map[string]string{"10.0.17763.6532": "10.0.17763", "10.0.20348": "10.0.20348", "10.0": "", "a.b.c.d": "", "6.8.0-45-generic": ""} {
		if got := windowsBuildOfKernel(in); got != want {
			t.Errorf("windowsBuildOfKernel(%q) = %q, want %q", in, got, want)
		}
	}
}
