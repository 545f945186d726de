package psscript

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Invocation is one program a script runs or registers, with the arguments the program
// receives (after PowerShell's and the Windows argv rules).
type Invocation struct {
	// Program as written or resolved ("C:\k\kubelet.exe", "kubelet").
	Program string
	// Origin says how it runs: "command", "& operator", "Invoke-Expression", "Start-Process",
	// "New-Service -BinaryPathName", "sc.exe create binPath=", "nssm AppParameters".
	Origin string
	// Service is the service name for a registration (nssm, sc.exe, New-Service).
	Service string
	Args    []Arg
	// Off is the byte offset of the statement in the outermost file.
	Off int
	// Env holds $env: values known at that point (upper-case names).
	Env map[string]string
	// Embedded is set when the invocation is in a script the file writes to disk
	// (Set-Content/Out-File of a string), such as PrepareNode.ps1's StartKubelet.ps1.
	Embedded bool
	// Transient is set for Start-Process -PassThru in a script that stops processes
	// (Stop-Process, .Kill()): a run the script ends itself, such as aks-engine's kubelet
	// started only until the node's pod CIDR is assigned, not the service.
	Transient bool
	// atDefinition: recorded while a function body was evaluated where it is defined, with
	// its parameters unresolved; a call of the function that records the same statement
	// with its arguments replaces it.
	atDefinition bool
}

// DataWrite is a data file (JSON, YAML, .env, .conf) a script writes whose text holds
// command-line flags: another script or program reads them at run time (aks-engine's
// kubeclusterconfig.json holds the kubelet's arguments).
type DataWrite struct {
	// Target is the file as written ("c:\k\kubeclusterconfig.json"); Text the flags and
	// values written, one per line; Off the offset of the statement that writes it.
	Target string
	Text   string
	Off    int
}

// Arg is one argument. Unresolved names the values it depends on that the script computes at
// run time; Text shows each as $name. Whole is set when the argument stands for a value that
// may be any number of arguments (an array read at run time, an unresolved splat).
type Arg struct {
	Text       string
	Off        int
	Unresolved []string
	Whole      bool
}

// Result is what a script runs.
type Result struct {
	Invocations []Invocation
	Problems    []Problem
	// Writes are data files holding flags that the script writes for another reader.
	Writes []DataWrite
	// EnvRead lists environment variables the script reads without setting them (upper-case,
	// sorted), other than the ones Windows always sets: its launcher provides them.
	EnvRead []string
}

// maxWorlds bounds the evaluation's branching; past it, branches run one after the other in
// the same world, which keeps every command line visible at the cost of mixing branches.
const maxWorlds = 32

// maxEmbed bounds scripts inside scripts (Invoke-Expression of a string that runs another).
const maxEmbed = 4

// Options tune an evaluation.
type Options struct {
	// KubernetesMinor is the Kubernetes 1.x release the script is judged for (0: unknown). A
	// script that compares a value it reads at run time with a Kubernetes version literal
	// ("1.24", [version]'1.26') is version-aware; that comparison is decided for this release
	// instead of splitting, so that a flag a 1.23 branch adds is not reported for 1.25.
	KubernetesMinor int
}

// Evaluate reads a PowerShell script and returns the programs it runs.
func Evaluate(src string) Result { return EvaluateWith(src, Options{}) }

// EvaluateWith is Evaluate with options.
func EvaluateWith(src string, opt Options) Result {
	e := &evaluator{seen: map[string]bool{}, opt: opt, envRead: map[string]bool{}, funcs: map[string]*funcStmt{}, callBudget: maxCalls, pin: -1}
	// The marker bytes are the evaluator's own; in a script they are noise (same length, so
	// offsets hold).
	src = strings.Map(func(r rune) rune {
		if r == markOpen || r == markClose {
			return '?'
		}
		return r
	}, src)
	e.src, e.script = src, src
	b, probs := parse(src, 0)
	e.probs = probs
	ws := []*world{newWorld()}
	ws = e.execBlock(b, ws)
	e.flushServices(ws)
	return Result{Invocations: dropDefinitionCopies(e.out), Problems: e.probs, Writes: e.writes, EnvRead: slices.Sorted(maps.Keys(e.envRead))}
}

// dropDefinitionCopies removes invocations recorded at a function's definition (parameters
// unresolved) when a call of the function recorded the same statement with its arguments.
func dropDefinitionCopies(invs []Invocation) []Invocation {
	called := map[int]bool{}
	for _, inv := range invs {
		if !inv.atDefinition {
			called[inv.Off] = true
		}
	}
	out := invs[:0]
	for _, inv := range invs {
		if inv.atDefinition && called[inv.Off] {
			continue
		}
		out = append(out, inv)
	}
	return out
}

// maxCalls bounds the function calls one evaluation follows (recursion, loops of calls).
const maxCalls = 256

