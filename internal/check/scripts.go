package check

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kubewin/kubewin/internal/check/psscript"
	"github.com/kubewin/kubewin/internal/check/templates"
	"github.com/kubewin/kubewin/internal/platform"
)

// logicalLine is one command after joining continuation lines.
type logicalLine struct {
	text string
	// offsets, when set, maps each byte of text to its offset in the line as written (text
	// is then cmd's %VAR% expansion of it).
	offsets []int
	// offset of text in the file; line is its first line.
	offset int
	line   int
}

// joinContinuations splits text into logical lines; a trailing \ (sh), ` (PowerShell) or ^
// (cmd) continues a line. The joined text keeps the continuation characters so that token
// offsets still map to the file; the tokenizer treats them as whitespace.
//
// In a template, a line holding only template statements ({% if %}, {% endif %}) is dropped
// by the renderer (trim_blocks): a command continued before it continues after it.
func joinContinuations(text string, d Dialect) []logicalLine {
	var stmtLines map[int]bool
	if templates.HasSyntax(text) {
		stmtLines = templates.Describe(text).StmtLines
	}
	var out []logicalLine
	cont := byte('\\')
	switch d {
	case DialectPowerShell:
		cont = '`'
	case DialectCmd:
		cont = '^'
	}
	start, line, startLine := 0, 1, 1
	for i := 0; i <= len(text); i++ {
		if i < len(text) && text[i] != '\n' {
			continue
		}
		// text[start:i] is a physical-line run ending at a newline (or EOF).
		end := i
		trimmed := strings.TrimRight(text[start:end], " \t\r")
		if i < len(text) && strings.HasSuffix(trimmed, string(cont)) {
			line++
			continue
		}
		if i < len(text) && stmtLines[line] && line > startLine {
			// a statement line inside a continued command
			line++
			continue
		}
		if stmtLines[line] && line == startLine {
			// a line of statements only (an ERB <%- … -%> block runs over several): the
			// renderer drops it, there is no command on it
			line++
			start, startLine = i+1, line
			continue
		}
		out = append(out, logicalLine{text: text[start:end], offset: start, line: startLine})
		line++
		start, startLine = i+1, line
	}
	return out
}

// expandCmdVars expands %VAR% references to variables set in the same file, as cmd.exe does
// before it splits a line; %% is a literal %. It returns the expanded text and, for each of its
// bytes, the offset in text it came from (an expansion maps to its % sign).
func expandCmdVars(text string, vars map[string]string) (string, []int, bool) {
	if !strings.Contains(text, "%") {
		return text, nil, false
	}
	var b strings.Builder
	var offs []int
	changed := false
	for i := 0; i < len(text); i++ {
		if text[i] == '%' {
			if j := strings.IndexByte(text[i+1:], '%'); j > 0 {
				name := text[i+1 : i+1+j]
				if v, ok := vars[strings.ToLower(name)]; ok && isCmdVarName(name) {
					b.WriteString(v)
					for range len(v) {
						offs = append(offs, i)
					}
					i += j + 1
					changed = true
					continue
				}
			}
		}
		b.WriteByte(text[i])
		offs = append(offs, i)
	}
	return b.String(), offs, changed
}

// dialectForFile picks the dialect of a script from its name, then its text.
func dialectForFile(file, text string) Dialect {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".ps1", ".psm1":
		return DialectPowerShell
	case ".cmd", ".bat":
		return DialectCmd
	case ".sh", ".env", ".service", ".conf":
		if !hasWindowsPath(text) {
			return DialectSh
		}
	}
	return GuessDialect(text)
}

var reKubeletArgsEnv = regexp.MustCompile(`^(KUBELET_KUBEADM_ARGS|KUBELET_EXTRA_ARGS|KUBELET_ARGS)=(.*)$`)

var reFirewallOff = regexp.MustCompile(`(?i)(netsh\s+advfirewall\s+set\s+\S+\s+state\s+off|Set-NetFirewallProfile\b.*-Enabled\s+(\$false|False|0)\b|systemctl\s+(stop|disable|mask)\s+firewalld|ufw\s+disable)`)

