package render

import (
	"bytes"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/atomicfs"
	"github.com/kubewin/kubewin/internal/plan"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current renderer")

const goldenDir = "../../testdata/golden/example"

func TestGoldenExampleBundle(t *testing.T) {
	files, err := Render(examplePlan(t))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := atomicfs.WriteTree(goldenDir, files); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := map[string][]byte{}
	err = filepath.WalkDir(goldenDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(goldenDir, p)
		want[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatalf("read golden bundle (run go test ./internal/render -run Golden -update): %v", err)
	}
	got := fileMap(files)
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("%s: in golden bundle, no longer rendered", name)
		}
	}
	for name, data := range got {
		w, ok := want[name]
		switch {
		case !ok:
			t.Errorf("%s: rendered, not in golden bundle", name)
		case !bytes.Equal(w, data):
			t.Errorf("%s differs from golden: %s (go test ./internal/render -run Golden -update)", name, firstDiff(w, data))
		}
	}
}

func firstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + strconv.Itoa(i+1) + ": golden " + strings.TrimSpace(x) + " | now " + strings.TrimSpace(y)
		}
	}
	return "same lines, different bytes"
}

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
	wantContains(t, "pause Dockerfile", files[d+"pause/Dockerfile"], "FROM mcr.microsoft.com/windows/nanoserver:ltsc2019\n")
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