type value struct {
	s      string
	list   []value
	isList bool
	// unknown names a value computed at run time; s is then empty.
	unknown string
	// truth: 0 not a boolean, 1 $true, 2 $false.
	truth int8
	// atLeast is a lower bound for an unknown count (a list known to hold some elements).
	atLeast int
	off     int
	// hash holds a hashtable literal's entries (lower-case keys); the value itself stays
	// unknown as a string, but $h.Key reads an entry and ConvertTo-Json writes them.
	hash map[string]value
}

func unknown(name string, off int) value {
	return value{unknown: sanitizeName(name), off: off}
}

func sanitizeName(n string) string {
	n = strings.TrimSpace(n)
	if i := strings.IndexAny(n, " \t\r\n"); i > 0 {
		n = n[:i] + "…"
	}
	n = strings.Map(func(r rune) rune {
		if r == markOpen || r == markClose || r == '"' || r == '\'' {
			return -1
		}
		return r
	}, n)
	if n == "" {
		n = "?"
	}
	return n
}

func marker(name string) string { return string(markOpen) + name + string(markClose) }

// str renders a value as PowerShell does when it converts it to a string: array elements are
// joined with a space ($OFS); an unknown value becomes a marker.
func (v value) str() string {
	switch {
	case v.unknown != "":
		return marker(v.unknown)
	case v.isList:
		parts := make([]string, len(v.list))
		for i, x := range v.list {
			parts[i] = x.str()
		}
		return strings.Join(parts, " ")
	case v.truth == 1:
		return "True"
	case v.truth == 2:
		return "False"
	}
	return v.s
}

// elems returns the value as a list of elements (a scalar is a list of one).
func (v value) elems() []value {
	if v.isList {
		var out []value
		for _, x := range v.list {
			out = append(out, x.elems()...)
		}
		return out
	}
	return []value{v}
}

func listOf(vs []value, off int) value { return value{isList: true, list: vs, off: off} }

type world struct {
	vars map[string]value
	// not holds values a variable was found not to equal (the else side of $x -eq 'lit').
	not map[string][]string
	// services: nssm registrations seen so far, by lower-case name.
	services map[string]*nssmService
	dead     bool
}

type nssmService struct {
	name, program string
	params        value
	hasParams     bool
	off           int
	env           map[string]string
}

func newWorld() *world {
	return &world{vars: map[string]value{}, not: map[string][]string{}, services: map[string]*nssmService{}}
}

func (w *world) clone() *world {
	c := &world{vars: maps.Clone(w.vars), not: map[string][]string{}, services: map[string]*nssmService{}}
	for k, v := range w.not {
		c.not[k] = slices.Clone(v)
	}
	for k, s := range w.services {
		cp := *s
		cp.env = maps.Clone(s.env)
		c.services[k] = &cp
	}
	return c
}

func (w *world) env() map[string]string {
	out := map[string]string{}
	for k, v := range w.vars {
		if name, ok := strings.CutPrefix(k, "env:"); ok && v.unknown == "" {
			out[strings.ToUpper(name)] = v.str()
		}
	}
	return out
}

type evaluator struct {
	// unrolled is set while a loop's body runs once per hashtable entry: a loop inside it
	// runs once, so nested loops cannot multiply the work
	unrolled bool
	envRead  map[string]bool
	opt      Options
	out      []Invocation
	seen     map[string]bool
	probs    []Problem
	embed    int
	// inFunc counts function bodies being evaluated at their definition.
	inFunc   int
	embedded bool
	// funcs are the functions defined so far (lower-case names); calls counts the calls
	// being evaluated and callBudget bounds their total; ret collects the output of the
	// innermost call.
	funcs      map[string]*funcStmt
	calls      int
	callBudget int
	ret        *[]value
	// writes are data files the script writes (JSON, YAML, env files) whose text holds flags.
	writes []DataWrite
	// src is the outermost file's text. pin, when not -1, is the offset in src every position
	// of an embedded script is reported at: the script's text was assembled (concatenation,
	// expansion), so a position in it is no position in the file.
	src string
	pin int
	// script is the text of the script being run (the file, or a script it writes).
	script string
}

func (e *evaluator) record(inv Invocation) {
	inv.Embedded = e.embedded
	if e.pin >= 0 {
		inv.Off = e.pin
		args := make([]Arg, len(inv.Args))
		for i, a := range inv.Args {
			a.Off = e.pin
			args[i] = a
		}
		inv.Args = args
	}
	inv.atDefinition = e.inFunc > 0 && e.calls == 0
	var key strings.Builder
	key.WriteString(inv.Origin + "\x00" + inv.Program + "\x00" + inv.Service)
	for _, a := range inv.Args {
		key.WriteString("\x00" + a.Text)
	}
	k := key.String()
	if e.seen[k] {
		return
	}
	e.seen[k] = true
	e.out = append(e.out, inv)
}