// scanScript finds kubelet and kube-proxy invocations, service registrations, variable and
// environment assignments, and firewall changes in a script or command file. forced is the
// component when the caller knows it (a file given as a flag file).
func scanScript(ctx *Context, file, text string, forced platform.Component) (*Script, []*CommandLine) {
	d := dialectForFile(file, text)
	// A PowerShell script is evaluated (psscript); text that only looks like PowerShell (a
	// README's snippet, a flag line pasted from a blog) is read line by line.
	evaluate := d == DialectPowerShell && isPowerShellFile(file)
	li := newLineIndex(text)
	sc := &Script{File: file, Lines: strings.Split(text, "\n")}
	vars := map[string]string{}
	env := map[string]EnvVar{}
	svcEnv := map[platform.Component]map[string]EnvVar{}
	var cls []*CommandLine

	for _, ll := range joinContinuations(text, d) {
		t := strings.TrimSpace(ll.text)
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(strings.ToLower(t), "rem ") || strings.HasPrefix(t, "::") {
			continue
		}
		if d == DialectSh {
			if names, ok := unitEnvironment(t); ok {
				for _, n := range names {
					sc.UnitEnv = append(sc.UnitEnv, UnitSetting{Name: n, Line: ll.line})
				}
			}
			if p, ok := strings.CutPrefix(t, "EnvironmentFile="); ok {
				sc.UnitEnvFiles = append(sc.UnitEnvFiles, UnitSetting{Name: strings.TrimPrefix(strings.Trim(strings.TrimSpace(p), `"`), "-"), Line: ll.line})
			}
		}
		if reFirewallOff.MatchString(t) {
			sc.FirewallOff = append(sc.FirewallOff, ll.line)
		}
		if m := rePSSetEnv.FindStringSubmatch(t); m != nil {
			env[strings.ToUpper(m[1])] = EnvVar{Value: m[2], Line: ll.line}
			vars["env:"+strings.ToLower(m[1])] = m[2]
			continue
		}
		if m := rePSAssign.FindStringSubmatch(t); m != nil {
			name := strings.ToLower(m[1])
			val := unquoteValue(m[2], DialectPowerShell)
			val, _ = substitute(val, varRefs(val), vars)
			vars[name] = val
			if strings.HasPrefix(name, "env:") {
				env[strings.ToUpper(name[4:])] = EnvVar{Value: val, Line: ll.line}
			}
			continue
		}
		if m := reCmdAssign.FindStringSubmatch(t); m != nil && d == DialectCmd {
			vars[strings.ToLower(m[1])] = m[2]
			env[strings.ToUpper(m[1])] = EnvVar{Value: m[2], Line: ll.line}
			continue
		}
		if m := reKubeletArgsEnv.FindStringSubmatch(t); m != nil && !evaluate {
			// kubeadm-flags.env / /etc/default/kubelet: KUBELET_KUBEADM_ARGS="--flags …", which the
			// kubelet's systemd drop-in (or PrepareNode.ps1's StartKubelet.ps1) appends to its line
			val := m[2]
			valOff := ll.offset + strings.Index(ll.text, val)
			if len(val) >= 2 && (val[0] == '"' || val[0] == '\'') && val[len(val)-1] == val[0] {
				val, valOff = val[1:len(val)-1], valOff+1
			}
			if strings.TrimSpace(val) != "" {
				cl := buildCommandLine(ctx, file, val, valOff, ll.line, li, platform.Kubelet, m[1], false, DialectSh, vars)
				// the rest of the kubelet's line (--config, --kubeconfig) is in the unit or script
				// that reads this file
				cl.Partial = true
				cls = append(cls, cl)
			}
			continue
		}
		if m := reShAssign.FindStringSubmatch(t); m != nil && d == DialectSh {
			v := unquoteValue(m[2], DialectSh)
			vars[strings.ToLower(m[1])] = v
			env[strings.ToUpper(m[1])] = EnvVar{Value: v, Line: ll.line}
			continue
		}
		if evaluate {
			// command lines come from the evaluator (psCommandLines) below
			continue
		}
		if m := reNSSM.FindStringSubmatch(t); m != nil {
			comp, ok := serviceComponent(m[2])
			if !ok {
				continue
			}
			rest := m[3]
			restOff := ll.offset + strings.Index(ll.text, rest)
			if strings.EqualFold(m[1], "set") {
				param, value, _ := strings.Cut(strings.TrimSpace(rest), " ")
				valueOff := restOff + strings.Index(rest, value)
				switch strings.ToLower(param) {
				case "appparameters":
					cl := buildCommandLine(ctx, file, value, valueOff, ll.line, li, comp, "nssm AppParameters", false, DialectCmd, vars)
					cl.Service = ServiceNSSM
					cl.OS, cl.OSEvidence = OSWindows, "an nssm service"
					cls = append(cls, cl)
				case "appenvironmentextra", "appenvironment":
					toks, _ := Tokenize(value, DialectCmd)
					for _, tk := range toks {
						if k, v, ok := strings.Cut(tk.Text, "="); ok {
							if svcEnv[comp] == nil {
								svcEnv[comp] = map[string]EnvVar{}
							}
							svcEnv[comp][strings.ToUpper(strings.TrimPrefix(k, "+"))] = EnvVar{Value: v, Line: ll.line}
						}
					}
				}
			}
			continue
		}
		if m := reSC.FindStringSubmatch(t); m != nil {
			comp, ok := serviceComponent(m[2])
			toks, _ := Tokenize(m[3], DialectCmd)
			for i := 0; i+1 < len(toks); i++ {
				if strings.EqualFold(toks[i].Text, "binPath=") {
					bp := toks[i+1]
					skip := launcherSkip(bp.Text)
					bpOff := ll.offset + strings.Index(ll.text, m[3]) + bp.Offset + skip
					if bp.Quoted {
						bpOff++
					}
					if pc, pok := programComponentOfLine(bp.Text[skip:]); pok {
						comp, ok = pc, true
					}
					if ok {
						cl := buildCommandLine(ctx, file, bp.Text[skip:], bpOff, ll.line, li, comp, "sc "+strings.ToLower(m[1])+" binPath", true, DialectCmd, vars)
						cl.Service = ServiceSC
						cl.OS, cl.OSEvidence = OSWindows, "an sc.exe service"
						cls = append(cls, cl)
					}
				}
			}
			continue
		}
		// New-Service -BinaryPathName "<cmd>", or a wrapper function's -BinaryPath '<cmd>'
		// (kubewin's own install.ps1): the command line the Service Control Manager runs.
		if found := serviceBinaryPaths(ctx, file, ll, li, d, vars); len(found) > 0 {
			cls = append(cls, found...)
			continue
		}
		// cmd.exe expands %VAR% before it splits the line: a variable set earlier in the file
		// may hold several flags (set ARGS=--v=2 --node-ip=…; kubelet.exe %ARGS%).
		if d == DialectCmd {
			if exp, offs, ok := expandCmdVars(ll.text, vars); ok {
				ll.text, ll.offsets = exp, offs
			}
		}
		if d == DialectSh && isUnitNonExecDirective(t) {
			// WorkingDirectory=/var/lib/kubelet, Description=…: a systemd directive that
			// names a path ending in the program's name runs nothing (systemd.exec(5): only
			// Exec*= lines are command lines)
			continue
		}
		// A plain invocation: the first word (after & or start) is the program.
		toks, _ := Tokenize(ll.text, d)
		for len(toks) > 0 && (toks[0].Text == "&" || strings.EqualFold(toks[0].Text, "exec") || strings.EqualFold(toks[0].Text, "start") || toks[0].Text == ".") {
			toks = toks[1:]
		}
		if len(toks) == 0 {
			continue
		}
		comp, ok := programComponent(toks[0].Text)
		if !ok && strings.HasPrefix(toks[0].Text, "-") && forced != "" {
			comp, ok = forced, true
			cl := buildMapped(ctx, file, ll.text, ll.offsets, ll.offset, ll.line, li, comp, "flags", false, d, vars)
			cls = append(cls, cl)
			continue
		}
		if !ok || (forced != "" && comp != forced && len(toks) < 2) {
			continue
		}
		// the command line starts at the program: "exec", "&", "start" before it are the
		// shell's, not the program's arguments
		text, offs, base := ll.text[toks[0].Offset:], ll.offsets, ll.offset+toks[0].Offset
		if offs != nil {
			offs, base = offs[toks[0].Offset:], ll.offset
		}
		cl := buildMapped(ctx, file, text, offs, base, ll.line, li, comp, "command", true, d, vars)
		if asksOnly(cl) {
			continue // kubelet --version: the script asks the binary about itself, it does not run it
		}
		cls = append(cls, cl)
	}
	for _, cl := range cls {
		if cl.Env == nil {
			cl.Env = map[string]EnvVar{}
		}
		for k, v := range env {
			cl.Env[k] = v
		}
		if cl.Service == ServiceNSSM {
			// nssm's AppEnvironmentExtra applies to the service nssm runs, not to other
			// invocations of the same binary in the script.
			for k, v := range svcEnv[cl.Component] {
				cl.Env[k] = v
			}
		}
		if cl.OS == OSUnknown {
			switch d {
			case DialectPowerShell, DialectCmd:
				cl.OS, cl.OSEvidence = OSWindows, "written in "+d.String()
			}
		}
	}
	if evaluate {
		// the evaluator knows the environment at each invocation, nssm's own included
		pcls, writes := psCommandLines(ctx, file, text, li, forced)
		cls = append(cls, pcls...)
		sc.Writes = writes
	}
	have := map[platform.Component]bool{}
	for _, cl := range cls {
		have[cl.Component] = true
	}
	for _, u := range unreadLines(text, d, have) {
		ctx.AddProblem("KW0015", Location{File: file, Line: u.line},
			fmt.Sprintf("line %d starts or registers %s, but kubewin could not read its command line (%s): its settings are not checked", u.line, u.comp, u.what), "")
	}
	return sc, cls
}

