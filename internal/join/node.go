package join

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/kubernetes/cmd/kubeadm/app/util/pubkeypin"
	"sigs.k8s.io/yaml"

	"github.com/kubewin/kubewin/internal/noderun"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// checkPin verifies that caPEM is the CA caCertHash pins.
func checkPin(caPEM []byte, caCertHash string) error {
	pins := pubkeypin.NewSet()
	if err := pins.Allow(caCertHash); err != nil {
		return fmt.Errorf("%w: --ca-cert-hash: %v", ErrBadInput, err)
	}
	cas, err := certutil.ParseCertsPEM(caPEM)
	if err != nil {
		return fmt.Errorf("the pinned CA: %w", err)
	}
	if err := pins.CheckAny(cas); err != nil {
		return fmt.Errorf("%w: the CA pinned at the first join is not %s", ErrCAPinMismatch, caCertHash)
	}
	return nil
}

// serviceManifest lists what the node service supervises on a Linux node: containerd, then
// the kubelet. kube-proxy is not among them: on Linux the cluster's own kube-proxy (a DaemonSet
// on kubeadm clusters, or a CNI's replacement for it) serves the node. PATH is fixed, with BinDir
// first (containerd finds its shim there, and runc where the OS put it), so the manifest does
// not depend on the environment join ran in. KUBEWIN_INPUTS is the digest of what the service
// reads at start: when it changes, the definition changes and the supervisor restarts it.
func (j *joiner) serviceManifest(containerdInputs, kubeletInputs string) ([]byte, error) {
	flags, err := render.LinuxKubeletFlags(j.nodePlan, j.paths)
	if err != nil {
		return nil, err
	}
	path := "PATH=" + j.paths.BinDir + ":" + servicePath
	m := &noderun.Manifest{APIVersion: noderun.ManifestAPIVersion, Kind: noderun.ManifestKind, Services: []noderun.Service{
		{Name: "containerd", Path: filepath.Join(j.paths.BinDir, "containerd"),
			Args: []string{"--config", j.paths.ContainerdConfig()}, Env: []string{path, "KUBEWIN_INPUTS=" + containerdInputs},
			LogFile: filepath.Join(j.paths.LogDir, "containerd.log")},
		{Name: "kubelet", Path: filepath.Join(j.paths.BinDir, "kubelet"), Args: flags, Env: []string{path, "KUBEWIN_INPUTS=" + kubeletInputs},
			After: []string{"containerd"}, LogFile: filepath.Join(j.paths.LogDir, "kubelet.log")},
	}}
	return noderun.EncodeManifest(m)
}

// servicePath is the services' PATH after BinDir (systemd's default for system services).
const servicePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

func (j *joiner) tlsBootstrap(ctx context.Context) ([]Change, error) {
	err := j.poll(ctx, "TLS bootstrap", func() (bool, string, error) {
		if !j.joined() {
			return false, j.csrState(ctx), nil
		}
		c, err := j.client()
		if err != nil {
			return false, err.Error(), nil
		}
		_, err = c.CoreV1().Nodes().Get(ctx, j.node, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return false, "the kubelet has its client certificate; Node " + j.node + " is not registered yet" + j.kubeletLogHint(), nil
		case err != nil:
			return false, "read Node " + j.node + " with the node's credential: " + err.Error(), nil
		}
		return true, "", nil
	})
	if err != nil {
		return nil, err
	}
	changes := []Change{{What: "Node " + j.node + " registered with the kubelet's own client certificate", Action: ActionUnchanged}}
	// The token is not needed any more; as kubeadm does, the bootstrap kubeconfig goes.
	if err := os.Remove(j.paths.BootstrapKubeconfig()); err == nil {
		changes = append(changes, Change{What: j.paths.BootstrapKubeconfig() + " (removed: the kubelet has its own credential)", Action: ActionUpdated})
	} else if !errors.Is(err, os.ErrNotExist) {
		return changes, fmt.Errorf("remove the bootstrap kubeconfig: %w", err)
	}
	return changes, nil
}