func alive(ws []*world) []*world {
	out := ws[:0]
	for _, w := range ws {
		if !w.dead {
			out = append(out, w)
		}
	}
	return out
}

func (e *evaluator) execBlock(b *block, ws []*world) []*world {
	if b == nil {
		return ws
	}
	for _, s := range b.stmts {
		ws = alive(e.execStmt(s, ws))
		if len(ws) == 0 {
			return ws
		}
	}
	return ws
}

func (e *evaluator) execStmt(s stmt, ws []*world) []*world {
	switch s := s.(type) {
	case *assignStmt:
		if !s.member && s.op == "=" && isComparison(s.val) && len(ws) < maxWorlds {
			// $useContainerD = ($runtime -eq "containerd"): decide it here, one world each
			// way, so that later tests of either variable agree.
			var out []*world
			for _, w := range ws {
				c := e.cond(s.val, w)
				switch c.truth {
				case triTrue, triFalse:
					w.vars[s.name] = value{truth: map[tri]int8{triTrue: 1, triFalse: 2}[c.truth]}
					out = append(out, w)
				default:
					yes := w.clone()
					yes.assume(c)
					yes.vars[s.name] = value{truth: 1}
					w.refute(c)
					w.vars[s.name] = value{truth: 2}
					out = append(out, yes, w)
				}
			}
			return out
		}
		for _, w := range ws {
			v := e.eval(s.val, w)
			if s.member {
				// $h.'source-vip' = $vip on a hashtable literal sets that entry (a copy:
				// worlds share values)
				if h := w.vars[s.name]; h.hash != nil && s.key != "" && s.op == "=" {
					nh := maps.Clone(h.hash)
					nh[s.key] = v
					h.hash = nh
					w.vars[s.name] = h
				}
				continue
			}
			if v.unknown != "" && !v.isList {
				// a value read at run time is best named by the variable the script keeps it in
				v.unknown = "$" + s.display
			}
			switch s.op {
			case "=":
				w.vars[s.name] = v
			case "+=":
				w.vars[s.name] = add(w.lookup(s.name, s.off), v)
			case "-=":
				w.vars[s.name] = unknown("$"+s.name, s.off)
			}
		}
		return ws
	case *ifStmt:
		var out []*world
		for _, w := range ws {
			out = append(out, e.execIf(s, w, len(ws))...)
		}
		return out
	case *loopStmt:
		if len(ws) == 1 && s.in != nil && s.varName != "" && !e.unrolled {
			// foreach over a literal hashtable's entries ($h.GetEnumerator()): the body runs
			// once per entry, so an argument list built from the entries is known
			if in := e.eval(s.in, ws[0]); in.isList && in.unknown == "" && len(in.list) > 0 && len(in.list) <= 64 &&
				!slices.ContainsFunc(in.list, func(x value) bool { return x.hash == nil || x.unknown != "DictionaryEntry" }) {
				e.unrolled = true
				for _, el := range in.list {
					for _, w := range ws {
						w.vars[s.varName] = el
					}
					ws = e.execBlock(s.body, ws)
				}
				e.unrolled = false
				return ws
			}
		}
		for _, w := range ws {
			if s.in != nil {
				e.eval(s.in, w)
			}
			if s.varName != "" {
				// an element of a list: a value, not nothing (atLeast 1: non-empty)
				v := unknown("$"+s.varName, 0)
				v.atLeast = 1
				w.vars[s.varName] = v
			}
		}
		// The body runs once (the scripts build argument lists in loops, not command lines); a
		// throw or exit in it ends the worlds that reach it.
		return e.execBlock(s.body, ws)
	case *tryStmt:
		ws = e.execBlock(s.body, ws)
		return e.execBlock(s.finally, ws)
	case *switchStmt:
		var out []*world
		for _, w := range ws {
			if s.subject != nil {
				e.eval(s.subject, w)
			}
			if len(ws)*(len(s.cases)+1) > maxWorlds {
				for _, c := range s.cases {
					e.execBlock(c, []*world{w})
					w.dead = false
				}
				out = append(out, w)
				continue
			}
			out = append(out, w)
			for _, c := range s.cases {
				out = append(out, e.execBlock(c, []*world{w.clone()})...)
			}
		}
		return out
	case *funcStmt:
		e.funcs[s.name] = s
		// Evaluated where it is defined, with its parameters at their defaults (or
		// unresolved): the command lines inside are what a call would run.
		for _, w := range ws {
			fw := w.clone()
			for _, p := range s.params {
				if p.def != nil {
					fw.vars[p.name] = e.eval(p.def, fw)
				} else {
					fw.vars[p.name] = unknown("$"+p.name, 0)
				}
			}
			e.inFunc++
			e.execBlock(s.body, []*world{fw})
			e.inFunc--
		}
		return ws
	case *paramStmt:
		for _, w := range ws {
			for _, p := range s.params {
				if _, set := w.vars[p.name]; set {
					continue
				}
				if p.def != nil {
					w.vars[p.name] = e.eval(p.def, w)
				} else {
					w.vars[p.name] = unknown("$"+p.name, 0)
				}
			}
		}
		return ws
	case *flowStmt:
		if s.kind == "return" && s.val != nil {
			for _, w := range ws {
				v := e.runPipeline(s.val, w)
				if e.ret != nil && e.calls > 0 {
					*e.ret = append(*e.ret, v)
				}
			}
		}
		switch s.kind {
		case "throw", "exit", "return":
			for _, w := range ws {
				w.dead = true
			}
		}
		return ws
	case *pipeline:
		for _, w := range ws {
			v := e.runPipeline(s, w)
			if e.ret != nil && e.calls > 0 && isOutput(s) {
				// an expression statement in a function is part of its output
				*e.ret = append(*e.ret, v)
			}
		}
		return ws
	}
	return ws
}

