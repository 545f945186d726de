// Package join is the node side of `kubewin join`: a machine becomes a Ready node with a
// bootstrap token, the pinned cluster CA and the cluster description published by `kubewin
// publish`. The work is a list of named steps, as kubeadm's join phases
// (k8s.io/kubernetes cmd/kubeadm/app/cmd/phases/join): each one idempotent — it compares what is
// there with what should be and changes only the difference — skippable, and bounded in time,
// so a second join of a joined node changes nothing and an interrupted one resumes. What differs
// between Linux and Windows is behind Host.
package join

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"

	"github.com/kubewin/kubewin/internal/bootstrap"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// Options are the inputs of a join.
type Options struct {
	Server     string
	Token      string
	CACertHash string
	// NodeName overrides the hostname (lowercased) as the node's name.
	NodeName string
	// Binaries is where the node binaries come from (with SHA256SUMS).
	Binaries Binaries
	// KubeletDropIns are KubeletConfiguration fragments (files) for the kubelet's drop-in
	// directory: local overrides that the cluster description does not know.
	KubeletDropIns []string
	// Timeout bounds every wait (discovery, TLS bootstrap, pod CIDR, Ready, check pod).
	Timeout time.Duration
	// Skip names steps not to run.
	Skip []string
	// Log receives one line per step as it starts and ends.
	Log io.Writer
}

// Step is one named phase of a join.
type Step struct {
	Name        string
	Description string
	run         func(*joiner, context.Context) ([]Change, error)
}

// StepResult is what one step did.
type StepResult struct {
	Name     string        `json:"name"`
	Skipped  bool          `json:"skipped,omitempty"`
	Changes  []Change      `json:"changes,omitempty"`
	Detail   string        `json:"detail,omitempty"`
	Duration time.Duration `json:"durationNs"`
}

// Result is the outcome of a join.
type Result struct {
	Node     string        `json:"node"`
	PodCIDR  string        `json:"podCIDR,omitempty"`
	PodIP    string        `json:"checkPodIP,omitempty"`
	Steps    []StepResult  `json:"steps"`
	Duration time.Duration `json:"durationNs"`
}

// Changed reports whether any step created or updated anything (a second join of a joined
// node: false).
func (r *Result) Changed() bool {
	for _, s := range r.Steps {
		for _, c := range s.Changes {
			if c.Action == ActionCreated || c.Action == ActionUpdated {
				return true
			}
		}
	}
	return false
}

// Steps are the join steps in order.
func Steps() []Step {
	return []Step{
		{"preflight", "this machine's facts; the binaries and their checksums", (*joiner).preflight},
		{"discovery", "read cluster-info, check its token signature, pin the cluster CA", (*joiner).discovery},
		{"credentials", "write the pinned CA and the kubelet's bootstrap kubeconfig (0600)", (*joiner).credentials},
		{"cluster-description", "read the published cluster description; plan this node", (*joiner).describe},
		{"binaries", "install containerd, the kubelet (Windows: kube-proxy, kube-log-runner, kubewin) and the CNI plugins (checksums verified)", (*joiner).binaries},
		{"configuration", "render this node's files with plan's renderer; the service manifest", (*joiner).configure},
		{"node-service", "install and start the kubewin node service (Linux: it supervises containerd and the kubelet; Windows: SCM services, firewall rules)", (*joiner).nodeService},
		{"tls-bootstrap", "wait for the kubelet's client certificate and its Node object", (*joiner).tlsBootstrap},
		{"pod-network", "read the Node's pod CIDR (calico/hostprocess: when it has one, not awaited); configure what depends on it (Windows: HNS networks, host endpoint, routes, kube-proxy; Linux on flannel: wait for flannel's CNI configuration and lease)", (*joiner).podNetwork},
		{"ready", "wait for the Node to be Ready", (*joiner).ready},
		{"check-pod", "run a pod on the node (a static pod: a node may create only mirror pods)", (*joiner).checkPod},
	}
}

