package discover

import (
	"strings"
	"testing"
)

// The fuzz targets check that the parsers of untrusted cluster data never panic and keep their
// contracts on any input. Seeds are the shapes real clusters have.

func FuzzComponentArgs(f *testing.F) {
	f.Add("kube-controller-manager\x00--cluster-cidr=10.0.0.0/16\x00--v\x002")
	f.Add("/bin/sh\x00-c\x00exec kube-controller-manager --a='b c' 2>&1 | tee x")
	f.Add("/go-runner\x00--log-file=x\x00/usr/local/bin/kube-controller-manager\x00--x")
	f.Add("bash\x00-c\x00\"unterminated \\")
	f.Fuzz(func(t *testing.T, in string) {
		tokens := strings.Split(in, "\x00")
		flags := componentArgs("kube-controller-manager", tokens[:len(tokens)/2], tokens[len(tokens)/2:])
		for k := range flags {
			if k == "" || strings.HasPrefix(k, "-") || strings.Contains(k, "=") {
				t.Fatalf("bad flag name %q from %q", k, in)
			}
		}
	})
}

func FuzzCorefile(f *testing.F) {
	f.Add(".:53 {\n errors\n kubernetes cluster.local in-addr.arpa ip6.arpa {\n pods insecure\n }\n forward . /etc/resolv.conf\n}\n")
	f.Add("cluster.local:53 {\n kubernetes\n}\n# comment {\n")
	f.Add(`.:53 { kubernetes "a\"}" }`)
	f.Add("}{")
	f.Fuzz(func(t *testing.T, in string) {
		zones, err := corefileClusterDomains(in)
		if err != nil {
			if zones != nil {
				t.Fatalf("zones %q with error %v", zones, err)
			}
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		for _, z := range zones {
			if z == "" || strings.HasSuffix(z, ".arpa") || strings.HasSuffix(z, ".") {
				t.Fatalf("bad zone %q from %q", z, in)
			}
		}
	})
}

func FuzzFlannelNetConf(f *testing.F) {
	f.Add(`{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan","VNI":4096,"Port":4789}}`)
	f.Add(`{"Network":"10.244.0.0/16","Backend":{"Type":"host-gw"}}`)
	f.Add(`{"EnableIPv4":false,"IPv6Network":"fd00::/56"}`)
	f.Add(`{"Network":"1.2.3.4/40"}`)
	f.Fuzz(func(t *testing.T, in string) {
		nc, err := parseFlannelNetConf(in)
		if err != nil {
			return
		}
		if nc.Backend.Type == "" || nc.Backend.VNI < 0 || nc.Backend.Port < 0 || nc.Backend.Port > 65535 {
			t.Fatalf("out-of-contract result %+v from %q", nc, in)
		}
		if nc.EnableIPv4 == nil || *nc.EnableIPv4 {
			if _, _, err := cidrList(nc.Network); err != nil || nc.Network == "" {
				t.Fatalf("network %q accepted from %q", nc.Network, in)
			}
		}
	})
}

func FuzzKubeadmClusterConfiguration(f *testing.F) {
	f.Add("apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nnetworking: {podSubnet: 10.0.0.0/16}\ncontrollerManager: {extraArgs: [{name: a, value: b}]}\n")
	f.Add("apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\ncontrollerManager: {extraArgs: {a: b}}\n")
	f.Add("apiVersion: kubeadm.k8s.io/v1\nkind: ClusterConfiguration\n")
	f.Add("apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\nnetworking: 3\n")
	f.Fuzz(func(t *testing.T, in string) {
		kf, err := parseKubeadmClusterConfiguration([]byte(in))
		if err == nil && (kf == nil || kf.ControllerManagerArgs == nil || kf.APIVersion == "") {
			t.Fatalf("incomplete result %+v from %q", kf, in)
		}
	})
}

func FuzzComponentConfigs(f *testing.F) {
	f.Add("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclusterCIDR: 10.0.0.0/8\n")
	f.Add("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nclusterDNS: [10.96.0.10]\ncgroupDriver: systemd\n")
	f.Add("apiVersion: v1\nkind: ConfigMap\n")
	f.Add("{\"apiVersion\":\"kubelet.config.k8s.io/v1beta1\",\"kind\":\"KubeletConfiguration\",\"clusterDNS\":3}")
	f.Fuzz(func(t *testing.T, in string) {
		if kp, err := parseKubeProxyConfiguration([]byte(in)); err == nil && kp == nil {
			t.Fatal("nil KubeProxyConfiguration without an error")
		}
		if kc, err := parseKubeletConfiguration([]byte(in)); err == nil && kc == nil {
			t.Fatal("nil KubeletConfiguration without an error")
		}
	})
}
