package rollout

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// The drain follows kubectl's (k8s.io/kubectl v0.37.1 pkg/drain: drain.go evictPods,
// filters.go), written here because that package pulls cli-runtime and kustomize (some twenty
// modules) into kubewin for 300 lines: evict through policy/v1 Eviction, so the API server
// enforces every PodDisruptionBudget; on 429 TooManyRequests (a budget with no disruption
// allowed now) wait and retry until the drain's deadline; leave DaemonSet pods (their
// controller would put them back at once, and they tolerate the unschedulable taint) and mirror
// pods (static pods: the API cannot evict them, the kubelet owns them); pods already finished
// need no eviction; a pod without a controller is refused (nothing would recreate it) — the
// drain stops with its name rather than deleting someone's only copy.

// mirrorAnnotation marks a static pod's mirror (k8s.io/kubernetes pkg/kubelet/types
// ConfigMirrorAnnotationKey).
const mirrorAnnotation = "kubernetes.io/config.mirror"

// DrainResult counts what a drain did.
type DrainResult struct {
	// Evicted are the pods whose eviction the API server accepted ("namespace/name").
	Evicted []string `json:"evicted,omitempty"`
	// Refused counts 429 answers: evictions a PodDisruptionBudget held back for a while.
	Refused int `json:"refused"`
	// Left are pods left on the node and why ("ns/name (DaemonSet)").
	Left []string `json:"left,omitempty"`
}

type drainer struct {
	client kubernetes.Interface
	// retry is the wait after a 429 before the next eviction attempt of that pod.
	retry time.Duration
	// poll is how often a pod's deletion is checked.
	poll time.Duration
}

// drain evicts every pod of node that needs it and waits until they are gone, or ctx ends (the
// caller's deadline bounds the drain).
func (d drainer) drain(ctx context.Context, node string) (DrainResult, error) {
	var res DrainResult
	list, err := d.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
	})
	if err != nil {
		return res, fmt.Errorf("list the pods on %s: %w", node, err)
	}
	var evict []corev1.Pod
	var unmanaged []string
	for _, p := range list.Items {
		key := p.Namespace + "/" + p.Name
		switch why, err := d.leave(ctx, &p); {
		case err != nil:
			return res, err
		case why != "":
			res.Left = append(res.Left, key+" ("+why+")")
		case metav1.GetControllerOf(&p) == nil:
			unmanaged = append(unmanaged, key)
		default:
			evict = append(evict, p)
		}
	}
	sort.Strings(res.Left)
	if len(unmanaged) > 0 {
		sort.Strings(unmanaged)
		return res, fmt.Errorf("pods without a controller on %s would be lost, not moved: %s (delete or move them first)", node, strings.Join(unmanaged, ", "))
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(evict))
	for i := range evict {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			refused, err := d.evictAndWait(ctx, evict[i])
			mu.Lock()
			defer mu.Unlock()
			res.Refused += refused
			if err != nil {
				errs[i] = err
				return
			}
			res.Evicted = append(res.Evicted, evict[i].Namespace+"/"+evict[i].Name)
		}(i)
	}
	wg.Wait()
	sort.Strings(res.Evicted)
	return res, errors.Join(errs...)
}

// leave says why a pod stays on the node ("" when it must go).
func (d drainer) leave(ctx context.Context, p *corev1.Pod) (string, error) {
	if _, ok := p.Annotations[mirrorAnnotation]; ok {
		return "mirror pod", nil
	}
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return "finished", nil
	}
	if c := metav1.GetControllerOf(p); c != nil && c.Kind == "DaemonSet" && strings.HasPrefix(c.APIVersion, "apps/") {
		// kubectl's daemonSetFilter: only a DaemonSet that still exists recreates its pod.
		if _, err := d.client.AppsV1().DaemonSets(p.Namespace).Get(ctx, c.Name, metav1.GetOptions{}); err == nil {
			return "DaemonSet", nil
		} else if !apierrors.IsNotFound(err) {
			return "", fmt.Errorf("read DaemonSet %s/%s of pod %s: %w", p.Namespace, c.Name, p.Name, err)
		}
	}
	return "", nil
}

// evictAndWait evicts p, retrying while a budget refuses, and waits until the pod is gone (or
// replaced by a pod of the same name: a StatefulSet's, told apart by its UID).
func (d drainer) evictAndWait(ctx context.Context, p corev1.Pod) (refused int, err error) {
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}}
	for {
		err := d.client.PolicyV1().Evictions(p.Namespace).Evict(ctx, ev)
		if err == nil || apierrors.IsNotFound(err) {
			break
		}
		if !apierrors.IsTooManyRequests(err) {
			return refused, fmt.Errorf("evict pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		refused++
		select {
		case <-ctx.Done():
			return refused, fmt.Errorf("evict pod %s/%s: still refused when the drain's time ran out: %w", p.Namespace, p.Name, err)
		case <-time.After(d.retry):
		}
	}
	for {
		cur, err := d.client.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return refused, nil
		case err == nil && cur.UID != types.UID(p.UID):
			return refused, nil
		}
		select {
		case <-ctx.Done():
			return refused, fmt.Errorf("pod %s/%s was evicted but has not terminated: %w", p.Namespace, p.Name, ctx.Err())
		case <-time.After(d.poll):
		}
	}
}