// State is the join's progress, kept in StatePath so that the node service and `kubewin status`
// can say which stage a node reached and why it stopped there.
type State struct {
	Node string `json:"node"`
	// Server is the API server join used; PodCIDR the Node's, once read.
	Server  string `json:"server,omitempty"`
	PodCIDR string `json:"podCIDR,omitempty"`
	// WithoutPodCIDR is set once the pod-network step has planned a node that needs no pod
	// CIDR (needsPodCIDR) while its Node has none: the node service plans it without one.
	WithoutPodCIDR bool `json:"withoutPodCIDR,omitempty"`
	// Step is the last step that ran; Error is set when it failed.
	Step  string    `json:"step"`
	Error string    `json:"error,omitempty"`
	At    time.Time `json:"at"`
	// Joined is true once every step has succeeded.
	Joined bool `json:"joined"`
}

// StatePath is where Run keeps the join State.
func StatePath(paths render.NodePaths) string {
	return filepath.Join(paths.DataDir, "join-state.json")
}

// ReadState reads the join state; a node that never ran join has none (os.ErrNotExist).
func ReadState(paths render.NodePaths) (*State, error) {
	data, err := os.ReadFile(StatePath(paths))
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", StatePath(paths), err)
	}
	return &st, nil
}

// saveState records progress; before discovery there is no directory to keep it in, and a
// state that cannot be written does not fail the join (the step's own result stands).
func (j *joiner) saveState(step string, err error, joined bool) {
	if j.trust == nil {
		return
	}
	st := State{Node: j.node, Server: j.trust.Server, PodCIDR: j.podCIDR, WithoutPodCIDR: j.withoutPodCIDR, Step: step, At: time.Now().UTC().Truncate(time.Second),
		Joined: joined}
	if err != nil {
		st.Error = err.Error()
	}
	data, merr := json.MarshalIndent(st, "", "  ")
	if merr != nil {
		return
	}
	if _, werr := writeFiles([]File{{Path: StatePath(j.paths), Data: append(data, '\n'), Mode: 0o644}}); werr != nil {
		fmt.Fprintf(j.o.Log, "  (join state not saved: %v)\n", werr)
	}
}

// skippable are the steps nothing after them needs.
var skippable = map[string]bool{"ready": true, "check-pod": true}

// ErrBadInput marks errors in the options (exit code 2).
var ErrBadInput = errors.New("bad input")

type joiner struct {
	o     Options
	host  Host
	paths render.NodePaths

	facts Facts
	node  string
	// bin is the mirror the binaries are installed from (Options.Binaries resolved in
	// preflight), sums its SHA256SUMS.
	bin      Binaries
	sums     map[string]string
	trust    *ClusterTrust
	spec     *v1alpha1.Cluster
	plan     *plan.Plan
	nodePlan plan.NodePlan
	podCIDR  string
	podIP    string
	// withoutPodCIDR: State.WithoutPodCIDR.
	withoutPodCIDR bool
	// effects are the node's host effects (render.NodeEffects), computed with its plan.
	effects []render.HostEffect
	// inputs are, on Windows, the digests of what each service reads at start; kubewinSum
	// that of the kubewin.exe the node service runs.
	inputs     map[string]string
	kubewinSum string
}

// Run joins this machine. Errors wrapping ErrBadInput or ErrCAPinMismatch are the caller's to
// fix (exit 2); others are failures (exit 1) after which a new run resumes.
func Run(ctx context.Context, o Options, h Host, paths render.NodePaths) (*Result, error) {
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	known := map[string]bool{}
	for _, s := range Steps() {
		known[s.Name] = true
	}
	for _, s := range o.Skip {
		if !known[s] {
			return nil, fmt.Errorf("%w: --skip %q: no such step (see --dry-run)", ErrBadInput, s)
		}
		if !skippable[s] {
			return nil, fmt.Errorf("%w: --skip %q: later steps need what it does; only ready and check-pod may be skipped", ErrBadInput, s)
		}
	}
	j := &joiner{o: o, host: h, paths: paths}
	// A re-join that fails before the pod-network step must not make the node service forget
	// the pod CIDR it repairs the network for.
	if st, err := ReadState(paths); err == nil {
		j.podCIDR, j.withoutPodCIDR = st.PodCIDR, st.WithoutPodCIDR
	}
	began := time.Now()
	res := &Result{}
	for _, s := range Steps() {
		if slices.Contains(o.Skip, s.Name) {
			res.Steps = append(res.Steps, StepResult{Name: s.Name, Skipped: true})
			fmt.Fprintf(o.Log, "[%s] skipped\n", s.Name)
			continue
		}
		fmt.Fprintf(o.Log, "[%s] %s\n", s.Name, s.Description)
		t0 := time.Now()
		changes, err := s.run(j, ctx)
		sr := StepResult{Name: s.Name, Changes: sortedChanges(changes), Duration: time.Since(t0)}
		res.Steps = append(res.Steps, sr)
		res.Node, res.PodCIDR, res.PodIP = j.node, j.podCIDR, j.podIP
		if err != nil {
			res.Duration = time.Since(began)
			err = fmt.Errorf("join step %s: %w", s.Name, err)
			j.saveState(s.Name, err, false)
			return res, err
		}
		j.saveState(s.Name, nil, false)
		for _, c := range sr.Changes {
			if c.Action != ActionUnchanged {
				fmt.Fprintf(o.Log, "  %s: %s\n", c.What, c.Action)
			}
		}
	}
	res.Duration = time.Since(began)
	j.saveState("done", nil, true)
	return res, nil
}