// isOutput reports whether a statement writes a value to the function's output: a bare
// expression ("--v=2", $args), not a command (whose output kubewin does not know).
func isOutput(pl *pipeline) bool {
	if len(pl.elems) != 1 || pl.elems[0].expr == nil || pl.redirect != nil {
		return false
	}
	if c, ok := pl.elems[0].expr.(castExpr); ok && c.typ == "void" {
		return false
	}
	return true
}

// execIf runs an if/elseif/else chain in world w, forking it where a condition cannot be
// decided. n is the number of worlds already alive, to respect maxWorlds.
func (e *evaluator) execIf(s *ifStmt, w *world, n int) []*world {
	var out []*world
	cur := w
	for _, cl := range s.clauses {
		c := e.cond(cl.cond, cur)
		switch c.truth {
		case triTrue:
			return append(out, e.execBlock(cl.body, []*world{cur})...)
		case triFalse:
			continue
		}
		if n+len(out) >= maxWorlds {
			// no more forks: run the branch in this world and go on
			cur.dead = false
			out = append(out, e.execBlock(cl.body, []*world{cur})...)
			if cur.dead {
				cur.dead = false
			}
			return out
		}
		yes := cur.clone()
		yes.assume(c)
		cur.refute(c)
		out = append(out, e.execBlock(cl.body, []*world{yes})...)
	}
	return append(out, e.execBlock(s.els, []*world{cur})...)
}

// windowsEnv are variables every Windows process has.
var windowsEnv = map[string]bool{"SYSTEMDRIVE": true, "SYSTEMROOT": true, "WINDIR": true, "PROGRAMFILES": true, "PROGRAMDATA": true,
	"COMPUTERNAME": true, "PATH": true, "TEMP": true, "TMP": true, "USERPROFILE": true, "USERNAME": true, "APPDATA": true,
	"LOCALAPPDATA": true, "PROCESSOR_ARCHITECTURE": true, "PSMODULEPATH": true, "PROGRAMFILES(X86)": true, "HOMEDRIVE": true, "HOMEPATH": true}

func (e *evaluator) noteEnv(name string, w *world) {
	n, ok := strings.CutPrefix(name, "env:")
	if !ok {
		return
	}
	if _, set := w.vars[name]; set || windowsEnv[strings.ToUpper(n)] {
		return
	}
	e.envRead[strings.ToUpper(n)] = true
}

// asWritten gives an unassigned variable's value the name as the script spells it.
func asWritten(v value, name, written string) value {
	if v.unknown == "$"+scopeless(name) && strings.EqualFold(name, written) {
		v.unknown = "$" + scopeless(written)
	}
	return v
}

func (w *world) lookup(name string, off int) value {
	switch name {
	case "true":
		return value{truth: 1, off: off}
	case "false":
		return value{truth: 2, off: off}
	case "null":
		return value{off: off}
	}
	if v, ok := w.vars[name]; ok {
		v.off = off
		return v
	}
	return unknown("$"+name, off)
}

// add is PowerShell's +: array append when the left side is an array, string concatenation
// when it is a string. An unknown left side is taken for an array when the right side is an
// array or a flag ("--x=…"), the way the scripts in the field grow argument lists.
func add(l, r value) value {
	switch {
	case l.isList:
		return listOf(append(slices.Clone(l.list), r.elems()...), l.off)
	case l.unknown != "" && (r.isList || strings.HasPrefix(r.str(), "-")):
		return listOf(append([]value{l}, r.elems()...), l.off)
	case l.unknown == "" && l.s == "" && l.truth == 0 && (r.isList || r.unknown != ""):
		return r
	}
	return value{s: l.str() + r.str(), off: l.off}
}

type tri int

const (
	triUnknown tri = iota
	triTrue
	triFalse
)

type assumption struct {
	name string
	val  value
}

type condResult struct {
	truth  tri
	assume []assumption // what holds when the condition is true
	// negatable: the condition is exactly its one assumption, so its else side excludes it.
	negatable bool
}

