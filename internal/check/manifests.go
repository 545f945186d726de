package check

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	appsv1beta1 "k8s.io/api/apps/v1beta1"
	appsv1beta2 "k8s.io/api/apps/v1beta2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	extv1beta1 "k8s.io/api/extensions/v1beta1"
	nodev1 "k8s.io/api/node/v1"
	nodev1beta1 "k8s.io/api/node/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/kubernetes/scheme"
)

// Object is one Kubernetes object from a manifest.
type Object struct {
	File       string
	Line       int
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	Pos        *Positions
	// Template is the pod template of Pods and workload controllers.
	Template *PodTemplate
	// RuntimeClass is set for RuntimeClass objects.
	RuntimeClass *RuntimeClassInfo
}

// Ref renders "Deployment default/iis".
func (o *Object) Ref() string {
	ns := o.Namespace
	if ns == "" {
		ns = "default"
	}
	return fmt.Sprintf("%s %s/%s", o.Kind, ns, o.Name)
}

// Loc locates a path of the object (relative to the document root).
func (o *Object) Loc(field string) Location {
	l := Location{File: o.File, Object: o.Ref(), Field: field}
	l.Line, l.Column = o.Pos.Locate(field)
	if l.Line == 0 {
		l.Line = o.Line
	}
	return l
}

// PodTemplate is the pod part of a workload.
type PodTemplate struct {
	Labels      map[string]string
	Annotations map[string]string
	Spec        *corev1.PodSpec
	// SpecPath and MetaPath are document paths ("spec.template.spec").
	SpecPath, MetaPath string
}

// RuntimeClassInfo is the part of a RuntimeClass the rules need.
type RuntimeClassInfo struct {
	Handler      string
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
}

// RemovedAPI is a group/version/kind the API server no longer serves.
type RemovedAPI struct {
	APIVersion, Kind string
	Removed          string
	Replacement      string
}

// removedAPIs follows the Kubernetes deprecated API migration guide.
var removedAPIs = []RemovedAPI{
	{"extensions/v1beta1", "Deployment", "1.16", "apps/v1"},
	{"extensions/v1beta1", "DaemonSet", "1.16", "apps/v1"},
	{"extensions/v1beta1", "ReplicaSet", "1.16", "apps/v1"},
	{"extensions/v1beta1", "NetworkPolicy", "1.16", "networking.k8s.io/v1"},
	{"extensions/v1beta1", "PodSecurityPolicy", "1.16", "(removed entirely in 1.25; use Pod Security Admission)"},
	{"extensions/v1beta1", "Ingress", "1.22", "networking.k8s.io/v1"},
	{"apps/v1beta1", "Deployment", "1.16", "apps/v1"},
	{"apps/v1beta1", "StatefulSet", "1.16", "apps/v1"},
	{"apps/v1beta2", "Deployment", "1.16", "apps/v1"},
	{"apps/v1beta2", "DaemonSet", "1.16", "apps/v1"},
	{"apps/v1beta2", "ReplicaSet", "1.16", "apps/v1"},
	{"apps/v1beta2", "StatefulSet", "1.16", "apps/v1"},
	{"networking.k8s.io/v1beta1", "Ingress", "1.22", "networking.k8s.io/v1"},
	{"batch/v1beta1", "CronJob", "1.25", "batch/v1"},
	{"policy/v1beta1", "PodDisruptionBudget", "1.25", "policy/v1"},
	{"policy/v1beta1", "PodSecurityPolicy", "1.25", "(removed; use Pod Security Admission)"},
	{"node.k8s.io/v1beta1", "RuntimeClass", "1.25", "node.k8s.io/v1"},
	{"node.k8s.io/v1alpha1", "RuntimeClass", "1.22", "node.k8s.io/v1"},
	{"discovery.k8s.io/v1beta1", "EndpointSlice", "1.25", "discovery.k8s.io/v1"},
	{"autoscaling/v2beta1", "HorizontalPodAutoscaler", "1.25", "autoscaling/v2"},
	{"autoscaling/v2beta2", "HorizontalPodAutoscaler", "1.26", "autoscaling/v2"},
	{"flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema", "1.29", "flowcontrol.apiserver.k8s.io/v1"},
}