func (j *joiner) preflight(ctx context.Context) ([]Change, error) {
	if j.o.Server == "" || j.o.Token == "" || j.o.CACertHash == "" {
		return nil, fmt.Errorf("%w: --server, --token and --ca-cert-hash are required (kubewin token create prints them)", ErrBadInput)
	}
	if err := checkInputs(j.o.Server, j.o.Token, j.o.CACertHash); err != nil {
		return nil, err
	}
	facts, err := j.host.Facts(ctx, j.o.Server)
	if err != nil {
		return nil, err
	}
	if _, ok := j.windows(); ok {
		if err := j.windowsPreflight(ctx); err != nil {
			return nil, err
		}
	}
	j.facts = facts
	j.node = facts.Hostname
	if j.o.NodeName != "" {
		j.node = j.o.NodeName
	}
	if errs := validation.IsDNS1123Subdomain(j.node); len(errs) > 0 {
		return nil, fmt.Errorf("%w: node name %q (--node-name or the hostname): %s", ErrBadInput, j.node, strings.Join(errs, "; "))
	}
	// Read once: the binaries and configuration steps use the same sums (a mirror is asked
	// once; the official layouts are downloaded and checked here, before anything is changed).
	if j.bin, j.sums, err = j.o.Binaries.resolve(ctx, j.host.OS(), runtime.GOARCH, filepath.Join(j.paths.DataDir, "binaries"), j.installs); err != nil {
		return nil, err
	}
	for _, f := range j.o.KubeletDropIns {
		data, err := os.ReadFile(f)
		if err == nil {
			err = render.ValidateKubeletDropIn(data)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: --kubelet-config-dropin %s: %v", ErrBadInput, f, err)
		}
	}
	// A node that holds a credential must join again under the name it has.
	if cn, ok := j.credential(); ok && cn != "system:node:"+j.node {
		return nil, fmt.Errorf("%w: this machine joined as %s; joining it as %s would leave the kubelet without a valid credential (remove %s to join under a new name)",
			ErrBadInput, strings.TrimPrefix(cn, "system:node:"), j.node, j.paths.DataDir)
	}
	return []Change{{What: "node " + j.node, Action: ActionUnchanged},
		{What: fmt.Sprintf("cluster NIC %s %s/%d", facts.NIC.Name, facts.NIC.IP, facts.NIC.Prefix), Action: ActionUnchanged}}, nil
}

func (j *joiner) discovery(ctx context.Context) ([]Change, error) {
	// A joined node (a second join, a resumed one after its token expired) trusts the CA it
	// pinned at the first join — if it is still the one --ca-cert-hash names — and talks with
	// its own credential from here on: no token needed.
	if ca, err := os.ReadFile(j.paths.CACert()); err == nil && j.joined() {
		if err := checkPin(ca, j.o.CACertHash); err != nil {
			return nil, err
		}
		j.trust = &ClusterTrust{Server: j.o.Server, CAPEM: ca}
		return []Change{{What: "cluster CA " + j.o.CACertHash + " (pinned at the first join; the node's own credential is used)", Action: ActionUnchanged}}, nil
	}
	trust, err := Discover(ctx, j.o.Server, j.o.Token, j.o.CACertHash, j.o.Timeout)
	if err != nil {
		return nil, err
	}
	j.trust = trust
	return []Change{{What: "cluster CA " + j.o.CACertHash, Action: ActionUnchanged}}, nil
}

