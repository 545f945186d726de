package gateway

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// nodeWatch is the Windows Node informer the controller and the route keeper share: only the
// nodes the group serves (selector), each cached as a slim copy, and only changes that move a
// gateway (pod CIDRs, UID, deletion) reported.
type nodeWatch struct {
	selector labels.Selector
	factory  informers.SharedInformerFactory
	informer cache.SharedIndexInformer
	lister   listersv1.NodeLister
}

// newNodeWatch sets up the informer; nothing runs until start. onWatchError sees every failed
// list or watch (the caller stays fail-static), onChange every relevant Node event.
func newNodeWatch(client kubernetes.Interface, selector string, onWatchError func(error), onChange func()) (*nodeWatch, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("windows node selector: %w", err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.LabelSelector = sel.String() }))
	nodes := factory.Core().V1().Nodes()
	informer := nodes.Informer()
	if err := informer.SetTransform(slimNode); err != nil {
		return nil, fmt.Errorf("node informer transform: %w", err)
	}
	if err := informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		onWatchError(err)
	}); err != nil {
		return nil, fmt.Errorf("node informer error handler: %w", err)
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { onChange() },
		UpdateFunc: func(old, cur any) {
			if nodeChanged(old, cur) {
				onChange()
			}
		},
		DeleteFunc: func(any) { onChange() },
	}); err != nil {
		return nil, fmt.Errorf("node informer handler: %w", err)
	}
	return &nodeWatch{selector: sel, factory: factory, informer: informer, lister: nodes.Lister()}, nil
}

// start runs the informer until ctx ends; stop waits for it.
func (w *nodeWatch) start(ctx context.Context) { w.factory.Start(ctx.Done()) }
func (w *nodeWatch) stop()                     { w.factory.Shutdown() }

// synced waits for the first complete list; false when ctx ended first.
func (w *nodeWatch) synced(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx.Done(), w.informer.HasSynced)
}

// slimNode keeps only what the layout needs, so 1,000 cached Windows Nodes (with their images,
// conditions and addresses) cost kilobytes, not megabytes.
func slimNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:              n.Name,
			UID:               n.UID,
			ResourceVersion:   n.ResourceVersion,
			CreationTimestamp: n.CreationTimestamp,
			DeletionTimestamp: n.DeletionTimestamp,
		},
		Spec: corev1.NodeSpec{PodCIDR: n.Spec.PodCIDR, PodCIDRs: n.Spec.PodCIDRs},
	}, nil
}

// nodeChanged ignores the status-only updates kubelets send all the time.
func nodeChanged(old, cur any) bool {
	a, ok1 := old.(*corev1.Node)
	b, ok2 := cur.(*corev1.Node)
	if !ok1 || !ok2 {
		return true
	}
	return a.UID != b.UID || !slices.Equal(a.Spec.PodCIDRs, b.Spec.PodCIDRs) || a.Spec.PodCIDR != b.Spec.PodCIDR ||
		(a.DeletionTimestamp == nil) != (b.DeletionTimestamp == nil)
}
