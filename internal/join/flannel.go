package join

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/containernetworking/cni/libcni"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/kubewin/kubewin/internal/render"
)

// A Linux node of a cluster whose Linux CNI is flannel (linuxCNI flannel: designs
// flannel/hostprocess, flannel/vxlan, flannel/host-gw) gets its pod network from the cluster's
// flannel DaemonSet, not from kubewin: the DaemonSet's install-cni-plugin init container copies
// the flannel CNI plugin to /opt/cni/bin, its install-cni init container copies the ConfigMap's
// cni-conf.json to /etc/cni/net.d/10-flannel.conflist, and flanneld (kube subnet manager) writes
// /run/flannel/subnet.env with the node's lease, FLANNEL_SUBNET inside the Node's spec.podCIDR
// (flannel-io/flannel v0.28.4 Documentation/kube-flannel.yml; pkg/subnet/kube/kube.go takes the
// lease from node.Spec.PodCIDR; pkg/subnet/subnet.go WriteSubnetFile). The flannel plugin reads
// subnet.env where its configuration's subnetFile says (default /run/flannel/subnet.env:
// containernetworking/plugins v0.9.1 plugins/meta/flannel/flannel.go). join writes no CNI
// configuration on such a node; its pod-network step waits, bounded, for these three and names
// the one that is missing, with the state of the flannel pod on this node when it is not running.

// flannelDefaultSubnetFile is where the flannel plugin reads flanneld's lease unless its
// configuration says subnetFile.
const flannelDefaultSubnetFile = "/run/flannel/subnet.env"

// flannelState is what a node's flannel network consists of, as far as found.
type flannelState struct {
	// Conf is the CNI configuration containerd uses (the first in the directory); Plugin the
	// flannel plugin's entry in it (nil when the list has none).
	Conf   string
	Plugin map[string]any
	// SubnetFile is where the plugin reads the lease; Subnet flanneld's FLANNEL_SUBNET.
	SubnetFile string
	Subnet     netip.Prefix
}

// checkFlannelNetwork says whether flannel's network is in place on this node for podCIDR and,
// when not, what is missing ("" when all is there).
func checkFlannelNetwork(paths render.NodePaths, podCIDR string) (flannelState, string) {
	var st flannelState
	files, err := libcni.ConfFiles(paths.CNIConfDir, []string{".conflist", ".conf", ".json"})
	if err != nil || len(files) == 0 {
		return st, fmt.Sprintf("no CNI configuration in %s yet (flannel's DaemonSet writes 10-flannel.conflist there from its ConfigMap's cni-conf.json)", paths.CNIConfDir)
	}
	// containerd's CRI plugin uses the first file in lexical order (libcni.ConfFiles sorts).
	st.Conf = files[0]
	data, err := os.ReadFile(st.Conf)
	if err != nil {
		return st, fmt.Sprintf("read the CNI configuration %s: %v", st.Conf, err)
	}
	plugins, err := cniConfPlugins(data)
	if err != nil {
		return st, fmt.Sprintf("CNI configuration %s: %v", st.Conf, err)
	}
	var types []string
	for _, p := range plugins {
		t, _ := p["type"].(string)
		types = append(types, t)
		if t == "flannel" && st.Plugin == nil {
			st.Plugin = p
		}
	}
	if st.Plugin == nil {
		return st, fmt.Sprintf("the CNI configuration containerd uses, %s, has no flannel plugin (plugins %s): another CNI's file sorts before flannel's", st.Conf, strings.Join(types, ", "))
	}
	for _, t := range types {
		if t == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(paths.CNIBinDir, t)); err != nil {
			hint := ""
			if t == "flannel" {
				hint = " (flannel's DaemonSet copies it there in its install-cni-plugin init container)"
			}
			return st, fmt.Sprintf("no CNI plugin %s in %s, which %s names%s", t, paths.CNIBinDir, st.Conf, hint)
		}
	}
	st.SubnetFile = flannelDefaultSubnetFile
	if f, ok := st.Plugin["subnetFile"].(string); ok && f != "" {
		st.SubnetFile = f
	}
	env, err := os.ReadFile(st.SubnetFile)
	if err != nil {
		return st, fmt.Sprintf("flanneld has not written %s (its lease for this node): %v", st.SubnetFile, err)
	}
	vars, err := parseSubnetEnv(env)
	if err != nil {
		return st, fmt.Sprintf("%s: %v", st.SubnetFile, err)
	}
	sub, err := netip.ParsePrefix(vars["FLANNEL_SUBNET"])
	if err != nil {
		return st, fmt.Sprintf("%s has no FLANNEL_SUBNET (%v)", st.SubnetFile, err)
	}
	st.Subnet = sub
	pc, err := netip.ParsePrefix(podCIDR)
	if err != nil {
		return st, fmt.Sprintf("the Node's pod CIDR %q: %v", podCIDR, err)
	}
	// flanneld gives the bridge the subnet's first address: FLANNEL_SUBNET is the pod CIDR
	// with that address (10.244.1.1/24 for 10.244.1.0/24).
	if sub.Masked() != pc.Masked() {
		return st, fmt.Sprintf("%s says FLANNEL_SUBNET=%s, but the Node's pod CIDR is %s (a stale lease, or flanneld of another node writing this file)", st.SubnetFile, sub, pc)
	}
	return st, ""
}

