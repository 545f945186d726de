package platform

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/kubernetes/cmd/kubelet/app/options"
)

func mustVersion(t *testing.T, s string) Version {
	t.Helper()
	v, err := ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestFlagChangesTableIsConsistent(t *testing.T) {
	seen := map[string]bool{}
	all := FlagChanges()
	if !sort.SliceIsSorted(all, func(i, j int) bool {
		if all[i].Component != all[j].Component {
			return all[i].Component < all[j].Component
		}
		return all[i].Name < all[j].Name
	}) {
		t.Error("FlagChanges is not sorted")
	}
	for _, c := range all {
		key := string(c.Component) + "/" + c.Name
		if seen[key] {
			t.Errorf("%s: duplicate entry", key)
		}
		seen[key] = true
		if c.Removed == "" && c.Deprecated == "" {
			t.Errorf("%s: neither deprecated nor removed", key)
		}
		if c.Reference == "" || c.Replacement == "" || c.Kind == "" {
			t.Errorf("%s: reference, replacement and kind are required", key)
		}
		for _, v := range []string{c.Deprecated, c.Removed} {
			if v != "" {
				mustVersion(t, v)
			}
		}
		if c.Deprecated != "" && c.Removed != "" && !mustVersion(t, c.Deprecated).Less(mustVersion(t, c.Removed)) {
			t.Errorf("%s: deprecated %s is not before removed %s", key, c.Deprecated, c.Removed)
		}
		if strings.HasPrefix(c.Name, "-") || strings.Contains(c.Name, "_") {
			t.Errorf("%s: names are normalised, without dashes or underscores", key)
		}
	}
	for _, v := range ValueChanges() {
		mustVersion(t, v.Removed)
		if v.Reference == "" || v.Replacement == "" {
			t.Errorf("%s=%s: reference and replacement are required", v.Flag, v.Value)
		}
	}
	for _, g := range FeatureGateChanges() {
		if g.Removed == "" && g.LockedGA == "" {
			t.Errorf("gate %s: no event recorded", g.Name)
		}
	}
}

func TestFlagChangeVersions(t *testing.T) {
	tests := []struct {
		comp       Component
		flag       string
		version    string
		removed    bool
		deprecated bool
	}{
		{Kubelet, "network-plugin", "1.23", false, false},
		{Kubelet, "network-plugin", "1.24", true, false},
		{Kubelet, "network-plugin", "1.37", true, false},
		{Kubelet, "pod-infra-container-image", "1.27", false, true},
		{Kubelet, "pod-infra-container-image", "1.34", false, true},
		{Kubelet, "pod-infra-container-image", "1.35", true, false},
		{Kubelet, "container-runtime", "1.26", false, true},
		{Kubelet, "container-runtime", "1.27", true, false},
		{Kubelet, "log-dir", "1.25", false, true},
		{Kubelet, "log-dir", "1.26", true, false},
		{KubeProxy, "log-file", "1.26", true, false},
		{Kubelet, "allow-privileged", "1.15", true, false},
		{Kubelet, "keep-terminated-pod-volumes", "1.30", false, true},
		{Kubelet, "keep-terminated-pod-volumes", "1.31", true, false},
		{Kubelet, "cloud-config", "1.33", false, false},
		{Kubelet, "cloud-config", "1.34", true, false},
	}
	for _, tt := range tests {
		c, ok := LookupFlagChange(tt.comp, tt.flag)
		if !ok {
			t.Fatalf("%s %s not in the table", tt.comp, tt.flag)
		}
		v := mustVersion(t, tt.version)
		if got := c.RemovedIn(v); got != tt.removed {
			t.Errorf("%s --%s RemovedIn(%s) = %v, want %v", tt.comp, tt.flag, tt.version, got, tt.removed)
		}
		if got := c.DeprecatedIn(v); got != tt.deprecated {
			t.Errorf("%s --%s DeprecatedIn(%s) = %v, want %v", tt.comp, tt.flag, tt.version, got, tt.deprecated)
		}
	}
	if _, ok := LookupFlagChange(Kubelet, "cgroups-per-qos"); ok {
		t.Error("a current flag has a history entry")
	}
	if vc, ok := LookupValueChange(KubeProxy, "proxy-mode", "UserSpace"); !ok || !vc.RemovedIn(mustVersion(t, "1.26")) || vc.RemovedIn(mustVersion(t, "1.25")) {
		t.Errorf("proxy-mode=userspace: %+v %v", vc, ok)
	}
	g, ok := LookupFeatureGateChange("HyperVContainer")
	if !ok || !g.RemovedIn(mustVersion(t, "1.21")) || g.RemovedIn(mustVersion(t, "1.20")) {
		t.Errorf("HyperVContainer: %+v", g)
	}
	w, _ := LookupFeatureGateChange("WinOverlay")
	if !w.LockedIn(mustVersion(t, "1.34")) || w.LockedIn(mustVersion(t, "1.33")) {
		t.Errorf("WinOverlay locked: %+v", w)
	}
}

// realKubeletFlags is the flag set of the kubelet kubewin links (Linux build).
func realKubeletFlags(t *testing.T) *pflag.FlagSet {
	t.Helper()
	s, err := options.NewKubeletServer()
	if err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	s.AddFlags(fs)
	options.AddGlobalFlags(fs)
	return fs
}

// The history must agree with the real flag set of the newest release: a flag recorded as
// removed by then is not in it, and a flag recorded as only deprecated still is.
func TestKubeletHistoryAgreesWithRealFlagSet(t *testing.T) {
	fs := realKubeletFlags(t)
	newest := NewestKubernetes()
	for _, c := range FlagChanges() {
		if c.Component != Kubelet {
			continue
		}
		present := fs.Lookup(c.Name) != nil
		if c.RemovedIn(newest) && present {
			t.Errorf("--%s is recorded as removed in %s but kubelet %s still has it", c.Name, c.Removed, newest)
		}
		if !c.RemovedIn(newest) && !present {
			t.Errorf("--%s is recorded as present in %s but kubelet %s does not have it", c.Name, newest, newest)
		}
	}
	for _, w := range WindowsKubeletFlags() {
		if fs.Lookup(w.Name) != nil {
			t.Errorf("--%s is listed as Windows-only but the Linux build registers it", w.Name)
		}
	}
}

// moduleDir locates k8s.io/kubernetes in the module cache (the version go.mod pins).
func moduleDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/kubernetes").Output()
	if err != nil {
		t.Fatalf("go list -m k8s.io/kubernetes: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// flagsInSource returns name -> registering method for every fs.<Method>(..., "name", ...)
// call in the named function of a Go file.
func flagsInSource(t *testing.T, file, funcName string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != funcName {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "fs" || strings.HasPrefix(sel.Sel.Name, "Mark") {
				return true
			}
			for _, a := range call.Args {
				if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					name, _ := strconv.Unquote(lit.Value)
					out[name] = sel.Sel.Name
					break
				}
			}
			return true
		})
	}
	return out
}

