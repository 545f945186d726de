package render

import (
	"encoding/json"
	"strings"
	"testing"

	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

func TestRuntimeClassesDecodeWithOfficialTypes(t *testing.T) {
	codecs := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict)
	for name, p := range designVariants(t) {
		data, err := RuntimeClasses(p)
		if err != nil {
			t.Fatal(err)
		}
		docs := strings.Split(string(data), "\n---\n")
		if len(docs) != len(p.RuntimeClasses) {
			t.Fatalf("%s: %d documents, want %d", name, len(docs), len(p.RuntimeClasses))
		}
		for i, doc := range docs {
			obj, gvk, err := codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
			if err != nil {
				t.Fatalf("%s: document %d: %v\n%s", name, i, err, doc)
			}
			rc, ok := obj.(*nodev1.RuntimeClass)
			if !ok || gvk.GroupVersion() != nodev1.SchemeGroupVersion {
				t.Fatalf("%s: decoded %T %v", name, obj, gvk)
			}
			want := p.RuntimeClasses[i]
			if rc.Name != want.Name || rc.Handler != want.Handler {
				t.Errorf("%s: %s/%s, want %s/%s", name, rc.Name, rc.Handler, want.Name, want.Handler)
			}
			if rc.Scheduling == nil || len(rc.Scheduling.NodeSelector) != len(want.NodeSelector) ||
				len(rc.Scheduling.Tolerations) != len(want.Tolerations) {
				t.Errorf("%s: scheduling %+v, want %+v", name, rc.Scheduling, want)
			}
			for k, v := range want.NodeSelector {
				if rc.Scheduling.NodeSelector[k] != v {
					t.Errorf("%s: nodeSelector %s=%q", name, k, rc.Scheduling.NodeSelector[k])
				}
			}
			if strings.Contains(doc, "creationTimestamp") {
				t.Errorf("%s: zero metadata rendered:\n%s", name, doc)
			}
		}
	}
}

func TestCalicoReservation(t *testing.T) {
	p := examplePlan(t)
	data, err := CalicoReservation(p)
	if err != nil || data == nil {
		t.Fatalf("no reservation: %v", err)
	}
	// Calico's types are not in go.mod: decode as unstructured and check the fields Calico reads.
	var m map[string]any
	if err := yaml.UnmarshalStrict(data, &m); err != nil {
		t.Fatal(err)
	}
	u := unstructured.Unstructured{Object: m}
	if u.GetAPIVersion() != "projectcalico.org/v3" || u.GetKind() != "IPReservation" || u.GetName() != CalicoReservationName {
		t.Errorf("got %s %s %s", u.GetAPIVersion(), u.GetKind(), u.GetName())
	}
	cidrs, found, err := unstructured.NestedStringSlice(u.Object, "spec", "reservedCIDRs")
	if err != nil || !found || strings.Join(cidrs, ",") != "10.160.11.0/24" {
		t.Errorf("reservedCIDRs %v (found %v, %v), want [10.160.11.0/24]", cidrs, found, err)
	}
	if len(u.Object) != 4 {
		t.Errorf("unexpected top-level fields: %v", u.Object)
	}

	c := *p.Calico
	c.Reservation = "PoolExclusion"
	p.Calico = &c
	data, err = CalicoReservation(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if !strings.HasPrefix(line, "#") {
			t.Errorf("PoolExclusion instructions must not apply anything: %q", line)
		}
	}
	wantContains(t, "pool exclusion", data, "10.160.11.0/24", "disabled")

	c.ReservedCIDRs = nil
	if data, err := CalicoReservation(p); err != nil || data != nil {
		t.Errorf("nothing to reserve rendered %q, %v", data, err)
	}
	c.ReservedCIDRs, c.Reservation = []string{"10.160.11.0/24"}, "Magic"
	if _, err := CalicoReservation(p); err == nil {
		t.Error("unknown reservation mode accepted")
	}
}

func TestTorRoutes(t *testing.T) {
	for name, p := range designVariants(t) {
		js, err := TorRoutesJSON(p)
		if err != nil {
			t.Fatal(err)
		}
		var tbl torRouteTable
		if err := json.Unmarshal(js, &tbl); err != nil {
			t.Fatal(err)
		}
		if len(tbl.Routes) != len(p.TorRoutes) || tbl.Design != p.Cluster.Design {
			t.Errorf("%s: %d routes, want %d", name, len(tbl.Routes), len(p.TorRoutes))
		}
		txt, err := TorRoutesText(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.TorRoutes {
			wantContains(t, name+" tor-routes.txt", txt, r.Destination, r.Via)
		}
		for _, a := range p.TorGatewayAddresses {
			wantContains(t, name+" tor-routes.txt", txt, a)
		}
	}
	p := examplePlan(t)
	p.TorRoutes = append(p.TorRoutes, planRoute("10.1.0.0/33", "1.2.3.4"))
	if _, err := TorRoutesText(p); err == nil {
		t.Error("bad route destination accepted")
	}
}

func TestFlannelNetConf(t *testing.T) {
	v := designVariants(t)
	data, err := FlannelNetConf(v["flannel-vxlan"])
	if err != nil {
		t.Fatal(err)
	}
	var nc flannelNetConf
	d := json.NewDecoder(strings.NewReader(string(data)))
	d.DisallowUnknownFields()
	if err := d.Decode(&nc); err != nil {
		t.Fatal(err)
	}
	if nc.Backend.Type != "vxlan" || nc.Backend.VNI < 4096 || nc.Backend.Port != 4789 || nc.Network == "" {
		t.Errorf("net-conf %+v: Windows needs vxlan VNI >= 4096 on UDP 4789", nc)
	}
	if data, _ := FlannelNetConf(v["keepalived"]); data != nil {
		t.Errorf("flannel net-conf rendered for a non-flannel design: %s", data)
	}
}
