package testenv_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/testenv"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// TestRenderedManifestsDryRun renders the bundles `kubewin plan` writes for the embedded example
// (Calico with IPReservation) and its Hyper-V variant (more RuntimeClasses), and creates every
// Kubernetes object in them with dryRun=All against a real API server with Calico's CRDs
// installed: the API server's validation (schemas, RuntimeClass handler and scheduling rules,
// the CRD's OpenAPI schema) must accept each one. Component configurations
// (*.config.k8s.io: KubeletConfiguration, KubeProxyConfiguration) are files for nodes, not API
// objects; their own tests decode them with the official schemes.
func TestRenderedManifestsDryRun(t *testing.T) {
	cp := testenv.StartControlPlane(t, testenv.WithServiceCIDR("10.176.0.0/12"))
	ctx := context.Background()
	if err := cp.CreateFiles(ctx, filepath.Join("..", "..", "testdata", "clusters", "crds", "calico.yaml")); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))

	variants := map[string]func(*v1alpha1.Cluster){
		"example":        func(*v1alpha1.Cluster) {},
		"example+hyperv": func(c *v1alpha1.Cluster) { c.Spec.Windows.HyperV = true },
	}
	kinds := map[string]int{}
	for name, mutate := range variants {
		c, _, err := v1alpha1.ParseExample()
		if err != nil {
			t.Fatal(err)
		}
		mutate(c)
		p, err := plan.New(c)
		if err != nil {
			t.Fatalf("%s: plan: %v", name, err)
		}
		files, err := render.Render(p)
		if err != nil {
			t.Fatalf("%s: render: %v", name, err)
		}
		for _, f := range files {
			if !strings.HasSuffix(f.Path, ".yaml") && !strings.HasSuffix(f.Path, ".yml") {
				continue
			}
			objs, err := testenv.DecodeObjects(f.Data)
			if err != nil {
				// Cluster-level YAML files are the manifests applied with kubectl; they must
				// decode. Node files that are not Kubernetes YAML are not manifests.
				if strings.HasPrefix(f.Path, "cluster/") {
					t.Errorf("%s: %s does not decode as Kubernetes objects: %v", name, f.Path, err)
				}
				continue
			}
			for _, o := range objs {
				gvk := o.GroupVersionKind()
				if strings.HasSuffix(gvk.Group, ".config.k8s.io") {
					continue
				}
				if gvk.Group == "projectcalico.org" && gvk.Version == "v3" {
					// projectcalico.org/v3 is served by Calico's API server (or written by
					// calicoctl), which stores it as crd.projectcalico.org/v1 with the same spec;
					// that stored form is what the CRD validates here.
					o = o.DeepCopy()
					o.SetAPIVersion("crd.projectcalico.org/v1")
					gvk = o.GroupVersionKind()
				}
				m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
				if err != nil {
					t.Errorf("%s: %s: %s %s is not served by the API server: %v", name, f.Path, gvk, o.GetName(), err)
					continue
				}
				var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
				if m.Scope.Name() == meta.RESTScopeNameNamespace {
					ri = dyn.Resource(m.Resource).Namespace(namespaceOr(o))
				}
				if _, err := ri.Create(ctx, o, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"}); err != nil {
					t.Errorf("%s: %s: dry-run create %s %s: %v", name, f.Path, gvk.Kind, o.GetName(), err)
					continue
				}
				kinds[gvk.Kind]++
			}
		}
	}
	if kinds["RuntimeClass"] < 2 || kinds["IPReservation"] != 2 {
		t.Errorf("dry-run objects by kind = %v, want RuntimeClasses and one IPReservation per variant", kinds)
	}
	t.Logf("dry-run accepted: %v", kinds)

	// Dry runs persist nothing.
	rcs, err := cp.Clientset(t).NodeV1().RuntimeClasses().List(ctx, metav1.ListOptions{})
	if err != nil || len(rcs.Items) != 0 {
		t.Errorf("RuntimeClasses after dry runs: %v, %v", rcs, err)
	}
}

func namespaceOr(o *unstructured.Unstructured) string {
	if ns := o.GetNamespace(); ns != "" {
		return ns
	}
	return metav1.NamespaceDefault
}
