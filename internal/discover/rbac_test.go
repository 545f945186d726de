package discover

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/rest"
	rbacauthz "k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"
	"sigs.k8s.io/yaml"

	"github.com/kubewin/kubewin/internal/testenv"
)

// rbacAtom is one permission of the printed RBAC: a single verb on a single resource (and name)
// or non-resource URL, granted cluster-wide (namespace "") or in one namespace.
type rbacAtom struct {
	namespace string
	rule      rbacv1.PolicyRule
}

func (a rbacAtom) String() string {
	r := a.rule
	s := strings.Join(r.Verbs, ",") + " " + strings.Join(r.NonResourceURLs, ",")
	if len(r.Resources) > 0 {
		s = strings.Join(r.Verbs, ",") + " " + r.Resources[0]
		if g := r.APIGroups[0]; g != "" {
			s += "." + g
		}
		if len(r.ResourceNames) > 0 {
			s += " " + r.ResourceNames[0]
		}
	}
	if a.namespace == "" {
		return s + " (ClusterRole)"
	}
	return s + " (Role in " + a.namespace + ")"
}

// printedRBAC decodes --print-rbac's YAML and JSON, checks they hold the same objects, and
// splits every rule of the Roles and ClusterRole bound to RBACName into atoms.
func printedRBAC(t *testing.T) ([]*unstructured.Unstructured, []rbacAtom) {
	t.Helper()
	y, err := RBACYAML()
	if err != nil {
		t.Fatal(err)
	}
	fromYAML, err := testenv.DecodeObjects(y)
	if err != nil {
		t.Fatalf("--print-rbac YAML does not decode: %v\n%s", err, y)
	}
	j, err := RBACJSON()
	if err != nil {
		t.Fatal(err)
	}
	lists, err := testenv.DecodeObjects(j)
	if err != nil || len(lists) != 1 || lists[0].GetKind() != "List" || lists[0].GetAPIVersion() != "v1" {
		t.Fatalf("--print-rbac -o json is not one v1 List (%v):\n%s", err, j)
	}
	list, err := lists[0].ToList()
	if err != nil {
		t.Fatal(err)
	}
	var fromJSON []*unstructured.Unstructured
	for i := range list.Items {
		fromJSON = append(fromJSON, &list.Items[i])
	}
	if len(fromJSON) != len(fromYAML) {
		t.Fatalf("YAML has %d objects, JSON %d", len(fromYAML), len(fromJSON))
	}
	for i := range fromYAML {
		if !reflect.DeepEqual(fromYAML[i].Object, fromJSON[i].Object) {
			t.Errorf("object %d differs between YAML and JSON:\n%v\n%v", i, fromYAML[i].Object, fromJSON[i].Object)
		}
	}

	// Which roles are bound to the user, so that an unbound role is not counted as granted.
	bound := map[string]bool{}
	var atoms []rbacAtom
	for _, o := range fromYAML {
		switch o.GetKind() {
		case "ClusterRoleBinding", "RoleBinding":
			var b rbacv1.RoleBinding
			fromUnstructured(t, o, &b)
			if len(b.Subjects) == 1 && b.Subjects[0].Kind == rbacv1.UserKind && b.Subjects[0].Name == RBACName {
				bound[b.RoleRef.Kind+"/"+o.GetNamespace()+"/"+b.RoleRef.Name] = true
			}
		}
	}
	for _, o := range fromYAML {
		switch o.GetKind() {
		case "ClusterRole", "Role":
			if !bound[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] {
				t.Errorf("%s %s/%s is not bound to user %s", o.GetKind(), o.GetNamespace(), o.GetName(), RBACName)
			}
			var role rbacv1.Role
			fromUnstructured(t, o, &role)
			for _, r := range role.Rules {
				if len(r.NonResourceURLs) > 0 && o.GetKind() == "Role" {
					t.Errorf("Role %s/%s has non-resource URLs, which only a ClusterRole grants", o.GetNamespace(), o.GetName())
				}
				atoms = append(atoms, splitRule(o.GetNamespace(), r)...)
			}
		case "ClusterRoleBinding", "RoleBinding":
		default:
			t.Errorf("--print-rbac prints a %s", o.GetKind())
		}
	}
	return fromYAML, atoms
}

