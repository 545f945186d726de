package check

import (
	"path"
	"regexp"
	"strings"

	"github.com/kubewin/kubewin/internal/platform"
)

// OSKind is the operating system an input is for.
type OSKind string

const (
	OSUnknown OSKind = ""
	OSWindows OSKind = "windows"
	OSLinux   OSKind = "linux"
)

// ServiceKind says how a command line is run.
type ServiceKind string

const (
	// ServiceNone: typed at a prompt or in a script.
	ServiceNone ServiceKind = ""
	// ServiceSC: registered with sc.exe create / New-Service; the binary itself must speak to
	// the Service Control Manager (--windows-service).
	ServiceSC ServiceKind = "sc"
	// ServiceNSSM: wrapped by nssm, which speaks to the SCM itself.
	ServiceNSSM ServiceKind = "nssm"
)

// Flag is one flag occurrence on a command line.
type Flag struct {
	// Name without dashes, normalised ("resolv-conf"); Written is the text as given
	// ("--resolv-conf", "-v", "–api_servers").
	Name    string
	Written string
	Value   string
	// HasValue is false for a boolean flag written without "=value".
	HasValue bool
	// Line and Column locate the flag in its file.
	Line, Column int
	// Vars are variable references in the value; Resolved tells whether they were all
	// substituted from assignments found in the same file.
	Vars     []string
	Resolved bool
	// Typographic is set when the flag was written with typographic dashes or quotes.
	Typographic bool
	// Unknown is set when the component does not know the flag in the newest release;
	// Short is set for single-dash shorthand groups.
	Short bool
}

// Display renders the flag as "--name=value".
func (f Flag) Display() string {
	if !f.HasValue {
		return "--" + f.Name
	}
	return "--" + f.Name + "=" + f.Value
}

// Arg is a positional (non-flag) argument.
type Arg struct {
	Text         string
	Line, Column int
}

// CommandLine is one kubelet or kube-proxy invocation found in the inputs.
type CommandLine struct {
	Component platform.Component
	File      string
	// Line is where the invocation starts; Origin says how it was found
	// ("nssm AppParameters", "sc create binPath", "command", "--kubelet-flags").
	Line    int
	Origin  string
	Program string
	OS      OSKind
	// OSEvidence says how OS is known ("an .exe program", "npipe endpoint", "a PowerShell
	// script"); empty with OSAssumed when nothing in the input or its siblings told.
	OSEvidence string
	OSAssumed  bool
	Service    ServiceKind
	Flags      []Flag
	Args       []Arg
	// Env holds environment variables set for the process in the same file (nssm
	// AppEnvironmentExtra, $env:, [Environment]::SetEnvironmentVariable, set, export).
	Env map[string]EnvVar
	// Problems are tokenizer errors (unterminated quotes).
	Problems []Problem
	// Node is --hostname-override when it is a literal.
	Node string
	// Partial is set when the line elides flags ("...", "<...>" as in documentation): settings
	// missing from it may be in the elided part.
	Partial bool
	// Transient is set for a run the script ends itself (Start-Process -PassThru … Stop-Process,
	// as aks-engine's and microsoft/SDN's kubelet run until the node registers or gets its pod
	// CIDR) when the file also has the component's service line: flags on it are still judged
	// (a flag that stops the binary stops this run too), but how the node runs is the service
	// line's business, so rules about settings the line lacks skip it.
	Transient bool
	// Unresolved names values that stand for whole arguments the script computes at run time
	// ($KubeletArgList read from a JSON file, $global:KubeletArgs from kubeadm-flags.env).
	Unresolved []string
	// EnvInherited: the script reads environment variables it does not set, so it runs with
	// an environment its launcher provides (a pod spec's env, a service's) that kubewin may not see.
	EnvInherited bool
}

// isElision reports whether a token stands for omitted text in documentation.
func isElision(s string) bool {
	switch strings.TrimSpace(s) {
	case "...", "<...>", "\u2026", "<\u2026>":
		return true
	}
	return false
}

// EnvVar is an environment variable assignment.
type EnvVar struct {
	Value string
	Line  int
}

// Last returns the last occurrence of flag name (the one that wins).
func (c *CommandLine) Last(name string) (Flag, bool) {
	for i := len(c.Flags) - 1; i >= 0; i-- {
		if c.Flags[i].Name == name {
			return c.Flags[i], true
		}
	}
	return Flag{}, false
}

// Has reports whether flag name is present.
func (c *CommandLine) Has(name string) bool {
	_, ok := c.Last(name)
	return ok
}

