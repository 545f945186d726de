package check

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kubewin/kubewin/internal/platform"
)

// Options tune a run.
type Options struct {
	// Ignore lists rule IDs whose findings are downgraded to info and never fail the run.
	Ignore map[string]bool
	// Threshold is the lowest severity that makes the run fail (exit 1). Default Warning.
	Threshold Severity
}

// Report is the result of a run.
type Report struct {
	// Version is the target Kubernetes release and where it came from.
	Version     string    `json:"kubernetesVersion"`
	VersionFrom string    `json:"kubernetesVersionFrom"`
	Threshold   Severity  `json:"threshold"`
	Findings    []Finding `json:"findings"`
	// Counts per severity (after --ignore).
	Counts map[string]int `json:"counts"`
	// Inputs summarises what was checked.
	Inputs InputSummary `json:"inputs"`
	// Failed is true when a finding is at or above the threshold.
	Failed bool `json:"failed"`
	// Rules is the catalogue the run used (for SARIF's rule table).
	Rules []Rule `json:"-"`
}

// InputSummary counts the recognised inputs.
type InputSummary struct {
	Spec             string `json:"spec,omitempty"`
	PlanNodes        int    `json:"planNodes,omitempty"`
	CommandLines     int    `json:"commandLines,omitempty"`
	CNIConfs         int    `json:"cniConfs,omitempty"`
	KubeletConfigs   int    `json:"kubeletConfigs,omitempty"`
	KubeProxyConfigs int    `json:"kubeProxyConfigs,omitempty"`
	Containerd       int    `json:"containerdConfigs,omitempty"`
	Keepalived       int    `json:"keepalivedConfigs,omitempty"`
	FlannelNetConfs  int    `json:"flannelNetConfs,omitempty"`
	Kubeconfigs      int    `json:"kubeconfigs,omitempty"`
	Scripts          int    `json:"scripts,omitempty"`
	Objects          int    `json:"objects,omitempty"`
	// KubewinFiles counts files kubewin wrote that hold nothing to check (plan.json, node
	// READMEs, HNS and firewall scripts...): known, so not reported as unrecognised.
	KubewinFiles int `json:"kubewinFiles,omitempty"`
}

// ValidateCatalogue checks that IDs are unique and well formed and that every rule is complete.
func ValidateCatalogue(rules []Rule) error {
	seen := map[string]bool{}
	for _, r := range rules {
		if len(r.ID) != 6 || !strings.HasPrefix(r.ID, "KW") {
			return fmt.Errorf("rule %q: ID must look like KW1234", r.ID)
		}
		if seen[r.ID] {
			return fmt.Errorf("rule %s: duplicate ID", r.ID)
		}
		seen[r.ID] = true
		if r.Name == "" || r.Summary == "" || r.Why == "" || r.Fix == "" || r.Reference == "" || r.Check == nil ||
			r.Severity < Info || r.Severity > Error || r.Family == "" {
			return fmt.Errorf("rule %s: every field (name, family, severity, summary, why, fix, reference, check) is required", r.ID)
		}
	}
	return nil
}

// Run applies rules to ctx.
func Run(ctx *Context, rules []Rule, opts Options) *Report {
	if opts.Threshold == 0 {
		opts.Threshold = Warning
	}
	rep := &Report{Version: ctx.Version.String(), VersionFrom: ctx.VersionFrom, Threshold: opts.Threshold,
		Counts: map[string]int{}, Rules: rules}
	for _, r := range rules {
		r := r
		if !r.Scope.inRelease(ctx) {
			continue
		}
		emit := func(f Finding) {
			f.RuleID, f.Name, f.Family = r.ID, r.Name, r.Family
			if f.Severity == 0 {
				f.Severity = r.Severity
			}
			if f.Why == "" {
				f.Why = r.Why
			}
			if f.Fix == "" {
				f.Fix = r.Fix
			}
			f.Reference = r.Reference
			if r.Scope.RequiresKnownOS && f.Severity > Info {
				if assumed := ctx.osAssumedAt(f.Location); assumed {
					f.Severity = Info
					f.Message += " (shown as info: nothing in this input or its siblings proves it is for " + osName(r.Scope.OS) + "; see kubewin check --explain context)"
				}
			}
			if b, ok := ctx.RenderedBelow(f.Location.File, f.Location.Line); ok && ctx.Version.AtLeast(b.Major, b.Minor) {
				// a template branch rendered only below b: at this target the line is not there
				return
			}
			if opts.Ignore[r.ID] {
				f.Ignored, f.Severity = true, Info
			}
			rep.Findings = append(rep.Findings, f)
		}
		runRule(r, ctx, emit)
	}
	sortFindings(rep.Findings)
	rep.Findings = mergeCopies(dedupe(rep.Findings))
	for _, f := range rep.Findings {
		rep.Counts[f.Severity.String()]++
		if !f.Ignored && f.Severity >= opts.Threshold {
			rep.Failed = true
		}
	}
	rep.Inputs = InputSummary{Spec: ctx.SpecFile, CommandLines: len(ctx.CommandLines), CNIConfs: len(ctx.CNIConfs),
		KubeletConfigs: len(ctx.KubeletConfigs), KubeProxyConfigs: len(ctx.KubeProxyConfigs), Containerd: len(ctx.Containerd),
		Keepalived: len(ctx.Keepalived), FlannelNetConfs: len(ctx.FlannelNetConfs), Kubeconfigs: len(ctx.Kubeconfigs),
		Scripts: len(ctx.Scripts), Objects: len(ctx.Objects), KubewinFiles: len(ctx.KubewinFiles)}
	if ctx.Plan != nil {
		rep.Inputs.PlanNodes = len(ctx.Plan.Nodes)
	}
	return rep
}

