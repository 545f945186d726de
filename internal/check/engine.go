package check

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
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
			if opts.Ignore[r.ID] {
				f.Ignored, f.Severity = true, Info
			}
			rep.Findings = append(rep.Findings, f)
		}
		runRule(r, ctx, emit)
	}
	sortFindings(rep.Findings)
	rep.Findings = dedupe(rep.Findings)
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
