package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/kubewin/kubewin/internal/plan"
)

// ValidateKubeletDropIn checks a KubeletConfiguration fragment for the drop-in directory against
// the official type (k8s.io/kubelet/config/v1beta1), strictly: an unknown or misspelt field is an
// error, as the kubelet treats it. (The kubelet's own scheme would add the API server's
// dependency tree — 20 MiB of resident memory — to every kubewin command; the kubelet's
// validation of the merged result runs on the node when it starts.)
func ValidateKubeletDropIn(data []byte) error {
	// Field names are matched case-sensitively, as the kubelet's decoder does
	// (sigs.k8s.io/json): encoding/json alone would take "failCgroupv1" for failCgroupV1.
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return fmt.Errorf("not a KubeletConfiguration the kubelet accepts: %w", err)
	}
	var c kubeletv1beta1.KubeletConfiguration
	strict, err := kjson.UnmarshalStrict(js, &c)
	if err == nil && len(strict) > 0 {
		err = errors.Join(strict...)
	}
	if err != nil {
		return fmt.Errorf("not a KubeletConfiguration the kubelet accepts: %w", err)
	}
	if c.Kind != "KubeletConfiguration" || c.APIVersion != kubeletv1beta1.SchemeGroupVersion.String() {
		return fmt.Errorf("apiVersion %q kind %q: expected %s KubeletConfiguration", c.APIVersion, c.Kind, kubeletv1beta1.SchemeGroupVersion)
	}
	return nil
}

// BridgeCNIConfName is the conflist kubewin join writes on a Linux node whose linuxCNI is
// "bridge"; "10-" sorts it before the files other CNIs install, as containerd uses the first.
const BridgeCNIConfName = "10-kubewin-bridge.conflist"

// LinuxKubeletConfig renders the KubeletConfiguration of a Linux node that kubewin join runs.
// Only fields that differ from the type's zero value are written; the kubelet's defaults apply
// to everything else, and the drop-in directory (KubeletDropInDir) may override any field.
func LinuxKubeletConfig(p *plan.Plan, n plan.NodePlan, paths NodePaths) ([]byte, error) {
	l := n.Linux
	if l == nil {
		return nil, fmt.Errorf("render kubelet config for %s: not a Linux node", n.Name)
	}
	c := baseKubeletConfig(p, n, paths.CACert())
	c.CgroupDriver = l.CgroupDriver
	c.ContainerRuntimeEndpoint = "unix://" + paths.ContainerdSocket
	c.PodLogsDir = paths.PodLogsDir
	c.StaticPodPath = StaticPodDir(paths)
	b, err := newYAMLEncoder().minimalYAML(c, fmt.Sprintf("kubelet configuration for %s (linux, %s).\n%s",
		n.Name, p.Cluster.KubernetesVersion, generatedBy))
	if err != nil {
		return nil, fmt.Errorf("render kubelet config for %s: %w", n.Name, err)
	}
	return b, nil
}

// LinuxKubeletFlags are the kubelet flags of a Linux node that kubewin join runs: what has no
// KubeletConfiguration field.
func LinuxKubeletFlags(n plan.NodePlan, paths NodePaths) ([]string, error) {
	if n.Linux == nil {
		return nil, fmt.Errorf("render kubelet flags for %s: not a Linux node", n.Name)
	}
	labels, err := nodeLabels(n)
	if err != nil {
		return nil, err
	}
	flags := []string{
		"--config=" + paths.KubeletConfig(),
		"--config-dir=" + paths.KubeletDropInDir(),
		"--bootstrap-kubeconfig=" + paths.BootstrapKubeconfig(),
		"--kubeconfig=" + paths.KubeletKubeconfig(),
		"--cert-dir=" + paths.PKIDir,
		"--root-dir=" + paths.KubeletRootDir,
		"--hostname-override=" + n.Name,
		"--node-ip=" + n.NodeIP,
	}
	if len(labels) > 0 {
		flags = append(flags, "--node-labels="+strings.Join(labels, ","))
	}
	return append(flags, "--v="+kubeletVerbosity), nil
}

// LinuxBridgeCNIConfig renders the CNI network of a Linux node whose linuxCNI is "bridge": the
// reference bridge plugin (the node is the pods' gateway, hairpin for Services that loop back)
// with host-local IPAM over the node's pod CIDR, and portmap for hostPort. Pod IPs are routed,
// not masqueraded: the design routes every node's pod CIDR (host-gw routes, or the ToR), so a
// pod is reached at its own address (containernetworking/plugins plugins/main/bridge: ipMasq
// defaults to false; isGateway gives the bridge the subnet's first address).
// The IPAM's allocations are kept in paths.CNIStateDir (host-local's default, below the layout's
// root).
func LinuxBridgeCNIConfig(n plan.NodePlan, paths NodePaths) ([]byte, error) {
	if n.Linux == nil {
		return nil, fmt.Errorf("render CNI config for %s: not a Linux node", n.Name)
	}
	prefix, err := netip.ParsePrefix(n.PodCIDR)
	if err != nil {
		return nil, fmt.Errorf("render CNI config for %s: pod CIDR %q: %w", n.Name, n.PodCIDR, err)
	}
	defaultRoute := "0.0.0.0/0"
	if prefix.Addr().Is6() {
		defaultRoute = "::/0"
	}
	type ipamRange struct {
		Subnet string `json:"subnet"`
	}
	type route struct {
		Dst string `json:"dst"`
	}
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       "kubewin-bridge",
		"plugins": []any{
			map[string]any{
				"type":        "bridge",
				"bridge":      "kubewin0",
				"isGateway":   true,
				"ipMasq":      false,
				"hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"dataDir": paths.CNIStateDir,
					"ranges":  [][]ipamRange{{{Subnet: prefix.Masked().String()}}},
					"routes":  []route{{Dst: defaultRoute}},
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("render CNI config for %s: %w", n.Name, err)
	}
	return append(b, '\n'), nil
}