// joined reports whether the kubelet holds a usable credential of its own. The kubelet writes its
// kubeconfig before it has the certificate the kubeconfig names (TLS bootstrap still pending),
// so the certificate itself is what counts — and only while it is valid: a node that was off
// longer than its certificate's life joins again with a token, and its kubelet bootstraps anew.
func (j *joiner) joined() bool {
	if _, err := os.Stat(j.paths.KubeletKubeconfig()); err != nil {
		return false
	}
	_, ok := j.credential()
	return ok
}

// credential returns the subject of the kubelet's current client certificate when it is valid
// now.
func (j *joiner) credential() (string, bool) {
	data, err := os.ReadFile(KubeletClientCert(j.paths))
	if err != nil {
		return "", false
	}
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil || len(certs) == 0 {
		return "", false
	}
	now := time.Now()
	if now.Before(certs[0].NotBefore) || now.After(certs[0].NotAfter) {
		return "", false
	}
	return certs[0].Subject.CommonName, true
}

func (j *joiner) credentials(ctx context.Context) ([]Change, error) {
	var out []Change
	if _, ok := j.windows(); ok {
		// Before the token is written: file modes mean nothing on Windows.
		ch, err := j.windowsRestrict(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, ch)
	}
	files := []File{{Path: j.paths.CACert(), Data: j.trust.CAPEM, Mode: 0o644}}
	if !j.joined() {
		kc, err := bootstrapKubeconfig(j.trust, j.o.Token)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: j.paths.BootstrapKubeconfig(), Data: kc, Mode: 0o600})
	}
	ch, err := writeFiles(files)
	return append(out, ch...), err
}

func bootstrapKubeconfig(t *ClusterTrust, token string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cluster"] = &clientcmdapi.Cluster{Server: t.Server, CertificateAuthorityData: t.CAPEM}
	cfg.AuthInfos["kubelet-bootstrap"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["bootstrap"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: "kubelet-bootstrap"}
	cfg.CurrentContext = "bootstrap"
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("write bootstrap kubeconfig: %w", err)
	}
	return b, nil
}

// client is the node's own credential once the kubelet has it, else the bootstrap token.
func (j *joiner) client() (kubernetes.Interface, error) {
	var cfg *rest.Config
	var err error
	if j.joined() {
		cfg, err = clientcmd.BuildConfigFromFlags("", j.paths.KubeletKubeconfig())
		if err != nil {
			return nil, fmt.Errorf("the kubelet's kubeconfig: %w", err)
		}
	} else {
		cfg = &rest.Config{Host: j.trust.Server, BearerToken: j.o.Token, TLSClientConfig: rest.TLSClientConfig{CAData: j.trust.CAPEM}}
	}
	cfg.Timeout = 15 * time.Second
	return kubernetes.NewForConfig(cfg)
}

func (j *joiner) describe(ctx context.Context) ([]Change, error) {
	c, err := j.client()
	if err != nil {
		return nil, err
	}
	cm, err := c.CoreV1().ConfigMaps(bootstrap.PublishedNamespace).Get(ctx, bootstrap.PublishedName, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			return nil, fmt.Errorf("read %s/%s: %w; publish the cluster description first: `kubewin publish -f cluster.yaml`",
				bootstrap.PublishedNamespace, bootstrap.PublishedName, err)
		}
		return nil, fmt.Errorf("read the published cluster description: %w", err)
	}
	data := []byte(cm.Data[bootstrap.PublishedKey])
	spec, _, err := v1alpha1.Parse(bootstrap.PublishedNamespace+"/"+bootstrap.PublishedName+":"+bootstrap.PublishedKey, data)
	if err != nil {
		return nil, fmt.Errorf("the published cluster description: %w", err)
	}
	j.spec = spec
	if err := j.replan(""); err != nil {
		return nil, err
	}
	if _, ok := j.windows(); ok {
		if err := j.checkWindowsDesign(); err != nil {
			return nil, err
		}
	}
	return writeFiles([]File{{Path: filepath.Join(j.paths.DataDir, "cluster.yaml"), Data: data, Mode: 0o644}})
}