func (w *world) assume(c condResult) {
	for _, a := range c.assume {
		w.vars[a.name] = a.val
	}
}

func (w *world) refute(c condResult) {
	if c.negatable && len(c.assume) == 1 {
		a := c.assume[0]
		w.not[a.name] = append(w.not[a.name], strings.ToLower(a.val.str()))
	}
}

func isComparison(x expr) bool {
	switch x := x.(type) {
	case binaryExpr:
		switch x.op {
		case "-eq", "-ieq", "-ceq", "-ne", "-ine", "-cne", "-and", "-or":
			return true
		}
	case unaryExpr:
		return x.op == "-not"
	}
	return false
}

func countUnknown(v value) int {
	n := 0
	for _, el := range v.list {
		if el.unknown != "" {
			n++
		}
	}
	return n
}

func hasUnknown(v value) bool {
	for _, el := range v.elems() {
		if el.unknown != "" {
			return true
		}
	}
	return false
}

func (e *evaluator) cond(x expr, w *world) condResult {
	switch x := x.(type) {
	case binaryExpr:
		switch x.op {
		case "-gt", "-lt", "-ge", "-le":
			l, r := e.eval(x.l, w), e.eval(x.r, w)
			a, ok1 := atoi(l)
			b, ok2 := atoi(r)
			if !ok1 || !ok2 {
				// an unknown version compared with a Kubernetes version literal
				lm, lok := kubeMinor(l)
				rm, rok := kubeMinor(r)
				switch {
				case l.unknown != "" && l.atLeast > 0 && ok2 && (x.op == "-gt" && l.atLeast > b || x.op == "-ge" && l.atLeast >= b):
					return condResult{truth: triTrue}
				case e.opt.KubernetesMinor > 0 && l.unknown != "" && rok:
					a, b = e.opt.KubernetesMinor, rm
				case e.opt.KubernetesMinor > 0 && r.unknown != "" && lok:
					a, b = lm, e.opt.KubernetesMinor
				default:
					return condResult{}
				}
			}
			var res bool
			switch x.op {
			case "-gt":
				res = a > b
			case "-lt":
				res = a < b
			case "-ge":
				res = a >= b
			default:
				res = a <= b
			}
			if res {
				return condResult{truth: triTrue}
			}
			return condResult{truth: triFalse}
		case "-and":
			l, r := e.cond(x.l, w), e.cond(x.r, w)
			if l.truth == triFalse || r.truth == triFalse {
				return condResult{truth: triFalse}
			}
			if l.truth == triTrue && r.truth == triTrue {
				return condResult{truth: triTrue}
			}
			return condResult{assume: append(l.assume, r.assume...)}
		case "-or":
			l, r := e.cond(x.l, w), e.cond(x.r, w)
			if l.truth == triTrue || r.truth == triTrue {
				return condResult{truth: triTrue}
			}
			if l.truth == triFalse && r.truth == triFalse {
				return condResult{truth: triFalse}
			}
			return condResult{}
		case "-contains", "-icontains":
			l, r := e.eval(x.l, w), e.eval(x.r, w)
			if v, ok := x.l.(varRef); ok && l.unknown != "" && r.unknown == "" && !r.isList {
				// $gates -contains "WinDSR=true": where it holds, the list has that element
				return condResult{assume: []assumption{{name: scopeless(v.name), val: listOf([]value{l, r}, l.off)}}}
			}
			if l.isList && r.unknown == "" && !hasUnknown(l) {
				for _, el := range l.list {
					if strings.EqualFold(el.str(), r.str()) {
						return condResult{truth: triTrue}
					}
				}
				return condResult{truth: triFalse}
			}
			return condResult{}
		case "-eq", "-ieq", "-ceq", "-ne", "-ine", "-cne":
			l, r := e.eval(x.l, w), e.eval(x.r, w)
			neg := strings.HasSuffix(x.op, "ne")
			if l.unknown == "" && r.unknown == "" && !l.isList && !r.isList &&
				!strings.ContainsRune(l.str(), markOpen) && !strings.ContainsRune(r.str(), markOpen) {
				eq := strings.EqualFold(l.str(), r.str())
				if x.op == "-ceq" || x.op == "-cne" {
					eq = l.str() == r.str()
				}
				if eq != neg {
					return condResult{truth: triTrue}
				}
				return condResult{truth: triFalse}
			}
			if l.unknown != "" && l.atLeast > 0 && (r.str() == "0" || r.str() == "") {
				if neg {
					return condResult{truth: triTrue}
				}
				return condResult{truth: triFalse}
			}
			if v, ok := x.l.(varRef); ok && l.unknown != "" && r.unknown == "" {
				name := scopeless(v.name)
				if slices.Contains(w.not[name], strings.ToLower(r.str())) {
					if neg {
						return condResult{truth: triTrue}
					}
					return condResult{truth: triFalse}
				}
				if !neg {
					return condResult{assume: []assumption{{name: name, val: value{s: r.str(), truth: r.truth}}}, negatable: true}
				}
			}
			return condResult{}
		}
	case unaryExpr:
		if x.op == "-not" {
			c := e.cond(x.x, w)
			switch c.truth {
			case triTrue:
				return condResult{truth: triFalse}
			case triFalse:
				return condResult{truth: triTrue}
			}
			return condResult{}
		}
	}
	v := e.eval(x, w)
	switch {
	case v.truth == 1:
		return condResult{truth: triTrue}
	case v.truth == 2:
		return condResult{truth: triFalse}
	case v.unknown != "" || strings.ContainsRune(v.str(), markOpen):
		return condResult{}
	case v.isList:
		if len(v.list) == 0 {
			return condResult{truth: triFalse}
		}
		return condResult{}
	case v.s == "" || v.s == "0":
		return condResult{truth: triFalse}
	}
	return condResult{truth: triTrue}
}

