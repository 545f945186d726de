package psscript

import (
	"maps"
	"path"
	"slices"
	"strings"
)

// boundArg is a command argument after parameter binding.
type boundArg struct {
	param string // lower-case, without "-"; "" for a positional argument
	text  string // the parameter as written ("-Lo")
	val   value
	has   bool // the parameter has a value (not a switch)
	off   int
}

// switchParams are parameters that never take a value, so the argument after them is
// positional (Start-Process -PassThru c:\k\kubelet.exe).
var switchParams = map[string]bool{
	"passthru": true, "nonewwindow": true, "wait": true, "force": true, "verbose": true, "confirm": true,
	"whatif": true, "recurse": true, "noprofile": true, "asjob": true, "usenewenvironment": true,
	"append": true, "nonewline": true, "raw": true, "silent": true, "debug": true,
	"loaduserprofile": true, "noninteractive": true, "donotupdate": true,
}

// bind evaluates a command's arguments: -Param value pairs (for parameters that take values)
// and positional values; @splat of an array adds its elements as positional values.
func (e *evaluator) bind(c *command, w *world) []boundArg {
	var out []boundArg
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		switch {
		case a.splat != "":
			v := w.lookup(scopeless(a.splat), a.off)
			if v.hash != nil {
				// @params of a hashtable: each entry is a named parameter
				keys := slices.Sorted(maps.Keys(v.hash))
				for _, k := range keys {
					out = append(out, boundArg{param: k, text: "-" + k, val: v.hash[k], has: true, off: a.off})
				}
				continue
			}
			if v.unknown != "" {
				v.unknown = "@" + a.splat
			}
			out = append(out, boundArg{val: v, off: a.off})
		case a.param != "":
			name := strings.ToLower(strings.TrimPrefix(a.param, "-"))
			b := boundArg{param: name, text: a.param, off: a.off}
			if a.colon {
				b.val, b.has = e.evalArg(a, w), true
			} else if !switchParams[name] && i+1 < len(c.args) && c.args[i+1].param == "" && c.args[i+1].splat == "" {
				i++
				b.val, b.has = e.evalArg(c.args[i], w), true
			}
			out = append(out, b)
		default:
			out = append(out, boundArg{val: e.evalArg(a, w), off: a.off})
		}
	}
	return out
}

func (e *evaluator) evalArg(a cmdArg, w *world) value {
	if len(a.parts) == 1 {
		v := e.eval(a.parts[0], w)
		if sb, ok := a.parts[0].(scriptBlock); ok {
			// a script block argument (ForEach-Object { … }, Invoke-Command -ScriptBlock { … })
			// runs in this world; its output is unknown.
			e.execBlock(sb.body, []*world{w})
			w.dead = false
		}
		return v
	}
	return e.eval(concat(a.parts), w)
}

func named(args []boundArg, names ...string) (value, bool) {
	for _, a := range args {
		for _, n := range names {
			if a.param == n && a.has {
				return a.val, true
			}
		}
	}
	return value{}, false
}

func positional(args []boundArg) []value {
	var out []value
	for _, a := range args {
		if a.param == "" {
			out = append(out, a.val)
		}
	}
	return out
}

// runPipeline runs a pipeline in world w and returns its output value (unknown unless it is a
// single expression).
func (e *evaluator) runPipeline(pl *pipeline, w *world) value {
	var cur value
	for i, c := range pl.elems {
		if c.expr != nil {
			cur = e.eval(c.expr, w)
			continue
		}
		cur = e.runCommand(c, w, cur, i > 0)
	}
	if pl.redirect != nil {
		target := e.eval(pl.redirect, w)
		e.writtenFile(target, cur)
	}
	return cur
}

func baseName(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	b := strings.ToLower(path.Base(p))
	return strings.TrimSuffix(b, ".exe")
}