// csrState says where TLS bootstrap stands, from the token's own CSRs (the token may read
// them: ClusterRole system:node-bootstrapper).
func (j *joiner) csrState(ctx context.Context) string {
	c, err := j.client()
	if err != nil {
		return err.Error()
	}
	id, _, _ := strings.Cut(j.o.Token, ".")
	list, err := c.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "the kubelet has no client certificate yet (CSRs unreadable: " + err.Error() + ")" + j.kubeletLogHint()
	}
	for _, csr := range list.Items {
		// A pool's token is shared by many nodes: only this node's request counts.
		if csr.Spec.Username != "system:bootstrap:"+id || csrCommonName(csr.Spec.Request) != "system:node:"+j.node {
			continue
		}
		for _, cond := range csr.Status.Conditions {
			switch cond.Type {
			case certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
				return fmt.Sprintf("CSR %s %s: %s", csr.Name, cond.Type, cond.Message)
			case certificatesv1.CertificateApproved:
				if len(csr.Status.Certificate) == 0 {
					return "CSR " + csr.Name + " approved, not signed yet (is kube-controller-manager's csrsigning controller running with the cluster CA?)"
				}
			}
		}
		if len(csr.Status.Conditions) == 0 {
			return "CSR " + csr.Name + " is pending: not approved (is kube-controller-manager's csrapproving controller running? `kubewin token create` binds the auto-approval roles)"
		}
	}
	return "the kubelet has not asked for a certificate yet" + j.kubeletLogHint()
}

// csrCommonName is the subject CN a CSR asks for ("" when it does not parse).
func csrCommonName(request []byte) string {
	block, _ := pem.Decode(request)
	if block == nil {
		return ""
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return ""
	}
	return req.Subject.CommonName
}

// kubeletLogHint is the kubelet log's last error line, if any.
func (j *joiner) kubeletLogHint() string {
	data, err := os.ReadFile(filepath.Join(j.paths.LogDir, "kubelet.log"))
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	for i := len(lines) - 1; i >= 0 && i >= len(lines)-200; i-- {
		if strings.HasPrefix(lines[i], "E") {
			l := lines[i]
			if len(l) > 300 {
				l = l[:300] + "…"
			}
			return "; kubelet log: " + l
		}
	}
	return ""
}

// pollNode reads this node's Node with the node's credential until accept takes it or the
// join's Timeout passes (see poll); accept says why it does not.
func (j *joiner) pollNode(ctx context.Context, what string, accept func(*corev1.Node) (bool, string)) error {
	c, err := j.client()
	if err != nil {
		return err
	}
	return j.poll(ctx, what, func() (bool, string, error) {
		n, err := c.CoreV1().Nodes().Get(ctx, j.node, metav1.GetOptions{})
		if err != nil {
			return false, "read Node " + j.node + ": " + err.Error(), nil
		}
		ok, why := accept(n)
		return ok, why, nil
	})
}

func (j *joiner) podNetwork(ctx context.Context) ([]Change, error) {
	// A node whose plan does not build on the pod CIDR (needsPodCIDR: Calico's IPAM addresses
	// its pods) takes the Node's when it has one and does not wait for it: a Calico cluster has
	// one only where kube-controller-manager allocates node CIDRs.
	need := needsPodCIDR(j.nodePlan)
	err := j.pollNode(ctx, "pod CIDR", func(n *corev1.Node) (bool, string) {
		if n.Spec.PodCIDR == "" && need {
			return false, "Node " + j.node + " has no spec.podCIDR (is kube-controller-manager running with --allocate-node-cidrs and a --cluster-cidr?)"
		}
		j.podCIDR = n.Spec.PodCIDR
		return true, ""
	})
	if err != nil {
		return nil, err
	}
	j.withoutPodCIDR = j.podCIDR == ""
	if err := j.replan(j.podCIDR); err != nil {
		return nil, err
	}
	// The node service plans from the state: it must see this pod CIDR before it takes the
	// reconcile lock after this step (a re-joined Node may have another one), or it would
	// rebuild the previous network over the new.
	j.saveState("pod-network", nil, false)
	if _, ok := j.windows(); ok {
		return j.windowsPodNetwork(ctx)
	}
	lh, err := j.linuxHost()
	if err != nil {
		return nil, err
	}
	out, err := ensurePodNetwork(ctx, lh, j.paths, j.spec.Spec.LinuxCNI.Type, j.nodePlan)
	if err != nil || j.spec.Spec.LinuxCNI.Type != "flannel" {
		return out, err
	}
	// The cluster's flannel DaemonSet makes this node's pod network (flannel.go): without it the
	// ready step would only see the kubelet's NetworkPluginNotReady, which does not say why.
	more, err := j.awaitFlannel(ctx)
	return append(out, more...), err
}