// asksOnly reports whether a command line only asks the binary about itself (--version,
// --help, -h; component-base's version flag takes =raw/=true): no component runs from it.
func asksOnly(cl *CommandLine) bool {
	if len(cl.Flags) == 0 || len(cl.Args) > 0 || len(cl.Unresolved) > 0 {
		return false
	}
	for _, f := range cl.Flags {
		switch f.Name {
		case "version", "help", "h":
		default:
			return false
		}
	}
	return true
}

// unitEnvironment returns the variable names a systemd Environment= line assigns
// (Environment="A=x y" B=z; systemd.exec(5), "Environment=": space-separated assignments,
// each optionally quoted).
func unitEnvironment(line string) ([]string, bool) {
	rest, ok := strings.CutPrefix(line, "Environment=")
	if !ok {
		return nil, false
	}
	toks, _ := Tokenize(rest, DialectSh)
	var names []string
	for _, tk := range toks {
		if name, _, ok := strings.Cut(tk.Text, "="); ok && name != "" {
			names = append(names, name)
		}
	}
	return names, true
}

// reAsksOnly matches what follows a program that is only asked about itself.
var reAsksOnly = regexp.MustCompile(`(?i)^(\.exe)?["')]?\s*(--version(=\S*)?|--help|-h)\s*(["')|;&>]|$)`)

