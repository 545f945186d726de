package render

import (
	"bytes"
	"fmt"
	"net"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubewin/kubewin/internal/atomicfs"
	"github.com/kubewin/kubewin/internal/plan"
)

// Designs calico/hostprocess and flannel/hostprocess: what the cluster lacks for Windows,
// rendered under cluster/hostprocess/:
//
//   - kube-proxy-windows.yaml: kube-proxy as a HostProcess DaemonSet (winkernel, the CNI's
//     network name, the source VIP found at start on overlay networks).
//   - flannel-windows.yaml (flannel/hostprocess): flanneld as a HostProcess DaemonSet with the
//     cluster's backend, VNI and port, and the node's flannel CNI configuration.
//   - calico-windows.yaml (calico/hostprocess): the IPAM strictAffinity setting, the
//     Installation's Windows fields and the services-endpoint ConfigMap the operator needs.
//
// Facts the DaemonSets rest on (cited where used below):
//   - The pods run Microsoft's HostProcess base image and the binaries kubewin join installs in
//     the node's install directory; HostProcess containers run on the host, see its file system,
//     and find their volumes (the start script's ConfigMap, the service-account token) under
//     $env:CONTAINER_SANDBOX_MOUNT_POINT (kubernetes.io/docs/tasks/configure-pod-container/
//     create-hostprocess-pod, "Volume mounts").
//   - A Windows node reaches the kubernetes Service only once kube-proxy has programmed it, so
//     both pods talk to the API server at spec.networking.apiServerEndpoint (sig-windows-tools
//     hostprocess/flannel/flanneld/flannel-overlay.yml overrode KUBERNETES_SERVICE_HOST/PORT for
//     the same reason; flannel-io/flannel#1772).

// Paths inside the pods: the ConfigMap holding the start script is mounted at /kubewin, which a
// HostProcess container sees under its sandbox mount point.
const (
	hostProcessDir       = "cluster/hostprocess"
	hostProcessMount     = "/kubewin"
	hostProcessStartFile = "start.ps1"
	hostProcessNetConf   = "net-conf.json"
	hostProcessCNIConf   = "cni.conf"
	hostProcessManagedBy = "kubewin"
)

// addHostProcessFiles renders the cluster files of a HostProcess design (none otherwise).
func addHostProcessFiles(s *fileSet, p *plan.Plan) {
	if p.HostProcess == nil {
		return
	}
	s.add("hostprocess/kube-proxy-windows.yaml", fileMode, func() ([]byte, error) { return KubeProxyWindowsDaemonSet(p) })
	s.add("hostprocess/flannel-windows.yaml", fileMode, func() ([]byte, error) { return FlannelWindowsDaemonSet(p) })
	s.add("hostprocess/calico-windows.yaml", fileMode, func() ([]byte, error) { return CalicoWindowsSettings(p) })
}

// apiServerURL is the https URL of spec.networking.apiServerEndpoint.
func apiServerURL(hp *plan.HostProcessPlan) string {
	return "https://" + net.JoinHostPort(hp.APIServerHost, hp.APIServerPort)
}