// cniConfPlugins are the plugin entries of a .conflist, or the one of a single .conf.
func cniConfPlugins(data []byte) ([]map[string]any, error) {
	var conf struct {
		Plugins []map[string]any `json:"plugins"`
		Type    string           `json:"type"`
	}
	if err := json.Unmarshal(data, &conf); err != nil {
		return nil, err
	}
	if len(conf.Plugins) > 0 {
		return conf.Plugins, nil
	}
	if conf.Type == "" {
		return nil, fmt.Errorf("neither plugins nor a type")
	}
	var single map[string]any
	if err := json.Unmarshal(data, &single); err != nil {
		return nil, err
	}
	return []map[string]any{single}, nil
}

// parseSubnetEnv reads the KEY=VALUE lines flanneld writes (flannel-io/flannel pkg/subnet
// WriteSubnetFile: FLANNEL_NETWORK, FLANNEL_SUBNET, FLANNEL_MTU, FLANNEL_IPMASQ, and the IPv6
// counterparts). Blank lines are skipped; a line without "=" is an error.
func parseSubnetEnv(data []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("line %d is not KEY=VALUE: %q", n, line)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// flannelPodState is the state of the flannel DaemonSet's pod on this node, read with the node's
// own credential (the Node authorizer lets a node list the pods bound to it): "" when it runs,
// else what diagnosePod names.
func flannelPodState(ctx context.Context, c kubernetes.Interface, node, podLogsDir string) string {
	pods, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()})
	if err != nil {
		return "read the pods on this node: " + err.Error()
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if flannelDaemonSetPod(p) {
			return diagnosePod(p, podLogsDir)
		}
	}
	return "no pod of a flannel DaemonSet is scheduled to this node (is flannel's manifest applied, and does its DaemonSet admit node " + node + "?)"
}

// flannelDaemonSetPod: a pod of a DaemonSet named like flannel's (kube-flannel-ds in
// Documentation/kube-flannel.yml; charts name it <release>-flannel-ds or similar).
func flannelDaemonSetPod(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" && strings.Contains(o.Name, "flannel") {
			return true
		}
	}
	return false
}

// awaitFlannel is the pod-network step of a Linux node on linuxCNI flannel.
func (j *joiner) awaitFlannel(ctx context.Context) ([]Change, error) {
	c, err := j.client()
	if err != nil {
		return nil, err
	}
	var st flannelState
	err = j.poll(ctx, "flannel pod network", func() (bool, string, error) {
		var missing string
		st, missing = checkFlannelNetwork(j.paths, j.podCIDR)
		if missing == "" {
			return true, "", nil
		}
		if pod := flannelPodState(ctx, c, j.node, j.paths.PodLogsDir); pod != "" {
			missing += "; " + pod
		}
		return false, missing, nil
	})
	if err != nil {
		return nil, err
	}
	return []Change{
		{What: "CNI configuration " + st.Conf + " (flannel's; kubewin writes none on linuxCNI flannel)", Action: ActionUnchanged},
		{What: "flannel lease " + st.Subnet.String() + " in " + st.SubnetFile, Action: ActionUnchanged},
	}, nil
}
