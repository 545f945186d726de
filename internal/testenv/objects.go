package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// CreateFiles creates every object of the given multi-document YAML files (see CreateObjects).
func (cp *ControlPlane) CreateFiles(ctx context.Context, paths ...string) error {
	var objs []*unstructured.Unstructured
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read fixture: %w", err)
		}
		o, err := DecodeObjects(data)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		objs = append(objs, o...)
	}
	return cp.CreateObjects(ctx, objs...)
}

// DecodeObjects splits multi-document YAML (or JSON) into objects; empty documents are skipped.
func DecodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for i := 1; ; i++ {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("document %d: apiVersion and kind are required", i)
		}
		out = append(out, u)
	}
}

// CreateObjects creates the objects in order, except that Namespaces and
// CustomResourceDefinitions go first and CRDs are waited for until Established, so fixtures can
// mix CRDs and their instances. Objects keep their status where the API allows it on create
// (Nodes do), which is how fixtures carry node addresses and versions.
func (cp *ControlPlane) CreateObjects(ctx context.Context, objs ...*unstructured.Unstructured) error {
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		return fmt.Errorf("discovery client: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))

	var first, crds, rest []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "Namespace":
			first = append(first, o)
		case "CustomResourceDefinition":
			crds = append(crds, o)
		default:
			rest = append(rest, o)
		}
	}
	create := func(o *unstructured.Unstructured) error {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) && len(crds) > 0 {
			// An Established CRD can still be missing from discovery for a moment (the API
			// server publishes it asynchronously): look again until it shows, bounded.
			_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
				mapper.Reset()
				m, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
				return !meta.IsNoMatchError(err), nil
			})
		}
		if err != nil {
			return fmt.Errorf("map %s %s: %w", gvk, o.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ns := o.GetNamespace()
			if ns == "" {
				ns = metav1.NamespaceDefault
			}
			ri = dyn.Resource(m.Resource).Namespace(ns)
		}
		if _, err := ri.Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create %s %s/%s: %w", gvk.Kind, o.GetNamespace(), o.GetName(), err)
		}
		return nil
	}
	for _, o := range first {
		if err := create(o); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	for _, o := range crds {
		if err := create(o); err != nil {
			return err
		}
	}
	if len(crds) > 0 {
		if err := waitEstablished(ctx, dyn, crds); err != nil {
			return err
		}
		mapper.Reset()
	}
	for _, o := range rest {
		if err := create(o); err != nil {
			return err
		}
	}
	return nil
}

func waitEstablished(ctx context.Context, dyn dynamic.Interface, crds []*unstructured.Unstructured) error {
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	for _, c := range crds {
		name := c.GetName()
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err := dyn.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, cond := range conds {
				m, _ := cond.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("wait for CRD %s to be established: %w", name, err)
		}
	}
	return nil
}
