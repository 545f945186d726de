package render

import (
	"bytes"
	"encoding/json"
	"sort"
	"testing"

	"github.com/kubewin/kubewin/internal/plan"
)

func TestRenderIsDeterministic(t *testing.T) {
	for name := range designVariants(t) {
		// Plan and render twice from separately parsed specs.
		a, err := Render(designVariants(t)[name])
		if err != nil {
			t.Fatal(err)
		}
		b, err := Render(designVariants(t)[name])
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != len(b) {
			t.Fatalf("%s: %d files, then %d", name, len(a), len(b))
		}
		for i := range a {
			if a[i].Path != b[i].Path || !bytes.Equal(a[i].Data, b[i].Data) || a[i].Mode != b[i].Mode {
				t.Errorf("%s: %s differs between two renders", name, a[i].Path)
			}
		}
		if !sort.SliceIsSorted(a, func(i, j int) bool { return a[i].Path < a[j].Path }) {
			t.Errorf("%s: files not sorted by path", name)
		}
	}
}

func TestBundleLayout(t *testing.T) {
	for name, p := range designVariants(t) {
		files := mustRender(t, p)
		for _, f := range []string{"plan.json", "cluster/runtimeclasses.yaml", "cluster/tor-routes.txt", "cluster/tor-routes.json"} {
			if _, ok := files[f]; !ok {
				t.Errorf("%s: %s missing", name, f)
			}
		}
		if _, ok := files["cluster/flannel-net-conf.json"]; ok != (p.Flannel != nil) {
			t.Errorf("%s: flannel-net-conf.json present=%v", name, ok)
		}
		for _, n := range windowsNodes(p) {
			dir := "nodes/" + n.Name + "/"
			for _, f := range []string{"cni/" + n.Windows.HNSNetworkName + ".conf", "hns/network.json", "hns/setup.ps1",
				"hns/cleanup.ps1", "kubelet/config.yaml", "kubelet/flags", "kube-proxy/config.yaml",
				"containerd/config.toml", "pause/Dockerfile", "services/install.ps1", "firewall/rules.ps1", "README.md"} {
				data, ok := files[dir+f]
				if !ok {
					t.Errorf("%s: %s%s missing", name, dir, f)
					continue
				}
				if !isASCII(data) || bytes.Contains(data, []byte("\r")) || !bytes.HasSuffix(data, []byte("\n")) {
					t.Errorf("%s: %s%s is not ASCII text with LF line endings", name, dir, f)
				}
			}
		}
	}
}

// TestExampleMatchesSeed: the "done when" of the core issue, on the rendered bytes.
func TestExampleMatchesSeed(t *testing.T) {
	files := mustRender(t, examplePlan(t))
	d := "nodes/node009/"
	wantContains(t, "network.json", files[d+"hns/network.json"], `"IpAddressPrefix": "10.160.11.0/24"`,
		`"NextHop": "10.160.11.1"`, `"Name": "cbr0"`, `"IpAddress": "10.160.11.2"`, `"NetworkAdapterName": "eth1"`)
	wantContains(t, "README", files[d+"README.md"], "10.160.11.1", "10.160.11.2", "10.160.0.0/12, 10.176.0.0/12",
		"10.176.0.10", "100.100.126.216", "mylan.k8s")
	wantContains(t, "kubelet config", files[d+"kubelet/config.yaml"], "- 10.176.0.10\n")
	wantContains(t, "pause Dockerfile", files[d+"pause/Dockerfile"], "FROM mcr.microsoft.com/windows/nanoserver:ltsc2022\n")
	var pj struct {
		Nodes []plan.NodePlan `json:"nodes"`
	}
	if err := json.Unmarshal(files["plan.json"], &pj); err != nil {
		t.Fatal(err)
	}
	for _, n := range pj.Nodes {
		if n.Name == "node009" && (n.Gateway != "10.160.11.1" || n.Endpoint != "10.160.11.2" || n.PodCIDR != "10.160.11.0/24") {
			t.Errorf("plan.json node009: %+v", n)
		}
	}
}

func TestRenderRejectsBadPlans(t *testing.T) {
	mod := func(f func(p *plan.Plan)) *plan.Plan {
		p := examplePlan(t)
		f(p)
		return p
	}
	for name, p := range map[string]*plan.Plan{
		"nil":            nil,
		"path in name":   mod(func(p *plan.Plan) { p.Nodes[0].Name = "../etc" }),
		"duplicate node": mod(func(p *plan.Plan) { p.Nodes = append(p.Nodes, p.Nodes[0]) }),
		"no OS plan":     mod(func(p *plan.Plan) { p.Nodes[0].Linux = nil }),
		"non-ASCII":      mod(func(p *plan.Plan) { p.Nodes[len(p.Nodes)-1].Windows.DNSSearch = []string{"bücher.example"} }),
	} {
		if _, err := Render(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
