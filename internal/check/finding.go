package check

import (
	"fmt"
	"strings"
)

// Severity of a rule or finding. The order matters: a higher value is more severe.
type Severity int

const (
	Info Severity = iota + 1
	Warning
	Error
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// ParseSeverity accepts "info", "warning" (or "warn") and "error".
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "info":
		return Info, nil
	case "warning", "warn":
		return Warning, nil
	case "error":
		return Error, nil
	}
	return 0, fmt.Errorf("severity %q: expected info, warning or error", s)
}

// MarshalText makes severities render as words in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Family groups rules in the catalogue and in rules/ (one file per family).
type Family string

const (
	FamilyInput      Family = "input"
	FamilyKubelet    Family = "kubelet"
	FamilyKubeProxy  Family = "kube-proxy"
	FamilyCNI        Family = "cni"
	FamilyAddressing Family = "addressing"
	FamilyKeepalived Family = "keepalived"
	FamilyRuntime    Family = "runtime"
	FamilyWorkloads  Family = "workloads"
	FamilySecurity   Family = "security"
)

// Families lists the families in catalogue order.
func Families() []Family {
	return []Family{FamilyInput, FamilyKubelet, FamilyKubeProxy, FamilyCNI, FamilyAddressing,
		FamilyKeepalived, FamilyRuntime, FamilyWorkloads, FamilySecurity}
}

// Rule is one catalogue entry: data describing the problem plus a small function that finds it.
type Rule struct {
	// ID is stable forever ("KW1203"); Name is a short kebab-case handle.
	ID       string
	Name     string
	Family   Family
	Severity Severity
	// Summary is one line for --list; Why says in one or two sentences what breaks; Fix is the
	// concrete remedy; Reference points to upstream documentation, code or the seed documents.
	Summary   string
	Why       string
	Fix       string
	Reference string
	// Check reports findings through emit; it must not retain ctx. Nil for rules that the
	// engine itself raises (input errors found while parsing).
	Check func(ctx *Context, emit Emitter)
	// Scope says where the rule applies; the engine enforces it.
	Scope Scope `json:"-"`
}

// Scope declares the context a rule judges. The engine runs a rule only inside its release
// range, and when the rule needs a known OS, a finding on an input whose OS kubewin only
// assumed (no .exe, Windows path, npipe, PowerShell, service or sibling evidence) is reported
// as info saying so: an error or warning needs its context proven.
type Scope struct {
	// OS the rule's findings are about ("" any).
	OS OSKind
	// RequiresKnownOS: findings on inputs of assumed OS become info.
	RequiresKnownOS bool
	// Since and Until bound the target releases ("1.24"; Until exclusive; "" open).
	Since, Until string
}

// Describe renders the scope for --explain.
func (s Scope) Describe() string {
	var parts []string
	if s.OS != "" {
		parts = append(parts, "OS "+string(s.OS))
	}
	if s.RequiresKnownOS {
		parts = append(parts, "an error or warning only when the input's OS is proven")
	}
	switch {
	case s.Since != "" && s.Until != "":
		parts = append(parts, "releases "+s.Since+" to before "+s.Until)
	case s.Since != "":
		parts = append(parts, "releases from "+s.Since)
	case s.Until != "":
		parts = append(parts, "releases before "+s.Until)
	}
	if len(parts) == 0 {
		return "any input"
	}
	return strings.Join(parts, "; ")
}

// Emitter receives findings from a rule. Message says what was found with the exact offending
// value; Fix, when non-empty, replaces the rule's generic fix with a concrete one.
type Emitter func(f Finding)

// Location says where a finding was made.
type Location struct {
	// File is the input path ("<spec>", "<plan>", "--kubelet-flags" for synthetic inputs).
	File string `json:"file,omitempty"`
	// Line and Column are 1-based; 0 when unknown.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Flag is the command-line flag ("--resolv-conf"), Field a path in a document
	// ("plugins.cri.sandbox_image", "spec.template.spec.nodeSelector").
	Flag  string `json:"flag,omitempty"`
	Field string `json:"field,omitempty"`
	// Node is the cluster node the input belongs to, when known; Object names a Kubernetes
	// object ("Deployment default/iis").
	Node   string `json:"node,omitempty"`
	Object string `json:"object,omitempty"`
}

// String renders "file:line:col flag field".
func (l Location) String() string {
	var parts []string
	pos := l.File
	if l.Line > 0 {
		pos += fmt.Sprintf(":%d", l.Line)
		if l.Column > 0 {
			pos += fmt.Sprintf(":%d", l.Column)
		}
	}
	if pos != "" {
		parts = append(parts, pos)
	}
	if l.Object != "" {
		parts = append(parts, l.Object)
	}
	if l.Flag != "" {
		parts = append(parts, l.Flag)
	}
	if l.Field != "" {
		parts = append(parts, l.Field)
	}
	return strings.Join(parts, " ")
}

// Finding is one problem found by one rule.
type Finding struct {
	RuleID   string   `json:"rule"`
	Name     string   `json:"name"`
	Family   Family   `json:"family"`
	Severity Severity `json:"severity"`
	// Ignored is set when --ignore downgraded the finding to info.
	Ignored  bool     `json:"ignored,omitempty"`
	Location Location `json:"location"`
	Message  string   `json:"message"`
	Why      string   `json:"why"`
	Fix      string   `json:"fix"`
	// Reference is the rule's reference.
	Reference string `json:"reference,omitempty"`
}