func (e *evaluator) eval(x expr, w *world) value {
	switch x := x.(type) {
	case nil:
		return value{}
	case strLit:
		return value{s: x.s, off: x.off}
	case expandStr:
		return value{s: e.expand(x.raw, x.off, x.here, w), off: x.off}
	case varRef:
		e.noteEnv(x.name, w)
		return asWritten(w.lookup(scopeless(x.name), x.off), x.name, x.display)
	case *arrayExpr:
		var vs []value
		for _, el := range x.elems {
			vs = append(vs, e.eval(el, w))
		}
		return listOf(vs, x.off)
	case arraySub:
		vs := e.blockValues(x.body, w)
		var flat []value
		for _, v := range vs {
			flat = append(flat, v.elems()...)
		}
		return listOf(flat, x.off)
	case subExpr:
		vs := e.blockValues(x.body, w)
		if len(vs) == 1 {
			return subName(vs[0])
		}
		return listOf(vs, x.off)
	case concat:
		var b strings.Builder
		off := -1
		for _, p := range x {
			v := e.eval(p, w)
			if off < 0 {
				off = v.off
			}
			b.WriteString(v.str())
		}
		return value{s: b.String(), off: off}
	case binaryExpr:
		return e.binary(x, w)
	case unaryExpr:
		v := e.eval(x.x, w)
		switch x.op {
		case "-join":
			parts := []string{}
			for _, el := range v.elems() {
				parts = append(parts, el.str())
			}
			return value{s: strings.Join(parts, ""), off: v.off}
		case "-not":
			c := e.cond(x.x, w)
			switch c.truth {
			case triTrue:
				return value{truth: 2}
			case triFalse:
				return value{truth: 1}
			}
		}
		return unknown(x.op, v.off)
	case memberExpr:
		return e.member(x, w)
	case indexExpr:
		v := e.eval(x.x, w)
		i := e.eval(x.index, w)
		if v.isList && i.unknown == "" {
			n := 0
			for _, c := range i.s {
				if c < '0' || c > '9' {
					return unknown("[…]", v.off)
				}
				n = n*10 + int(c-'0')
			}
			if i.s != "" && n < len(v.list) {
				return v.list[n]
			}
		}
		return unknown("[…]", v.off)
	case staticCall:
		return e.static(x, w)
	case castExpr:
		v := e.eval(x.x, w)
		if x.typ == "bool" || x.typ == "switch" {
			return value{off: v.off}
		}
		return v
	case typeLit:
		return unknown("["+x.name+"]", 0)
	case hashLit:
		h := unknown("@{…}", 0)
		h.hash = map[string]value{}
		for i, v := range x.vals {
			ev := e.eval(v, w)
			if i < len(x.keys) {
				h.hash[strings.ToLower(strings.Trim(x.keys[i], `"'`))] = ev
			}
		}
		return h
	case scriptBlock:
		return unknown("{…}", 0)
	case *pipeline:
		return e.runPipeline(x, w)
	case opaque:
		if x.text != "" {
			return unknown("("+x.text+")", x.off)
		}
		return unknown("(…)", x.off)
	}
	return unknown("(…)", 0)
}

// subName names a command's unknown output read through $( … ) as the script wrote it:
// $(hostname).
func subName(v value) value {
	if strings.HasPrefix(v.unknown, "(") {
		v.unknown = "$" + v.unknown
	}
	return v
}

// blockValues runs the statements of $( … ) / @( … ) and returns the values they output.
func (e *evaluator) blockValues(b *block, w *world) []value {
	var out []value
	for _, s := range b.stmts {
		if pl, ok := s.(*pipeline); ok {
			out = append(out, e.runPipeline(pl, w))
			continue
		}
		e.execStmt(s, []*world{w})
		w.dead = false
	}
	return out
}

