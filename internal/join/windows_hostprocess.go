package join

import (
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubewin/kubewin/internal/binaries"
	"github.com/kubewin/kubewin/internal/nodestatus"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/winnode"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// Designs calico/hostprocess and flannel/hostprocess on a Windows node: the CNI DaemonSet's
// HostProcess pod creates and owns the HNS network (plan.NetworkOwnerDaemonSet) and kube-proxy
// runs as a HostProcess DaemonSet too. join installs containerd (a version with HostProcess
// support) and the kubelet, creates the CNI directories the pods write into, creates no HNS
// network and no kube-proxy service, and its pod-network step waits for the CNI pod on this
// node to run and for its network to exist, naming the pod's failure when they do not come.

// calicoWindowsDaemonSet is the DaemonSet the Tigera operator runs Calico for Windows as
// (tigera/operator pkg/render/windows.go: "calico-node-windows" in namespace calico-system).
const calicoWindowsDaemonSet = "calico-system/calico-node-windows"

// cniOwned reports whether this node's HNS network is made by a CNI DaemonSet's pod.
func cniOwned(n plan.NodePlan) bool {
	return n.Windows != nil && n.Windows.NetworkOwner == plan.NetworkOwnerDaemonSet
}

// needsPodCIDR reports whether a node's plan depends on its Node's spec.podCIDR, which a
// cluster has only where kube-controller-manager allocates node CIDRs (--allocate-node-cidrs;
// kubeadm --pod-network-cidr). A Windows node of calico/hostprocess does not: calico-node-windows
// makes the HNS network and Calico IPAM addresses the pods from blocks of its IP pools affine to
// the node (docs.tigera.io/calico/latest/networking/ipam/get-started-ip-addresses;
// projectcalico/calico libcalico-go/lib/ipam), so its plan holds no gateway, endpoint address
// or route of a pod CIDR (plan.hostProcessNode) — and where the Installation's IPAM is HostLocal,
// the pod reads the pod CIDR itself. Every other design builds on it, flannel/hostprocess too
// (flanneld's kube subnet manager leases the Node's spec.podCIDR).
func needsPodCIDR(n plan.NodePlan) bool {
	return !cniOwned(n) || n.Windows.CNIPlugin != "calico"
}

// cniDaemonSet names ("namespace/name") the DaemonSet whose HostProcess pod makes the node's
// network: the cluster's own HostProcess one when discover found it, else the one kubewin
// renders (flannel) or the operator's (Calico).
func cniDaemonSet(spec *v1alpha1.Cluster, p *plan.Plan) string {
	hp := p.HostProcess
	if hp == nil {
		return ""
	}
	component := map[string]string{"calico": "calico-node", "flannel": "flannel"}[hp.CNI]
	for _, ds := range spec.Spec.Windows.DaemonSets {
		if ds.HostProcess && ds.Component == component {
			return ds.Namespace + "/" + ds.Name
		}
	}
	if hp.Flannel != nil {
		return hp.Flannel.Namespace + "/" + hp.Flannel.Name
	}
	if hp.CNI == "calico" {
		return calicoWindowsDaemonSet
	}
	return ""
}

// hostProcessBinaries are what a CNI-owned node installs: containerd and the kubelet (with
// kube-log-runner, which runs it as a service), and kube-proxy.exe, which the rendered
// kube-proxy HostProcess DaemonSet runs from the install dir (render/hostprocess.go). Flannel's
// DaemonSet runs flanneld.exe and the CNI plugins from the node as well: they are installed
// when the mirror has them (the official CNI plugins release has the delegate and host-local;
// flanneld and the flannel plugin come from flannel's own releases).
func (j *joiner) hostProcessBinaries() []windowsBinary {
	p, w := j.paths, j.nodePlan.Windows
	out := []windowsBinary{
		{"containerd.exe", filepath.Join(p.RuntimeBinDir, "containerd.exe")},
		{"containerd-shim-runhcs-v1.exe", filepath.Join(p.RuntimeBinDir, "containerd-shim-runhcs-v1.exe")},
		{"kubelet.exe", filepath.Join(p.BinDir, "kubelet.exe")},
		{"kube-log-runner.exe", filepath.Join(p.BinDir, "kube-log-runner.exe")},
		{"kube-proxy.exe", filepath.Join(p.BinDir, "kube-proxy.exe")},
	}
	if w.CNIPlugin == "flannel" {
		for _, name := range []string{"flanneld.exe"} {
			if _, ok := j.sums[name]; ok {
				out = append(out, windowsBinary{name, filepath.Join(p.BinDir, name)})
			}
		}
		for _, plugin := range []string{w.CNIDelegate, "host-local", "flannel"} {
			if _, ok := j.sums["cni/"+plugin+".exe"]; ok || plugin != "flannel" {
				out = append(out, windowsBinary{"cni/" + plugin + ".exe", filepath.Join(p.CNIBinDir, plugin+".exe")})
			}
		}
	}
	return out
}

// minHostProcessContainerd is the first containerd with HostProcess containers: "containerd
// 1.6 or higher" (kubernetes.io/docs/tasks/configure-pod-container/create-hostprocess-pod,
// Prerequisites; learn.microsoft.com/azure/aks/use-windows-hpc, Limitations).
var minHostProcessContainerd = [3]int{1, 6, 0}

// checkHostProcessContainerd refuses a containerd older than 1.6, by the version the official
// --binaries value names or else the one the installed containerd.exe was built as; a version
// that cannot be told is said in the log, not refused.
func (j *joiner) checkHostProcessContainerd() error {
	version, from := "", ""
	if binaries.IsOfficial(j.o.Binaries.Source) {
		if o, err := binaries.ParseOfficial(j.o.Binaries.Source); err == nil {
			version, from = o.Containerd, "--binaries"
		}
	}
	if version == "" {
		exe := filepath.Join(j.paths.RuntimeBinDir, "containerd.exe")
		if info, err := buildinfo.ReadFile(exe); err == nil {
			for _, s := range info.Settings {
				if s.Key == "-ldflags" {
					version, from = containerdLdflagsVersion(s.Value), exe
				}
			}
		}
	}
	if version == "" {
		fmt.Fprintf(j.o.Log, "  note: the containerd version is not known (not an official --binaries value, no version in %s's build information); HostProcess containers need containerd 1.6 or later\n",
			filepath.Join(j.paths.RuntimeBinDir, "containerd.exe"))
		return nil
	}
	v, ok := parseVersion(version)
	if !ok {
		return fmt.Errorf("%w: containerd version %q (from %s) is not MAJOR.MINOR.PATCH", ErrBadInput, version, from)
	}
	if lessVersion(v, minHostProcessContainerd) {
		return fmt.Errorf("%w: design %s runs the pod network in HostProcess containers, which need containerd 1.6 or later (kubernetes.io/docs/tasks/configure-pod-container/create-hostprocess-pod); the binaries have containerd %s (from %s)",
			ErrBadInput, j.spec.Spec.Design, version, from)
	}
	return nil
}

// containerdVersionFlag is how containerd's Makefile stamps its version into the binary:
// -X $(PKG)/version.Version=$(VERSION) with PKG github.com/containerd/containerd (v1) or
// .../containerd/v2 (containerd/containerd Makefile, GO_LDFLAGS).
var containerdVersionFlag = regexp.MustCompile(`-X[= ]['"]?github\.com/containerd/containerd(?:/v2)?/version\.Version=([^\s'"]+)`)

// containerdLdflagsVersion returns the version in a -ldflags build setting ("" when absent).
func containerdLdflagsVersion(ldflags string) string {
	m := containerdVersionFlag.FindStringSubmatch(ldflags)
	if m == nil {
		return ""
	}
	return m[1]
}

var versionNumbers = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)`)

func parseVersion(s string) ([3]int, bool) {
	m := versionNumbers.FindStringSubmatch(s)
	if m == nil {
		return [3]int{}, false
	}
	var v [3]int
	for i := range v {
		n, err := strconv.Atoi(m[i+1])
		if err != nil {
			return [3]int{}, false
		}
		v[i] = n
	}
	return v, true
}

func lessVersion(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// hostProcessConfigure writes what a CNI-owned node runs itself: containerd's configuration
// (its CNI bin_dir/conf_dir are the directories the DaemonSets write into) and the kubelet's;
// it creates those directories and removes a CNI configuration kubewin wrote there for an
// earlier design (containerd would use the first configuration in the directory, and the CNI
// pod writes its own).
func (j *joiner) hostProcessConfigure(ctx context.Context) ([]Change, error) {
	h, _ := j.windows()
	if err := j.checkHostProcessContainerd(); err != nil {
		return nil, err
	}
	ctrd, err := render.WindowsContainerdConfig(j.plan, j.nodePlan)
	if err != nil {
		return nil, err
	}
	kubelet, err := render.KubeletConfig(j.plan, j.nodePlan)
	if err != nil {
		return nil, err
	}
	var changes []Change
	for _, d := range []string{j.paths.LogDir, render.StaticPodDir(j.paths), j.paths.CNIConfDir, j.paths.CNIBinDir} {
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			changes = append(changes, Change{What: d, Action: ActionCreated})
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return changes, fmt.Errorf("create %s: %w", d, err)
		}
	}
	own := filepath.Join(j.paths.CNIConfDir, render.CNIConfigName(j.nodePlan.Windows))
	for _, name := range []string{own, filepath.Join(j.paths.CNIConfDir, "cni.conf")} {
		if _, err := os.Stat(name); err == nil && isKubewinCNIConf(name) {
			if err := os.Remove(name); err != nil {
				return changes, fmt.Errorf("remove kubewin's CNI configuration %s (the CNI pod writes its own): %w", name, err)
			}
			changes = append(changes, Change{What: name + " removed (the CNI pod writes its own)", Action: ActionUpdated})
		}
	}
	files := []File{
		{Path: j.paths.ContainerdConfig(), Data: ctrd, Mode: 0o644},
		{Path: j.paths.KubeletConfig(), Data: kubelet, Mode: 0o644},
	}
	ch, err := writeFiles(files)
	changes = append(changes, ch...)
	if err != nil {
		return changes, err
	}
	hosts, err := applyRegistryHosts(j.effects, j.paths)
	changes = append(changes, hosts...)
	if err != nil {
		return changes, err
	}
	access, err := applyACLs(ctx, h.Node, j.effects, j.paths)
	changes = append(changes, access...)
	sums := j.sums
	j.inputs = map[string]string{
		"containerd":    inputsDigest(ctrd, []byte(sums["containerd.exe"]), []byte(sums["containerd-shim-runhcs-v1.exe"])),
		"kubelet":       inputsDigest(kubelet, j.trust.CAPEM, []byte(sums["kubelet.exe"]), []byte(sums["kube-log-runner.exe"])),
		NodeServiceName: j.kubewinSum,
	}
	return changes, err
}

// isKubewinCNIConf: a CNI configuration kubewin rendered (render.CNIConfig names its network
// after the plan's HNS network and is written only by join); anything else in the directory
// is the CNI pod's and is left alone.
func isKubewinCNIConf(path string) bool {
	data, err := os.ReadFile(path)
	return err == nil && strings.Contains(string(data), `"cniVersion"`) && !strings.Contains(string(data), "flannel") && !strings.Contains(string(data), "calico")
}

// hostProcessPodNetwork runs the node service's Reconciler — which on these nodes watches the
// CNI's network and creates nothing — until the CNI pod on this node runs and its HNS network
// exists (bounded by the join's Timeout); the failure names why, from the pod's status and its
// log on this disk.
func (j *joiner) hostProcessPodNetwork(ctx context.Context) ([]Change, error) {
	h, _ := j.windows()
	desired, err := windowsDesiredFor(j.spec, j.plan, j.nodePlan, j.effects)
	if err != nil {
		return nil, err
	}
	lock, err := lockReconcile(ctx, j.paths)
	if err != nil {
		return nil, err
	}
	defer lock.release()
	c, err := j.client()
	if err != nil {
		return nil, err
	}
	r := newWindowsReconciler(h, desired, j.paths)
	cni := &cniPodWatch{Client: c, Node: j.node, DaemonSet: desired.CNINetwork.Owner, PodLogsDir: j.paths.PodLogsDir}
	r.CNIDiagnosis = cni.Diagnose
	var out []Change
	err = j.poll(ctx, "pod network", func() (bool, string, error) {
		rep, err := r.Reconcile(ctx)
		for _, rp := range rep.Repairs {
			out = append(out, Change{What: rp.What + " (" + rp.Why + ")", Action: ActionUpdated})
		}
		if err != nil {
			return false, err.Error(), nil
		}
		return rep.Healthy, rep.Reason(), nil
	})
	if err != nil {
		return out, err
	}
	return append(out, Change{What: "HNS network " + desired.CNINetwork.Name + " (made by the pod of DaemonSet " + desired.CNINetwork.Owner + ")", Action: ActionUnchanged}), nil
}

// windowsDesiredFor is the node service's Desired for a planned node; on a CNI-owned node it
// names the CNI's DaemonSet.
func windowsDesiredFor(spec *v1alpha1.Cluster, p *plan.Plan, n plan.NodePlan, effects []render.HostEffect) (winnode.Desired, error) {
	d, err := winnode.DesiredForNode(n, effects)
	if err != nil {
		return d, err
	}
	if d.CNINetwork != nil {
		d.CNINetwork.Owner = cniDaemonSet(spec, p)
	}
	return d, nil
}

// cniPodWatch reads the CNI pod on a node with the node's own credential: the Node authorizer
// lets a node list pods with the field selector spec.nodeName=<itself> and get pods bound to it
// (k8s.io/kubernetes v1.37.1 plugin/pkg/auth/authorizer/node/node_authorizer.go, authorizePod).
type cniPodWatch struct {
	Client kubernetes.Interface
	Node   string
	// DaemonSet is "namespace/name".
	DaemonSet string
	// PodLogsDir is the kubelet's podLogsDir (C:\var\log\pods on Windows).
	PodLogsDir string
}

// Diagnose says why the CNI pod is not running ("" when it runs and is ready).
func (w *cniPodWatch) Diagnose(ctx context.Context) string {
	ns, name, _ := strings.Cut(w.DaemonSet, "/")
	pods, err := w.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", w.Node).String()})
	if err != nil {
		if apierrors.IsForbidden(err) {
			return "the node's credential may not list its pods (is the Node authorizer enabled?): " + err.Error()
		}
		return "read the pods on this node: " + err.Error()
	}
	var pod *corev1.Pod
	for i := range pods.Items {
		if ownedByDaemonSet(&pods.Items[i], name) {
			pod = &pods.Items[i]
		}
	}
	if pod == nil {
		return fmt.Sprintf("no pod of DaemonSet %s is scheduled to this node (is the DaemonSet applied, and do its nodeSelector and tolerations admit node %s?)", w.DaemonSet, w.Node)
	}
	return diagnosePod(pod, w.PodLogsDir)
}

func ownedByDaemonSet(p *corev1.Pod, ds string) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" && o.Name == ds {
			return true
		}
	}
	return false
}

// diagnosePod names why a pod is not running from its status (the kubelet's waiting reasons:
// ErrImagePull and ImagePullBackOff, k8s.io/kubernetes pkg/kubelet/images/types.go;
// CrashLoopBackOff, pkg/kubelet/kuberuntime/kuberuntime_manager.go) and the last line of the
// failing container's log on this node.
func diagnosePod(p *corev1.Pod, podLogsDir string) string {
	what := "pod " + p.Namespace + "/" + p.Name
	if p.DeletionTimestamp != nil {
		return what + " is being deleted"
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return fmt.Sprintf("%s is not scheduled: %s %s", what, c.Reason, c.Message)
		}
	}
	statuses := append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, s := range statuses {
		if s.Ready || (s.State.Running != nil && p.Status.Phase == corev1.PodRunning) {
			continue
		}
		logLine := lastContainerLogLine(podLogsDir, p, s.Name)
		withLog := func(msg string) string {
			if logLine != "" {
				msg += "; its log ends: " + logLine
			}
			// An API answer of 403 reads "<resource> ... is forbidden: User ... cannot <verb>"
			// (k8s.io/apiserver v0.37.1 pkg/endpoints/handlers/responsewriters/errors.go forbiddenMessage).
			if strings.Contains(logLine, "is forbidden") || strings.Contains(logLine, "cannot get resource") || strings.Contains(logLine, "cannot list resource") {
				msg += fmt.Sprintf(" (missing RBAC: the pod's ServiceAccount %s/%s lacks a permission its CNI needs; apply the CNI's ClusterRole and binding)", p.Namespace, orDefault(p.Spec.ServiceAccountName, "default"))
			}
			return msg
		}
		switch {
		case s.State.Waiting != nil && (s.State.Waiting.Reason == "ErrImagePull" || s.State.Waiting.Reason == "ImagePullBackOff"):
			return fmt.Sprintf("%s: image %s cannot be pulled (%s): %s", what, s.Image, s.State.Waiting.Reason, s.State.Waiting.Message)
		case s.State.Waiting != nil && s.State.Waiting.Reason == "CrashLoopBackOff":
			msg := fmt.Sprintf("%s: container %s crashes (CrashLoopBackOff, %d restarts)", what, s.Name, s.RestartCount)
			if t := s.LastTerminationState.Terminated; t != nil {
				msg += fmt.Sprintf(", last exit code %d", t.ExitCode)
				if m := strings.TrimSpace(t.Message); m != "" {
					msg += ": " + m
				}
			}
			return withLog(msg)
		case s.State.Terminated != nil && s.State.Terminated.ExitCode != 0:
			return withLog(fmt.Sprintf("%s: container %s exited with code %d (%s) %s", what, s.Name, s.State.Terminated.ExitCode, s.State.Terminated.Reason, strings.TrimSpace(s.State.Terminated.Message)))
		case s.State.Waiting != nil && s.State.Waiting.Reason != "" && s.State.Waiting.Reason != "ContainerCreating" && s.State.Waiting.Reason != "PodInitializing":
			return withLog(fmt.Sprintf("%s: container %s is waiting: %s %s", what, s.Name, s.State.Waiting.Reason, s.State.Waiting.Message))
		}
	}
	if p.Status.Phase != corev1.PodRunning {
		return fmt.Sprintf("%s is %s", what, orDefault(string(p.Status.Phase), "not started yet"))
	}
	return ""
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// lastContainerLogLine reads the last line of a container's newest log file on this node: the
// kubelet writes it at <podLogsDir>/<namespace>_<pod>_<uid>/<container>/<restartCount>.log
// (k8s.io/kubernetes v1.37.1 pkg/kubelet/kuberuntime/helpers.go BuildContainerLogsDirectory,
// buildContainerLogsPath; kuberuntime_container.go names the file by restart count) in the CRI
// log format.
func lastContainerLogLine(podLogsDir string, p *corev1.Pod, container string) string {
	if podLogsDir == "" {
		return ""
	}
	dir := filepath.Join(podLogsDir, strings.Join([]string{p.Namespace, p.Name, string(p.UID)}, "_"), container)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	type logFile struct {
		n    int
		name string
	}
	var files []logFile
	for _, e := range entries {
		if m := restartLogFile.FindStringSubmatch(e.Name()); m != nil {
			n, _ := strconv.Atoi(m[1])
			files = append(files, logFile{n, e.Name()})
		}
	}
	sort.Slice(files, func(a, b int) bool { return files[a].n > files[b].n })
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			continue
		}
		if line := lastCRILogLine(data); line != "" {
			return line
		}
	}
	return ""
}

// restartLogFile is the kubelet's <restartCount>.log (kuberuntime_container.go
// restartCountLogFileRegex, without the rotated suffixes).
var restartLogFile = regexp.MustCompile(`^(\d+)\.log$`)

// maxLogLine bounds what a log line adds to a message (the Node condition is bounded too).
const maxLogLine = 400

// lastCRILogLine returns the message of the last complete, non-empty entry of a CRI log:
// "<RFC 3339 time> <stdout|stderr> <P|F> <message>", where P marks a partial line continued by
// the next entry (k8s.io/cri-client pkg/logs/logs.go parseCRILog; the tag is F or P,
// k8s.io/cri-api runtime/v1 LogTag). A line that is not in that format is taken as it is.
func lastCRILogLine(data []byte) string {
	var last, partial string
	for _, raw := range strings.Split(string(data), "\n") {
		raw = strings.TrimRight(raw, "\r")
		if raw == "" {
			continue
		}
		msg, tag := raw, "F"
		if f := strings.SplitN(raw, " ", 4); len(f) >= 3 && (f[1] == "stdout" || f[1] == "stderr") && (f[2] == "F" || f[2] == "P") {
			tag = f[2]
			msg = ""
			if len(f) == 4 {
				msg = f[3]
			}
		}
		if tag == "P" {
			partial += msg
			continue
		}
		msg, partial = partial+msg, ""
		if strings.TrimSpace(msg) != "" {
			last = strings.TrimSpace(msg)
		}
	}
	if len(last) > maxLogLine {
		last = last[:maxLogLine] + "..."
	}
	return last
}

// watchCNI gives the node service's Reconciler the CNI pod's diagnosis on a CNI-owned node,
// read with the node's own credential (the kubelet's kubeconfig) on every pass that asks.
func (s *WindowsNodeService) watchCNI() {
	d := s.rec.Desired
	if d.CNINetwork == nil {
		s.rec.CNIDiagnosis = nil
		return
	}
	s.rec.CNIDiagnosis = func(ctx context.Context) string {
		cfg, err := clientcmd.BuildConfigFromFlags("", s.Paths.KubeletKubeconfig())
		if err != nil {
			return "the node's credential: " + err.Error()
		}
		cfg.Timeout = 15 * time.Second
		c, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return "the node's credential: " + err.Error()
		}
		w := &cniPodWatch{Client: c, Node: d.Node, DaemonSet: d.CNINetwork.Owner, PodLogsDir: s.Paths.PodLogsDir}
		return w.Diagnose(ctx)
	}
}

// unhealthy is the error of an unhealthy pass: on a CNI-owned node a failing CNI network or pod
// is the node's reason (nodestatus.ReasonCNINetworkFailing), whatever the services' state.
func unhealthy(rep winnode.Report) error {
	if rep.CNIProblem != "" {
		return &nodestatus.Problem{Reason: nodestatus.ReasonCNINetworkFailing, Err: errors.New(rep.Reason())}
	}
	return errors.New(rep.Reason())
}