// runRule runs one rule; a panic (a bug in the rule) becomes an error finding of that rule
// instead of ending the run, so the other rules still report.
func runRule(r Rule, ctx *Context, emit Emitter) {
	defer func() {
		if p := recover(); p != nil {
			emit(Finding{Severity: Error, Location: Location{File: "(kubewin)"},
				Message: fmt.Sprintf("internal error in rule %s: %v", r.ID, p),
				Fix:     "report this as a kubewin bug with the inputs that caused it"})
		}
	}()
	r.Check(ctx, emit)
}

// groupKey is what text output groups by: the node when known, else the file.
func groupKey(f Finding) string {
	if f.Location.Node != "" {
		return "node " + f.Location.Node
	}
	if f.Location.File != "" {
		return f.Location.File
	}
	return "(cluster)"
}

func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(groupKey(a), groupKey(b)),
			cmp.Compare(a.Location.File, b.Location.File),
			cmp.Compare(a.Location.Line, b.Location.Line),
			cmp.Compare(a.Location.Column, b.Location.Column),
			cmp.Compare(b.Severity, a.Severity),
			cmp.Compare(a.RuleID, b.RuleID),
			cmp.Compare(a.Location.Object, b.Location.Object),
			cmp.Compare(a.Location.Flag, b.Location.Flag),
			cmp.Compare(a.Location.Field, b.Location.Field),
			cmp.Compare(a.Message, b.Message),
		)
	})
}

// dedupe drops identical findings (same rule, location and message) that two inputs can
// produce (a flag file given twice, a rule reached through two paths).
func dedupe(fs []Finding) []Finding {
	out := fs[:0]
	for i, f := range fs {
		if i > 0 {
			p := fs[i-1]
			if p.RuleID == f.RuleID && p.Location == f.Location && p.Message == f.Message {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// minCopies is how many findings of one rule with one message in one file make them copies of
// one problem (a script that repeats its command line in each branch of a version switch)
// rather than separate problems: two may be two distinct runs (a registration kubelet and the
// service), three or more of the same text are one problem written in several branches.
const minCopies = 3

// mergeCopies keeps one finding per problem: findings of the same rule, file, flag and message
// at minCopies or more lines become the first, which lists the other lines.
func mergeCopies(fs []Finding) []Finding {
	type key struct{ rule, file, flag, field, msg, node string }
	lines := map[key][]int{}
	for _, f := range fs {
		if f.Location.Line == 0 {
			continue
		}
		k := key{f.RuleID, f.Location.File, f.Location.Flag, f.Location.Field, f.Message, f.Location.Node}
		if l := lines[k]; len(l) == 0 || l[len(l)-1] != f.Location.Line {
			lines[k] = append(l, f.Location.Line)
		}
	}
	out := fs[:0]
	done := map[key]bool{}
	for _, f := range fs {
		k := key{f.RuleID, f.Location.File, f.Location.Flag, f.Location.Field, f.Message, f.Location.Node}
		ls := lines[k]
		if f.Location.Line == 0 || len(ls) < minCopies {
			out = append(out, f)
			continue
		}
		if done[k] {
			continue
		}
		done[k] = true
		var rest []string
		for _, l := range ls[1:] {
			rest = append(rest, fmt.Sprint(l))
		}
		f.Message += fmt.Sprintf(" (the same at lines %s: one problem, written in %d places)", strings.Join(rest, ", "), len(ls))
		out = append(out, f)
	}
	return out
}

// ParseIgnore parses "KW1203,KW1101" into a set; unknown IDs are an error.
func ParseIgnore(list []string, rules []Rule) (map[string]bool, error) {
	known := map[string]bool{}
	for _, r := range rules {
		known[r.ID] = true
	}
	out := map[string]bool{}
	for _, item := range list {
		for _, id := range strings.Split(item, ",") {
			id = strings.ToUpper(strings.TrimSpace(id))
			if id == "" {
				continue
			}
			if !known[id] {
				return nil, fmt.Errorf("--ignore: unknown rule %q (see kubewin check --list)", id)
			}
			out[id] = true
		}
	}
	return out, nil
}

// FindRule returns the rule with id.
func FindRule(rules []Rule, id string) (Rule, bool) {
	for _, r := range rules {
		if strings.EqualFold(r.ID, id) || r.Name == id {
			return r, true
		}
	}
	return Rule{}, false
}

func osName(o OSKind) string {
	if o == "" {
		return "the OS this rule judges"
	}
	return string(o)
}

// inRelease reports whether the target release is inside the scope's range.
func (s Scope) inRelease(ctx *Context) bool {
	if s.Since != "" {
		if v, err := platform.ParseVersion(s.Since); err == nil && !ctx.Version.AtLeast(v.Major, v.Minor) {
			return false
		}
	}
	if s.Until != "" {
		if v, err := platform.ParseVersion(s.Until); err == nil && ctx.Version.AtLeast(v.Major, v.Minor) {
			return false
		}
	}
	return true
}

// osAssumedAt reports whether the input at loc is a command line whose OS was assumed.
func (ctx *Context) osAssumedAt(loc Location) bool {
	var inFile []*CommandLine
	for _, cl := range ctx.CommandLines {
		if cl.File == loc.File {
			inFile = append(inFile, cl)
		}
	}
	if len(inFile) == 0 {
		return false
	}
	for _, cl := range inFile {
		if cl.Line == loc.Line {
			return cl.OSAssumed
		}
		for _, f := range cl.Flags {
			if f.Line == loc.Line && loc.Line > 0 {
				return cl.OSAssumed
			}
		}
	}
	for _, cl := range inFile {
		if !cl.OSAssumed {
			return false
		}
	}
	return true
}