func (e *evaluator) binary(x binaryExpr, w *world) value {
	l := e.eval(x.l, w)
	r := e.eval(x.r, w)
	switch x.op {
	case "+":
		return add(l, r)
	case "-join":
		parts := []string{}
		for _, el := range l.elems() {
			parts = append(parts, el.str())
		}
		if l.unknown != "" {
			return unknown(l.unknown, l.off)
		}
		return value{s: strings.Join(parts, r.str()), off: l.off}
	case "-replace", "-ireplace", "-creplace":
		pat, repl := "", ""
		re := r.elems()
		if len(re) > 0 {
			pat = re[0].str()
		}
		if len(re) > 1 {
			repl = re[1].str()
		}
		if strings.ContainsRune(pat, markOpen) || strings.ContainsRune(repl, markOpen) {
			return unknown("-replace", l.off)
		}
		flags := "(?i)"
		if x.op == "-creplace" {
			flags = ""
		}
		rx, err := regexp.Compile(flags + pat)
		if err != nil {
			return unknown("-replace", l.off)
		}
		repl = dotnetReplacement(repl)
		apply := func(v value) value {
			if v.unknown != "" {
				return v
			}
			return value{s: rx.ReplaceAllString(v.str(), repl), off: v.off}
		}
		if l.isList {
			var vs []value
			for _, el := range l.list {
				vs = append(vs, apply(el))
			}
			return listOf(vs, l.off)
		}
		return apply(l)
	case "-f":
		if l.unknown != "" {
			return l
		}
		s := l.str()
		for i, a := range r.elems() {
			s = strings.ReplaceAll(s, "{"+itoa(i)+"}", a.str())
		}
		return value{s: s, off: l.off}
	}
	return unknown(x.op, l.off)
}

var reKubeVersion = regexp.MustCompile(`^v?1\.([0-9]{1,2})(?:\.[0-9]+)?$`)

// kubeMinor reads a Kubernetes version literal ("1.24", "v1.26.3") as its minor release.
func kubeMinor(v value) (int, bool) {
	if v.unknown != "" || v.isList {
		return 0, false
	}
	m := reKubeVersion.FindStringSubmatch(v.s)
	if m == nil {
		return 0, false
	}
	n, _ := atoi(value{s: m[1]})
	return n, n >= 5
}