// Location of the whole command line, or of flag f when given.
func (c *CommandLine) Loc(f *Flag) Location {
	l := Location{File: c.File, Line: c.Line, Node: c.Node}
	if f != nil {
		l.Line, l.Column = f.Line, f.Column
		l.Flag = f.Written
		if f.Written == "" {
			l.Flag = "--" + f.Name
		}
	}
	return l
}

// programComponent recognises kubelet(.exe) and kube-proxy(.exe) (and the old proxy.exe).
func programComponent(prog string) (platform.Component, bool) {
	base := strings.ToLower(path.Base(strings.ReplaceAll(prog, `\`, "/")))
	base = strings.TrimSuffix(base, ".exe")
	switch base {
	case "kubelet":
		return platform.Kubelet, true
	case "kube-proxy", "proxy", "kubeproxy":
		return platform.KubeProxy, true
	}
	return "", false
}

// launcherSkip returns the byte offset in text where the launched program starts when text
// begins with a launcher that runs another program after its own flags — kube-log-runner
// (k8s.io/component-base/logs/kube-log-runner: -log-file=…, -log-file-size=…, then the
// program), as the GCE Windows nodes, OpenShift WMCO and kubewin's own bundle run the kubelet —
// and 0 otherwise.
func launcherSkip(text string) int {
	toks, _ := Tokenize(text, DialectCmd)
	if len(toks) < 2 {
		return 0
	}
	if !isLauncher(toks[0].Text) {
		// a service host that takes the program and its arguments as its own (WinSW-style
		// "<host>.exe C:\k\kubelet.exe --flags" in a binPath): the program's line
		if _, ok := programComponent(toks[0].Text); ok {
			return 0
		}
		for _, t := range toks[1:] {
			if _, ok := programComponent(t.Text); ok {
				return t.Offset
			}
		}
		return 0
	}
	for _, t := range toks[1:] {
		if t.Text == "--" {
			continue
		}
		if !strings.HasPrefix(t.Text, "-") {
			return t.Offset
		}
	}
	return 0
}

// isLauncher reports whether prog is kube-log-runner(.exe), which runs the program after its own flags.
func isLauncher(prog string) bool {
	base := strings.ToLower(path.Base(strings.ReplaceAll(prog, `\`, "/")))
	return strings.TrimSuffix(base, ".exe") == "kube-log-runner"
}

// serviceComponent maps a service name (nssm/sc) to a component.
func serviceComponent(svc string) (platform.Component, bool) {
	switch strings.ToLower(strings.Trim(svc, `"'`)) {
	case "kubelet":
		return platform.Kubelet, true
	case "kube-proxy", "kubeproxy", "kube_proxy":
		return platform.KubeProxy, true
	}
	return "", false
}

// lineIndex converts byte offsets of a text into line/column.
type lineIndex struct {
	starts []int
	// n is the text's length: a position is clamped into the text, so a line number always
	// points at a line of the input (never the empty "line" after a final newline, nor past
	// the end when a position was computed from assembled text).
	n int
}

func newLineIndex(s string) *lineIndex {
	li := &lineIndex{starts: []int{0}, n: len(s)}
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			li.starts = append(li.starts, i+1)
		}
	}
	return li
}

func (li *lineIndex) lineOf(off int) int {
	l, _ := li.pos(off)
	return l
}