type unreadLine struct {
	line int
	comp platform.Component
	what string
}

var (
	reRunsComponent = regexp.MustCompile(`(?i)(?:^|[\s"'\\/=&(])(kubelet|kube-proxy)(?:\.exe)?(?:["'\s)]|$)`)
	reRegistration  = regexp.MustCompile(`(?i)\bNew-Service\b|\bsc(?:\.exe)?\s+(?:create|config)\b|\bnssm(?:\.exe)?\b|\bbinpath\s*=|\bStart-Process\b|\bInvoke-Expression\b|\biex\b|ExecStart=`)
	reMessage       = regexp.MustCompile(`(?i)^\s*(?:Write-(?:Host|Output|Verbose|Error|Warning|Log|Information)|echo|throw|Log\w*|printf)\b`)
)

// unreadLines finds lines that run or register the kubelet or kube-proxy — the binary's name
// followed by flags, or inside a service registration — for a component of which the script
// gave no command line: each is reported so that a script is never silently half-read.
func unreadLines(text string, _ Dialect, have map[platform.Component]bool) []unreadLine {
	var out []unreadLine
	seen := map[platform.Component]bool{}
	for i, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		lt := strings.ToLower(t)
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(lt, "rem ") || strings.HasPrefix(t, "::") || strings.HasPrefix(t, "//") ||
			reMessage.MatchString(t) || strings.Contains(lt, "http://") || strings.Contains(lt, "https://") {
			continue
		}
		m := reRunsComponent.FindStringSubmatchIndex(t)
		if m == nil {
			continue
		}
		comp, _ := programComponent(t[m[2]:m[3]])
		if have[comp] || seen[comp] {
			continue
		}
		rest := t[m[3]:]
		what := ""
		switch {
		case reAsksOnly.MatchString(rest):
			continue // kubelet --version / --help: nothing runs
		case reRegistration.MatchString(t):
			what = "a service registration or launch in a shape kubewin does not follow"
		case strings.Contains(rest, "--"):
			what = "flags on a line kubewin does not read as a command"
		default:
			continue
		}
		seen[comp] = true
		out = append(out, unreadLine{line: i + 1, comp: comp, what: what})
	}
	return out
}

// serviceBinaryPaths finds "-BinaryPathName <cmd>" / "-BinaryPath <cmd>" arguments on a
// PowerShell line and returns the kubelet / kube-proxy command lines they register.
func serviceBinaryPaths(ctx *Context, file string, ll logicalLine, li *lineIndex, d Dialect, vars map[string]string) []*CommandLine {
	if !strings.Contains(strings.ToLower(ll.text), "-binarypath") {
		return nil
	}
	toks, _ := Tokenize(ll.text, DialectPowerShell)
	var out []*CommandLine
	for i := 0; i+1 < len(toks); i++ {
		name := strings.ToLower(toks[i].Text)
		if name != "-binarypathname" && name != "-binarypath" {
			continue
		}
		bp := toks[i+1]
		skip := launcherSkip(bp.Text)
		comp, ok := programComponentOfLine(bp.Text[skip:])
		if !ok {
			continue
		}
		off := ll.offset + bp.Offset + skip
		if bp.Quoted {
			off++
		}
		cl := buildCommandLine(ctx, file, bp.Text[skip:], off, li.lineOf(off), li, comp, toks[i].Text, true, DialectCmd, vars)
		cl.Service = ServiceSC
		cl.OS, cl.OSEvidence = OSWindows, "a Windows service (New-Service)"
		out = append(out, cl)
	}
	slices.SortStableFunc(out, func(a, b *CommandLine) int { return a.Line - b.Line })
	return out
}

// flagFileLines reports whether text is a flag file: only comments and lines starting with
// "-" (one or more flags per line), as kubewin renders kubelet/flags.
func isFlagFile(text string) bool {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if !strings.HasPrefix(l, "-") {
			return false
		}
		n++
	}
	return n > 0
}