func atoi(v value) (int, bool) {
	if v.unknown != "" || v.isList || v.s == "" || len(v.s) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range v.s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// dotnetReplacement turns .NET's $1 / ${name} replacement syntax into Go's ${1}.
func dotnetReplacement(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			b.WriteString("${" + s[i+1:j] + "}")
			i = j - 1
			continue
		}
		if s[i] == '$' && (i+1 >= len(s) || s[i+1] != '{') {
			b.WriteString("$$")
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func (e *evaluator) member(x memberExpr, w *world) value {
	v := e.eval(x.x, w)
	var args []value
	for _, a := range x.args {
		args = append(args, e.eval(a, w))
	}
	name := x.name
	if f, ok := v.hash[strings.ToLower(name)]; ok && !x.call {
		f.off = v.off
		return f
	}
	if v.hash != nil && (x.call && strings.EqualFold(name, "GetEnumerator") || !x.call && strings.EqualFold(name, "Keys")) {
		// foreach ($v in $h.GetEnumerator()) { "--$($v.Name)=$($v.Value)" } builds a command
		// line from a literal hashtable: each entry a DictionaryEntry with Key/Name and Value
		// (https://learn.microsoft.com/powershell/module/microsoft.powershell.core/about/about_hash_tables,
		// "Iterating over keys and values"). A hashtable is unordered, so entries come in
		// key order: one fixed order among those PowerShell may use.
		keys := slices.Sorted(maps.Keys(v.hash))
		list := value{isList: true, off: v.off}
		for _, k := range keys {
			if !x.call {
				list.list = append(list.list, value{s: k, off: v.off})
				continue
			}
			kv := value{s: k, off: v.off}
			list.list = append(list.list, value{unknown: "DictionaryEntry", off: v.off,
				hash: map[string]value{"key": kv, "name": kv, "value": v.hash[k]}})
		}
		return list
	}
	if v.isList && v.unknown == "" && (name == "length" || name == "count") && !hasUnknown(v) {
		return value{s: itoa(len(v.elems())), off: v.off}
	}
	if v.isList && (name == "count" || name == "length") {
		return value{unknown: "count", atLeast: len(v.list) - countUnknown(v), off: v.off}
	}
	if v.unknown != "" || v.isList || strings.ContainsRune(v.s, markOpen) {
		base := v.unknown
		if vr, ok := x.x.(varRef); ok {
			base = "$" + scopeless(vr.name)
		} else if base == "" {
			base = "value"
		}
		if v.unknown == "" && !v.isList && x.call {
			// string methods that keep unresolved parts where they are
			if r, ok := stringMethod(v.s, name, args); ok {
				return value{s: r, off: v.off}
			}
		}
		return unknown(base+"."+name, v.off)
	}
	if x.call {
		if r, ok := stringMethod(v.str(), name, args); ok {
			return value{s: r, off: v.off}
		}
	}
	if name == "length" || name == "count" {
		if v.isList {
			return value{s: itoa(len(v.list)), off: v.off}
		}
		return value{s: itoa(len(v.str())), off: v.off}
	}
	return unknown("."+name, v.off)
}

func stringMethod(s, name string, args []value) (string, bool) {
	arg := func(i int) (string, bool) {
		if i >= len(args) || args[i].unknown != "" {
			return "", false
		}
		return args[i].str(), true
	}
	switch name {
	case "tolower", "tolowerinvariant":
		return strings.ToLower(s), true
	case "toupper", "toupperinvariant":
		return strings.ToUpper(s), true
	case "tostring":
		return s, true
	case "trim", "trimstart", "trimend":
		cut := " \t\r\n"
		if len(args) > 0 {
			a, ok := arg(0)
			if !ok {
				return "", false
			}
			cut = a
		}
		switch name {
		case "trimstart":
			return strings.TrimLeft(s, cut), true
		case "trimend":
			return strings.TrimRight(s, cut), true
		}
		return strings.Trim(s, cut), true
	case "replace":
		a, ok1 := arg(0)
		b, ok2 := arg(1)
		if !ok1 || !ok2 || a == "" {
			return "", false
		}
		return strings.ReplaceAll(s, a, b), true
	}
	return "", false
}

func (e *evaluator) static(x staticCall, w *world) value {
	var args []value
	for _, a := range x.args {
		args = append(args, e.eval(a, w))
	}
	typ := strings.TrimPrefix(x.typ, "system.")
	switch {
	case (typ == "io.path" || typ == "path") && x.name == "combine":
		var parts []string
		for _, a := range args {
			parts = append(parts, strings.TrimRight(a.str(), `\/`))
		}
		return value{s: strings.Join(parts, `\`)}
	case typ == "environment" && x.name == "setenvironmentvariable" && len(args) >= 2:
		if args[0].unknown == "" {
			w.vars["env:"+strings.ToLower(args[0].str())] = args[1]
		}
		return value{}
	case (x.name == "runprocess" || (typ == "diagnostics.process" && x.name == "start")) && len(args) >= 2:
		// [RunProcess.exec]::RunProcess($exe, $args, …) (aks-engine's kubeproxystart.ps1),
		// [Diagnostics.Process]::Start($exe, $args): a program and its command line
		cl := value{s: quoteProgram(args[0].str()) + " " + args[1].str(), off: args[1].off}
		e.commandLineString(cl, "["+x.typ+"]::"+x.name, "", args[0].off, w)
		return unknown("["+x.typ+"]::"+x.name, 0)
	case typ == "environment" && x.name == "getenvironmentvariable" && len(args) >= 1:
		return w.lookup("env:"+strings.ToLower(args[0].str()), 0)
	}
	return unknown("["+x.typ+"]::"+x.name, 0)
}

func quoteProgram(p string) string {
	if strings.ContainsAny(p, " \t") {
		return `"` + p + `"`
	}
	return p
}

// expand interpolates an expandable string: `escapes, $var, ${var}, $env:X and $( … ).
func (e *evaluator) expand(raw string, off int, here bool, w *world) string {
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == markOpen:
			// an unresolved value from an outer evaluation stays as it is
			j := strings.IndexByte(raw[i:], markClose)
			if j < 0 {
				j = len(raw) - i - 1
			}
			b.WriteString(raw[i : i+j+1])
			i += j
		case c == '`' && i+1 < len(raw):
			i++
			b.WriteByte(psEscape(raw[i]))
		case c == '"' && !here && i+1 < len(raw) && raw[i+1] == '"':
			b.WriteByte('"')
			i++
		case c == '$' && i+1 < len(raw) && raw[i+1] == '(':
			end := matchParen(raw, i+2)
			inner := raw[i+2 : end]
			blk, _ := parse(inner, off+i+2)
			vs := e.blockValues(blk, w)
			if len(vs) == 1 {
				b.WriteString(subName(vs[0]).str())
			} else if len(vs) == 0 {
				b.WriteString("")
			} else {
				b.WriteString(listOf(vs, 0).str())
			}
			i = end
		case c == '$' && i+1 < len(raw) && (raw[i+1] == '{' || (isVarNameByte(raw[i+1]) && raw[i+1] != '?')):
			name, j := varName(raw, i+1)
			e.noteEnv(name, w)
			written := strings.Trim(raw[i+1:j], "{}")
			b.WriteString(asWritten(w.lookup(scopeless(name), off+i), name, written).str())
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// matchParen returns the index of the ) closing the ( before i (or len(s)).
func matchParen(s string, i int) int {
	depth := 1
	for ; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(s)
}