// KubeProxyWindowsDaemonSet renders cluster/hostprocess/kube-proxy-windows.yaml: a ConfigMap
// with the start script and the DaemonSet running it on every Windows node. Nil when the
// cluster has a HostProcess kube-proxy for Windows already.
func KubeProxyWindowsDaemonSet(p *plan.Plan) ([]byte, error) {
	hp := p.HostProcess
	if hp == nil || hp.KubeProxy == nil {
		return nil, nil
	}
	script, err := kubeProxyStartScript(p)
	if err != nil {
		return nil, err
	}
	d := hp.KubeProxy
	cm := hostProcessConfigMap(d, map[string]string{hostProcessStartFile: script})
	ds := hostProcessDaemonSet(hp, d, "kube-proxy", []corev1.EnvVar{
		{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
	})
	header := fmt.Sprintf("kube-proxy for the Windows nodes of %s (design %s): winkernel on HNS network %s (%s).\n"+
		"Apply with kubectl apply --server-side --field-manager=%s -f. The pods run %s\\kube-proxy.exe,\n"+
		"which kubewin join installs; they use ServiceAccount %s/%s (kubeadm's, bound to system:node-proxier).\n%s",
		p.Cluster.Name, p.Cluster.Design, hp.NetworkName, hp.NetworkType, hostProcessManagedBy, hp.BinDir, d.Namespace, d.ServiceAccount, generatedBy)
	return yamlStream(header, replaceNote(hp, "kube-proxy"), cm, ds)
}

// FlannelWindowsDaemonSet renders cluster/hostprocess/flannel-windows.yaml (flannel/hostprocess).
func FlannelWindowsDaemonSet(p *plan.Plan) ([]byte, error) {
	hp := p.HostProcess
	if hp == nil || hp.Flannel == nil {
		return nil, nil
	}
	f := hp.Flannel
	netConf, err := jsonIndent(flannelNetConf{Network: f.Network,
		Backend: flannelBackend{Type: f.Backend, Name: hp.NetworkName, VNI: f.VNI, Port: f.Port}})
	if err != nil {
		return nil, fmt.Errorf("render flannel Windows net-conf: %w", err)
	}
	cni, err := hostProcessFlannelCNIConf(p)
	if err != nil {
		return nil, err
	}
	script, err := flannelStartScript(p)
	if err != nil {
		return nil, err
	}
	cm := hostProcessConfigMap(&f.DaemonSetPlan, map[string]string{
		hostProcessStartFile: script, hostProcessNetConf: string(netConf), hostProcessCNIConf: string(cni)})
	ds := hostProcessDaemonSet(hp, &f.DaemonSetPlan, "kube-flannel", []corev1.EnvVar{
		// flanneld's Kubernetes subnet manager finds its Node by NODE_NAME
		// (flannel-io/flannel pkg/subnet/kube/kube.go).
		{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
		// A HostProcess pod has the host's network, so its host IP is the node's address
		// (flanneld --iface takes an address; the adapter is renamed once HNS binds it).
		{Name: "NODE_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIP"}}},
	})
	backend := f.Backend
	if f.Backend == "vxlan" {
		backend = fmt.Sprintf("vxlan, VNI %d, UDP %d", f.VNI, f.Port)
	}
	header := fmt.Sprintf("flanneld for the Windows nodes of %s (design %s): %s, HNS network %s.\n"+
		"Apply with kubectl apply --server-side --field-manager=%s -f, next to the cluster's own flannel\n"+
		"(its ServiceAccount %s/%s and ClusterRole, flannel-io/flannel Documentation/kube-flannel.yml). The pods\n"+
		"run %s\\flanneld.exe and the CNI plugins in %s, which kubewin join installs.\n%s",
		p.Cluster.Name, p.Cluster.Design, backend, hp.NetworkName, hostProcessManagedBy, f.Namespace, f.ServiceAccount,
		hp.BinDir, hp.CNIBinDir, generatedBy)
	return yamlStream(header, replaceNote(hp, "flannel"), cm, ds)
}

// replaceNote names the cluster's Windows DaemonSets that are not HostProcess pods and do the
// job of component: both on one node would fight over its network.
func replaceNote(hp *plan.HostProcessPlan, component string) string {
	if len(hp.Replace) == 0 {
		return ""
	}
	return fmt.Sprintf("Delete the cluster's Windows DaemonSets that are not HostProcess pods before applying (%s runs here):\n  %s",
		component, strings.Join(hp.Replace, "\n  "))
}

func hostProcessLabels(name string) map[string]string {
	return map[string]string{"k8s-app": name, "app.kubernetes.io/managed-by": hostProcessManagedBy}
}

func hostProcessConfigMap(d *plan.DaemonSetPlan, data map[string]string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{Data: data}
	cm.APIVersion, cm.Kind = "v1", "ConfigMap"
	cm.Name, cm.Namespace, cm.Labels = d.Name, d.Namespace, hostProcessLabels(d.Name)
	return cm
}

