package bundle

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/testgen"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func examplePlan(t *testing.T) *plan.Plan {
	t.Helper()
	c, _, err := v1alpha1.ParseExample()
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// decodeAll decodes every document of a multi-document manifest with client-go's scheme.
func decodeAll(t *testing.T, data []byte) []runtime.Object {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufioReader(data))
	var out []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("decode %q: %v", doc, err)
		}
		out = append(out, obj)
	}
}

func TestBuildAddsGatewayDeploymentToRender(t *testing.T) {
	p := examplePlan(t)
	files, err := Build(p)
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := render.Render(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(rendered)+1 {
		t.Fatalf("bundle has %d files, render %d; want exactly one gateway deployment more", len(files), len(rendered))
	}
	var manifest []byte
	for _, f := range files {
		if f.Path == GatewayManifestPath("win-gw") {
			manifest = f.Data
		}
	}
	if manifest == nil {
		t.Fatalf("no %s in the bundle", GatewayManifestPath("win-gw"))
	}
	daemonSets := 0
	for _, obj := range decodeAll(t, manifest) {
		ds, ok := obj.(*appsv1.DaemonSet)
		if !ok {
			continue
		}
		daemonSets++
		for _, c := range append(ds.Spec.Template.Spec.InitContainers, ds.Spec.Template.Spec.Containers...) {
			if c.Image != plan.DefaultGatewayImage || p.Images.Gateway != plan.DefaultGatewayImage {
				t.Errorf("%s/%s image %q, plan %q; want %q", ds.Name, c.Name, c.Image, p.Images.Gateway, plan.DefaultGatewayImage)
			}
		}
	}
	if daemonSets == 0 {
		t.Error("gateway deployment has no DaemonSet")
	}
}

// Several groups may share member nodes; their host-network metrics ports must not collide.
func TestBuildGivesEachGroupItsOwnPorts(t *testing.T) {
	c := testgen.Cluster(20, 9, 3)
	v1alpha1.SetDefaults(c)
	p, err := plan.New(c)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Build(p)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int32]string{}
	groups := 0
	for _, f := range files {
		if !strings.HasPrefix(f.Path, "cluster/gateway-") {
			continue
		}
		groups++
		for _, obj := range decodeAll(t, f.Data) {
			ds, ok := obj.(*appsv1.DaemonSet)
			if !ok {
				continue
			}
			if !ds.Spec.Template.Spec.HostNetwork {
				t.Errorf("%s does not use the host network", ds.Name)
				continue
			}
			// On the host network a container port is a port of the node.
			for _, ctr := range ds.Spec.Template.Spec.Containers {
				for _, port := range ctr.Ports {
					if prev, dup := seen[port.ContainerPort]; dup {
						t.Errorf("host port %d used by %s and %s/%s", port.ContainerPort, prev, ds.Name, ctr.Name)
					}
					seen[port.ContainerPort] = ds.Name + "/" + ctr.Name
				}
			}
		}
	}
	if groups != len(p.GatewayGroups) || groups != 3 {
		t.Fatalf("%d gateway deployments for %d groups, want 3", groups, len(p.GatewayGroups))
	}
	if len(seen) == 0 {
		t.Fatal("no host ports found; the test checks nothing")
	}
}

func TestBuildDeterministic(t *testing.T) {
	a, err := Build(examplePlan(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build(examplePlan(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(b) {
		t.Fatalf("%d vs %d files", len(a), len(b))
	}
	for i := range a {
		if a[i].Path != b[i].Path || !bytes.Equal(a[i].Data, b[i].Data) {
			t.Fatalf("file %d (%s) differs between two builds", i, a[i].Path)
		}
	}
}
