package psscript

import (
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
	}
	if bp, ok := named(args, "binarypathname", "binarypath"); ok {
		// a wrapper of New-Service (kubewin's own install.ps1: Install-NodeService -BinaryPath …)
		svc, _ := named(args, "name")
		e.commandLineString(bp, name+" "+argText(args, "binarypathname", "binarypath"), svc.str(), c.off, w)
		return unknown("("+name+")", c.off)
	}
	switch baseName(name) {
	case "sc":
		e.scExe(args, c.off, w)
		return value{}
	case "nssm":
		e.nssm(args, c.off, w)
		return value{}
	case "powershell", "pwsh":
		if v, ok := named(args, "command", "c"); ok {
			e.invokeExpression(v, c.off, w)
		}
		return unknown("("+name+")", c.off)
	}
	if nameV.unknown != "" && c.callOp == "" {
		return unknown("("+name+")", c.off)
	}
	if !isProgram(name) {
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
	e.record(Invocation{Program: displayMarkers(prog.str()), Origin: "Start-Process", Args: out, Off: off, Env: w.env()})
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
	lt := strings.ToLower(text)
	if !strings.Contains(lt, "kubelet") && !strings.Contains(lt, "kube-proxy") {
		return
	}
	t := strings.ToLower(target.str())
	if strings.HasSuffix(t, ".cmd") || strings.HasSuffix(t, ".bat") || strings.HasSuffix(t, ".json") ||
		strings.HasSuffix(t, ".yaml") || strings.HasSuffix(t, ".conf") || strings.HasSuffix(t, ".env") {
		return
	}
	e.embed++
	saved := e.embedded
	e.embedded = true
	defer func() { e.embed--; e.embedded = saved }()
	b, probs := parse(text, content.off)
	e.probs = append(e.probs, probs...)
	ws := e.execBlock(b, []*world{newWorld()})
	e.flushServices(ws)
}