// hostProcessDaemonSet is the DaemonSet shape both components share: HostProcess pods as
// SYSTEM on the host network, on Windows nodes only, running the ConfigMap's start script.
func hostProcessDaemonSet(hp *plan.HostProcessPlan, d *plan.DaemonSetPlan, container string, env []corev1.EnvVar) *appsv1.DaemonSet {
	yes := true
	system := `NT AUTHORITY\SYSTEM`
	labels := map[string]string{"k8s-app": d.Name}
	var tolerations []corev1.Toleration
	for _, t := range hp.Tolerations {
		tolerations = append(tolerations, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	// Node-critical pods: a node without them has no pod network or Services.
	tolerations = append(tolerations,
		corev1.Toleration{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
		corev1.Toleration{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		corev1.Toleration{Key: "node.kubernetes.io/network-unavailable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	maxUnavailable := intstr.FromInt32(1)
	env = append(env,
		corev1.EnvVar{Name: "KUBEWIN_API_SERVER", Value: apiServerURL(hp)},
		// In-cluster clients would otherwise dial the kubernetes Service, which a Windows node
		// reaches only through the kube-proxy these pods start.
		corev1.EnvVar{Name: "KUBERNETES_SERVICE_HOST", Value: hp.APIServerHost},
		corev1.EnvVar{Name: "KUBERNETES_SERVICE_PORT", Value: hp.APIServerPort})
	ds := &appsv1.DaemonSet{
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &maxUnavailable}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: d.ServiceAccount,
					HostNetwork:        true,
					PriorityClassName:  "system-node-critical",
					SecurityContext: &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
						HostProcess: &yes, RunAsUserName: &system}},
					NodeSelector: hp.NodeSelector,
					Tolerations:  tolerations,
					Containers: []corev1.Container{{
						Name:  container,
						Image: hp.Image,
						// PowerShell expands the sandbox mount point itself, so the command
						// does not depend on the runtime substituting it.
						Command: []string{"powershell.exe", "-NoLogo", "-NoProfile", "-ExecutionPolicy", "Bypass", "-Command",
							"& (Join-Path $env:CONTAINER_SANDBOX_MOUNT_POINT '" + strings.TrimPrefix(hostProcessMount, "/") + `\` + hostProcessStartFile + "')"},
						Env:          env,
						VolumeMounts: []corev1.VolumeMount{{Name: "kubewin", MountPath: hostProcessMount}},
					}},
					Volumes: []corev1.Volume{{Name: "kubewin", VolumeSource: corev1.VolumeSource{
						ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: d.Name}}}}},
				},
			},
		},
	}
	ds.APIVersion, ds.Kind = "apps/v1", "DaemonSet"
	ds.Name, ds.Namespace, ds.Labels = d.Name, d.Namespace, hostProcessLabels(d.Name)
	return ds
}

// hostProcessFlannelCNIConf is the flannel CNI configuration the flannel pod writes on each
// Windows node: the same as design flannel/vxlan|host-gw's (CNIConfig) from the cluster-wide
// values; the start script adds the node's own /32 route on win-bridge.
func hostProcessFlannelCNIConf(p *plan.Plan) ([]byte, error) {
	hp := p.HostProcess
	n := p.Networking
	delegate := "win-bridge"
	if hp.NetworkType == "Overlay" {
		delegate = "win-overlay"
	}
	exceptions := append(append([]string{}, n.ClusterCIDRs...), n.ServiceCIDR)
	// The node subnets are exempt on win-bridge only: on an Overlay network another Windows
	// host has no route back into the overlay (plan's sharedWindows says where upstream does
	// the same).
	if hp.NetworkType != "Overlay" {
		for _, s := range n.NodeSubnets {
			if !containsString(exceptions, s) {
				exceptions = append(exceptions, s)
			}
		}
	}
	np := plan.NodePlan{Name: "windows", Windows: &plan.WindowsNodePlan{
		HNSNetworkName: hp.NetworkName, CNIPlugin: "flannel", CNIDelegate: delegate,
		OutboundNATExceptions: exceptions, ServiceRoutes: []string{n.ServiceCIDR},
		DNSServers: []string{n.ClusterDNS}, DNSSearch: n.DNSSearch, EnableDSR: hp.EnableDSR,
	}}
	b, err := CNIConfig(np)
	if err != nil {
		return nil, fmt.Errorf("render flannel Windows CNI config: %w", err)
	}
	return b, nil
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// CalicoWindowsSettings renders cluster/hostprocess/calico-windows.yaml (calico/hostprocess):
// server-side-apply documents that set what Calico for Windows needs.
func CalicoWindowsSettings(p *plan.Plan) ([]byte, error) {
	hp := p.HostProcess
	if hp == nil || hp.Calico == nil {
		return nil, nil
	}
	c := hp.Calico
	header := fmt.Sprintf("Calico for Windows settings of %s (design %s). Apply with\n"+
		"kubectl apply --server-side --force-conflicts --field-manager=%s -f: each document sets only the\n"+
		"fields below and takes them over from whoever set them before (strictAffinity: false, say).\n%s",
		p.Cluster.Name, p.Cluster.Design, hostProcessManagedBy, generatedBy)
	var docs []any
	if c.SetStrictAffinity {
		// docs.tigera.io Calico for Windows, "Install using Operator": "strict affinity must be
		// set to true ... to prevent Linux nodes from borrowing IP addresses from Windows
		// nodes". The Kubernetes-datastore form (crd.projectcalico.org/v1 IPAMConfig default,
		// projectcalico/calico libcalico-go/config/crd/crd.projectcalico.org_ipamconfigs.yaml)
		// requires autoAllocateBlocks too; true is Calico's default. With the Calico API server
		// the docs' equivalent is: kubectl patch ipamconfigurations default --type merge
		// --patch='{"spec": {"strictAffinity": true}}'.
		docs = append(docs, map[string]any{
			"apiVersion": "crd.projectcalico.org/v1", "kind": "IPAMConfig",
			"metadata": map[string]any{"name": "default"},
			"spec":     map[string]any{"strictAffinity": true, "autoAllocateBlocks": true},
		})
	}
	// tigera/operator api/v1/installation_types.go: serviceCIDRs "required when using Calico for
	// Windows"; calicoNetwork.windowsDataplane HNS makes the operator render calico-node-windows
	// ("Disabled" by default); windowsNodes.cniBinDir/cniConfigDir "must match" containerd's CNI
	// bin_dir/conf_dir on the Windows nodes, which kubewin renders as these.
	docs = append(docs, map[string]any{
		"apiVersion": "operator.tigera.io/v1", "kind": "Installation",
		"metadata": map[string]any{"name": "default"},
		"spec": map[string]any{
			"serviceCIDRs":  c.ServiceCIDRs,
			"calicoNetwork": map[string]any{"windowsDataplane": c.WindowsDataplane},
			"windowsNodes":  map[string]any{"cniBinDir": hp.CNIBinDir, "cniConfigDir": hp.CNIConfDir, "cniLogDir": c.CNILogDir},
		},
	})
	// tigera/operator pkg/controller/installation/validation.go refuses Windows without this
	// ConfigMap's KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT: calico-node-windows
	// cannot use the kubernetes Service either.
	docs = append(docs, map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": plan.CalicoServicesEndpointMap, "namespace": plan.CalicoOperatorNamespace},
		"data":     map[string]any{"KUBERNETES_SERVICE_HOST": hp.APIServerHost, "KUBERNETES_SERVICE_PORT": hp.APIServerPort},
	})
	return yamlStream(header, "", docs...)
}

// yamlStream writes documents as one multi-document YAML stream: the header (and an optional
// note) as comments before the first.
func yamlStream(header, note string, objs ...any) ([]byte, error) {
	var b bytes.Buffer
	for _, l := range strings.Split(header, "\n") {
		b.WriteString(strings.TrimRight("# "+l, " ") + "\n")
	}
	if note != "" {
		for _, l := range strings.Split(note, "\n") {
			b.WriteString(strings.TrimRight("# "+l, " ") + "\n")
		}
	}
	e := newYAMLEncoder()
	for i, o := range objs {
		if i > 0 {
			b.WriteString("---\n")
		}
		var doc []byte
		var err error
		if m, ok := o.(map[string]any); ok {
			doc, err = sigsyaml.Marshal(m)
		} else {
			doc, err = e.minimalYAML(o, "")
			// The stream's header is above the first document; an empty one leaves "# ".
			doc = bytes.TrimPrefix(doc, []byte("# \n"))
		}
		if err != nil {
			return nil, fmt.Errorf("render %T: %w", o, err)
		}
		b.Write(doc)
	}
	if !isASCII(b.Bytes()) {
		return nil, fmt.Errorf("render HostProcess manifests: non-ASCII content")
	}
	return b.Bytes(), nil
}

// hostProcessNodeFiles are the files of a Windows node whose network a CNI pod owns: the
// kubelet and containerd (with the CNI directories the pods write into), and the services,
// firewall rules and registry hosts of the node's host effects (NodeEffects); no HNS scripts,
// CNI configuration or kube-proxy service, which the DaemonSets provide.
func hostProcessNodeFiles(p *plan.Plan, n plan.NodePlan, enc *yamlEncoder) ([]atomicfs.File, error) {
	effects, err := NodeEffects(p, n)
	if err != nil {
		return nil, err
	}
	s := &fileSet{dir: "nodes/" + n.Name}
	s.add("services/install.ps1", fileMode, func() ([]byte, error) { return servicesScript(p, n, effects) })
	s.add("firewall/rules.ps1", fileMode, func() ([]byte, error) { return firewallScript(n, effects) })
	addRegistryHosts(s, effects)
	s.add("kubelet/config.yaml", fileMode, func() ([]byte, error) { return kubeletConfig(enc, p, n) })
	s.add("kubelet/flags", fileMode, func() ([]byte, error) { return KubeletFlagsFile(p, n) })
	s.add("containerd/config.toml", fileMode, func() ([]byte, error) { return WindowsContainerdConfig(p, n) })
	s.add("README.md", fileMode, func() ([]byte, error) { return hostProcessNodeReadme(p, n), nil })
	if s.err != nil {
		return nil, s.err
	}
	for _, f := range s.files {
		if !isASCII(f.Data) {
			return nil, fmt.Errorf("render %s: non-ASCII content would be misread by Windows PowerShell 5.1", f.Path)
		}
	}
	return s.files, nil
}

func hostProcessNodeReadme(p *plan.Plan, n plan.NodePlan) []byte {
	w := n.Windows
	hp := p.HostProcess
	var b strings.Builder
	fmt.Fprintf(&b, "# %s (%s, design %s)\n\n", n.Name, w.BuildLabel, p.Cluster.Design)
	fmt.Fprintf(&b, "The pod network of this node is made by the cluster's %s pods, not by kubewin:\n", hp.CNI)
	fmt.Fprintf(&b, "a HostProcess pod creates the HNS network `%s` (%s) and writes the CNI configuration\n", hp.NetworkName, hp.NetworkType)
	fmt.Fprintf(&b, "into `%s` (binaries in `%s`); kube-proxy runs as a HostProcess pod too.\n", w.CNIConfDir, w.CNIBinDir)
	b.WriteString("Do not create, change or delete that network by hand.\n\n")
	b.WriteString("This directory holds what the node itself runs: the kubelet (`kubelet/`) and containerd\n")
	b.WriteString("(`containerd/config.toml`, whose CNI directories the pods write into).\n\n")
	b.WriteString("Checks once joined:\n")
	fmt.Fprintf(&b, "- `kubectl get pods -A -o wide --field-selector spec.nodeName=%s` lists the CNI and kube-proxy pods Running;\n", n.Name)
	fmt.Fprintf(&b, "- `Get-HnsNetwork | Where-Object Name -eq '%s'` shows the %s network.\n", hp.NetworkName, hp.NetworkType)
	return []byte(b.String())
}

// ClusterManifest is one rendered cluster file of a HostProcess design, as `kubewin publish`
// applies it (server-side apply, field manager kubewin).
type ClusterManifest struct {
	// Name is the file's path under the bundle (cluster/hostprocess/…).
	Name string
	Data []byte
	// TakeOver says the documents set fields another manager may own and take them over
	// (kubectl's --force-conflicts): the Calico settings, whose whole point is to change
	// what the operator's install set (strictAffinity false, windowsDataplane Disabled).
	TakeOver bool
}

// HostProcessClusterManifests are the cluster files of a HostProcess design that have content
// (what the cluster lacks for Windows), in the bundle's order; none for other designs.
func HostProcessClusterManifests(p *plan.Plan) ([]ClusterManifest, error) {
	if p.HostProcess == nil {
		return nil, nil
	}
	var out []ClusterManifest
	for _, m := range []struct {
		name     string
		takeOver bool
		render   func(*plan.Plan) ([]byte, error)
	}{
		{"kube-proxy-windows.yaml", false, KubeProxyWindowsDaemonSet},
		{"flannel-windows.yaml", false, FlannelWindowsDaemonSet},
		{"calico-windows.yaml", true, CalicoWindowsSettings},
	} {
		b, err := m.render(p)
		if err != nil {
			return nil, err
		}
		if len(b) > 0 {
			out = append(out, ClusterManifest{Name: hostProcessDir + "/" + m.name, Data: b, TakeOver: m.takeOver})
		}
	}
	return out, nil
}
