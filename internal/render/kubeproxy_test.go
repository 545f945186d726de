package render

import (
	"runtime"
	"strings"
	"testing"

	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kubeproxyconfig "k8s.io/kubernetes/pkg/proxy/apis/config"
	proxyscheme "k8s.io/kubernetes/pkg/proxy/apis/config/scheme"
	proxyvalidation "k8s.io/kubernetes/pkg/proxy/apis/config/validation"
)

// decodeKubeProxyConfig decodes with kube-proxy's scheme, whose codecs are strict
// (serializer.EnableStrict in pkg/proxy/apis/config/scheme), defaults applied.
func decodeKubeProxyConfig(t *testing.T, data []byte) *kubeproxyconfig.KubeProxyConfiguration {
	t.Helper()
	obj, err := apiruntime.Decode(proxyscheme.Codecs.UniversalDecoder(), data)
	if err != nil {
		t.Fatalf("kube-proxy scheme rejects the config: %v\n%s", err, data)
	}
	c, ok := obj.(*kubeproxyconfig.KubeProxyConfiguration)
	if !ok {
		t.Fatalf("decoded %T, want KubeProxyConfiguration", obj)
	}
	return c
}

// validateKubeProxyOnThisOS runs kube-proxy's validation. Exactly one rule depends on the OS it
// runs on: validateProxyMode accepts only "kernelspace" (or blank) when runtime.GOOS is windows
// and only iptables/nftables/ipvs (or blank) elsewhere. On Linux the one expected error is that
// rule rejecting "kernelspace"; every other rule must pass. Run on Windows, the same test expects
// no error at all.
func validateKubeProxyOnThisOS(t *testing.T, c *kubeproxyconfig.KubeProxyConfiguration, data []byte) {
	t.Helper()
	errs := proxyvalidation.Validate(c)
	if runtime.GOOS == "windows" {
		if len(errs) > 0 {
			t.Errorf("kube-proxy validation: %v\n%s", errs.ToAggregate(), data)
		}
		return
	}
	var rest field.ErrorList
	for _, e := range errs {
		if e.Field == "KubeProxyConfiguration.Mode.ProxyMode" && e.BadValue == string(kubeproxyconfig.ProxyModeKernelspace) {
			continue
		}
		rest = append(rest, e)
	}
	if len(rest) > 0 {
		t.Errorf("kube-proxy validation: %v\n%s", rest.ToAggregate(), data)
	}
	if len(errs) != 1 {
		t.Errorf("expected exactly the Linux proxy-mode rule to reject kernelspace, got %d errors: %v", len(errs), errs)
	}
}

func TestKubeProxyConfigAcceptedByKubeProxyScheme(t *testing.T) {
	for name, p := range designVariants(t) {
		for _, n := range windowsNodes(p) {
			t.Run(name+"/"+n.Name, func(t *testing.T) {
				data, err := KubeProxyConfig(p, n)
				if err != nil {
					t.Fatal(err)
				}
				c := decodeKubeProxyConfig(t, data)
				w := n.Windows
				if c.Mode != kubeproxyconfig.ProxyModeKernelspace {
					t.Errorf("mode %q", c.Mode)
				}
				if c.Winkernel.NetworkName != w.HNSNetworkName || c.Winkernel.SourceVip != w.KubeProxySourceVIP || c.Winkernel.EnableDSR != w.EnableDSR {
					t.Errorf("winkernel %+v, want network %s sourceVip %q dsr %v", c.Winkernel, w.HNSNetworkName, w.KubeProxySourceVIP, w.EnableDSR)
				}
				if c.HostnameOverride != n.Name || c.BindAddress != n.NodeIP {
					t.Errorf("hostnameOverride %q bindAddress %q", c.HostnameOverride, c.BindAddress)
				}
				if strings.Join(c.DetectLocal.ClusterCIDRs, ",") != strings.Join(p.Networking.ClusterCIDRs, ",") {
					t.Errorf("clusterCIDRs %v", c.DetectLocal.ClusterCIDRs)
				}
				if w.HNSNetworkType == "Overlay" && c.Winkernel.SourceVip == "" {
					t.Error("overlay network without sourceVip")
				}
				if c.SyncPeriod.Duration == 0 || c.ConfigSyncPeriod.Duration == 0 {
					t.Errorf("kube-proxy defaults were overridden by zeros:\n%s", data)
				}
				validateKubeProxyOnThisOS(t, c, data)
			})
		}
	}
}