func fromUnstructured(t *testing.T, o *unstructured.Unstructured, into any) {
	t.Helper()
	b, err := o.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
	}
}

func splitRule(ns string, r rbacv1.PolicyRule) []rbacAtom {
	var out []rbacAtom
	for _, v := range r.Verbs {
		for _, u := range r.NonResourceURLs {
			out = append(out, rbacAtom{ns, rbacv1.PolicyRule{Verbs: []string{v}, NonResourceURLs: []string{u}}})
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				names := r.ResourceNames
				if len(names) == 0 {
					names = []string{""}
				}
				for _, n := range names {
					a := rbacv1.PolicyRule{Verbs: []string{v}, APIGroups: []string{g}, Resources: []string{res}}
					if n != "" {
						a.ResourceNames = []string{n}
					}
					out = append(out, rbacAtom{ns, a})
				}
			}
		}
	}
	return out
}

// recorder keeps every request a client sends.
type recorder struct {
	mu   sync.Mutex
	reqs []struct {
		method string
		url    url.URL
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (rec *recorder) wrap(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			rec.mu.Lock()
			rec.reqs = append(rec.reqs, struct {
				method string
				url    url.URL
			}{r.Method, *r.URL})
			rec.mu.Unlock()
			return rt.RoundTrip(r)
		})
	})
	return c
}

// attributes turns the recorded requests into what the API server's authorizer is asked, with
// the API server's own request parser.
func (rec *recorder) attributes(t *testing.T) []authorizer.AttributesRecord {
	t.Helper()
	f := &request.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}
	var out []authorizer.AttributesRecord
	for _, r := range rec.reqs {
		u := r.url
		info, err := f.NewRequestInfo(&http.Request{Method: r.method, URL: &u})
		if err != nil {
			t.Fatalf("parse %s %s: %v", r.method, u.String(), err)
		}
		out = append(out, authorizer.AttributesRecord{
			Verb: info.Verb, Namespace: info.Namespace, APIGroup: info.APIGroup, APIVersion: info.APIVersion,
			Resource: info.Resource, Subresource: info.Subresource, Name: info.Name,
			ResourceRequest: info.IsResourceRequest, Path: info.Path,
		})
	}
	return out
}

func describe(a authorizer.AttributesRecord) string {
	if !a.ResourceRequest {
		return a.Verb + " " + a.Path
	}
	return fmt.Sprintf("%s %s.%s %q in namespace %q", a.Verb, a.Resource, a.APIGroup, a.Name, a.Namespace)
}