// scanFlagFile reads a flag file as one command line; comments are blanked so that offsets
// still point into the file.
func scanFlagFile(ctx *Context, file, text string, comp platform.Component) *CommandLine {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			lines[i] = strings.Repeat(" ", len(l))
		}
	}
	body := strings.Join(lines, "\n")
	li := newLineIndex(text)
	d := dialectForFile(file, text)
	cl := buildCommandLine(ctx, file, body, 0, 1, li, comp, "flag file", false, d, nil)
	if len(cl.Flags) > 0 {
		cl.Line = cl.Flags[0].Line
	}
	return cl
}

func varRefs(s string) []string {
	toks, _ := Tokenize(s, DialectPowerShell)
	var out []string
	for _, t := range toks {
		out = append(out, t.Vars...)
	}
	return out
}

// programComponentOfLine recognises the program of a command line text.
func programComponentOfLine(text string) (platform.Component, bool) {
	toks, _ := Tokenize(text, DialectCmd)
	if len(toks) == 0 {
		return "", false
	}
	return programComponent(toks[0].Text)
}

// buildCommandLine tokenizes text (found at byte offset base of the file) into a command line.
// withProgram tells whether the first token is the program.
func buildCommandLine(ctx *Context, file, text string, base, line int, li *lineIndex, comp platform.Component,
	origin string, withProgram bool, d Dialect, vars map[string]string) *CommandLine {
	return buildMapped(ctx, file, text, nil, base, line, li, comp, origin, withProgram, d, vars)
}

// buildMapped is buildCommandLine for a text whose bytes map to offsets of the line as written
// (offsets[i]; nil: identity), as after cmd's %VAR% expansion.
func buildMapped(ctx *Context, file, text string, offsets []int, base, line int, li *lineIndex, comp platform.Component,
	origin string, withProgram bool, d Dialect, vars map[string]string) *CommandLine {
	toks, errs := Tokenize(text, d)
	if len(offsets) > 0 {
		at := func(o int) int { return offsets[min(max(o, 0), len(offsets)-1)] }
		for i := range toks {
			toks[i].Offset, toks[i].End = at(toks[i].Offset), at(toks[i].End-1)+1
		}
		for i := range errs {
			errs[i].Offset = at(errs[i].Offset)
		}
	}
	cl := &CommandLine{Component: comp, File: file, Line: line, Origin: origin, Env: map[string]EnvVar{}}
	for _, e := range errs {
		l, c := li.pos(base + e.Offset)
		cl.Problems = append(cl.Problems, Problem{RuleID: "KW0001", Location: Location{File: file, Line: l, Column: c},
			Message: e.Message, Fix: "close the quote"})
	}
	if withProgram && len(toks) > 0 && !strings.HasPrefix(toks[0].Text, "-") {
		cl.Program = toks[0].Text
		toks = toks[1:]
	}
	if isElision(cl.Program) {
		cl.Partial = true
	}
	kept := toks[:0]
	for _, tk := range toks {
		if isElision(tk.Text) {
			cl.Partial = true
			continue
		}
		kept = append(kept, tk)
	}
	toks = kept
	cl.Flags, cl.Args = parseFlags(toks, ctx.Catalogs.For(comp), vars, li, base)
	// A word that is only a variable the file does not set ($KUBELET_KUBEADM_ARGS in a systemd
	// unit, %ARGS% in a batch file) stands for any number of arguments read at run time.
	args := cl.Args[:0]
	for _, a := range cl.Args {
		if isWholeVariable(a.Text) {
			if _, set := vars[strings.ToLower(strings.Trim(a.Text, "${}%()"))]; !set {
				cl.Partial = true
				cl.Unresolved = append(cl.Unresolved, a.Text)
				continue
			}
		}
		args = append(args, a)
	}
	cl.Args = args
	settle(cl, file, text)
	return cl
}

var reWholeVariable = regexp.MustCompile(`^(\$\{?[A-Za-z_][A-Za-z0-9_:]*\}?|%[A-Za-z_][A-Za-z0-9_]*%|\$\([^)]*\)|\{\{[^\n]*\}\})$`)

// isWholeVariable reports whether a word is nothing but a variable reference (or a template
// placeholder: {{ kubelet_extra_args }} may render to any number of arguments).
func isWholeVariable(s string) bool { return reWholeVariable.MatchString(s) || wholeTemplateExpr(s) }

// wholeTemplateExpr reports whether s is one template expression and nothing else (ERB's
// <%= "--#{flag}=#{value}" %> inside a loop, {{ extra_args }}): text of unknown shape.
func wholeTemplateExpr(s string) bool {
	sp := templates.Scan(s)
	return len(sp) == 1 && sp[0].Start == 0 && sp[0].End == len(s) && sp[0].Kind == templates.Expr
}

