package rollout

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
)

// Probe is a user gate (--probe). Two kinds:
//
//	ready:KIND/NAMESPACE/NAME[,min=N]   KIND deployment|daemonset|statefulset|replicaset
//	    the workload's pods on the node are all Ready, and at least N of them (default 1). A
//	    DaemonSet's pods stay through the drain; a Deployment's come back to a cordoned node
//	    only if they tolerate node.kubernetes.io/unschedulable (else use min=0 and a probe
//	    that runs on the node, http:).
//	http:URL[,image=IMAGE][,timeout=DURATION]
//	    a GET of URL from a pod pinned to the node (spec.nodeName, so a cordoned node runs
//	    it), in the orchestrator's namespace; passes when it exits 0 (a 2xx or 3xx answer
//	    within timeout, default 10s). Linux nodes run busybox wget; Windows nodes curl.exe in
//	    the Nano Server image of the node's build (process isolation needs host build = image
//	    build); image= overrides either.
type Probe struct {
	Kind string `json:"kind"` // "ready" or "http"
	// ready:
	Workload  string `json:"workload,omitempty"` // deployment, daemonset, statefulset, replicaset
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	Min       int    `json:"min,omitempty"`
	// http:
	URL     string        `json:"url,omitempty"`
	Image   string        `json:"image,omitempty"`
	Timeout time.Duration `json:"timeout,omitempty"`
	// Raw is the flag value, for messages.
	Raw string `json:"raw"`
}

// ParseProbe parses one --probe value.
func ParseProbe(s string) (Probe, error) {
	kind, rest, ok := strings.Cut(s, ":")
	if !ok {
		return Probe{}, fmt.Errorf("--probe %q: want ready:KIND/NAMESPACE/NAME[,min=N] or http:URL[,image=IMAGE][,timeout=DURATION]", s)
	}
	p := Probe{Kind: kind, Raw: s}
	switch kind {
	case "ready":
		parts := strings.Split(rest, ",")
		ref := strings.Split(parts[0], "/")
		if len(ref) != 3 {
			return Probe{}, fmt.Errorf("--probe %q: want ready:KIND/NAMESPACE/NAME", s)
		}
		p.Workload, p.Namespace, p.Name, p.Min = strings.ToLower(ref[0]), ref[1], ref[2], 1
		switch p.Workload {
		case "deployment", "daemonset", "statefulset", "replicaset":
		default:
			return Probe{}, fmt.Errorf("--probe %q: kind %q is not deployment, daemonset, statefulset or replicaset", s, ref[0])
		}
		if errs := validation.IsDNS1123Label(p.Namespace); len(errs) > 0 {
			return Probe{}, fmt.Errorf("--probe %q: namespace %q: %s", s, p.Namespace, strings.Join(errs, "; "))
		}
		if errs := validation.IsDNS1123Subdomain(p.Name); len(errs) > 0 {
			return Probe{}, fmt.Errorf("--probe %q: name %q: %s", s, p.Name, strings.Join(errs, "; "))
		}
		for _, opt := range parts[1:] {
			k, v, _ := strings.Cut(opt, "=")
			if k != "min" {
				return Probe{}, fmt.Errorf("--probe %q: unknown option %q (ready: takes min=N)", s, k)
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return Probe{}, fmt.Errorf("--probe %q: min=%q is not a count", s, v)
			}
			p.Min = n
		}
	case "http":
		// Options follow the last comma-separated part that is not a URL; a URL may hold
		// commas itself, so options are only recognised at the end.
		parts := strings.Split(rest, ",")
		i := len(parts)
		for i > 1 && isProbeOption(parts[i-1]) {
			i--
		}
		p.URL, p.Timeout = strings.Join(parts[:i], ","), 10*time.Second
		u, err := url.Parse(p.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Probe{}, fmt.Errorf("--probe %q: %q is not an http(s) URL", s, p.URL)
		}
		for _, opt := range parts[i:] {
			k, v, _ := strings.Cut(opt, "=")
			switch k {
			case "image":
				if v == "" || strings.ContainsAny(v, " \t") {
					return Probe{}, fmt.Errorf("--probe %q: image %q", s, v)
				}
				p.Image = v
			case "timeout":
				d, err := time.ParseDuration(v)
				if err != nil || d <= 0 || d > 10*time.Minute {
					return Probe{}, fmt.Errorf("--probe %q: timeout %q: want a duration up to 10m", s, v)
				}
				p.Timeout = d
			}
		}
	default:
		return Probe{}, fmt.Errorf("--probe %q: unknown kind %q (ready or http)", s, kind)
	}
	return p, nil
}

func isProbeOption(s string) bool {
	k, _, ok := strings.Cut(s, "=")
	return ok && (k == "image" || k == "timeout")
}

// probeRun checks one probe on one node. pass is false with a reason while the probe does not
// pass (the caller polls until its gate deadline); err is for the API failing.
type probeRunner struct {
	client    kubernetes.Interface
	namespace string // where http probe pods run
	rolloutID string
}

// Pod label of http probe pods, so they can be found and removed.
const probeLabel = "rollout.kubewin.io/probe"