func (e *evaluator) runCommand(c *command, w *world, input value, piped bool) value {
	nameV := e.eval(c.name, w)
	name := nameV.str()
	lname := strings.ToLower(name)
	args := e.bind(c, w)
	switch lname {
	case "invoke-expression", "iex":
		v, ok := named(args, "command")
		if !ok {
			if ps := positional(args); len(ps) > 0 {
				v, ok = ps[0], true
			} else if piped {
				v, ok = input, true
			}
		}
		if ok {
			e.invokeExpression(v, c.off, w)
		}
		return unknown("(Invoke-Expression)", c.off)
	case "start-process", "saps", "start":
		e.startProcess(args, c.off, w)
		return unknown("(Start-Process)", c.off)
	case "new-service":
		if bp, ok := named(args, "binarypathname", "binarypath"); ok {
			svc, _ := named(args, "name")
			if ps := positional(args); svc.str() == "" && len(ps) > 0 {
				svc = ps[0]
			}
			e.commandLineString(bp, "New-Service -BinaryPathName", svc.str(), c.off, w)
		}
		return unknown("(New-Service)", c.off)
	case "set-content", "add-content", "out-file", "new-item", "sc", "tee-object":
		// "sc" is Set-Content's alias in Windows PowerShell 5.1 (removed in PowerShell 7), so
		// `sc create kubelet binPath= …` there writes a file instead of registering a service; it
		// is read as the registration it was meant to be.
		if lname == "sc" && len(args) > 0 && args[0].param == "" && isSCVerb(args[0].val.str()) {
			e.scExe(args, c.off, w)
			return value{}
		}
		target, _ := named(args, "path", "filepath", "literalpath")
		val, ok := named(args, "value", "inputobject")
		if !ok && piped {
			val, ok = input, true
		}
		if !ok && lname == "new-item" {
			return value{}
		}
		ps := positional(args)
		if target.str() == "" && len(ps) > 0 {
			target = ps[0]
			ps = ps[1:]
		}
		if !ok && len(ps) > 0 {
			val, ok = ps[0], true
		}
		if ok {
			e.writtenFile(target, val)
		}
		return value{}
	case "foreach-object", "%", "where-object", "?", "invoke-command", "icm", "start-job":
		return unknown("("+name+")", c.off)
	case "convertto-json", "convertto-yaml", "out-string":
		// the data a script hands to another reader: kept as text of its values
		if piped {
			return value{s: dataText(input), off: input.off}
		}
		if ps := positional(args); len(ps) > 0 {
			return value{s: dataText(ps[0]), off: ps[0].off}
		}
		if v, ok := named(args, "inputobject"); ok {
			return value{s: dataText(v), off: v.off}
		}
		return unknown("("+name+")", c.off)
	}
	if bp, ok := named(args, "binarypathname", "binarypath"); ok {
		// a wrapper of New-Service (kubewin's own install.ps1: Install-NodeService -BinaryPath …)
		svc, _ := named(args, "name")
		e.commandLineString(bp, name+" "+argText(args, "binarypathname", "binarypath"), svc.str(), c.off, w)
		return unknown("("+name+")", c.off)
	}
	if fn, ok := e.funcs[lname]; ok && c.callOp != "." {
		return e.callFunction(fn, args, w, c.off)
	}
	switch baseName(name) {
	case "sc":
		e.scExe(args, c.off, w)
		return value{}
	case "nssm":
		e.nssm(args, c.off, w)
		return value{}
	case "powershell", "pwsh":
		// powershell [-NoProfile …] -Command "<script>" (or the script as its first
		// positional argument, PowerShell 5.1's default): the string is parsed again.
		var words []value
		for _, a := range args {
			if a.param != "" {
				words = append(words, value{s: a.text, off: a.off})
				if a.has {
					words = append(words, a.val.elems()...)
				}
				continue
			}
			words = append(words, a.val.elems()...)
		}
		e.childPowerShell(words, c.off, w)
		return unknown("("+name+")", c.off)
	case "cmd":
		var words []value
		for _, a := range args {
			if a.param != "" {
				words = append(words, value{s: a.text, off: a.off})
			}
			words = append(words, a.val.elems()...)
		}
		e.cmdC(words, "cmd /c", c.off, w)
		return unknown("("+name+")", c.off)
	}
	if nameV.unknown != "" && c.callOp == "" {
		return unknown("("+name+")", c.off)
	}
	if !isProgram(name) || c.callOp == "" && strings.ContainsAny(name, " \t(") {
		// a bare command name has no spaces; Write-Host("… to C:\k\kubelet.exe") is a cmdlet
		// with a parenthesised argument, not a program path
		return unknown("("+name+")", c.off)
	}
	// A native program: PowerShell passes each argument (each element of an array) as one
	// argument; a value with embedded quotes reaches the program's own argv parsing as is
	// (Windows PowerShell 5.1 does not escape them), so it is split by the Windows rules.
	origin := "command"
	if c.callOp == "&" {
		origin = "& operator"
	}
	var out []Arg
	for _, a := range args {
		var vs []value
		if a.param != "" {
			vs = append(vs, value{s: a.text, off: a.off})
			if a.has {
				vs = append(vs, a.val.elems()...)
			}
		} else {
			vs = a.val.elems()
		}
		for _, v := range vs {
			out = append(out, nativeArgs(v)...)
		}
	}
	e.record(Invocation{Program: displayMarkers(name), Origin: origin, Args: out, Off: c.off, Env: w.env()})
	return unknown("("+name+")", c.off)
}