// ensurePodNetwork puts in place what depends on the node's pod CIDR: the bridge conflist when
// kubewin owns the Linux pod network (linuxCNI bridge), and the design's routes (host-gw routes
// to the other nodes' pod CIDRs, routes to Windows pod CIDRs via the gateway VIPs). Join runs it
// once the pod CIDR is known; the node service runs it again at every start and health tick,
// so a conflist or route lost on the way (a reboot, someone's cleanup) comes back.
func ensurePodNetwork(ctx context.Context, h LinuxNodeHost, paths render.NodePaths, linuxCNI string, n plan.NodePlan) ([]Change, error) {
	var out []Change
	if linuxCNI == "bridge" {
		conf, err := render.LinuxBridgeCNIConfig(n, paths)
		if err != nil {
			return nil, err
		}
		ch, err := writeFiles([]File{{Path: filepath.Join(paths.CNIConfDir, render.BridgeCNIConfName), Data: conf, Mode: 0o644}})
		if err != nil {
			return nil, err
		}
		out = append(out, ch...)
	} else if linuxCNI != "flannel" {
		// flannel's configuration is awaited and named by the pod-network step (awaitFlannel).
		out = append(out, Change{What: "CNI configuration (linuxCNI " + linuxCNI + " installs its own)", Action: ActionUnchanged})
	}
	if n.Linux == nil {
		return out, nil
	}
	effects, err := linuxEffectsOf(n)
	if err != nil {
		return out, err
	}
	var routes []plan.Route
	for _, e := range render.EffectsOf(effects, render.EffectRoute) {
		routes = append(routes, *e.Route)
	}
	if len(routes) > 0 {
		ch, err := h.EnsureRoutes(ctx, routes)
		if err != nil {
			return out, err
		}
		out = append(out, ch...)
	}
	return out, nil
}

// linuxEffectsOf is a Linux node's host effects without the cluster-wide ones (registry hosts
// come from the plan's images, which the routes do not need).
func linuxEffectsOf(n plan.NodePlan) ([]render.HostEffect, error) {
	return render.NodeEffects(&plan.Plan{}, n)
}

// Planned is a joined node's plan as the node service sees it: re-planned from the description
// join saved (cluster.yaml), the node's facts and the pod CIDR join recorded.
type Planned struct {
	Plan     *plan.Plan
	Node     plan.NodePlan
	LinuxCNI string
	// CNIDaemonSet ("namespace/name") makes the node's HNS network in the HostProcess designs.
	CNIDaemonSet string
}

// LoadPlanned plans this joined node again; before join's pod-network step has read the pod
// CIDR, or found that the node is planned without one (State.WithoutPodCIDR), there is no plan
// (os.ErrNotExist).
func LoadPlanned(ctx context.Context, h Host, paths render.NodePaths) (*Planned, error) {
	st, err := ReadState(paths)
	if err != nil {
		return nil, err
	}
	if st.PodCIDR == "" && !st.WithoutPodCIDR {
		return nil, fmt.Errorf("join state: %w (no pod CIDR yet)", os.ErrNotExist)
	}
	file := filepath.Join(paths.DataDir, "cluster.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	spec, _, err := v1alpha1.Parse(file, data)
	if err != nil {
		return nil, err
	}
	facts, err := h.Facts(ctx, st.Server)
	if err != nil {
		return nil, err
	}
	j := &joiner{host: h, paths: paths, facts: facts, node: st.Node, spec: spec}
	if err := j.replan(st.PodCIDR); err != nil {
		return nil, err
	}
	if st.PodCIDR == "" && needsPodCIDR(j.nodePlan) {
		// A description published since (another design) whose re-join has not read the pod
		// CIDR yet: planning it with none would build a network on an address it does not have.
		return nil, fmt.Errorf("join state: %w (no pod CIDR yet; design %s needs one)", os.ErrNotExist, spec.Spec.Design)
	}
	return &Planned{Plan: j.plan, Node: j.nodePlan, LinuxCNI: spec.Spec.LinuxCNI.Type, CNIDaemonSet: cniDaemonSet(spec, j.plan)}, nil
}

// Reconcile is the node service's pass over what join configured that can get lost: it puts
// the pod network back (ensurePodNetwork) for the node as LoadPlanned plans it, and returns what
// it repaired; a node that has not got its pod CIDR yet needs nothing (os.ErrNotExist).
func Reconcile(ctx context.Context, h Host, paths render.NodePaths) ([]Change, error) {
	lh, ok := h.(LinuxNodeHost)
	if !ok {
		return nil, fmt.Errorf("join: reconcile needs a Linux host (Windows nodes: winnode's Reconciler, WindowsDesired)")
	}
	pl, err := LoadPlanned(ctx, h, paths)
	if err != nil {
		return nil, err
	}
	// Sysctls are not persistent: a reboot resets them (join writes no sysctl.d), so the node
	// service sets them again with the routes.
	effects, err := render.NodeEffects(pl.Plan, pl.Node)
	if err != nil {
		return nil, err
	}
	changes, kerr := applyLinuxKernel(ctx, lh.Kernel(), effects)
	// A kernel setting that cannot be made does not keep the routes from being repaired.
	more, err := ensurePodNetwork(ctx, lh, paths, pl.LinuxCNI, pl.Node)
	changes = append(changes, more...)
	err = errors.Join(kerr, err)
	var repaired []Change
	for _, c := range changes {
		if c.Action == ActionCreated || c.Action == ActionUpdated {
			repaired = append(repaired, c)
		}
	}
	return repaired, err
}

func (j *joiner) ready(ctx context.Context) ([]Change, error) {
	err := j.pollNode(ctx, "Node Ready", func(n *corev1.Node) (bool, string) {
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				if cond.Status == corev1.ConditionTrue {
					return true, ""
				}
				return false, fmt.Sprintf("Ready=%s %s: %s", cond.Status, cond.Reason, cond.Message)
			}
		}
		return false, "the Node has no Ready condition yet"
	})
	if err != nil {
		return nil, err
	}
	return []Change{{What: "Node " + j.node + " Ready", Action: ActionUnchanged}}, nil
}