// TestDiscoverLeastPrivilege runs discovery of several clusters as a user bound only to what
// --print-rbac prints: it must read everything the admin reads, every request must be granted
// by a printed permission in the request's own namespace (or the ClusterRole), and every
// printed permission must be used by some cluster (none is granted for nothing).
func TestDiscoverLeastPrivilege(t *testing.T) {
	objs, atoms := printedRBAC(t)
	// The namespaces each atom granted a request in ("" for cluster-wide requests).
	used := make([]map[string]bool, len(atoms))
	for i := range used {
		used[i] = map[string]bool{}
	}

	for _, fx := range []struct {
		name, serviceCIDR string
		calico            bool
	}{
		{"kubeadm-calico", "10.96.0.0/12", true},
		// The Tigera operator's Installation, Calico's IPAMConfig, the services-endpoint ConfigMap.
		{"calico-operator", "10.96.0.0/12", true},
		// flannel's ConfigMap in its own kube-flannel namespace.
		{"flannel", "10.96.0.0/12", false},
		{"canal", "10.96.0.0/12", false},
		// flannel's ConfigMap in kube-system, and DaemonSets for Windows nodes.
		{"windows-joined", "10.96.0.0/12", false},
	} {
		t.Run(fx.name, func(t *testing.T) {
			cp := startCluster(t, fx.name, fx.serviceCIDR, fx.calico)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := cp.CreateObjects(ctx, objs...); err != nil {
				t.Fatalf("create the printed RBAC: %v", err)
			}
			admin, err := Discover(ctx, cp.Config, Options{})
			if err != nil {
				t.Fatal(err)
			}
			limitedCfg := rest.CopyConfig(cp.Config)
			limitedCfg.Impersonate = rest.ImpersonationConfig{UserName: RBACName}

			// The authorizer learns of new bindings through an informer: wait until the run
			// is complete, so a refusal that lasts is reported and a stale cache is not.
			var rec *recorder
			var limited *Result
			deadline := time.Now().Add(15 * time.Second)
			for {
				rec = &recorder{}
				limited, err = Discover(ctx, rec.wrap(limitedCfg), Options{})
				if err != nil {
					t.Fatal(err)
				}
				if len(limited.Denied) == 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if len(limited.Denied) != 0 {
				t.Fatalf("the printed RBAC is not enough: %v", limited.Denied)
			}
			if !reflect.DeepEqual(limited, admin) {
				t.Errorf("least-privilege result differs from the admin's:\n%+v\n%+v", limited, admin)
			}

			for _, a := range rec.attributes(t) {
				granted := false
				for i, at := range atoms {
					if at.namespace != "" && at.namespace != a.Namespace {
						continue
					}
					if rbacauthz.RuleAllows(a, &at.rule) {
						used[i][a.Namespace], granted = true, true
					}
				}
				if !granted {
					t.Errorf("discover made a request no printed permission grants: %s", describe(a))
				}
			}
		})
	}
	if t.Failed() {
		return
	}
	var unused, tooWide []string
	for i, at := range atoms {
		switch {
		case len(used[i]) == 0:
			unused = append(unused, at.String())
		case at.namespace == "" && slices.Equal(at.rule.ResourceNames, []string{servicesEndpointMap}):
			// The Tigera operator's namespace exists only on clusters it runs on; a Role there
			// could not be applied anywhere else, so the one ConfigMap is granted by name.
		case at.namespace == "" && !used[i][""] && len(used[i]) == 1:
			// A cluster-wide grant used in a single namespace belongs in a Role there.
			tooWide = append(tooWide, fmt.Sprintf("%s, used only in namespace %s", at, sets.List(sets.KeySet(used[i]))[0]))
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Errorf("--print-rbac grants permissions discover never uses:\n%s", strings.Join(unused, "\n"))
	}
	if len(tooWide) > 0 {
		t.Errorf("--print-rbac grants cluster-wide what one namespace's Role would:\n%s", strings.Join(tooWide, "\n"))
	}
}

// TestDiscoverDeniedReads: a user without the printed RBAC gets every refused read named.
func TestDiscoverDeniedReads(t *testing.T) {
	cp := startCluster(t, "kubeadm-calico", "10.96.0.0/12", true)
	as := rest.CopyConfig(cp.Config)
	as.Impersonate = rest.ImpersonationConfig{UserName: "nobody"}
	// Everything but /version (allowed to every authenticated user) is refused, and named.
	nobody, err := Discover(context.Background(), as, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var denied []string
	for _, d := range nobody.Denied {
		denied = append(denied, d.String())
	}
	wantDenied := []string{
		"get configmaps coredns in namespace kube-system",
		"get configmaps kube-proxy in namespace kube-system",
		"get configmaps kubeadm-config in namespace kube-system",
		"get configmaps kubelet-config in namespace kube-system",
		"get services coredns in namespace kube-system",
		"get services kube-dns in namespace kube-system",
		"get services kubernetes in namespace default",
		"list daemonsets.apps (cluster-wide)",
		"list ippools.crd.projectcalico.org (cluster-wide)",
		"list ipreservations.crd.projectcalico.org (cluster-wide)",
		"list nodes (cluster-wide)",
		"list pods in namespace kube-system",
		"list servicecidrs.networking.k8s.io (cluster-wide)",
	}
	if !reflect.DeepEqual(denied, wantDenied) {
		t.Errorf("denied reads:\n%s\nwant:\n%s", strings.Join(denied, "\n"), strings.Join(wantDenied, "\n"))
	}
	if !nobody.HasFindings() {
		t.Error("refused reads must be findings")
	}
	if s := nobody.Summary(); !strings.Contains(s, "forbidden: kubewin needs list nodes (cluster-wide)") {
		t.Errorf("summary does not name the missing permission:\n%s", s)
	}
}
