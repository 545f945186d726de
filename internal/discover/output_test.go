package discover

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func sampleResult() *Result {
	c := newCluster()
	c.Metadata.Name = "c"
	c.Spec.Networking = v1alpha1.Networking{PodCIDRs: []string{"10.0.0.0/16"}, ServiceCIDR: "10.96.0.0/12"}
	c.Spec.LinuxCNI.Type = "calico"
	c.Spec.Nodes = []v1alpha1.Node{
		{Name: "a", OS: v1alpha1.OSLinux, Role: v1alpha1.RoleWorker, NICs: []v1alpha1.NIC{{IP: "10.1.0.1"}}, PodCIDR: "10.0.1.0/24"},
		{Name: "w", OS: v1alpha1.OSWindows, Role: v1alpha1.RoleWorker, WindowsBuild: "1809", NICs: []v1alpha1.NIC{}},
	}
	return &Result{
		Cluster: c,
		Provenance: map[string]Provenance{
			"metadata.name":                  {Source: "kubeconfig cluster name"},
			"spec.networking.podCIDRs":       {Source: "src A", Agrees: []string{"src B"}},
			"spec.nodes[a].podCIDR":          {Source: "Node spec.podCIDRs"},
			"spec.nodes[w].windowsBuild":     {Source: "Node label node.kubernetes.io/windows-build"},
			"spec.networking.serviceCIDR":    {Source: "ServiceCIDR kubernetes"},
			"spec.nodes[a].nics[0].ip":       {Source: "Node status.addresses InternalIP"},
			"spec.linuxCNI.type":             {Source: "DaemonSet kube-system/calico-node"},
			"spec.nodes[a].role":             {Source: "no label"},
			"spec.nodes[w].os":               {Source: "Node label kubernetes.io/os"},
			"spec.networking.clusterDNS":     {Source: "x"},
			"spec.containerRuntime.name":     {Source: "y"},
			"spec.networking.nodeSubnets[0]": {Source: "never used"},
		},
		Conflicts: []Conflict{{Field: "spec.networking.podCIDRs", Chosen: "10.0.0.0/16", Values: []SourcedValue{{"10.0.0.0/16", "src A"}, {"10.9.0.0/16", "src C"}}}},
		Missing: []Missing{
			{Field: "spec.design", Supply: "a design"},
			{Field: "spec.nodes[*].nics", Supply: "NICs", Nodes: []string{"w"}},
		},
		Denied: []Denied{{Verb: "list", Resource: "nodes"}},
		MadeBy: MadeBy{Tool: "kubeadm", Evidence: []string{"ConfigMap kube-system/kubeadm-config"}},
		Notes:  []string{"a note"},
	}
}

// The YAML splices nodes encoded one by one into the document; it must equal the encoding of
// the whole tree and decode back (strictly) to the same Cluster.
func TestYAML(t *testing.T) {
	r := sampleResult()
	got, err := r.YAML()
	if err != nil {
		t.Fatal(err)
	}
	var whole bytes.Buffer
	if err := encodeAnnotated(&whole, r.Cluster, "", r.annotations(), r.header()); err != nil {
		t.Fatal(err)
	}
	if string(got) != whole.String() {
		t.Errorf("spliced YAML differs from the whole-tree encoding:\n%s\n---\n%s", got, whole.String())
	}
	var back v1alpha1.Cluster
	if err := yaml.UnmarshalStrict(got, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, r.Cluster) {
		t.Errorf("round trip:\n%+v\n%+v", back, *r.Cluster)
	}
	for _, want := range []string{
		"# CONFLICT spec.networking.podCIDRs: [10.0.0.0/16 from src A] [10.9.0.0/16 from src C]; using 10.0.0.0/16\n",
		"# MISSING spec.nodes[*].nics: supply NICs (nodes: w)\n",
		"# DENIED list nodes (cluster-wide) (see kubewin discover --print-rbac)\n",
		"# Cluster made by: kubeadm (ConfigMap kube-system/kubeadm-config)\n",
		"podCIDRs: [10.0.0.0/16] # CONFLICT: src C says 10.9.0.0/16; used: src A\n",
		"design: \"\" # MISSING: supply a design\n",
		"      windowsBuild: \"1809\" # Node label node.kubernetes.io/windows-build\n",
		"      # MISSING: supply NICs\n      nics: []\n",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("YAML lacks %q:\n%s", want, got)
		}
	}
	again, _ := r.YAML()
	if !bytes.Equal(again, got) {
		t.Error("YAML is not deterministic")
	}
}

func TestJSON(t *testing.T) {
	r := sampleResult()
	b, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, r) {
		t.Errorf("JSON round trip differs:\n%s", b)
	}
}