// LookupRemovedAPI finds apiVersion/kind in the removed-API table.
func LookupRemovedAPI(apiVersion, kind string) (RemovedAPI, bool) {
	for _, r := range removedAPIs {
		if r.APIVersion == apiVersion && r.Kind == kind {
			return r, true
		}
	}
	return RemovedAPI{}, false
}

// manifestDecoder decodes objects strictly with client-go's scheme (every built-in type).
type manifestDecoder struct {
	strict runtime.Decoder
}

func newManifestDecoder() *manifestDecoder {
	s := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme.Scheme, scheme.Scheme,
		kjson.SerializerOptions{Strict: true})
	return &manifestDecoder{strict: s}
}

var reStrictField = regexp.MustCompile(`(unknown|duplicate) field "([^"]+)"`)

// typeMeta is the envelope every document starts with.
type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Items []json.RawMessage `json:"items"`
}

// decodeObjects turns one YAML/JSON document into objects (several for List kinds) and
// records problems (strict decoding, unknown kinds are ignored: CRDs are not ours to check).
func (d *manifestDecoder) decodeObjects(ctx *Context, file string, doc yamlDoc, pos *Positions, prefix string, raw []byte) []*Object {
	var tm typeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		ctx.AddProblem("KW0001", Location{File: file, Line: pos.Line(prefix)},
			fmt.Sprintf("not a Kubernetes object: %v", err), "")
		return nil
	}
	if tm.Kind == "" || tm.APIVersion == "" {
		ctx.AddProblem("KW0011", Location{File: file, Line: pos.Line(prefix)},
			"document has no apiVersion/kind", "add apiVersion and kind")
		return nil
	}
	if strings.HasSuffix(tm.Kind, "List") && tm.Items != nil {
		itemKind := strings.TrimSuffix(tm.Kind, "List")
		var out []*Object
		for i, it := range tm.Items {
			item := []byte(it)
			var itm typeMeta
			_ = json.Unmarshal(item, &itm)
			if itm.Kind == "" && itemKind != "" {
				item = injectTypeMeta(item, tm.APIVersion, itemKind)
			}
			p := fmt.Sprintf("items[%d]", i)
			if prefix != "" {
				p = prefix + "." + p
			}
			out = append(out, d.decodeObjects(ctx, file, doc, pos, p, item)...)
		}
		return out
	}
	o := &Object{File: file, Line: pos.Line(prefix), APIVersion: tm.APIVersion, Kind: tm.Kind,
		Namespace: tm.Metadata.Namespace, Name: tm.Metadata.Name, Pos: pos.Sub(prefix)}
	obj, _, err := d.strict.Decode(raw, nil, nil)
	if err != nil && runtime.IsStrictDecodingError(err) {
		for _, m := range reStrictField.FindAllStringSubmatch(err.Error(), -1) {
			ctx.AddProblem("KW0011", o.Loc(m[2]), fmt.Sprintf("%s: %s field %q", o.Ref(), m[1], m[2]),
				"remove the field or fix its spelling; the API server rejects or drops it")
		}
	} else if err != nil {
		if runtime.IsNotRegisteredError(err) {
			// A custom resource: keep the envelope (removed-API rules read it), nothing else.
			return []*Object{o}
		}
		ctx.AddProblem("KW0011", o.Loc(""), fmt.Sprintf("%s: %v", o.Ref(), err), "")
		return []*Object{o}
	}
	fillObject(o, obj)
	return []*Object{o}
}

func injectTypeMeta(item []byte, apiVersion, kind string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(item, &m) != nil {
		return item
	}
	av, _ := json.Marshal(apiVersion)
	k, _ := json.Marshal(kind)
	m["apiVersion"], m["kind"] = av, k
	b, err := json.Marshal(m)
	if err != nil {
		return item
	}
	return b
}