// KubeProxyFlags is data (importing cmd/kube-proxy/app would pull the Linux proxiers into
// kubewin); this test compares it with the upstream source of the pinned release.
func TestKubeProxyFlagsMatchUpstreamSource(t *testing.T) {
	dir := filepath.Join(moduleDir(t), "cmd", "kube-proxy", "app")
	want := flagsInSource(t, filepath.Join(dir, "options.go"), "AddFlags")
	for k, v := range flagsInSource(t, filepath.Join(dir, "init_windows.go"), "addOSFlags") {
		want[k] = v
	}
	got := map[string]FlagInfo{}
	for _, f := range KubeProxyFlags() {
		got[f.Name] = f
	}
	for name, method := range want {
		f, ok := got[name]
		if !ok {
			t.Errorf("upstream kube-proxy registers --%s (%s); KubeProxyFlags lacks it", name, method)
			continue
		}
		if (method == "BoolVar") != (f.Kind == KindBool) {
			t.Errorf("--%s: upstream %s, table kind %s", name, method, f.Kind)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("KubeProxyFlags has --%s, which upstream kube-proxy does not register", name)
		}
	}
	win := flagsInSource(t, filepath.Join(moduleDir(t), "cmd", "kubelet", "app", "options", "osflags_windows.go"), "addOSFlags")
	if len(win) != len(WindowsKubeletFlags()) {
		t.Errorf("kubelet Windows flags upstream %v, table %v", win, WindowsKubeletFlags())
	}
	for _, w := range WindowsKubeletFlags() {
		if _, ok := win[w.Name]; !ok {
			t.Errorf("--%s is not registered by the Windows kubelet upstream", w.Name)
		}
	}
}

// The generated tables are sorted, without duplicates, and complete enough to be used:
// every kubelet flag names its parser, every gate has stages in ascending order and depends
// only on gates the registry has.
func TestGeneratedTablesAreConsistent(t *testing.T) {
	flags := KubeletFlags()
	if len(flags) < 100 {
		t.Fatalf("only %d kubelet flags", len(flags))
	}
	for i, f := range flags {
		if i > 0 && flags[i-1].Name >= f.Name {
			t.Errorf("kubelet flags not sorted or duplicated at %s", f.Name)
		}
		if f.Parser == "" || f.Kind == "" {
			t.Errorf("--%s: parser %q kind %q", f.Name, f.Parser, f.Kind)
		}
		if f.WindowsOnly {
			t.Errorf("--%s: the generated table is the Linux build", f.Name)
		}
	}
	for _, w := range WindowsKubeletFlags() {
		for _, f := range flags {
			if f.Name == w.Name {
				t.Errorf("--%s is Windows-only but in the generated table", w.Name)
			}
		}
	}
	gates := FeatureGates()
	known := map[string]bool{"AllAlpha": true, "AllBeta": true}
	for i, g := range gates {
		known[g.Name] = true
		if i > 0 && gates[i-1].Name >= g.Name {
			t.Errorf("feature gates not sorted or duplicated at %s", g.Name)
		}
		if len(g.Stages) == 0 {
			t.Errorf("gate %s has no stages", g.Name)
		}
		for j := 1; j < len(g.Stages); j++ {
			if mustVersion(t, g.Stages[j].Version).Less(mustVersion(t, g.Stages[j-1].Version)) {
				t.Errorf("gate %s: stages out of order", g.Name)
			}
		}
	}
	for _, g := range gates {
		for _, d := range g.DependsOn {
			if !known[d] {
				t.Errorf("gate %s depends on unknown gate %s", g.Name, d)
			}
		}
	}
	for _, w := range []string{"WinDSR", "WinOverlay"} {
		if !known[w] {
			t.Errorf("gate %s missing", w)
		}
	}
	if _, err := ParseVersion(FeatureGatesRelease()); err != nil {
		t.Errorf("FeatureGatesRelease %q: %v", FeatureGatesRelease(), err)
	}
}