func (r probeRunner) ready(ctx context.Context, p Probe, node string) (bool, string, error) {
	var sel *metav1.LabelSelector
	apps := r.client.AppsV1()
	switch p.Workload {
	case "deployment":
		o, err := apps.Deployments(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return false, "", fmt.Errorf("probe %s: %w", p.Raw, err)
		}
		sel = o.Spec.Selector
	case "daemonset":
		o, err := apps.DaemonSets(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return false, "", fmt.Errorf("probe %s: %w", p.Raw, err)
		}
		sel = o.Spec.Selector
	case "statefulset":
		o, err := apps.StatefulSets(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return false, "", fmt.Errorf("probe %s: %w", p.Raw, err)
		}
		sel = o.Spec.Selector
	case "replicaset":
		o, err := apps.ReplicaSets(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return false, "", fmt.Errorf("probe %s: %w", p.Raw, err)
		}
		sel = o.Spec.Selector
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, "", fmt.Errorf("probe %s: selector: %w", p.Raw, err)
	}
	pods, err := r.client.CoreV1().Pods(p.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: s.String(), FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
	})
	if err != nil {
		return false, "", fmt.Errorf("probe %s: list pods: %w", p.Raw, err)
	}
	ready := 0
	var notReady []string
	for _, pod := range pods.Items {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if podReady(&pod) {
			ready++
		} else {
			notReady = append(notReady, pod.Name)
		}
	}
	switch {
	case len(notReady) > 0:
		return false, fmt.Sprintf("%s: pods on %s not Ready: %s", p.Raw, node, strings.Join(notReady, ", ")), nil
	case ready < p.Min:
		return false, fmt.Sprintf("%s: %d Ready pods on %s, want at least %d", p.Raw, ready, node, p.Min), nil
	}
	return true, "", nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// windowsImages is the Nano Server tag per Windows build (the node label
// node.kubernetes.io/windows-build, "10.0.20348"): process isolation needs the same build
// (https://learn.microsoft.com/virtualization/windowscontainers/deploy-containers/version-compatibility).
var windowsImages = map[string]string{
	"10.0.17763": "mcr.microsoft.com/windows/nanoserver:1809",
	"10.0.20348": "mcr.microsoft.com/windows/nanoserver:ltsc2022",
	"10.0.26100": "mcr.microsoft.com/windows/nanoserver:ltsc2025",
}

// linuxImage runs the Linux probe (busybox's wget).
const linuxImage = "busybox:1.37"

// httpPod is the probe pod for p on node.
func (r probeRunner) httpPod(p Probe, node *corev1.Node, name string) (*corev1.Pod, error) {
	secs := strconv.Itoa(max(1, int(p.Timeout/time.Second)))
	image := p.Image
	var cmd []string
	if node.Labels[corev1.LabelOSStable] == "windows" {
		if image == "" {
			build := node.Labels[corev1.LabelWindowsBuild]
			image = windowsImages[build]
			if image == "" {
				return nil, fmt.Errorf("probe %s: no Nano Server image known for Windows build %q of %s; give image=", p.Raw, build, node.Name)
			}
		}
		cmd = []string{"curl.exe", "-fsS", "-o", "NUL", "--max-time", secs, p.URL}
	} else {
		if image == "" {
			image = linuxImage
		}
		cmd = []string{"wget", "-q", "-T", secs, "-O", "/dev/null", p.URL}
	}
	zero := int64(0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.namespace, Labels: map[string]string{probeLabel: "http"}},
		Spec: corev1.PodSpec{
			// Pinned: the scheduler is bypassed, so the cordon does not keep it off.
			NodeName:                      node.Name,
			RestartPolicy:                 corev1.RestartPolicyNever,
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			TerminationGracePeriodSeconds: &zero,
			AutomountServiceAccountToken:  new(bool),
			Containers:                    []corev1.Container{{Name: "probe", Image: image, Command: cmd}},
		},
	}, nil
}

// http runs an http probe: creates the pod (once per request: name from the node and the
// request) and reads its phase; final marks a GET that ran and failed. The caller removes the
// pod when the gates are done.
func (r probeRunner) http(ctx context.Context, p Probe, node *corev1.Node, name string) (ok bool, reason string, final bool, err error) {
	pods := r.client.CoreV1().Pods(r.namespace)
	pod, err := pods.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		want, err := r.httpPod(p, node, name)
		if err != nil {
			// No image for this node: no wait makes one appear.
			return false, err.Error(), true, nil
		}
		if pod, err = pods.Create(ctx, want, metav1.CreateOptions{}); err != nil {
			return false, "", false, fmt.Errorf("probe %s: create pod: %w", p.Raw, err)
		}
	} else if err != nil {
		return false, "", false, fmt.Errorf("probe %s: %w", p.Raw, err)
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		return true, "", false, nil
	case corev1.PodFailed:
		return false, fmt.Sprintf("%s: GET from a pod on %s failed: %s", p.Raw, node.Name, terminationMessage(pod)), true, nil
	}
	return false, fmt.Sprintf("%s: probe pod %s/%s is %s", p.Raw, r.namespace, name, pod.Status.Phase), false, nil
}

func terminationMessage(p *corev1.Pod) string {
	for _, c := range p.Status.ContainerStatuses {
		if t := c.State.Terminated; t != nil {
			msg := fmt.Sprintf("exit code %d", t.ExitCode)
			if t.Message != "" {
				msg += ": " + strings.TrimSpace(t.Message)
			}
			return msg
		}
	}
	if p.Status.Message != "" {
		return p.Status.Message
	}
	return "no exit code reported"
}

// cleanup removes probe pods that ran on node.
func (r probeRunner) cleanup(ctx context.Context, names []string) error {
	for _, n := range names {
		err := r.client.CoreV1().Pods(r.namespace).Delete(ctx, n, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("remove probe pod %s/%s: %w", r.namespace, n, err)
		}
	}
	return nil
}
