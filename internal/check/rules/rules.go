// Package rules is kubewin's rule catalogue: one file per family, each a table of small
// documented entries (ID, name, severity, why, fix, reference) with a function that finds the
// problem in a check.Context.
package rules

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/platform"
)

// All returns the catalogue in ID order.
func All() []check.Rule {
	var out []check.Rule
	for _, fam := range [][]check.Rule{inputRules, kubeletRules, kubeProxyRules, cniRules, cniValueRules, addressingRules,
		keepalivedRules, keepalivedHealthRules, runtimeRules, containerdLayoutRules, nodeLineRules, workloadRules, securityRules,
		hostProcessRules, unitEnvRules} {
		out = append(out, fam...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return withScopes(out)
}

// Seed references used by several rules.
const (
	refSeed000   = "seed 000 (Upstream-ToR field report)"
	refSeed001   = "seed 001 (Kubernetes docs: Windows in Kubernetes, limitations and troubleshooting)"
	refSeed002   = "seed 002 (AKS kubeletstart.ps1, Hyper-V isolation story)"
	refWinDocs   = "kubernetes.io/docs/concepts/windows/intro"
	refWinGuide  = "kubernetes.io/docs/concepts/windows/user-guide"
	refKubeletCF = "kubernetes.io/docs/reference/config-api/kubelet-config.v1beta1"
)

// windowsCommandLines returns the command lines of comp for Windows nodes that say how the
// node runs: a transient run (check.CommandLine.Transient) is left to the flag-level rules.
func windowsCommandLines(ctx *check.Context, comp platform.Component) []*check.CommandLine {
	var out []*check.CommandLine
	for _, cl := range ctx.CommandLines {
		if cl.Component == comp && cl.OS == check.OSWindows && !cl.Transient {
			out = append(out, cl)
		}
	}
	return out
}

// commandLines returns comp's command lines, transient runs left out (as windowsCommandLines).
func commandLines(ctx *check.Context, comp platform.Component) []*check.CommandLine {
	var out []*check.CommandLine
	for _, cl := range ctx.CommandLines {
		if cl.Component == comp && !cl.Transient {
			out = append(out, cl)
		}
	}
	return out
}

// windowsKubeletConfigs returns kubelet config files that are not known to be for Linux.
func windowsKubeletConfigs(ctx *check.Context) []*check.KubeletConfigDoc {
	var out []*check.KubeletConfigDoc
	for _, d := range ctx.KubeletConfigs {
		if d.OS != check.OSLinux {
			out = append(out, d)
		}
	}
	return out
}

// configFileUnseen reports whether the command line reads a --config file that was not given
// to kubewin: settings absent from the line may then be in that file.
func configFileUnseen(ctx *check.Context, cl *check.CommandLine) bool {
	if cl.Partial {
		return true
	}
	f, ok := cl.Last("config")
	if !ok {
		return false
	}
	if cl.Component == platform.KubeProxy {
		return len(ctx.KubeProxyConfigs) == 0
	}
	_ = f
	return len(ctx.KubeletConfigs) == 0
}

// usable reports whether a flag value can be judged (no unresolved variables or placeholders).
func usable(f check.Flag) bool {
	return f.Resolved && !check.HasPlaceholder(f.Value)
}

func isFalse(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "0", "f":
		return true
	}
	return false
}

func isTrue(f check.Flag) bool {
	if !f.HasValue {
		return true
	}
	switch strings.ToLower(strings.TrimSpace(f.Value)) {
	case "true", "1", "t":
		return true
	}
	return false
}

// prefixes parses a comma separated CIDR list.
func prefixes(s string) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range strings.Split(s, ",") {
		if pp, err := netip.ParsePrefix(strings.TrimSpace(p)); err == nil {
			out = append(out, pp.Masked())
		}
	}
	return out
}

// covered reports whether p lies within one of list.
func covered(p netip.Prefix, list []netip.Prefix) bool {
	for _, l := range list {
		if l.Bits() <= p.Bits() && l.Contains(p.Addr()) {
			return true
		}
	}
	return false
}

func overlaps(a, b netip.Prefix) bool { return a.Overlaps(b) }

func joinPrefixes(ps []netip.Prefix) string {
	var s []string
	for _, p := range ps {
		s = append(s, p.String())
	}
	return strings.Join(s, ", ")
}

// windowsBuildOf returns the Windows build of node n from the plan or spec.
func windowsBuildOf(ctx *check.Context, node string) (int, bool) {
	if np, ok := ctx.PlanNode(node); ok && np.Windows != nil {
		return np.Windows.Build, true
	}
	if sn, ok := ctx.SpecNode(node); ok && sn.WindowsBuild != "" {
		if b, ok := platform.LookupWindowsBuild(sn.WindowsBuild); ok {
			return b.Build, true
		}
	}
	return 0, false
}

// windowsBuilds returns every Windows build in the plan or spec, sorted, deduplicated.
func windowsBuilds(ctx *check.Context) []int {
	return ctx.Memo("rules.windowsBuilds", func() any { return computeWindowsBuilds(ctx) }).([]int)
}

func computeWindowsBuilds(ctx *check.Context) []int {
	seen := map[int]bool{}
	if ctx.Plan != nil {
		for _, n := range ctx.Plan.Nodes {
			if n.Windows != nil {
				seen[n.Windows.Build] = true
			}
		}
	} else if ctx.Spec != nil {
		for _, n := range ctx.Spec.Spec.Nodes {
			if b, ok := platform.LookupWindowsBuild(n.WindowsBuild); ok && n.OS == "windows" {
				seen[b.Build] = true
			}
		}
	}
	var out []int
	for b := range seen {
		out = append(out, b)
	}
	sort.Ints(out)
	return out
}

// nodeOfRun returns the single Windows node a hand-written run is about: the node named by a
// --hostname-override, else the only Windows node of the spec.
func nodeOfRun(ctx *check.Context, cl *check.CommandLine) string {
	if cl != nil && cl.Node != "" {
		return cl.Node
	}
	for _, c := range ctx.CommandLines {
		if c.Node != "" {
			return c.Node
		}
	}
	ws := ctx.WindowsNodes()
	if len(ws) == 1 {
		return ws[0].Name
	}
	return ""
}

func plural(n int, s string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", s)
	}
	return fmt.Sprintf("%d %ss", n, s)
}
