package render

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/kubewin/kubewin/internal/plan"
)

// Where the bundle and the credentials live on a Windows node, below plan's InstallDir. The node
// README tells the operator to copy nodes/<node>/ to BundleDir.
const (
	bundleSubdir           = "kubewin"
	bootstrapKubeconfig    = "bootstrap-kubelet.conf"
	kubeletKubeconfig      = "kubelet.conf"
	kubeProxyKubeconfig    = "kube-proxy.conf"
	pkiSubdir              = "pki"
	clusterCAFile          = "ca.crt"
	kubeletVerbosity       = "2"
	imageGCHighPercent     = 85
	imageGCLowPercent      = 80
	evictionMemory         = "500Mi"
	evictionNodeFSPercent  = "10%"
	evictionImageFSPercent = "15%"
)

func winPath(dir string, elem ...string) string {
	return strings.TrimRight(dir, `\/`) + `\` + strings.Join(elem, `\`)
}

// BundleDir is where nodes/<node>/ is copied to on a Windows node.
func BundleDir(w *plan.WindowsNodePlan) string { return winPath(w.InstallDir, bundleSubdir) }

// KubeletConfig renders the KubeletConfiguration (k8s.io/kubelet/config/v1beta1) of a Windows
// node. Only fields that differ from the type's zero value are written, so the kubelet's own
// defaults apply to everything else.
func KubeletConfig(p *plan.Plan, n plan.NodePlan) ([]byte, error) {
	return kubeletConfig(newYAMLEncoder(), p, n)
}

func kubeletConfig(e *yamlEncoder, p *plan.Plan, n plan.NodePlan) ([]byte, error) {
	w := n.Windows
	if w == nil {
		return nil, fmt.Errorf("render kubelet config for %s: not a Windows node", n.Name)
	}
	c := baseKubeletConfig(p, n, winPath(w.InstallDir, pkiSubdir, clusterCAFile))
	c.ContainerRuntimeEndpoint = w.ContainerdPipe
	// Windows has no resolv.conf (seed 000 FAQ 2). "Host" makes the Windows kubelet read the
	// host's DNS configuration instead, so pods keep the host's DNS suffixes (mylan.k8s in the
	// seed) after the cluster search list; "" would drop them (kubernetes v1.37.1
	// pkg/kubelet/network/dns/dns_windows.go: getHostDNSConfig, hostResolvConf = "Host").
	c.ResolverConfig = ptr.To("Host")
	// No cgroups on Windows. enforceNodeAllocatable must be ["none"], not []: the v1beta1 type
	// omits an empty list, the kubelet then defaults it to ["pods"], and validation rejects
	// "pods" without cgroupsPerQOS.
	c.CgroupsPerQOS = ptr.To(false)
	c.EnforceNodeAllocatable = []string{"none"}
	// Windows pages instead of OOM-killing; the docs ask for >= 2Gi reserved for the OS,
	// containerd and the kubelet itself.
	c.SystemReserved = map[string]string{"memory": w.SystemReservedMemory}
	// The Windows kubelet evicts on memory.available (the node's commit charge) since v1.31
	// (kubernetes/kubernetes#122922) and on nodefs.available; these are its own Windows defaults
	// (pkg/kubelet/eviction/defaults_windows.go), written out so the file says what applies.
	// Inode and PID signals are Linux-only (check rule KW1112).
	c.EvictionHard = map[string]string{
		"memory.available":  evictionMemory,
		"nodefs.available":  evictionNodeFSPercent,
		"imagefs.available": evictionImageFSPercent,
	}
	c.ImageGCHighThresholdPercent = ptr.To[int32](imageGCHighPercent)
	c.ImageGCLowThresholdPercent = ptr.To[int32](imageGCLowPercent)
	// Static pods: kubewin join runs its check pod there (a node's credential may create only
	// mirror pods, NodeRestriction), as on Linux nodes.
	c.StaticPodPath = WindowsStaticPodDir(w)

	b, err := e.minimalYAML(c, fmt.Sprintf("kubelet configuration for %s (%s, %s).\n%s",
		n.Name, w.BuildLabel, p.Cluster.KubernetesVersion, generatedBy))
	if err != nil {
		return nil, fmt.Errorf("render kubelet config for %s: %w", n.Name, err)
	}
	return b, nil
}

// baseKubeletConfig is what every node's kubelet gets, Windows and Linux: no anonymous access,
// webhook authentication and authorization against the API server with the cluster CA at
// caFile, client certificate rotation (the kubelet renews its own before it expires; kube-proxy
// reads the same rotated files, see bootstrap.NodeProxierBinding), the cluster's DNS, and the
// node's taints at registration.
func baseKubeletConfig(p *plan.Plan, n plan.NodePlan, caFile string) *kubeletv1beta1.KubeletConfiguration {
	c := &kubeletv1beta1.KubeletConfiguration{}
	c.APIVersion = kubeletv1beta1.SchemeGroupVersion.String()
	c.Kind = "KubeletConfiguration"
	c.Authentication.Anonymous.Enabled = ptr.To(false)
	c.Authentication.Webhook.Enabled = ptr.To(true)
	c.Authentication.X509.ClientCAFile = caFile
	c.Authorization.Mode = kubeletv1beta1.KubeletAuthorizationModeWebhook
	c.RotateCertificates = true
	c.ClusterDNS = []string{p.Networking.ClusterDNS}
	c.ClusterDomain = p.Networking.ClusterDomain
	for _, t := range n.Taints {
		c.RegisterWithTaints = append(c.RegisterWithTaints, corev1.Taint{
			Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	return c
}

// kubeletSetsLabel are labels the kubelet puts on its Node itself, so --node-labels need not
// repeat them (kubernetes v1.37.1 pkg/kubelet/kubelet_node_status.go initialNode: hostname, os,
// arch; kubelet_node_status_windows.go getOSSpecificLabels: node.kubernetes.io/windows-build).
var kubeletSetsLabel = map[string]bool{
	"kubernetes.io/hostname": true, "kubernetes.io/os": true, "kubernetes.io/arch": true,
	"node.kubernetes.io/windows-build": true,
}

// KubeletFlags returns the flags that must stay on the kubelet command line of a Windows node,
// in order: everything with a KubeletConfiguration field is in config.yaml. These flags exist in
// every Kubernetes release kubewin supports (v1.35-v1.37); --windows-service is registered only
// by the Windows build of the kubelet.
func KubeletFlags(p *plan.Plan, n plan.NodePlan) ([]string, error) {
	w := n.Windows
	if w == nil {
		return nil, fmt.Errorf("render kubelet flags for %s: not a Windows node", n.Name)
	}
	labels, err := nodeLabels(n)
	if err != nil {
		return nil, err
	}
	flags := []string{
		"--config=" + winPath(BundleDir(w), "kubelet", "config.yaml"),
		"--bootstrap-kubeconfig=" + winPath(w.InstallDir, bootstrapKubeconfig),
		"--kubeconfig=" + winPath(w.InstallDir, kubeletKubeconfig),
		"--cert-dir=" + winPath(w.InstallDir, pkiSubdir),
		"--hostname-override=" + n.Name,
		"--node-ip=" + n.NodeIP,
	}
	if len(labels) > 0 {
		flags = append(flags, "--node-labels="+strings.Join(labels, ","))
	}
	flags = append(flags, "--windows-service", "--v="+kubeletVerbosity)
	return flags, nil
}

// nodeLabels are the --node-labels entries of n: its labels but those the kubelet sets itself,
// sorted; a label that cannot be written in the comma-separated flag is an error.
func nodeLabels(n plan.NodePlan) ([]string, error) {
	var labels []string
	for _, k := range sortedKeys(n.Labels) {
		if kubeletSetsLabel[k] {
			continue
		}
		if strings.ContainsAny(k+n.Labels[k], ", \t\"") {
			return nil, fmt.Errorf("render kubelet flags for %s: label %s=%s cannot be passed in --node-labels", n.Name, k, n.Labels[k])
		}
		labels = append(labels, k+"="+n.Labels[k])
	}
	return labels, nil
}

// windowsOnlyKubeletFlags are registered by cmd/kubelet/app/options/osflags_windows.go only.
var windowsOnlyKubeletFlags = map[string]bool{"windows-service": true, "windows-priorityclass": true}

// KubeletFlagsFile renders kubelet/flags: one flag per line, as services/install.ps1 uses them.
func KubeletFlagsFile(p *plan.Plan, n plan.NodePlan) ([]byte, error) {
	flags, err := KubeletFlags(p, n)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# kubelet flags for %s; everything else is in kubelet\\config.yaml.\n# %s\n", n.Name, generatedBy)
	for _, f := range flags {
		b.WriteString(f + "\n")
	}
	return b.Bytes(), nil
}

// flagNames returns the flag names of --name[=value] arguments, sorted.
func flagNames(flags []string) []string {
	out := make([]string, 0, len(flags))
	for _, f := range flags {
		name, _, _ := strings.Cut(strings.TrimLeft(f, "-"), "=")
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
