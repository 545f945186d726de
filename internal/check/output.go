package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// ANSI colours, used only when the caller says the stream is a terminal.
const (
	ansiReset  = "\x1b[0m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
)

func sevColor(s Severity) string {
	switch s {
	case Error:
		return ansiRed
	case Warning:
		return ansiYellow
	}
	return ansiCyan
}

// WriteText renders findings grouped by node (or file), most severe first within a location.
func WriteText(w io.Writer, rep *Report, color bool) error {
	var b bytes.Buffer
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return code + s + ansiReset
	}
	fmt.Fprintf(&b, "kubewin check: target Kubernetes %s (%s)\n", rep.Version, rep.VersionFrom)
	group := ""
	for _, f := range rep.Findings {
		if g := groupKey(f); g != group {
			group = g
			fmt.Fprintf(&b, "\n%s\n", paint(ansiBold, g))
		}
		fmt.Fprintf(&b, "  %s %s %s  %s\n", paint(sevColor(f.Severity), fmt.Sprintf("%-7s", strings.ToUpper(f.Severity.String()))),
			f.RuleID, f.Name, paint(ansiDim, f.Location.String()))
		fmt.Fprintf(&b, "    found: %s\n", f.Message)
		fmt.Fprintf(&b, "    why:   %s\n", f.Why)
		fmt.Fprintf(&b, "    fix:   %s\n", f.Fix)
		fmt.Fprintf(&b, "    ref:   %s\n", f.Reference)
		if f.Ignored {
			fmt.Fprintf(&b, "    (downgraded by --ignore)\n")
		}
	}
	if n := rep.Inputs.KubewinFiles; n > 0 {
		files := fmt.Sprintf("%d files", n)
		if n == 1 {
			files = "1 file"
		}
		fmt.Fprintf(&b, "\nskipped %s kubewin wrote that hold nothing to check (plan.json, READMEs, HNS and firewall scripts, route tables)\n", files)
	}
	fmt.Fprintf(&b, "\n%d error(s), %d warning(s), %d info", rep.Counts["error"], rep.Counts["warning"], rep.Counts["info"])
	if rep.Failed {
		fmt.Fprintf(&b, " - failing at --severity=%s\n", rep.Threshold)
	} else {
		fmt.Fprintf(&b, " - nothing at or above --severity=%s\n", rep.Threshold)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteJSON renders the report as indented JSON with a trailing newline.
func WriteJSON(w io.Writer, rep *Report) error {
	out := *rep
	if out.Findings == nil {
		out.Findings = []Finding{}
	}
	if out.Counts == nil {
		out.Counts = map[string]int{}
	}
	return writeIndentedJSON(w, &out, "report")
}

// SARIF 2.1.0 output (OASIS standard). Only the properties kubewin fills are modelled.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string          `json:"id"`
	Name                 string          `json:"name"`
	ShortDescription     sarifText       `json:"shortDescription"`
	FullDescription      sarifText       `json:"fullDescription"`
	Help                 sarifText       `json:"help"`
	DefaultConfiguration sarifConfig     `json:"defaultConfiguration"`
	Properties           sarifProperties `json:"properties"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifProperties struct {
	Tags []string `json:"tags,omitempty"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
	// Suppressions would be the SARIF way for --ignore, but they hide results in most
	// viewers; kubewin keeps them visible as notes and says so in the message instead.
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
	Message          *sarifText     `json:"message,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

type sarifLogical struct {
	Name               string `json:"name,omitempty"`
	FullyQualifiedName string `json:"fullyQualifiedName,omitempty"`
	Kind               string `json:"kind,omitempty"`
}

func sarifLevel(s Severity) string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "note"
}

const sarifSchema = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

// sarifDriverFor describes kubewin and its rules as a SARIF tool driver.
func sarifDriverFor(rules []Rule) sarifDriver {
	drv := sarifDriver{Name: "kubewin", InformationURI: "https://github.com/kubewin/kubewin", Rules: []sarifRule{}}
	for _, r := range rules {
		drv.Rules = append(drv.Rules, sarifRule{
			ID: r.ID, Name: r.Name,
			ShortDescription:     sarifText{Text: r.Summary},
			FullDescription:      sarifText{Text: r.Why},
			Help:                 sarifText{Text: "Fix: " + r.Fix + "\nReference: " + r.Reference},
			DefaultConfiguration: sarifConfig{Level: sarifLevel(r.Severity)},
			Properties:           sarifProperties{Tags: []string{string(r.Family)}},
		})
	}
	return drv
}

// WriteSARIF renders the report as a SARIF 2.1.0 log.
func WriteSARIF(w io.Writer, rep *Report) error {
	drv := sarifDriverFor(rep.Rules)
	index := map[string]int{}
	for i, r := range rep.Rules {
		index[r.ID] = i
	}
	run := sarifRun{Tool: sarifTool{Driver: drv}, Results: []sarifResult{}}
	for _, f := range rep.Findings {
		msg := f.Message + "\nWhy: " + f.Why + "\nFix: " + f.Fix
		if f.Ignored {
			msg += "\n(downgraded by --ignore)"
		}
		res := sarifResult{RuleID: f.RuleID, RuleIndex: index[f.RuleID], Level: sarifLevel(f.Severity),
			Message: sarifText{Text: msg}}
		loc := sarifLocation{}
		if f.Location.File != "" && !strings.HasPrefix(f.Location.File, "<") && !strings.HasPrefix(f.Location.File, "--") {
			loc.PhysicalLocation = &sarifPhysical{ArtifactLocation: sarifArtifact{URI: fileURI(f.Location.File)}}
			if f.Location.Line > 0 {
				loc.PhysicalLocation.Region = &sarifRegion{StartLine: f.Location.Line, StartColumn: f.Location.Column}
			}
		}
		for _, lg := range []struct{ name, kind string }{
			{f.Location.Node, "node"}, {f.Location.Object, "object"}, {f.Location.Flag, "flag"}, {f.Location.Field, "field"},
		} {
			if lg.name != "" {
				loc.LogicalLocations = append(loc.LogicalLocations, sarifLogical{Name: lg.name, Kind: lg.kind})
			}
		}
		if f.Location.File != "" && loc.PhysicalLocation == nil {
			loc.LogicalLocations = append(loc.LogicalLocations, sarifLogical{Name: f.Location.File, Kind: "input"})
		}
		if loc.PhysicalLocation != nil || len(loc.LogicalLocations) > 0 {
			res.Locations = []sarifLocation{loc}
		}
		run.Results = append(run.Results, res)
	}
	return writeIndentedJSON(w, sarifLog{Schema: sarifSchema, Version: "2.1.0", Runs: []sarifRun{run}}, "sarif")
}

// sarifRulesLog is a SARIF log that describes rules without running them: its run has no
// results property, which SARIF 2.1.0 (§3.14.23) defines as "no analysis was performed", as
// opposed to an empty array ("analysed, nothing found").
type sarifRulesLog struct {
	Schema  string          `json:"$schema"`
	Version string          `json:"version"`
	Runs    []sarifRulesRun `json:"runs"`
}

type sarifRulesRun struct {
	Tool sarifTool `json:"tool"`
}

// WriteRulesSARIF renders rules (the catalogue for --list, one rule for --explain) as a SARIF
// 2.1.0 log whose single run lists them in tool.driver.rules and performed no analysis.
func WriteRulesSARIF(w io.Writer, rules []Rule) error {
	return writeIndentedJSON(w, sarifRulesLog{Schema: sarifSchema, Version: "2.1.0",
		Runs: []sarifRulesRun{{Tool: sarifTool{Driver: sarifDriverFor(rules)}}}}, "sarif")
}

// RuleJSON is a rule as --list and --explain print it with -o json.
type RuleJSON struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Family    Family   `json:"family"`
	Severity  Severity `json:"severity"`
	Summary   string   `json:"summary"`
	Why       string   `json:"why"`
	Fix       string   `json:"fix"`
	Reference string   `json:"reference"`
}

func ruleJSON(r Rule) RuleJSON {
	return RuleJSON{ID: r.ID, Name: r.Name, Family: r.Family, Severity: r.Severity, Summary: r.Summary,
		Why: r.Why, Fix: r.Fix, Reference: r.Reference}
}

// WriteListJSON prints the catalogue as a JSON array of rules, in catalogue order.
func WriteListJSON(w io.Writer, rules []Rule) error {
	out := make([]RuleJSON, 0, len(rules))
	for _, r := range rules {
		out = append(out, ruleJSON(r))
	}
	return writeIndentedJSON(w, out, "rules")
}

// WriteExplainJSON prints one rule as a JSON object.
func WriteExplainJSON(w io.Writer, r Rule) error {
	return writeIndentedJSON(w, ruleJSON(r), "rule")
}

// writeIndentedJSON encodes v indented, without HTML escaping, with a trailing newline.
func writeIndentedJSON(w io.Writer, v any, what string) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode %s: %w", what, err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// fileURI turns a path into a relative URI reference (forward slashes, spaces escaped).
func fileURI(p string) string {
	p = filepath.ToSlash(p)
	r := strings.NewReplacer("%", "%25", " ", "%20", "#", "%23", "?", "%3F", "[", "%5B", "]", "%5D")
	return r.Replace(p)
}

// WriteList prints the catalogue, one rule per line, grouped by family.
func WriteList(w io.Writer, rules []Rule) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, fam := range Families() {
		first := true
		for _, r := range rules {
			if r.Family != fam {
				continue
			}
			if first {
				fmt.Fprintf(tw, "\n%s\t\t\t\n", strings.ToUpper(string(fam)))
				first = false
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.Severity, r.Name, r.Summary)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\n%d rules. kubewin check --explain ID prints one in full.\n", len(rules))
	_, err := w.Write(b.Bytes())
	return err
}

// WriteExplain prints one rule in full.
func WriteExplain(w io.Writer, r Rule) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s\n", r.ID, r.Name)
	fmt.Fprintf(&b, "family:    %s\n", r.Family)
	fmt.Fprintf(&b, "severity:  %s\n", r.Severity)
	fmt.Fprintf(&b, "summary:   %s\n", r.Summary)
	fmt.Fprintf(&b, "why:       %s\n", r.Why)
	fmt.Fprintf(&b, "fix:       %s\n", r.Fix)
	fmt.Fprintf(&b, "reference: %s\n", r.Reference)
	fmt.Fprintf(&b, "applies:   %s\n", r.Scope.Describe())
	_, err := w.Write(b.Bytes())
	return err
}

// InputContext is what kubewin inferred about one input and why (kubewin check --explain
// context).
type InputContext struct {
	File      string `json:"file"`
	Line      int    `json:"line,omitempty"`
	Component string `json:"component,omitempty"`
	Kind      string `json:"kind"`
	OS        string `json:"os"`
	Evidence  string `json:"evidence"`
}

// ContextOf lists the target release and each command line's and config's OS with its
// evidence, in input order.
func ContextOf(ctx *Context) (release string, from string, inputs []InputContext) {
	for _, cl := range ctx.CommandLines {
		ev := cl.OSEvidence
		if cl.OSAssumed {
			ev = "none: assumed windows, so rules that need a known OS report info only"
		}
		inputs = append(inputs, InputContext{File: cl.File, Line: cl.Line, Component: string(cl.Component), Kind: "command line (" + cl.Origin + ")",
			OS: string(cl.OS), Evidence: ev})
	}
	for _, d := range ctx.KubeletConfigs {
		os, ev := string(d.OS), "a Windows path or npipe endpoint, or a unix:// endpoint"
		if d.OS == OSUnknown {
			os, ev = "unknown", "none: judged by the rules for Windows nodes that read config files"
		}
		inputs = append(inputs, InputContext{File: d.File, Kind: "KubeletConfiguration", OS: os, Evidence: ev})
	}
	return ctx.Version.String(), ctx.VersionFrom, inputs
}

// WriteContext renders ContextOf as text.
func WriteContext(w io.Writer, ctx *Context) error {
	rel, from, inputs := ContextOf(ctx)
	var b strings.Builder
	fmt.Fprintf(&b, "target Kubernetes %s (from %s)\n", rel, from)
	for _, in := range inputs {
		pos := in.File
		if in.Line > 0 {
			pos += fmt.Sprintf(":%d", in.Line)
		}
		comp := ""
		if in.Component != "" {
			comp = in.Component + " "
		}
		fmt.Fprintf(&b, "%s  %s%s\n    os: %s  evidence: %s\n", pos, comp, in.Kind, in.OS, in.Evidence)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