func tmpl(t *corev1.PodTemplateSpec, base string) *PodTemplate {
	return &PodTemplate{Labels: t.Labels, Annotations: t.Annotations, Spec: &t.Spec,
		SpecPath: base + ".spec", MetaPath: base + ".metadata"}
}

// fillObject extracts the pod template (or RuntimeClass) from a decoded object.
func fillObject(o *Object, obj runtime.Object) {
	switch v := obj.(type) {
	case *corev1.Pod:
		o.Template = &PodTemplate{Labels: v.Labels, Annotations: v.Annotations, Spec: &v.Spec,
			SpecPath: "spec", MetaPath: "metadata"}
	case *corev1.ReplicationController:
		if v.Spec.Template != nil {
			o.Template = tmpl(v.Spec.Template, "spec.template")
		}
	case *corev1.PodTemplate:
		o.Template = tmpl(&v.Template, "template")
	case *appsv1.Deployment:
		o.Template = tmpl(&v.Spec.Template, "spec.template")
	case *appsv1.StatefulSet:
		o.Template = tmpl(&v.Spec.Template, "spec.template")
	case *appsv1.DaemonSet:
		o.Template = tmpl(&v.Spec.Template, "spec.template")
	case *appsv1.ReplicaSet:
		o.Template = tmpl(&v.Spec.Template, "spec.template")
	case *appsv1beta1.Deployment:
		o.Template = tmpl(&v.Spec.Template, "spec.template")
	case *appsv1beta1.StatefulSet:
		o.Template = tmpl(&v.Spec.Template, "spec.template")
	case *appsv1beta2.Deployment:
		o.Template = tmpl(&v.Spec.Template, "spec.template")
	case *appsv1beta2.StatefulSet:
		o.Template = tmpl(&v.Spec.Template, "spec.template")
	case *appsv1beta2.DaemonSet:
		o.Template = tmpl(&v.Spec.Template, "spec.template")
	case *appsv1beta2.ReplicaSet:
		o.Template = tmpl(&v.Spec.Template, "spec.template")
	case *extv1beta1.Deployment:
		o.Template = tmpl(&v.Spec.Template, "spec.template")
	case *extv1beta1.DaemonSet:
		o.Template = tmpl(&v.Spec.Template, "spec.template")
	case *extv1beta1.ReplicaSet:
		o.Template = tmpl(&v.Spec.Template, "spec.template")
	case *batchv1.Job:
		o.Template = tmpl(&v.Spec.Template, "spec.template")
	case *batchv1.CronJob:
		o.Template = tmpl(&v.Spec.JobTemplate.Spec.Template, "spec.jobTemplate.spec.template")
	case *nodev1.RuntimeClass:
		o.RuntimeClass = &RuntimeClassInfo{Handler: v.Handler}
		if v.Scheduling != nil {
			o.RuntimeClass.NodeSelector = v.Scheduling.NodeSelector
			o.RuntimeClass.Tolerations = v.Scheduling.Tolerations
		}
	case *nodev1beta1.RuntimeClass:
		o.RuntimeClass = &RuntimeClassInfo{Handler: v.Handler}
		if v.Scheduling != nil {
			o.RuntimeClass.NodeSelector = v.Scheduling.NodeSelector
			o.RuntimeClass.Tolerations = v.Scheduling.Tolerations
		}
	}
}

// Sub returns a view of p rooted at prefix.
func (p *Positions) Sub(prefix string) *Positions {
	if prefix == "" || p == nil {
		return p
	}
	m := make(map[string][2]int)
	for k, v := range p.m {
		switch {
		case k == prefix:
			m[""] = v
		case strings.HasPrefix(k, prefix+"."):
			m[k[len(prefix)+1:]] = v
		}
	}
	return &Positions{Base: p.Base, m: m}
}