// settle derives what a parsed command line says about itself: its OS and, from a literal
// --hostname-override, its node.
func settle(cl *CommandLine, file, text string) {
	cl.OS, cl.OSEvidence = guessOS(cl, file, text)
	if f, ok := cl.Last("hostname-override"); ok && f.Resolved && !isPlaceholder(f.Value) {
		cl.Node = f.Value
	}
}

// guessOS decides whether a command line is for Windows or Linux from its own text.
func guessOS(cl *CommandLine, file, text string) (OSKind, string) {
	p := strings.ToLower(cl.Program)
	switch {
	case strings.HasSuffix(p, ".exe") || hasWindowsPath(p):
		return OSWindows, "the program " + cl.Program
	case strings.HasPrefix(p, "/"):
		return OSLinux, "the program " + cl.Program
	}
	for _, f := range cl.Flags {
		v := strings.ToLower(f.Value)
		switch {
		case f.Name == "windows-service" || strings.HasPrefix(v, "npipe:") || hasWindowsPath(f.Value):
			return OSWindows, f.Written + "=" + f.Value
		case strings.HasPrefix(v, "unix://") || strings.HasPrefix(v, "/etc/") || strings.HasPrefix(v, "/var/") ||
			strings.HasPrefix(v, "/run/") || strings.HasPrefix(v, "/opt/") || strings.HasPrefix(v, "/usr/"):
			return OSLinux, f.Written + "=" + f.Value
		}
	}
	switch strings.ToLower(filepath.Ext(file)) {
	case ".ps1", ".psm1", ".cmd", ".bat":
		return OSWindows, "a " + strings.ToLower(filepath.Ext(file)) + " script"
	case ".sh", ".service":
		return OSLinux, "a " + strings.ToLower(filepath.Ext(file)) + " file"
	}
	switch {
	case strings.Contains(text, "/etc/systemd/") || strings.Contains(text, "systemctl ") || strings.Contains(text, "/var/lib/kubelet/"):
		return OSLinux, "Linux paths in " + filepath.Base(file)
	}
	return OSUnknown, ""
}

// isPlaceholder reports whether v holds a documentation placeholder such as <hostname> (or a
// piece of one that a space split off).
func isPlaceholder(v string) bool { return HasPlaceholder(v) }

// HasPlaceholder reports whether v holds a documentation placeholder: <hostname>, or a piece
// of one a space split off ("<DNS", "IP>"). A < or > between word characters is an operator
// (the kubelet's --eviction-hard=memory.available<5%), not a placeholder.
func HasPlaceholder(v string) bool {
	if strings.Contains(v, "<%") {
		// ERB tags (<%= p('x') %>) are render-time values, not <placeholder>s to fill by hand
		var b strings.Builder
		pos := 0
		for _, sp := range templates.Scan(v) {
			if sp.IsERB(v) {
				b.WriteString(v[pos:sp.Start])
				b.WriteString("x")
				pos = sp.End
			}
		}
		b.WriteString(v[pos:])
		v = b.String()
	}
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '<':
			if i == 0 || !isWordByte(v[i-1]) && v[i-1] != '.' || strings.IndexByte(v[i:], '>') > 0 {
				return true
			}
		case '>':
			if i == len(v)-1 || !isWordByte(v[i+1]) && v[i+1] != '.' {
				return true
			}
		}
	}
	return false
}

func isPowerShellFile(file string) bool {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".ps1", ".psm1":
		return true
	}
	return false
}