func argText(args []boundArg, names ...string) string {
	for _, a := range args {
		for _, n := range names {
			if a.param == n {
				return a.text
			}
		}
	}
	return ""
}

func isSCVerb(s string) bool {
	switch strings.ToLower(s) {
	case "create", "config":
		return true
	}
	return false
}

// isProgram: the invocations worth reporting are programs named by a path or an .exe name, and
// the node's own programs by their bare names; cmdlets, functions and aliases (Verb-Noun,
// foreach, ipmo) are not.
func isProgram(name string) bool {
	if strings.ContainsAny(name, `\/`) || strings.HasSuffix(strings.ToLower(name), ".exe") {
		return true
	}
	switch baseName(name) {
	case "kubelet", "kube-proxy", "kubeproxy", "kube-log-runner", "flanneld", "containerd", "dockerd", "wins", "calico-node":
		return true
	}
	return false
}

// nativeArgs turns one PowerShell value passed to a native program into the arguments the
// program receives.
func nativeArgs(v value) []Arg {
	if v.unknown != "" {
		return []Arg{{Text: "$" + strings.TrimPrefix(v.unknown, "$"), Off: v.off, Unresolved: []string{v.unknown}, Whole: true}}
	}
	s := v.str()
	if strings.ContainsRune(s, '"') {
		return splitWindows(s, v.off)
	}
	return []Arg{makeArg(s, v.off)}
}

// makeArg turns text with unresolved markers into an Arg.
func makeArg(s string, off int) Arg {
	a := Arg{Off: off}
	if !strings.ContainsRune(s, markOpen) {
		a.Text = s
		return a
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, markOpen)
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i:], markClose)
		if j < 0 {
			b.WriteString(s[i+1:])
			break
		}
		name := s[i+1 : i+j]
		a.Unresolved = append(a.Unresolved, name)
		b.WriteString(displayName(name))
		s = s[i+j+1:]
	}
	a.Text = b.String()
	if len(a.Unresolved) == 1 && a.Text == displayName(a.Unresolved[0]) {
		a.Whole = true
	}
	return a
}

func displayName(n string) string {
	if strings.HasPrefix(n, "$") || strings.HasPrefix(n, "@") || strings.HasPrefix(n, "(") || strings.HasPrefix(n, "[") || strings.HasPrefix(n, "{") {
		return n
	}
	return "$" + n
}

func displayMarkers(s string) string { return makeArg(s, 0).Text }

