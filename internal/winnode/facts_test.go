package winnode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Facts gathered from a host and loaded into the model describe the same host again.
func TestFactsRoundTrip(t *testing.T) {
	nd := newNode(t, "")
	nd.healthyPass(t)
	ctx := testCtx(t)
	f := GatherFacts(ctx, nd.host, []string{"containerd", "kubelet", "kube-proxy"})
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseFacts(data)
	if err != nil {
		t.Fatal(err)
	}
	again := GatherFacts(ctx, MemHostFromFacts(back, Model{}), nil)
	again.Services, f.Services = nil, nil
	for i := range f.Endpoints {
		f.Endpoints[i].Network = "" // HCN lists the network by ID
	}
	for i := range again.Endpoints {
		again.Endpoints[i].Network = ""
	}
	if !reflect.DeepEqual(f, again) {
		t.Fatalf("facts after a round trip differ:\n%+v\n%+v", f, again)
	}
}

// Recorded (or, until one is recorded, documented) host states in testdata/facts: the node
// service brings each to the planned state without ever naming a vNIC as an adapter.
func TestRecordedFacts(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "facts", "*.json"))
	if len(files) == 0 {
		t.Fatal("no facts in testdata/facts")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			f, err := ParseFacts(data)
			if err != nil {
				t.Fatal(err)
			}
			nd := newNode(t, "")
			h := MemHostFromFacts(f, Model{NetworksPersist: true})
			// The node services as join installed them, in the states the facts give.
			for _, s := range nd.desired.Services {
				cfg, _ := nd.host.ServiceDefinition(s.Name)
				if err := h.InstallService(testCtx(t), cfg); err != nil {
					t.Fatal(err)
				}
				if f.Services[s.Name] == ServiceRunning {
					if err := h.StartService(testCtx(t), s.Name); err != nil && !strings.Contains(err.Error(), "not running") {
						t.Fatal(err)
					}
				}
			}
			nd.host = h
			nd.r = &Reconciler{Host: h, Desired: nd.desired}
			rep := nd.healthyPass(t)
			nd.assertConverged(t, "from "+filepath.Base(file))
			if f.HNS == ServiceStopped && !slices.ContainsFunc(rep.Repairs, func(r Repair) bool { return r.What == "started service hns" }) {
				t.Errorf("hns was stopped; repairs %+v", rep.Repairs)
			}
		})
	}
}

func TestParseFactsRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown field": `{"apiVersion":"kubewin.io/v1alpha1","kind":"WindowsHostFacts","bogus":1}`,
		"wrong kind":    `{"apiVersion":"kubewin.io/v1alpha1","kind":"Cluster"}`,
		"orphan endpoint": `{"apiVersion":"kubewin.io/v1alpha1","kind":"WindowsHostFacts",` +
			`"endpoints":[{"ID":"e","NetworkID":"n","Name":"cbr0"}]}`,
		"not JSON": `{`,
	} {
		if _, err := ParseFacts([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzParseFacts(f *testing.F) {
	seed, _ := os.ReadFile(filepath.Join("testdata", "facts", "node009-reboot-networks-kept-hns-stopped.json"))
	f.Add(seed)
	f.Add([]byte(`{"apiVersion":"kubewin.io/v1alpha1","kind":"WindowsHostFacts"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		facts, err := ParseFacts(data)
		if err != nil {
			return
		}
		// Whatever parses loads into the model without a panic.
		_ = MemHostFromFacts(facts, Model{})
	})
}