// psCommandLines evaluates a PowerShell script (psscript) and turns the kubelet and kube-proxy
// invocations it finds — direct, through & or Invoke-Expression, Start-Process -ArgumentList,
// New-Service -BinaryPathName, sc.exe binPath=, nssm, and scripts the file writes — into
// command lines. Arguments the script computes at run time are kept as unresolved values.
func psCommandLines(ctx *Context, file, text string, li *lineIndex, forced platform.Component) ([]*CommandLine, []ScriptWrite) {
	var out []*CommandLine
	opt := psscript.Options{}
	if ctx.Version.Major == 1 {
		opt.KubernetesMinor = ctx.Version.Minor
	}
	res := psscript.EvaluateWith(text, opt)
	// a run the script stops itself (Start-Process -PassThru … Stop-Process) is transient
	// when the file also runs the component otherwise: the service's line says how it runs
	running := map[platform.Component]bool{}
	for _, inv := range res.Invocations {
		c, ok := programComponent(inv.Program)
		if !ok && inv.Program == "" && inv.Service != "" {
			c, ok = serviceComponent(inv.Service)
		}
		if ok && !inv.Transient {
			running[c] = true
		}
	}
	for _, inv := range res.Invocations {
		prog, args := inv.Program, inv.Args
		wrapped := ""
		if p, a, w, ok := unwrapHost(prog, args, inv.Service != ""); ok {
			prog, args, wrapped = p, a, w
		}
		if isLauncher(prog) {
			// kube-log-runner -log-file=… <program> <args>: the launched program's line
			for len(args) > 0 && strings.HasPrefix(args[0].Text, "-") {
				args = args[1:]
			}
			if len(args) == 0 {
				continue
			}
			prog, args = args[0].Text, args[1:]
		}
		comp, ok := programComponent(prog)
		if !ok && prog == "" && inv.Service != "" {
			comp, ok = serviceComponent(inv.Service)
		}
		if !ok || (forced != "" && comp != forced) {
			continue
		}
		if len(args) == 1 && (args[0].Text == "--version" || args[0].Text == "--help" || args[0].Text == "-h" || strings.HasPrefix(args[0].Text, "--version=")) {
			continue // the script asks the binary for its version, it does not run it
		}
		origin := inv.Origin
		if wrapped != "" {
			origin += " via " + wrapped
		}
		if inv.Embedded {
			origin += " (in a script the file writes)"
		}
		cl := &CommandLine{Component: comp, File: file, Line: li.lineOf(inv.Off), Origin: origin, Program: prog, Env: map[string]EnvVar{},
			EnvInherited: len(res.EnvRead) > 0 && inv.Service == "", Transient: inv.Transient && running[comp]}
		var toks []Token
		for _, a := range args {
			if a.Whole || (len(a.Unresolved) > 0 && (!strings.HasPrefix(a.Text, "-") || flagNameComputed(a.Text))) {
				// a value read at run time may be any number of arguments; so may a flag
				// whose name is computed ("--$($v.Name)=$($v.Value)" in a loop over a
				// hashtable the evaluator could not enumerate): the command line is read at
				// run time, its settings are not known to be missing
				cl.Partial = true
				cl.Unresolved = append(cl.Unresolved, a.Text)
				continue
			}
			if isElision(a.Text) {
				cl.Partial = true
				continue
			}
			tk := Token{Text: a.Text, Offset: a.Off, End: a.Off + len(a.Text)}
			// A blog's typographic dash or quote (PowerShell itself reads “ ” as quotes, so
			// the evaluator has already unquoted them): read as ASCII, flagged for KW0007.
			if r, size := utf8.DecodeRuneInString(tk.Text); isTypoDash(r) {
				tk.Text, tk.Typographic = "--"+tk.Text[size:], true
			}
			if a.Off >= 0 && a.Off < len(text) && strings.ContainsAny(text[a.Off:min(len(text), a.Off+len(a.Text)+8)], "\u201c\u201d\u201e\u2018\u2019") {
				tk.Typographic = true
			}
			tk.Vars = append(tk.Vars, a.Unresolved...)
			toks = append(toks, tk)
		}
		cl.Flags, cl.Args = parseFlags(toks, ctx.Catalogs.For(comp), nil, li, 0)
		for k, v := range inv.Env {
			cl.Env[k] = EnvVar{Value: v, Line: cl.Line}
		}
		switch {
		case strings.HasPrefix(inv.Origin, "nssm"), wrapped != "" && inv.Service != "":
			// nssm, WinSW and other service hosts speak to the Service Control Manager
			// themselves: the program they start needs no --windows-service
			cl.Service = ServiceNSSM
		case inv.Service != "":
			cl.Service = ServiceSC
		}
		settle(cl, file, text)
		if cl.OS == OSUnknown {
			cl.OS, cl.OSEvidence = OSWindows, "a PowerShell script"
		}
		out = append(out, cl)
	}
	slices.SortStableFunc(out, func(a, b *CommandLine) int { return a.Line - b.Line })
	var writes []ScriptWrite
	for _, w := range res.Writes {
		writes = append(writes, ScriptWrite{Line: li.lineOf(w.Off), Target: w.Target, Text: w.Text})
	}
	return out, writes
}