// splitWindows splits a command line by the rules programs built with the Microsoft C runtime
// and Go use on Windows (CommandLineToArgvW): whitespace separates arguments outside quotes;
// 2n backslashes before a quote are n backslashes and the quote toggles quoting; 2n+1 are n
// and a literal quote; "" inside quotes is a literal quote; other backslashes are literal.
func splitWindows(s string, off int) []Arg {
	var out []Arg
	var b strings.Builder
	inArg, inQuote := false, false
	start := 0
	flush := func() {
		if inArg {
			out = append(out, makeArg(b.String(), off+start))
		}
		b.Reset()
		inArg = false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case (c == ' ' || c == '\t' || c == '\n' || c == '\r') && !inQuote:
			flush()
			continue
		case c == markOpen:
			// an unresolved value is one opaque piece
			j := strings.IndexByte(s[i:], markClose)
			if j < 0 {
				j = len(s) - i - 1
			}
			if !inArg {
				inArg, start = true, i
			}
			b.WriteString(s[i : i+j+1])
			i += j
			continue
		}
		if !inArg {
			inArg, start = true, i
		}
		switch c {
		case '\\':
			n := 0
			for i < len(s) && s[i] == '\\' {
				n++
				i++
			}
			if i < len(s) && s[i] == '"' {
				b.WriteString(strings.Repeat(`\`, n/2))
				if n%2 == 1 {
					b.WriteByte('"')
					continue
				}
				i-- // the quote is handled below
			} else {
				b.WriteString(strings.Repeat(`\`, n))
				i--
			}
		case '"':
			if inQuote && i+1 < len(s) && s[i+1] == '"' {
				b.WriteByte('"')
				i++
				continue
			}
			inQuote = !inQuote
		default:
			b.WriteByte(c)
		}
	}
	flush()
	return out
}

// invokeExpression parses a string as PowerShell and runs it in world w.
func (e *evaluator) invokeExpression(v value, off int, w *world) {
	if v.unknown != "" || e.embed >= maxEmbed {
		return
	}
	src := v.str()
	e.embed++
	defer func() { e.embed-- }()
	b, probs := parse(src, v.off)
	e.probs = append(e.probs, probs...)
	// Invoke-Expression runs in the caller's scope
	e.execBlock(b, []*world{w})
	w.dead = false
}

// startProcess: Start-Process joins -ArgumentList's elements with spaces, without quoting,
// and the program splits the result by the Windows rules.
func (e *evaluator) startProcess(args []boundArg, off int, w *world) {
	ps := positional(args)
	prog, ok := named(args, "filepath", "path")
	if !ok {
		if len(ps) == 0 {
			return
		}
		prog, ps = ps[0], ps[1:]
	}
	al, ok := named(args, "argumentlist", "args")
	if !ok && len(ps) > 0 {
		al, ok = ps[0], true
	}
	var out []Arg
	if ok {
		if al.unknown != "" {
			out = nativeArgs(al)
		} else {
			var parts []string
			for _, el := range al.elems() {
				parts = append(parts, el.str())
			}
			out = splitWindows(strings.Join(parts, " "), al.off)
		}
	}
	switch baseName(prog.str()) {
	case "powershell", "pwsh":
		// Start-Process powershell -ArgumentList "-c", "…kubelet.exe …": a child PowerShell
		// runs the string as a script
		var words []value
		for _, a := range out {
			words = append(words, value{s: a.Text, off: a.Off})
		}
		if al.unknown == "" && e.childPowerShell(words, off, w) {
			return
		}
	case "cmd":
		var words []value
		for _, a := range out {
			words = append(words, value{s: a.Text, off: a.Off})
		}
		if al.unknown == "" && e.cmdC(words, "Start-Process cmd /c", off, w) {
			return
		}
	}
	e.record(Invocation{Program: displayMarkers(prog.str()), Origin: "Start-Process", Args: out, Off: off, Env: w.env(),
		Transient: passThru(args) && stopsProcesses(e.script)})
}

// passThru reports whether Start-Process was given -PassThru (any unambiguous prefix of at
// least -Pa: PowerShell binds a parameter by its shortest unique prefix).
func passThru(args []boundArg) bool {
	for _, a := range args {
		if len(a.param) >= 2 && strings.HasPrefix("passthru", a.param) {
			return true
		}
	}
	return false
}

// stopsProcesses reports whether script ends processes it started (Stop-Process or its
// aliases spps/kill, or a process object's .Kill()).
func stopsProcesses(script string) bool {
	l := strings.ToLower(script)
	return strings.Contains(l, "stop-process") || strings.Contains(l, ".kill()") || strings.Contains(l, "| spps")
}

// childPowerShell runs the script a child powershell.exe / pwsh is given: the words after
// -Command (any unambiguous prefix, -c included), or the first word that is not a parameter
// of powershell.exe itself (about_PowerShell_exe: -Command is the default for a string).
// It reports whether it found a script to run.
func (e *evaluator) childPowerShell(words []value, off int, w *world) bool {
	// parameters of powershell.exe that take a value (about_PowerShell_exe, about_Pwsh)
	takesValue := map[string]bool{"-executionpolicy": true, "-ep": true, "-ex": true, "-windowstyle": true, "-w": true,
		"-inputformat": true, "-outputformat": true, "-psconsolefile": true, "-version": true, "-configurationname": true,
		"-workingdirectory": true, "-wd": true, "-settingsfile": true}
	for i := 0; i < len(words); i++ {
		t := strings.ToLower(words[i].str())
		if strings.HasPrefix(t, "/") && len(t) > 1 && !strings.ContainsAny(t[1:], "/\\") {
			t = "-" + t[1:] // powershell.exe accepts /Command as -Command
		}
		if t == "-file" || t == "-f" || t == "-encodedcommand" || t == "-e" || t == "-ec" {
			return false // a script file or base64 text: not read here
		}
		if len(t) >= 2 && t[0] == '-' && strings.HasPrefix("-command", t) {
			return e.runWords(words[i+1:], off, w)
		}
		if strings.HasPrefix(t, "-") {
			if takesValue[t] {
				i++
			}
			continue
		}
		return e.runWords(words[i:], off, w)
	}
	return false
}

// runWords joins words with spaces (as the child process receives them) and runs the text
// as PowerShell.
func (e *evaluator) runWords(words []value, off int, w *world) bool {
	if len(words) == 0 {
		return false
	}
	var parts []string
	for _, v := range words {
		if v.unknown != "" {
			return false
		}
		parts = append(parts, v.str())
	}
	src := strings.Join(parts, " ")
	// "& {…}" and "{…}" wrap the script in a block that runs at once
	e.invokeExpression(value{s: src, off: words[0].off}, off, w)
	return true
}

// cmdC reads cmd.exe /c|/k <command line>: the program after the switch and its arguments,
// split by the Windows rules. It reports whether it found one.
func (e *evaluator) cmdC(words []value, origin string, off int, w *world) bool {
	for i, v := range words {
		t := strings.ToLower(v.str())
		if t != "/c" && t != "/k" && t != "/s" && t != "/q" && t != "/d" {
			return false
		}
		if (t == "/c" || t == "/k") && i+1 < len(words) {
			var parts []string
			for _, r := range words[i+1:] {
				parts = append(parts, r.str())
			}
			args := splitWindows(strings.Join(parts, " "), words[i+1].off)
			if len(args) == 0 {
				return false
			}
			e.record(Invocation{Program: args[0].Text, Origin: origin, Args: args[1:], Off: off, Env: w.env()})
			return true
		}
	}
	return false
}

// callFunction runs a function the script defined with the arguments of a call and returns its
// output: the values it returns or writes as bare expressions. Outputs that differ between the
// branches the function takes are a value read at run time.
func (e *evaluator) callFunction(fn *funcStmt, args []boundArg, w *world, off int) value {
	if e.calls >= 8 || e.callBudget <= 0 || fn.body == nil {
		return unknown("("+fn.name+")", off)
	}
	e.callBudget--
	fw := w.clone()
	bound := map[string]bool{}
	for _, a := range args {
		if a.param == "" {
			continue
		}
		for _, p := range fn.params {
			pn := strings.ToLower(scopeless(p.name))
			if pn == a.param || (strings.HasPrefix(pn, a.param) && uniquePrefix(fn.params, a.param)) {
				if a.has {
					fw.vars[p.name] = a.val
				} else {
					fw.vars[p.name] = value{truth: 1}
				}
				bound[p.name] = true
				break
			}
		}
	}
	ps := positional(args)
	var extra []value
	for _, p := range fn.params {
		if bound[p.name] {
			continue
		}
		if len(ps) > 0 {
			fw.vars[p.name], ps = ps[0], ps[1:]
			bound[p.name] = true
			continue
		}
		if p.def != nil {
			fw.vars[p.name] = e.eval(p.def, fw)
		} else {
			fw.vars[p.name] = unknown("$"+p.name, off)
		}
		bound[p.name] = true
	}
	extra = append(extra, ps...)
	fw.vars["args"] = listOf(extra, off)
	var out []value
	saved := e.ret
	e.ret = &out
	e.calls++
	e.execBlock(fn.body, []*world{fw})
	e.calls--
	e.ret = saved
	switch len(out) {
	case 0:
		return unknown("("+fn.name+")", off)
	case 1:
		out[0].off = off
		return out[0]
	}
	first := out[0].str()
	same := true
	for _, v := range out[1:] {
		if v.str() != first {
			same = false
		}
	}
	if same {
		out[0].off = off
		return out[0]
	}
	// several bare-expression outputs of one path make an array; outputs of different
	// branches are not told apart here, so the value is left to run time
	return unknown("("+fn.name+")", off)
}

func uniquePrefix(params []param, pfx string) bool {
	n := 0
	for _, p := range params {
		if strings.HasPrefix(strings.ToLower(scopeless(p.name)), pfx) {
			n++
		}
	}
	return n == 1
}

// dataText renders the values of a data structure (a hashtable, an array) one per line: the
// text kubewin searches for flags in a data file a script writes.
func dataText(v value) string {
	var b strings.Builder
	var walk func(v value)
	walk = func(v value) {
		if v.hash != nil {
			keys := make([]string, 0, len(v.hash))
			for k := range v.hash {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				walk(v.hash[k])
			}
			return
		}
		if v.isList {
			for _, el := range v.list {
				walk(el)
			}
			return
		}
		b.WriteString(v.str())
		b.WriteByte('\n')
	}
	walk(v)
	return b.String()
}

// commandLineString records a service's command line given as one string (binPath=,
// -BinaryPathName): program and arguments split by the Windows rules.
func (e *evaluator) commandLineString(v value, origin, service string, off int, w *world) {
	if v.unknown != "" {
		e.record(Invocation{Program: displayName(v.unknown), Origin: origin, Service: service, Off: off, Env: w.env()})
		return
	}
	parts := splitWindows(v.str(), v.off)
	if len(parts) == 0 {
		return
	}
	e.record(Invocation{Program: parts[0].Text, Origin: origin, Service: displayMarkers(service), Args: parts[1:], Off: off, Env: w.env()})
}

// scExe: sc.exe create|config NAME binPath= "…" [other= value]. The option names end with
// "=" and the value is the next argument (sc's documented syntax).
func (e *evaluator) scExe(args []boundArg, off int, w *world) {
	ps := positional(args)
	if len(ps) < 2 || !isSCVerb(ps[0].str()) {
		return
	}
	svc := ps[1].str()
	for i := 2; i < len(ps); i++ {
		k := strings.ToLower(ps[i].str())
		var val value
		switch {
		case k == "binpath=" && i+1 < len(ps):
			val = ps[i+1]
		case strings.HasPrefix(k, "binpath=") && len(k) > len("binpath="):
			val = value{s: ps[i].str()[len("binpath="):], off: ps[i].off}
		default:
			continue
		}
		e.commandLineString(val, "sc.exe "+strings.ToLower(ps[0].str())+" binPath=", svc, off, w)
		return
	}
}

// nssm install NAME PROGRAM [ARGS…]; nssm set NAME Application|AppParameters|AppEnvironmentExtra
// VALUE…. nssm joins the arguments of AppParameters with spaces and the program splits them by
// the Windows rules. The registration is reported with its final state, once per world.
func (e *evaluator) nssm(args []boundArg, off int, w *world) {
	// & nssm.exe $nssmArgs passes an array's elements as the arguments
	var ps []value
	for _, v := range positional(args) {
		ps = append(ps, v.elems()...)
	}
	if len(ps) < 2 {
		return
	}
	verb := strings.ToLower(ps[0].str())
	name := strings.ToLower(ps[1].str())
	svc := w.services[name]
	if svc == nil {
		svc = &nssmService{name: ps[1].str(), env: map[string]string{}}
		w.services[name] = svc
	}
	join := func(vs []value) value {
		var all []value
		for _, v := range vs {
			all = append(all, v.elems()...)
		}
		return listOf(all, 0)
	}
	switch verb {
	case "install":
		if len(ps) >= 3 {
			svc.program = ps[2].str()
			svc.off = off
			if len(ps) > 3 {
				svc.params, svc.hasParams = join(ps[3:]), true
			}
		}
	case "set":
		if len(ps) < 3 {
			return
		}
		switch strings.ToLower(ps[2].str()) {
		case "application":
			if len(ps) > 3 {
				svc.program = ps[3].str()
			}
		case "appparameters":
			svc.params, svc.hasParams = join(ps[3:]), true
			svc.off = off
		case "appenvironmentextra", "appenvironment":
			for _, v := range ps[3:] {
				for _, el := range v.elems() {
					k, val, ok := strings.Cut(strings.TrimPrefix(el.str(), "+"), "=")
					if ok {
						svc.env[strings.ToUpper(k)] = val
					}
				}
			}
		}
	}
}

func (e *evaluator) flushServices(ws []*world) {
	for _, w := range ws {
		names := make([]string, 0, len(w.services))
		for k := range w.services {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			s := w.services[k]
			if s.program == "" && !s.hasParams {
				continue
			}
			var args []Arg
			if s.hasParams {
				// nssm joins the words with spaces and the program splits them again; splitting
				// each word keeps its position in the file
				for _, el := range s.params.elems() {
					if el.unknown != "" {
						args = append(args, nativeArgs(el)...)
						continue
					}
					args = append(args, splitWindows(el.str(), el.off)...)
				}
			}
			env := w.env()
			for k, v := range s.env {
				env[k] = v
			}
			e.record(Invocation{Program: displayMarkers(s.program), Origin: "nssm AppParameters", Service: s.name, Args: args, Off: s.off, Env: env})
		}
	}
}

// writtenFile: a script that writes another script (PrepareNode.ps1's StartKubelet.ps1,
// aks-engine's kubeletstart.ps1) is read too, when the text names a kubelet or kube-proxy.
func (e *evaluator) writtenFile(target, content value) {
	if content.unknown != "" || e.embed >= maxEmbed {
		return
	}
	text := content.str()
	t := strings.ToLower(target.str())
	if strings.HasSuffix(t, ".json") || strings.HasSuffix(t, ".yaml") || strings.HasSuffix(t, ".conf") || strings.HasSuffix(t, ".env") {
		// data for another reader: kept so that check can follow it to a sibling script
		// that reads it, or report it as read at run time
		if strings.Contains(text, "--") {
			e.writes = append(e.writes, DataWrite{Target: displayMarkers(target.str()), Text: displayMarkers(text), Off: content.off})
		}
		return
	}
	lt := strings.ToLower(text)
	if !strings.Contains(lt, "kubelet") && !strings.Contains(lt, "kube-proxy") {
		return
	}
	if strings.HasSuffix(t, ".cmd") || strings.HasSuffix(t, ".bat") {
		return
	}
	e.embed++
	saved, savedPin, savedScript := e.embedded, e.pin, e.script
	e.embedded, e.script = true, text
	defer func() { e.embed--; e.embedded, e.pin, e.script = saved, savedPin, savedScript }()
	base, verbatim := verbatimAt(e.src, text, content.off)
	if e.pin < 0 && !verbatim {
		// the written script was assembled (or reached the write through a variable), not
		// copied from the file here: its positions would point at unrelated lines (or past
		// the end), so everything in it is reported where the written value is
		e.pin = max(0, min(content.off, len(e.src)-1))
	}
	b, probs := parse(text, base)
	for _, p := range probs {
		if e.pin >= 0 {
			p.Off = e.pin
		}
		e.probs = append(e.probs, p)
	}
	ws := e.execBlock(b, []*world{newWorld()})
	e.flushServices(ws)
}

// verbatimAt reports whether text stands in src as it is where its value starts (at off, or
// just after a string's opener: ', ", @' or @" and its line end) or, for a value passed
// through a variable, exactly once anywhere in src, so that positions in text are positions
// in src; base is then the offset text starts at.
func verbatimAt(src, text string, off int) (base int, ok bool) {
	for k := 0; k <= 4; k++ {
		if b := off + k; b >= 0 && b+len(text) <= len(src) && src[b:b+len(text)] == text {
			return b, true
		}
	}
	// a literal that reached the write through a variable: found once in the file as it is
	if len(text) >= 16 && strings.Count(src, text) == 1 {
		return strings.Index(src, text), true
	}
	return off, false
}
