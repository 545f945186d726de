package plan

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func jsonOf(v any) ([]byte, error) { return json.Marshal(v) }

// wantFieldError fails unless err is a v1alpha1.ErrorList with an entry for field whose
// message contains every fragment.
func wantFieldError(t *testing.T, err error, field string, fragments ...string) {
	t.Helper()
	var el v1alpha1.ErrorList
	if !errors.As(err, &el) {
		t.Fatalf("error %v (%T) is not a v1alpha1.ErrorList", err, err)
	}
	var fields []string
	for _, e := range el {
		fields = append(fields, e.Field)
		if e.Field != field {
			continue
		}
		ok := true
		for _, f := range fragments {
			ok = ok && strings.Contains(e.Message, f)
		}
		if ok {
			return
		}
	}
	t.Fatalf("no error at %s containing %q; got fields %v:\n%v", field, fragments, slices.Compact(fields), err)
}

// small builds a cluster in Go (10.0.0.0/16 pods, 10.96.0.0/16 services, nodes on
// 192.168.0.0/24 via eth0); tests adjust it before planning.
func small(design v1alpha1.NetworkDesign, cni string, nodes ...v1alpha1.Node) *v1alpha1.Cluster {
	c := &v1alpha1.Cluster{
		APIVersion: v1alpha1.GroupVersion,
		Kind:       v1alpha1.KindCluster,
		Metadata:   v1alpha1.ObjectMeta{Name: "t"},
		Spec: v1alpha1.ClusterSpec{
			Networking: v1alpha1.Networking{
				PodCIDRs:    []string{"10.0.0.0/16"},
				ServiceCIDR: "10.96.0.0/16",
				ClusterDNS:  "10.96.0.10",
			},
			Design:   design,
			LinuxCNI: v1alpha1.LinuxCNI{Type: cni},
			Nodes:    nodes,
		},
	}
	return c
}

func lnx(name, ip, podCIDR string) v1alpha1.Node {
	return v1alpha1.Node{Name: name, OS: v1alpha1.OSLinux, PodCIDR: podCIDR,
		NICs: []v1alpha1.NIC{{Name: "eth0", IP: ip, Prefix: 24}}}
}

func win(name, ip, build, podCIDR string) v1alpha1.Node {
	return v1alpha1.Node{Name: name, OS: v1alpha1.OSWindows, WindowsBuild: build, PodCIDR: podCIDR,
		NICs: []v1alpha1.NIC{{Name: "Ethernet0", IP: ip, Prefix: 24}}}
}

func gwGroup(name string, members ...string) v1alpha1.GatewayGroup {
	g := v1alpha1.GatewayGroup{Name: name}
	for _, m := range members {
		g.Members = append(g.Members, v1alpha1.GatewayMember{Node: m})
	}
	return g
}

// mustPlan plans c after checking that the spec validator accepts it, so that positive tests
// exercise only inputs a user could get through kubewin's front door.
func mustPlan(t *testing.T, c *v1alpha1.Cluster) *Plan {
	t.Helper()
	d := defaultedCopy(c)
	if errs := v1alpha1.Validate(d); len(errs) > 0 {
		t.Fatalf("test spec is invalid:\n%v", errs)
	}
	p, err := New(c)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}
