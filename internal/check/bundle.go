package check

import (
	"encoding/json"
	"path"
	"path/filepath"
	"strings"
)

// KubewinFile is a file `kubewin plan` wrote that holds nothing check has rules for (the node
// README, the HNS and firewall scripts, the pause Dockerfile, route tables, plan.json). It is
// known, so it is not reported as unrecognised input; it is counted in the report's inputs.
type KubewinFile struct {
	File string `json:"file"`
	// What says what the file is.
	What string `json:"what"`
}

// bundleOnlyFiles are the files of a kubewin bundle (paths relative to the directory holding
// plan.json, as internal/render and internal/bundle write them) that check has no parser or
// rule for. Scripts among them are still scanned like any script first (a kubelet command line
// or a disabled firewall added by hand is found); only when that finds nothing is the file
// taken as kubewin's own. A file anywhere else, or one not listed here, is still KW0002.
var bundleOnlyFiles = []struct{ pattern, what string }{
	{"cluster/tor-routes.txt", "static routes for the ToR router (kubewin verify checks the routing)"},
	{"nodes/*/README.md", "the node's installation steps"},
	{"nodes/*/hns/setup.ps1", "HNS network and host endpoint script (kubewin verify models the network it creates)"},
	{"nodes/*/hns/cleanup.ps1", "HNS clean-up script"},
	{"nodes/*/firewall/rules.ps1", "inbound firewall rules for the Kubernetes ports"},
	{"nodes/*/pause/Dockerfile", "Dockerfile for a local pause image"},
	{"nodes/*/routes", "static routes of a Linux node (kubewin verify checks the routing)"},
	{"nodes/*/keepalived/keepalived.service.d/*.conf", "keepalived.service systemd drop-in (VIP clean-up when keepalived stops)"},
}

// kubewinDataKinds are kubewin's own data documents (apiVersion kubewin.io/...). They are
// kubewin's decisions, not configuration a component reads; the Cluster spec is checked with -f.
var kubewinDataKinds = map[string]string{
	"Plan":               "kubewin's plan (every decision as data)",
	"TorRouteTable":      "static routes for the ToR router, as data",
	"HNSNetwork":         "the HNS network kubewin's setup script creates, as data",
	"GatewayGroupConfig": "a kubewin gateway group's configuration",
}

// bundleMaxDepth is the deepest a bundleOnlyFiles entry lies below the bundle root.
const bundleMaxDepth = 5

// bundleIndex finds the kubewin bundle a file belongs to: the nearest ancestor directory (up to
// bundleMaxDepth levels) holding a plan.json that is a kubewin.io Plan.
type bundleIndex struct {
	read  func(string) ([]byte, error)
	roots map[string]bool // directory -> holds a kubewin plan.json
}

func newBundleIndex(read func(string) ([]byte, error)) *bundleIndex {
	return &bundleIndex{read: read, roots: map[string]bool{}}
}

func (b *bundleIndex) isRoot(dir string) bool {
	if v, ok := b.roots[dir]; ok {
		return v
	}
	ok := false
	if data, err := b.read(filepath.Join(dir, "plan.json")); err == nil {
		var head struct{ APIVersion, Kind string }
		ok = json.Unmarshal(data, &head) == nil && strings.HasPrefix(head.APIVersion, "kubewin.io/") && head.Kind == "Plan"
	}
	b.roots[dir] = ok
	return ok
}

// known reports whether file is one of the bundle-only files of a kubewin bundle, and what it is.
func (b *bundleIndex) known(file string) (string, bool) {
	dir := filepath.Dir(file)
	for depth := 1; depth <= bundleMaxDepth; depth++ {
		if b.isRoot(dir) {
			rel, err := filepath.Rel(dir, file)
			if err != nil {
				return "", false
			}
			rel = filepath.ToSlash(rel)
			for _, e := range bundleOnlyFiles {
				if ok, _ := path.Match(e.pattern, rel); ok {
					return e.what, true
				}
			}
			// The nearest bundle decides: a file it does not list is not kubewin's.
			return "", false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", false
}

// bundleFile reports whether file is a bundle-only file of a kubewin bundle.
func (c *Context) bundleFile(file string) (string, bool) {
	if c.bundles == nil {
		return "", false
	}
	return c.bundles.known(file)
}