// replan plans the cluster with this node in it (added from its facts when the description
// does not list it) and, once known, the pod CIDR kube-controller-manager gave it.
func (j *joiner) replan(podCIDR string) error {
	spec := *j.spec
	spec.Spec.Nodes = slices.Clone(spec.Spec.Nodes)
	i := slices.IndexFunc(spec.Spec.Nodes, func(n v1alpha1.Node) bool { return n.Name == j.node })
	if i < 0 {
		spec.Spec.Nodes = append(spec.Spec.Nodes, v1alpha1.Node{Name: j.node, OS: v1alpha1.OS(j.host.OS()), Role: v1alpha1.RoleWorker,
			WindowsBuild: j.facts.WindowsBuild})
		i = len(spec.Spec.Nodes) - 1
	}
	n := &spec.Spec.Nodes[i]
	if string(n.OS) != j.host.OS() {
		return fmt.Errorf("%w: the cluster description lists node %s as %s, this machine runs %s", ErrBadInput, j.node, n.OS, j.host.OS())
	}
	if len(n.NICs) == 0 {
		f := j.facts.NIC
		n.NICs = []v1alpha1.NIC{{Name: f.Name, MAC: f.MAC, IP: f.IP, Prefix: f.Prefix}}
		n.ClusterNIC = f.Name
	}
	if podCIDR != "" {
		n.PodCIDR = podCIDR
	}
	if errs := v1alpha1.Validate(&spec); len(errs) > 0 {
		return fmt.Errorf("the published cluster description with node %s added: %w", j.node, errs)
	}
	p, err := plan.New(&spec)
	if err != nil {
		return fmt.Errorf("plan node %s: %w", j.node, err)
	}
	for _, np := range p.Nodes {
		if np.Name == j.node {
			effects, err := render.NodeEffects(p, np)
			if err != nil {
				return fmt.Errorf("plan node %s: %w", j.node, err)
			}
			j.plan, j.nodePlan, j.effects = p, np, effects
			return nil
		}
	}
	return fmt.Errorf("plan node %s: not in the plan", j.node)
}

// nodeBinaries are installed from --binaries into BinDir, cniPlugins into CNIBinDir.
var (
	nodeBinaries = []string{"containerd", "containerd-shim-runc-v2", "kubelet"}
	cniPlugins   = []string{"bridge", "host-local", "loopback", "portmap"}
)

// installs says whether the binaries step installs the file a mirror names name on this node:
// what join takes from the official layouts. On Windows the CNI plugin depends on the design,
// known only after discovery, so every plugin is kept.
func (j *joiner) installs(name string) bool {
	if j.host.OS() == "windows" {
		return slices.Contains(windowsPrograms, name) || (strings.HasPrefix(name, "cni/") && strings.HasSuffix(name, ".exe"))
	}
	return slices.Contains(nodeBinaries, name) || slices.ContainsFunc(cniPlugins, func(p string) bool { return name == "cni/"+p })
}

func (j *joiner) binaries(ctx context.Context) ([]Change, error) {
	if _, ok := j.windows(); ok {
		return j.windowsInstallBinaries(ctx)
	}
	sums := j.sums
	var out []Change
	for _, b := range nodeBinaries {
		ch, err := j.bin.install(ctx, sums, b, filepath.Join(j.paths.BinDir, b))
		if err != nil {
			return out, err
		}
		out = append(out, ch)
	}
	for _, p := range cniPlugins {
		ch, err := j.bin.install(ctx, sums, "cni/"+p, filepath.Join(j.paths.CNIBinDir, p))
		if err != nil {
			return out, err
		}
		out = append(out, ch)
	}
	return out, nil
}