// checkPodName is the static pod the check runs; its mirror pod is <name>-<node>.
const checkPodName = "kubewin-check"

// checkPod runs the pause image as a static pod: the node's credential may create only mirror
// pods (NodeRestriction), and a static pod exercises the same path — image, sandbox, CNI,
// container — without an admin credential on the node. The manifest is removed afterwards.
func (j *joiner) checkPod(ctx context.Context) ([]Change, error) {
	c, err := j.client()
	if err != nil {
		return nil, err
	}
	image := j.plan.Images.LinuxPause
	if w := j.nodePlan.Windows; w != nil {
		image = w.PauseImage
	}
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: checkPodName, Namespace: metav1.NamespaceSystem, Labels: map[string]string{"app.kubernetes.io/managed-by": "kubewin"}},
		Spec: corev1.PodSpec{
			Containers:                    []corev1.Container{{Name: "check", Image: image, ImagePullPolicy: corev1.PullIfNotPresent}},
			TerminationGracePeriodSeconds: new(int64),
		},
	}
	data, err := yaml.Marshal(pod)
	if err != nil {
		return nil, fmt.Errorf("check pod manifest: %w", err)
	}
	manifest := filepath.Join(render.StaticPodDir(j.paths), checkPodName+".yaml")
	if _, err := writeFiles([]File{{Path: manifest, Data: data, Mode: 0o644}}); err != nil {
		return nil, err
	}
	defer os.Remove(manifest)
	mirror := checkPodName + "-" + j.node
	err = j.poll(ctx, "check pod", func() (bool, string, error) {
		p, err := c.CoreV1().Pods(metav1.NamespaceSystem).Get(ctx, mirror, metav1.GetOptions{})
		if err != nil {
			return false, "mirror pod " + mirror + ": " + err.Error(), nil
		}
		if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
			for _, cs := range p.Status.ContainerStatuses {
				if cs.Ready {
					j.podIP = p.Status.PodIP
					return true, "", nil
				}
			}
		}
		return false, podState(p), nil
	})
	if err != nil {
		return nil, err
	}
	if err := os.Remove(manifest); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove the check pod: %w", err)
	}
	return nil, nil
}

func podState(p *corev1.Pod) string {
	s := "pod " + p.Name + " " + string(p.Status.Phase)
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			s += ": " + w.Reason + " " + w.Message
		}
	}
	for _, cond := range p.Status.Conditions {
		if cond.Status != corev1.ConditionTrue && cond.Message != "" {
			s += "; " + string(cond.Type) + ": " + cond.Message
		}
	}
	return s
}