// followWrites handles the flags scripts write to data files for another reader: when a
// sibling input names the file (it reads it), the flags are checked as that component's
// command line, partial (the reader adds the rest); otherwise they are reported as values
// read at run time.
func followWrites(ctx *Context) {
	for _, sc := range ctx.Scripts {
		for _, w := range sc.Writes {
			base := strings.ToLower(path.Base(strings.ReplaceAll(w.Target, `\`, "/")))
			reader := ""
			for _, other := range ctx.Scripts {
				if other == sc || base == "" {
					continue
				}
				if strings.Contains(strings.ToLower(strings.Join(other.Lines, "\n")), base) {
					reader = other.File
					break
				}
			}
			comp := guessComponentByFlags(ctx, w.Text)
			if reader == "" {
				ctx.AddProblem("KW0015", Location{File: sc.File, Line: w.Line},
					fmt.Sprintf("%s flags written to %s at line %d are read at run time by a script not among the inputs: they are not checked", comp, w.Target, w.Line),
					"Pass the script that reads "+w.Target+" too, so kubewin follows the flags to the command line that uses them.")
				continue
			}
			li := newLineIndex(w.Text)
			cl := buildCommandLine(ctx, sc.File, strings.ReplaceAll(w.Text, "\n", " "), 0, w.Line, li, comp,
				"flags written to "+w.Target+", read by "+reader, false, DialectCmd, nil)
			for i := range cl.Flags {
				cl.Flags[i].Line, cl.Flags[i].Column = w.Line, 0
			}
			cl.Line, cl.Partial, cl.OS, cl.OSEvidence = w.Line, true, OSWindows, "written by a PowerShell script"
			ctx.CommandLines = append(ctx.CommandLines, cl)
		}
	}
}

// notWrappers are programs that take a kubelet or kube-proxy binary as an argument without
// running it (killing, copying, downloading, granting, listing it).
var notWrappers = map[string]bool{
	"taskkill": true, "tasklist": true, "where": true, "icacls": true, "takeown": true, "copy": true, "xcopy": true,
	"robocopy": true, "move": true, "del": true, "curl": true, "wget": true, "certutil": true, "bitsadmin": true,
	"netsh": true, "reg": true, "signtool": true, "7z": true, "tar": true, "expand": true, "attrib": true,
	"kubectl": true, "kubeadm": true, "sc": true, "nssm": true, "cmd": true, "powershell": true, "pwsh": true,
	"kube-log-runner": true, "mklink": true, "unblock-file": true,
}

// unwrapHost finds the kubelet or kube-proxy a service host or wrapper starts: rancher's wins
// (wins cli prc run --path <exe> --args "<args>"), and hosts that take the program and its
// arguments as their own arguments (WinSW-style "<host>.exe C:\k\kubelet.exe --flags",
// srvany-like hosts). For a service registration any host is accepted; elsewhere the
// program must be followed by flags, so that taskkill /im kubelet.exe is not read as a run.
// It returns the program, its arguments and the host's name.
func unwrapHost(prog string, args []psscript.Arg, service bool) (string, []psscript.Arg, string, bool) {
	if _, ok := programComponent(prog); ok || prog == "" || isLauncher(prog) {
		return "", nil, "", false
	}
	host := strings.TrimSuffix(strings.ToLower(path.Base(strings.ReplaceAll(prog, `\`, "/"))), ".exe")
	if notWrappers[host] {
		return "", nil, "", false
	}
	// wins: --path <exe> --args "<args>" (github.com/rancher/wins, cmd/client/process/run.go)
	var wpath, wargs *psscript.Arg
	for i := 0; i < len(args); i++ {
		name, val, eq := strings.Cut(args[i].Text, "=")
		switch strings.ToLower(name) {
		case "--path", "-path", "--args", "-args":
			a := psscript.Arg{Text: val, Off: args[i].Off + len(name) + 1}
			if !eq {
				if i+1 >= len(args) {
					continue
				}
				i++
				a = args[i]
			}
			if strings.HasSuffix(strings.ToLower(name), "path") {
				wpath = &a
			} else {
				wargs = &a
			}
		}
	}
	if wpath != nil {
		if _, ok := programComponent(wpath.Text); ok {
			var out []psscript.Arg
			if wargs != nil {
				toks, _ := Tokenize(wargs.Text, DialectCmd)
				for _, t := range toks {
					out = append(out, psscript.Arg{Text: t.Text, Off: wargs.Off + t.Offset, Unresolved: wargs.Unresolved})
				}
			}
			return wpath.Text, out, path.Base(strings.ReplaceAll(prog, `\`, "/")), true
		}
	}
	for i, a := range args {
		if _, ok := programComponent(a.Text); !ok {
			continue
		}
		rest := args[i+1:]
		if !service && !slices.ContainsFunc(rest, func(r psscript.Arg) bool { return strings.HasPrefix(r.Text, "--") }) {
			return "", nil, "", false
		}
		return a.Text, rest, path.Base(strings.ReplaceAll(prog, `\`, "/")), true
	}
	return "", nil, "", false
}

// reUnitDirective matches a systemd unit directive, a CamelCase key and "=" (WorkingDirectory=,
// Documentation=); shell assignments are upper-case or lower-case names.
var reUnitDirective = regexp.MustCompile(`^([A-Z][a-z]+(?:[A-Z][a-z]*)*)=`)

// isUnitNonExecDirective reports whether line is a systemd directive other than an Exec*=
// command line (ExecStart=, ExecStartPre=, …).
func isUnitNonExecDirective(line string) bool {
	m := reUnitDirective.FindStringSubmatch(line)
	return m != nil && !strings.HasPrefix(m[1], "Exec")
}

// flagNameComputed reports whether an argument written as a flag has a variable in its name
// (--$name=…, --$($v.Name)=…, -$k): the flag is chosen at run time.
func flagNameComputed(arg string) bool {
	name := strings.TrimLeft(arg, "-")
	if k := strings.IndexByte(name, '='); k >= 0 {
		name = name[:k]
	}
	return strings.ContainsAny(name, "$%") || strings.Contains(name, "{{")
}