func (j *joiner) configure(ctx context.Context) ([]Change, error) {
	if _, ok := j.windows(); ok {
		return j.windowsConfigure(ctx)
	}
	p, n := j.plan, j.nodePlan
	ctrd, err := render.LinuxContainerdConfigAt(p, n, j.paths)
	if err != nil {
		return nil, err
	}
	kubelet, err := render.LinuxKubeletConfig(p, n, j.paths)
	if err != nil {
		return nil, err
	}
	files := []File{
		{Path: j.paths.ContainerdConfig(), Data: ctrd, Mode: 0o644},
		{Path: j.paths.KubeletConfig(), Data: kubelet, Mode: 0o644},
	}
	dropIns := map[string]bool{}
	for i, f := range j.o.KubeletDropIns {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("--kubelet-config-dropin: %w", err)
		}
		name := fmt.Sprintf("%s%02d-%s.conf", dropInPrefix, 50+i, strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)))
		dropIns[name] = true
		files = append(files, File{Path: filepath.Join(j.paths.KubeletDropInDir(), name), Data: data, Mode: 0o644})
	}
	sums := j.sums
	// What each service reads at start; a change restarts it (the supervisor restarts a service
	// whose definition changed), so a second join with a new drop-in or binary takes effect.
	ctrdInputs := inputsDigest(ctrd, []byte(sums["containerd"]), []byte(sums["containerd-shim-runc-v2"]))
	kubeletInputs := [][]byte{kubelet, j.trust.CAPEM, []byte(sums["kubelet"])}
	for _, f := range files[2:] {
		kubeletInputs = append(kubeletInputs, []byte(filepath.Base(f.Path)), f.Data)
	}
	manifest, err := j.serviceManifest(ctrdInputs, inputsDigest(kubeletInputs...))
	if err != nil {
		return nil, err
	}
	files = append(files, File{Path: ServicesManifest(j.paths), Data: manifest, Mode: 0o600})
	for _, d := range []string{j.paths.KubeletDropInDir(), render.StaticPodDir(j.paths), j.paths.LogDir, j.paths.CNIConfDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", d, err)
		}
	}
	changes, err := writeFiles(files)
	if err != nil {
		return changes, err
	}
	lh, err := j.linuxHost()
	if err != nil {
		return changes, err
	}
	kernel, err := applyLinuxKernel(ctx, lh.Kernel(), j.effects)
	changes = append(changes, kernel...)
	if err != nil {
		return changes, err
	}
	hosts, err := applyRegistryHosts(j.effects, j.paths)
	changes = append(changes, hosts...)
	if err != nil {
		return changes, err
	}
	// Drop-ins of an earlier join that this one no longer gives are removed.
	entries, _ := os.ReadDir(j.paths.KubeletDropInDir())
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), dropInPrefix) && !dropIns[e.Name()] {
			path := filepath.Join(j.paths.KubeletDropInDir(), e.Name())
			if err := os.Remove(path); err != nil {
				return changes, fmt.Errorf("remove the stale drop-in %s: %w", path, err)
			}
			changes = append(changes, Change{What: path + " (removed)", Action: ActionUpdated})
		}
	}
	return changes, nil
}

// dropInPrefix names the kubelet drop-ins join owns (others in the directory are left alone).
const dropInPrefix = "kubewin-"

// inputsDigest is a short digest of what a service reads at start.
func inputsDigest(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// ServicesManifest is the file `kubewin node run` supervises from.
func ServicesManifest(paths render.NodePaths) string {
	return filepath.Join(paths.DataDir, "services.json")
}

func (j *joiner) nodeService(ctx context.Context) ([]Change, error) {
	if _, ok := j.windows(); ok {
		return j.windowsNodeService(ctx)
	}
	lh, err := j.linuxHost()
	if err != nil {
		return nil, err
	}
	ch, err := lh.InstallService(ctx)
	if err != nil {
		return nil, err
	}
	return []Change{ch}, nil
}

// poll calls f every interval until it returns true, an error, or the join's Timeout passes;
// then the last reason f gave is the error, so a wait never ends in a bare "timed out".
func (j *joiner) poll(ctx context.Context, what string, f func() (bool, string, error)) error {
	deadline := time.Now().Add(j.o.Timeout)
	last := "no answer yet"
	for {
		ok, reason, err := f()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if reason != "" && reason != last {
			last = reason
			fmt.Fprintf(j.o.Log, "  waiting: %s\n", reason)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %s: %s", what, j.o.Timeout, last)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (last: %s)", what, ctx.Err(), last)
		case <-time.After(time.Second):
		}
	}
}

// linuxHost is the host's Linux layer; a host of another OS that reaches a Linux step is a
// programming error reported as such.
func (j *joiner) linuxHost() (LinuxNodeHost, error) {
	lh, ok := j.host.(LinuxNodeHost)
	if !ok {
		return nil, fmt.Errorf("join: the %s host has no Linux node layer", j.host.OS())
	}
	return lh, nil
}
