package bootstrap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"

	"github.com/kubewin/kubewin/internal/render"
)

// FieldManager is the server-side apply field manager of what kubewin applies to a cluster
// (the same name the rendered files tell kubectl users to apply with).
const FieldManager = "kubewin"

// ApplyPrerequisites server-side applies what a HostProcess design's cluster lacks for Windows
// nodes (render.HostProcessClusterManifests: the kube-proxy and flannel Windows DaemonSets with
// their ConfigMaps, the Calico settings), so that `kubewin token create` + `kubewin join` is all
// a Windows node then needs. Strict field validation: a field the API server does not know is
// an error, not dropped. Documents of a manifest marked TakeOver take their fields over from
// other managers (the Calico settings exist to change what the operator's install set);
// others refuse a conflict, naming the manager that owns the field. A kind the cluster does not
// serve (no Tigera operator CRDs) is an error before anything is applied.
func ApplyPrerequisites(ctx context.Context, dyn dynamic.Interface, mapper meta.RESTMapper, manifests []render.ClusterManifest) ([]Change, error) {
	type doc struct {
		obj      *unstructured.Unstructured
		ri       dynamic.ResourceInterface
		kind     string
		takeOver bool
		file     string
	}
	var docs []doc
	for _, m := range manifests {
		objs, err := decodeManifest(m.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		for _, o := range objs {
			gvk := o.GroupVersionKind()
			mp, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				return nil, fmt.Errorf("%s: the cluster does not serve %s (%v); nothing was applied", m.Name, gvk, err)
			}
			ri := dynamic.ResourceInterface(dyn.Resource(mp.Resource))
			if mp.Scope.Name() == meta.RESTScopeNameNamespace {
				ri = dyn.Resource(mp.Resource).Namespace(o.GetNamespace())
			}
			docs = append(docs, doc{obj: o, ri: ri, kind: gvk.Kind, takeOver: m.TakeOver, file: m.Name})
		}
	}
	var out []Change
	for _, d := range docs {
		name := d.kind + " " + d.obj.GetName()
		if ns := d.obj.GetNamespace(); ns != "" {
			name = d.kind + " " + ns + "/" + d.obj.GetName()
		}
		before := ""
		if cur, err := d.ri.Get(ctx, d.obj.GetName(), metav1.GetOptions{}); err == nil {
			before = cur.GetResourceVersion()
		} else if !apierrors.IsNotFound(err) {
			return out, fmt.Errorf("get %s: %w", name, err)
		}
		body, err := json.Marshal(d.obj.Object)
		if err != nil {
			return out, fmt.Errorf("encode %s: %w", name, err)
		}
		force := d.takeOver
		got, err := d.ri.Patch(ctx, d.obj.GetName(), types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: FieldManager, FieldValidation: metav1.FieldValidationStrict, Force: &force})
		if err != nil {
			if apierrors.IsConflict(err) {
				return out, fmt.Errorf("apply %s (%s): another field manager owns fields kubewin sets; resolve it or apply the file with --force-conflicts: %w", name, d.file, err)
			}
			return out, fmt.Errorf("apply %s (%s): %w", name, d.file, err)
		}
		action := "configured"
		switch {
		case before == "":
			action = "created"
		case got.GetResourceVersion() == before:
			action = "unchanged"
		}
		out = append(out, Change{Object: name, Action: action})
	}
	return out, nil
}

// decodeManifest splits a YAML stream into its objects; empty documents (the comment header)
// are skipped.
func decodeManifest(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("decode: %w", err)
		}
		if len(m) == 0 {
			continue
		}
		o := &unstructured.Unstructured{Object: m}
		if o.GetKind() == "" || o.GetAPIVersion() == "" || o.GetName() == "" {
			return nil, fmt.Errorf("a document without apiVersion, kind or metadata.name")
		}
		out = append(out, o)
	}
}