func (li *lineIndex) pos(off int) (int, int) {
	if off >= li.n {
		off = li.n - 1
	}
	off = max(off, 0)
	lo, hi := 0, len(li.starts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if li.starts[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo + 1, off - li.starts[lo] + 1
}

// parseFlags turns tokens into flags and positional arguments using pflag's rules: "--name=v",
// "--name v" for non-boolean flags, "--bool", "-v=2" shorthands; "--" ends flags.
func parseFlags(toks []Token, cat *FlagCatalog, vars map[string]string, li *lineIndex, base int) ([]Flag, []Arg) {
	var flags []Flag
	var args []Arg
	for i := 0; i < len(toks); i++ {
		tk := toks[i]
		line, col := li.pos(base + tk.Offset)
		text := tk.Text
		if text == "--" {
			for _, rest := range toks[i+1:] {
				l, c := li.pos(base + rest.Offset)
				args = append(args, Arg{Text: rest.Text, Line: l, Column: c})
			}
			break
		}
		switch {
		case strings.HasPrefix(text, "--") && len(text) > 2:
			body := text[2:]
			name, value, hasValue := strings.Cut(body, "=")
			f := Flag{Name: normalizeFlagName(name), Written: "--" + name, Line: line, Column: col,
				Typographic: tk.Typographic}
			if hasValue {
				f.Value, f.HasValue = value, true
				f.Vars = tk.Vars
			} else if spec, ok := cat.Lookup(name); ok && spec.Kind != platform.KindBool {
				if i+1 < len(toks) {
					i++
					f.Value, f.HasValue = toks[i].Text, true
					f.Vars = toks[i].Vars
					f.Typographic = f.Typographic || toks[i].Typographic
				}
			} else if !ok {
				if ch, known := historicFlag(cat.Component, f.Name); known && ch.Kind != platform.KindBool && i+1 < len(toks) &&
					!strings.HasPrefix(toks[i+1].Text, "-") {
					i++
					f.Value, f.HasValue = toks[i].Text, true
					f.Vars = toks[i].Vars
				}
			}
			f.Value, f.Resolved = substitute(f.Value, f.Vars, vars)
			flags = append(flags, f)
		case strings.HasPrefix(text, "-") && len(text) > 1 && text != "-":
			body := text[1:]
			name, value, hasValue := strings.Cut(body, "=")
			f := Flag{Name: name, Written: "-" + name, Line: line, Column: col, Short: true, Typographic: tk.Typographic}
			if spec, ok := cat.LookupShort(name); ok {
				f.Name = spec.Name
				if hasValue {
					f.Value, f.HasValue = value, true
				} else if spec.Kind != platform.KindBool && i+1 < len(toks) {
					i++
					f.Value, f.HasValue = toks[i].Text, true
				}
				f.Short = false
			} else if hasValue {
				f.Value, f.HasValue = value, true
			}
			f.Vars = tk.Vars
			f.Value, f.Resolved = substitute(f.Value, f.Vars, vars)
			flags = append(flags, f)
		default:
			args = append(args, Arg{Text: text, Line: line, Column: col})
		}
	}
	return flags, args
}

func historicFlag(c platform.Component, name string) (platform.FlagChange, bool) {
	return platform.LookupFlagChange(c, name)
}

// substitute replaces variable references in v with values assigned in the same file. It
// reports whether every reference was resolved.
func substitute(v string, refs []string, vars map[string]string) (string, bool) {
	if len(refs) == 0 {
		return v, true
	}
	ok := true
	for _, r := range refs {
		val, found := lookupVar(vars, r)
		if !found {
			ok = false
			continue
		}
		for _, form := range []string{"${" + r + "}", "$" + r, "%" + r + "%"} {
			v = strings.ReplaceAll(v, form, val)
		}
	}
	return v, ok
}

func lookupVar(vars map[string]string, ref string) (string, bool) {
	if vars == nil {
		return "", false
	}
	key := strings.ToLower(ref)
	if v, ok := vars[key]; ok {
		return v, true
	}
	// PowerShell scopes: $global:X, $script:X and $X name the same variable here.
	if i := strings.IndexByte(key, ':'); i >= 0 && !strings.HasPrefix(key, "env:") {
		if v, ok := vars[key[i+1:]]; ok {
			return v, true
		}
	}
	return "", false
}

var (
	// PowerShell: $global:Name = "value" / $Name='value' / $env:NAME = "value".
	rePSAssign = regexp.MustCompile(`^\s*\$((?:global:|script:|env:)?[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.+?)\s*;?\s*$`)
	// [Environment]::SetEnvironmentVariable("NAME", "value", ...)
	rePSSetEnv = regexp.MustCompile(`(?i)\[Environment\]::SetEnvironmentVariable\(\s*["']([^"']+)["']\s*,\s*["']([^"']*)["']`)
	// sh: export NAME=value / NAME=value; cmd: set NAME=value.
	reShAssign  = regexp.MustCompile(`^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(\S*)\s*$`)
	reCmdAssign = regexp.MustCompile(`(?i)^\s*set\s+"?([A-Za-z_][A-Za-z0-9_]*)=([^"]*)"?\s*$`)
	// nssm [set] <svc> <Param> <value...>
	reNSSM = regexp.MustCompile(`(?i)^\s*(?:&\s*)?(?:\S*[\\/])?nssm(?:\.exe)?\s+(set|install)\s+("[^"]+"|\S+)\s*(.*)$`)
	// sc[.exe] create|config <svc> binPath= "<cmd>" ...
	reSC = regexp.MustCompile(`(?i)^\s*(?:&\s*)?sc(?:\.exe)?\s+(create|config)\s+("[^"]+"|\S+)\s+(.*)$`)
	// New-Service -Name kubelet -BinaryPathName "<cmd>"
)

// unquoteValue strips one level of PowerShell/sh quoting from an assignment's right side.
func unquoteValue(v string, d Dialect) string {
	toks, _ := Tokenize(v, d)
	if len(toks) == 0 {
		return ""
	}
	if len(toks) == 1 {
		return toks[0].Text
	}
	return strings.TrimSpace(v)
}
