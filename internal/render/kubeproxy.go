package render

import (
	"fmt"
	"strings"

	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"

	"github.com/kubewin/kubewin/internal/plan"
)

// KubeProxyConfig renders the KubeProxyConfiguration (k8s.io/kube-proxy/config/v1alpha1) of a
// Windows node: the winkernel proxier on the node's HNS network.
func KubeProxyConfig(p *plan.Plan, n plan.NodePlan) ([]byte, error) {
	return kubeProxyConfig(newYAMLEncoder(), p, n)
}

func kubeProxyConfig(e *yamlEncoder, p *plan.Plan, n plan.NodePlan) ([]byte, error) {
	w := n.Windows
	if w == nil {
		return nil, fmt.Errorf("render kube-proxy config for %s: not a Windows node", n.Name)
	}
	if w.HNSNetworkType == "Overlay" && w.KubeProxySourceVIP == "" {
		return nil, fmt.Errorf("render kube-proxy config for %s: an overlay network needs a source VIP", n.Name)
	}
	c := &kubeproxyv1alpha1.KubeProxyConfiguration{}
	c.APIVersion = kubeproxyv1alpha1.SchemeGroupVersion.String()
	c.Kind = "KubeProxyConfiguration"
	c.ClientConnection.Kubeconfig = winPath(w.InstallDir, kubeProxyKubeconfig)
	// Without the node name kube-proxy looks for a Node called like the host and deletes the
	// endpoints it does not recognise as local (Kubernetes Windows troubleshooting).
	c.HostnameOverride = n.Name
	// With two NICs the bind address tells kube-proxy which one is the node's.
	c.BindAddress = n.NodeIP
	c.ClusterCIDR = strings.Join(p.Networking.ClusterCIDRs, ",")
	c.Mode = kubeproxyv1alpha1.ProxyMode(w.KubeProxyMode)
	c.Winkernel.NetworkName = w.HNSNetworkName
	c.Winkernel.SourceVip = w.KubeProxySourceVIP
	// WinDSR and WinOverlay are GA and locked on since v1.34; no feature gates are needed.
	c.Winkernel.EnableDSR = w.EnableDSR

	b, err := e.minimalYAML(c, fmt.Sprintf("kube-proxy configuration for %s (%s, %s).\n%s",
		n.Name, w.BuildLabel, p.Cluster.KubernetesVersion, generatedBy))
	if err != nil {
		return nil, fmt.Errorf("render kube-proxy config for %s: %w", n.Name, err)
	}
	return b, nil
}

// KubeProxyFlags are the kube-proxy command-line flags of a Windows node's service.
func KubeProxyFlags(n plan.NodePlan) []string {
	return []string{
		"--config=" + winPath(BundleDir(n.Windows), "kube-proxy", "config.yaml"),
		"--windows-service",
	}
}
