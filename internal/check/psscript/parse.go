package psscript

import (
	"strings"
)

// The syntax tree holds only what building a command line needs; any other construct parses
// into an opaque expression or a generic command whose arguments are still evaluated (a
// sub-expression inside them may assign or run something).

type block struct{ stmts []stmt }

type stmt interface{}

type assignStmt struct {
	name    string // variable name, lower-case, scope prefix removed except env:
	display string // as written, for naming values the script reads at run time
	op      string // = += -=
	val     expr
	off     int
	// member is set for $x.Prop = … (evaluated; it sets an entry only of a hashtable literal).
	member bool
	// key is Prop of $x.Prop = … or $x.'Prop' = … (one member access), lower-case.
	key string
}

type ifClause struct {
	cond expr
	body *block
}

type ifStmt struct {
	clauses []ifClause
	els     *block
}

type loopStmt struct {
	varName string // foreach ($x in …)
	in      expr
	cond    expr
	body    *block
}

type tryStmt struct {
	body    *block
	catches []*block
	finally *block
}

type switchStmt struct {
	subject expr
	cases   []*block
}

type funcStmt struct {
	name   string
	params []param
	body   *block
}

type param struct {
	name string
	def  expr // nil: no default
}

type paramStmt struct{ params []param }

// flowStmt is throw, exit, return, break or continue; val is return's value (a function's
// output, such as an options-building function's argument list), when any.
type flowStmt struct {
	kind string
	val  *pipeline
}

// pipeline is one or more commands or expressions joined by |.
type pipeline struct {
	elems []*command
	// redirect is the target of > or >> after the last element, when any.
	redirect expr
}

// command is a command invocation, or an expression used as a statement.
type command struct {
	expr expr // set for an expression element
	// name is the command: a literal name or an evaluated expression (& $exe, . $x).
	name     expr
	callOp   string // "&", "." or ""
	args     []cmdArg
	off, end int
}

// cmdArg is one command argument: a -Parameter, or a value made of adjacent parts.
type cmdArg struct {
	param string // "-ArgumentList" as written (its value, if any, is the next cmdArg), or ""
	parts []expr // adjacent parts concatenated into one argument
	splat string // @name
	off   int
	// colonValue is set for -Param:value.
	colon bool
}

type expr interface{}

type strLit struct {
	s   string
	off int
}

type expandStr struct {
	raw  string
	off  int
	here bool
}

type varRef struct {
	name    string
	display string // as written
	off     int
}

type arrayExpr struct {
	elems []expr
	off   int
}

type subExpr struct {
	body *block
	off  int
}

type binaryExpr struct {
	op   string
	l, r expr
}

type unaryExpr struct {
	op string
	x  expr
}

type memberExpr struct {
	x    expr
	name string
	args []expr
	call bool
}

type indexExpr struct {
	x, index expr
}

type staticCall struct {
	typ, name string
	args      []expr
	call      bool
}

type typeLit struct{ name string }

type castExpr struct {
	typ string
	x   expr
}

type hashLit struct {
	keys []string
	vals []expr
}

type scriptBlock struct{ body *block }

type opaque struct {
	text string
	off  int
}

type parser struct {
	text string
	base int
	toks []token
	pos  int
	errs []Problem
	// depth bounds recursion on hostile input.
	depth int
}

const maxDepth = 200

func parse(src string, base int) (*block, []Problem) {
	toks, errs := lex(src, base)
	p := &parser{text: src, base: base, toks: toks, errs: errs}
	b := p.block(tEOF)
	return b, p.errs
}

// src returns a variable token's name as written ($Global:KubeletArgs → Global:KubeletArgs).
func (p *parser) src(t token) string {
	i := t.Off - p.base + 1
	if i <= 0 || i+len(t.Text) > len(p.text) {
		return t.Text
	}
	w := p.text[i : i+len(t.Text)]
	if strings.EqualFold(w, t.Text) {
		return w
	}
	return t.Text
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.Kind != tEOF {
		p.pos++
	}
	return t
}

func (p *parser) skipNewlines() {
	for p.peek().Kind == tNewline {
		p.next()
	}
}

func (p *parser) fail(off int, msg string) { p.errs = append(p.errs, Problem{Off: off, Message: msg}) }

// block parses statements up to the closing token (tRBrace or tEOF), consuming it.
func (p *parser) block(end tokKind) *block {
	b := &block{}
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		p.fail(p.peek().Off, "nesting too deep")
		for p.peek().Kind != tEOF {
			p.next()
		}
		return b
	}
	for {
		p.skipNewlines()
		t := p.peek()
		if t.Kind == tEOF || t.Kind == end {
			if t.Kind == end {
				p.next()
			} else if end != tEOF {
				p.fail(t.Off, "missing closing }")
			}
			return b
		}
		if t.Kind == tRBrace || t.Kind == tRParen {
			// stray closer: skip it
			p.next()
			continue
		}
		start := p.pos
		if s := p.statement(); s != nil {
			b.stmts = append(b.stmts, s)
		}
		if p.pos == start {
			p.next()
		}
	}
}

// braceBlock parses "{ … }" after optional newlines; nil when there is no brace.
func (p *parser) braceBlock() *block {
	p.skipNewlines()
	if p.peek().Kind != tLBrace {
		return nil
	}
	p.next()
	return p.block(tRBrace)
}

func keyword(t token) string {
	if t.Kind != tWord {
		return ""
	}
	switch w := strings.ToLower(t.Text); w {
	case "if", "foreach", "for", "while", "do", "try", "switch", "function", "filter", "param",
		"throw", "exit", "return", "break", "continue", "begin", "process", "end", "trap":
		return w
	}
	return ""
}

func (p *parser) statement() stmt {
	t := p.peek()
	switch keyword(t) {
	case "if":
		return p.ifStatement()
	case "foreach", "for", "while":
		p.next()
		ls := &loopStmt{}
		if p.peek().Kind == tLParen {
			p.next()
			if t.Text != "" && strings.EqualFold(t.Text, "foreach") && p.peek().Kind == tVar {
				ls.varName = scopeless(p.next().Text)
				if w := p.peek(); w.Kind == tWord && strings.EqualFold(w.Text, "in") {
					p.next()
				}
				ls.in = p.expression()
			} else {
				ls.cond = p.expression()
			}
			p.skipTo(tRParen)
		}
		ls.body = p.braceBlock()
		return ls
	case "do":
		p.next()
		ls := &loopStmt{body: p.braceBlock()}
		p.skipNewlines()
		if w := p.peek(); w.Kind == tWord && (strings.EqualFold(w.Text, "while") || strings.EqualFold(w.Text, "until")) {
			p.next()
			if p.peek().Kind == tLParen {
				p.next()
				ls.cond = p.expression()
				p.skipTo(tRParen)
			}
		}
		return ls
	case "try":
		p.next()
		ts := &tryStmt{body: p.braceBlock()}
		for {
			save := p.pos
			p.skipNewlines()
			w := p.peek()
			if w.Kind == tWord && strings.EqualFold(w.Text, "catch") {
				p.next()
				for p.peek().Kind == tLBracket { // catch [Type]
					p.typeName()
				}
				ts.catches = append(ts.catches, p.braceBlock())
				continue
			}
			if w.Kind == tWord && strings.EqualFold(w.Text, "finally") {
				p.next()
				ts.finally = p.braceBlock()
				continue
			}
			p.pos = save
			break
		}
		return ts
	case "switch":
		p.next()
		for p.peek().Kind == tWord && strings.HasPrefix(p.peek().Text, "-") {
			p.next()
		}
		ss := &switchStmt{}
		if p.peek().Kind == tLParen {
			p.next()
			ss.subject = p.expression()
			p.skipTo(tRParen)
		}
		p.skipNewlines()
		if p.peek().Kind == tLBrace {
			p.next()
			for {
				p.skipNewlines()
				k := p.peek()
				if k.Kind == tRBrace || k.Kind == tEOF {
					p.next()
					break
				}
				if k.Kind == tLBrace {
					p.next()
					ss.cases = append(ss.cases, p.block(tRBrace))
					continue
				}
				p.next() // a case label
			}
		}
		return ss
	case "function", "filter":
		p.next()
		p.skipNewlines()
		fs := &funcStmt{name: strings.ToLower(p.next().Text)}
		if p.peek().Kind == tLParen {
			p.next()
			fs.params = p.paramList()
		}
		fs.body = p.braceBlock()
		if fs.body != nil {
			// param() inside the body
			for _, s := range fs.body.stmts {
				if ps, ok := s.(*paramStmt); ok {
					fs.params = append(fs.params, ps.params...)
				}
			}
		}
		return fs
	case "param":
		p.next()
		p.skipNewlines()
		if p.peek().Kind != tLParen {
			return nil
		}
		p.next()
		return &paramStmt{params: p.paramList()}
	case "throw", "exit", "return", "break", "continue":
		p.next()
		fs := &flowStmt{kind: strings.ToLower(t.Text)}
		if t.Text != "" && !strings.EqualFold(t.Text, "break") && !strings.EqualFold(t.Text, "continue") {
			if k := p.peek().Kind; k != tNewline && k != tRBrace && k != tEOF {
				fs.val = p.pipeline()
			}
		}
		return fs
	case "begin", "process", "end":
		if p.toks[p.pos+1].Kind == tLBrace || p.toks[p.pos+1].Kind == tNewline {
			p.next()
			b := p.braceBlock()
			if b == nil {
				return nil
			}
			return &ifStmt{els: b}
		}
	case "trap":
		p.next()
		if p.peek().Kind == tLBracket {
			p.typeName()
		}
		p.braceBlock()
		return nil
	}
	// assignment: [type] $x = …, $x = …, $x += …, $x.Prop = …
	save := p.pos
	for p.peek().Kind == tLBracket {
		p.typeName()
	}
	if v := p.peek(); v.Kind == tVar && !v.Splat {
		p.next()
		member, key, accesses := false, "", 0
		for {
			w := p.peek()
			if w.Kind == tWord && !w.Space && strings.HasPrefix(w.Text, ".") && w.Text != "." {
				p.next()
				member = true
				accesses++
				key = strings.ToLower(strings.Trim(strings.TrimPrefix(w.Text, "."), `"'`))
				continue
			}
			if (w.Kind == tOp || w.Kind == tWord) && w.Text == "." && !w.Space {
				// $h.'quoted-key' = …: "." then a string
				p.next()
				member = true
				accesses++
				key = ""
				if q := p.peek(); q.Kind == tString && !q.Space {
					p.next()
					key = strings.ToLower(q.Raw)
				}
				continue
			}
			if w.Kind == tLBracket && !w.Space {
				p.next()
				p.skipTo(tRBracket)
				member = true
				accesses += 2 // an index: not one known key
				continue
			}
			break
		}
		if op := p.peek(); op.Kind == tOp && (op.Text == "=" || op.Text == "+=" || op.Text == "-=") {
			p.next()
			p.skipNewlines()
			as := &assignStmt{name: scopeless(v.Text), display: scopeless(p.src(v)), op: op.Text, off: v.Off, member: member}
			if accesses == 1 {
				as.key = key
			}
			as.val = p.assignValue()
			return as
		}
	}
	p.pos = save
	return p.pipeline()
}

// assignValue: the right-hand side of an assignment is a pipeline (a command's output) or an
// expression; a pipeline of one expression is that expression.
func (p *parser) assignValue() expr {
	pl := p.pipeline()
	if pl == nil || len(pl.elems) == 0 {
		return opaque{}
	}
	if len(pl.elems) == 1 && pl.elems[0].expr != nil && pl.redirect == nil {
		return pl.elems[0].expr
	}
	return pl
}

func (p *parser) ifStatement() stmt {
	is := &ifStmt{}
	p.next()
	for {
		p.skipNewlines()
		var cond expr = opaque{}
		if p.peek().Kind == tLParen {
			p.next()
			cond = p.pipelineExpr()
			p.skipTo(tRParen)
		}
		body := p.braceBlock()
		if body == nil {
			body = &block{}
		}
		is.clauses = append(is.clauses, ifClause{cond: cond, body: body})
		save := p.pos
		p.skipNewlines()
		w := p.peek()
		if w.Kind == tWord && strings.EqualFold(w.Text, "elseif") {
			p.next()
			continue
		}
		if w.Kind == tWord && strings.EqualFold(w.Text, "else") {
			p.next()
			is.els = p.braceBlock()
			return is
		}
		p.pos = save
		return is
	}
}

// pipelineExpr parses a condition: an expression, or a pipeline whose value is unknown.
func (p *parser) pipelineExpr() expr {
	pl := p.pipeline()
	if pl == nil || len(pl.elems) == 0 {
		return opaque{}
	}
	if len(pl.elems) == 1 && pl.elems[0].expr != nil {
		return pl.elems[0].expr
	}
	return pl
}

// skipTo consumes tokens up to and including the first unmatched closer of kind k.
func (p *parser) skipTo(k tokKind) {
	depth := 0
	for {
		t := p.peek()
		switch t.Kind {
		case tEOF:
			return
		case tLParen, tAtParen, tSubExpr, tLBrace, tAtBrace, tLBracket:
			depth++
		case tRParen, tRBrace, tRBracket:
			if depth == 0 {
				if t.Kind == k {
					p.next()
				}
				return
			}
			depth--
		}
		p.next()
	}
}

// typeName consumes [Type] (and [Type[]], [Type(args)] attributes) and returns the name.
func (p *parser) typeName() string {
	start := p.next() // [
	var b strings.Builder
	depth := 0
	for {
		t := p.peek()
		if t.Kind == tEOF {
			p.fail(start.Off, "unterminated type literal")
			return b.String()
		}
		p.next()
		switch t.Kind {
		case tLBracket, tLParen:
			depth++
		case tRParen:
			depth--
		case tRBracket:
			if depth == 0 {
				return b.String()
			}
			depth--
		case tWord:
			if depth == 0 {
				b.WriteString(t.Text)
			}
		}
	}
}

// paramList parses "… )" of param( … ) or function f( … ).
func (p *parser) paramList() []param {
	var out []param
	for {
		p.skipNewlines()
		t := p.peek()
		switch t.Kind {
		case tEOF:
			return out
		case tRParen:
			p.next()
			return out
		case tLBracket:
			p.typeName()
		case tOp:
			p.next() // ,
		case tVar:
			p.next()
			pr := param{name: scopeless(t.Text)}
			if op := p.peek(); op.Kind == tOp && op.Text == "=" {
				p.next()
				pr.def = p.additiveOrComparison()
			}
			out = append(out, pr)
		default:
			p.next()
		}
	}
}

// pipeline parses command (| command)* up to the end of the statement.
func (p *parser) pipeline() *pipeline {
	pl := &pipeline{}
	for {
		c := p.command()
		if c != nil {
			pl.elems = append(pl.elems, c)
		}
		t := p.peek()
		if t.Kind == tOp && t.Text == "|" {
			p.next()
			p.skipNewlines()
			continue
		}
		if t.Kind == tOp && (t.Text == ">" || t.Text == ">>") {
			p.next()
			pl.redirect = p.argValue()
			continue
		}
		if t.Kind == tOp && (t.Text == "&&" || t.Text == "2>&1" || t.Text == "*>&1") {
			p.next()
			continue
		}
		return pl
	}
}

func startsExpression(t token) bool {
	switch t.Kind {
	case tVar, tString, tLParen, tAtParen, tAtBrace, tSubExpr, tLBracket:
		return true
	case tOp:
		return t.Text == "!" || t.Text == ","
	case tWord:
		if isNumber(t.Text) {
			return true
		}
		switch strings.ToLower(t.Text) {
		case "-not", "-join", "-split", "-bnot":
			return true
		}
	}
	return false
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '.' {
			return false
		}
	}
	return s[0] != '.'
}

func atStatementEnd(t token) bool {
	switch t.Kind {
	case tEOF, tNewline, tRBrace, tRParen:
		return true
	case tOp:
		switch t.Text {
		case "|", ">", ">>", "&&", "2>&1", "*>&1":
			return true
		}
	}
	return false
}

// command parses one pipeline element.
func (p *parser) command() *command {
	t := p.peek()
	if atStatementEnd(t) {
		return nil
	}
	c := &command{off: t.Off}
	if (t.Kind == tOp && t.Text == "&") || (t.Kind == tWord && t.Text == ".") {
		p.next()
		c.callOp = t.Text
		c.name = p.argValue()
	} else if startsExpression(t) {
		c.expr = p.expression()
		c.end = p.peek().Off
		return c
	} else {
		c.name = p.argValue()
	}
	for {
		t := p.peek()
		if atStatementEnd(t) {
			break
		}
		a := cmdArg{off: t.Off}
		switch {
		case t.Kind == tVar && t.Splat:
			p.next()
			a.splat = t.Text
		case t.Kind == tWord && isParamName(t.Text):
			p.next()
			a.param = t.Text
			if strings.HasSuffix(t.Text, ":") {
				a.param = strings.TrimSuffix(t.Text, ":")
				a.colon = true
				a.parts = []expr{p.argValue()}
			}
		default:
			a.parts = p.argParts()
		}
		c.args = append(c.args, a)
	}
	c.end = p.peek().Off
	return c
}

// isParamName: -Name (a PowerShell parameter), not --flag (a native program's flag) nor -5.
func isParamName(s string) bool {
	if len(s) < 2 || s[0] != '-' || s[1] == '-' {
		return false
	}
	c := s[1]
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'
}

// argValue parses one argument and returns it as a single expression.
func (p *parser) argValue() expr {
	parts := p.argParts()
	if len(parts) == 1 {
		return parts[0]
	}
	return concat(parts)
}

// concat is an argument made of adjacent parts.
type concat []expr

// argParts parses the adjacent parts of one command-mode argument; a comma joins elements
// into an array (about_Parsing: "a,b" in argument mode is an array).
func (p *parser) argParts() []expr {
	var parts []expr
	first := true
	for {
		t := p.peek()
		if atStatementEnd(t) || (!first && t.Space) {
			break
		}
		if t.Kind == tOp && t.Text == "," && !t.Space && len(parts) > 0 && dashWord(parts[0]) {
			// A native flag keeps its commas: AKS's kubeletstart.ps1 ran
			// --tls-cipher-suites=A,B and --kube-reserved=cpu=…,memory=… unquoted for years,
			// which the kubelet would have refused as positional arguments otherwise.
			p.next()
			parts = append(parts, strLit{s: ",", off: t.Off})
			continue
		}
		if t.Kind == tOp && t.Text == "," {
			// array in argument mode: a,b,c
			p.next()
			rest := p.argParts()
			left := expr(concat(parts))
			if len(parts) == 1 {
				left = parts[0]
			}
			arr := &arrayExpr{elems: []expr{left}, off: t.Off}
			if len(rest) == 1 {
				if ra, ok := rest[0].(*arrayExpr); ok {
					arr.elems = append(arr.elems, ra.elems...)
					return []expr{arr}
				}
				arr.elems = append(arr.elems, rest[0])
			} else if len(rest) > 1 {
				arr.elems = append(arr.elems, concat(rest))
			}
			return []expr{arr}
		}
		first = false
		switch t.Kind {
		case tWord:
			p.next()
			parts = append(parts, strLit{s: unescapeWord(t.Text), off: t.Off})
		case tOp:
			p.next()
			parts = append(parts, strLit{s: t.Text, off: t.Off})
		case tLBracket:
			// a [ that opens nothing in argument mode is text
			p.next()
			parts = append(parts, strLit{s: "[", off: t.Off})
		case tRBracket:
			p.next()
			parts = append(parts, strLit{s: "]", off: t.Off})
		default:
			parts = append(parts, p.postfix(p.primary()))
		}
	}
	return parts
}

func dashWord(x expr) bool {
	l, ok := x.(strLit)
	return ok && strings.HasPrefix(l.s, "-")
}

// unescapeWord applies backtick escapes in a generic token.
func unescapeWord(s string) string {
	if !strings.Contains(s, "`") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '`' && i+1 < len(s) {
			i++
			b.WriteByte(psEscape(s[i]))
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func psEscape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	case '0':
		return 0
	}
	return c
}

// Expression grammar, loosest first: -and/-or, comparison, -join/-replace/-f/-split, comma,
// additive, unary, postfix, primary (about_Operator_Precedence, simplified).

var logicalOps = map[string]bool{"-and": true, "-or": true, "-xor": true}

var comparisonOps = map[string]bool{
	"-eq": true, "-ne": true, "-ieq": true, "-ine": true, "-ceq": true, "-cne": true,
	"-like": true, "-notlike": true, "-ilike": true, "-match": true, "-notmatch": true, "-imatch": true,
	"-lt": true, "-le": true, "-gt": true, "-ge": true, "-contains": true, "-notcontains": true,
	"-in": true, "-notin": true, "-is": true, "-isnot": true, "-as": true,
	"-join": true, "-replace": true, "-ireplace": true, "-creplace": true, "-split": true, "-f": true,
}

func (p *parser) expression() expr {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		p.fail(p.peek().Off, "expression nested too deep")
		p.next()
		return opaque{}
	}
	return p.binaryLevel(logicalOps, p.comparison)
}

func (p *parser) comparison() expr { return p.binaryLevel(comparisonOps, p.commaList) }

// binaryLevel parses operand (op operand)* for the word operators in ops, left-associative.
func (p *parser) binaryLevel(ops map[string]bool, operand func() expr) expr {
	l := operand()
	for {
		t := p.peek()
		if t.Kind != tWord || !ops[strings.ToLower(t.Text)] {
			return l
		}
		p.next()
		p.skipNewlines()
		l = binaryExpr{op: strings.ToLower(t.Text), l: l, r: operand()}
	}
}

func (p *parser) commaList() expr {
	first := p.additive()
	if t := p.peek(); !(t.Kind == tOp && t.Text == ",") {
		return first
	}
	arr := &arrayExpr{elems: []expr{first}}
	for {
		t := p.peek()
		if !(t.Kind == tOp && t.Text == ",") {
			return arr
		}
		p.next()
		p.skipNewlines()
		arr.elems = append(arr.elems, p.additive())
	}
}

func (p *parser) additive() expr {
	l := p.unary()
	for {
		t := p.peek()
		if (t.Kind == tOp && t.Text == "+") || (t.Kind == tWord && (t.Text == "-" || t.Text == "*" || t.Text == "/" || t.Text == "%")) {
			p.next()
			p.skipNewlines()
			l = binaryExpr{op: t.Text, l: l, r: p.unary()}
			continue
		}
		return l
	}
}

func (p *parser) unary() expr {
	t := p.peek()
	switch {
	case t.Kind == tOp && (t.Text == "!" || t.Text == ","):
		p.next()
		if t.Text == "," {
			return &arrayExpr{elems: []expr{p.unary()}, off: t.Off}
		}
		return unaryExpr{op: "-not", x: p.unary()}
	case t.Kind == tWord && (strings.EqualFold(t.Text, "-not") || strings.EqualFold(t.Text, "-join") || strings.EqualFold(t.Text, "-split") || strings.EqualFold(t.Text, "-bnot")):
		p.next()
		return unaryExpr{op: strings.ToLower(t.Text), x: p.unary()}
	case t.Kind == tLBracket:
		name := p.typeName()
		nt := p.peek()
		if nt.Kind == tWord && !nt.Space && strings.HasPrefix(nt.Text, "::") {
			p.next()
			sc := staticCall{typ: strings.ToLower(name), name: strings.ToLower(nt.Text[2:])}
			if q := p.peek(); q.Kind == tLParen && !q.Space {
				p.next()
				sc.args = p.callArgs()
				sc.call = true
			}
			return p.postfix(sc)
		}
		if startsExpression(nt) && nt.Kind != tOp {
			return castExpr{typ: strings.ToLower(name), x: p.unary()}
		}
		return typeLit{name: strings.ToLower(name)}
	}
	return p.postfix(p.primary())
}

// callArgs parses "a, b, c)" of a method call.
func (p *parser) callArgs() []expr {
	var args []expr
	for {
		p.skipNewlines()
		t := p.peek()
		if t.Kind == tRParen || t.Kind == tEOF {
			p.next()
			return args
		}
		start := p.pos
		e := p.additiveOrComparison()
		args = append(args, e)
		p.skipNewlines()
		if t := p.peek(); t.Kind == tOp && t.Text == "," {
			p.next()
		}
		if p.pos == start {
			p.next()
		}
	}
}

// additiveOrComparison is an expression without the comma operator (method arguments).
func (p *parser) additiveOrComparison() expr {
	l := p.additive()
	for {
		t := p.peek()
		if t.Kind == tWord && (comparisonOps[strings.ToLower(t.Text)] || logicalOps[strings.ToLower(t.Text)]) {
			p.next()
			l = binaryExpr{op: strings.ToLower(t.Text), l: l, r: p.additive()}
			continue
		}
		return l
	}
}

func (p *parser) postfix(x expr) expr {
	for {
		t := p.peek()
		if t.Space {
			return x
		}
		switch {
		case t.Kind == tWord && strings.HasPrefix(t.Text, ".") && len(t.Text) > 1:
			p.next()
			m := memberExpr{x: x, name: strings.ToLower(strings.TrimPrefix(t.Text, "."))}
			if q := p.peek(); q.Kind == tLParen && !q.Space {
				p.next()
				m.args = p.callArgs()
				m.call = true
			}
			x = m
		case t.Kind == tWord && strings.HasPrefix(t.Text, "::") && len(t.Text) > 2:
			p.next()
			m := memberExpr{x: x, name: strings.ToLower(t.Text[2:])}
			if q := p.peek(); q.Kind == tLParen && !q.Space {
				p.next()
				m.args = p.callArgs()
				m.call = true
			}
			x = m
		case t.Kind == tLBracket:
			p.next()
			idx := p.expression()
			p.skipTo(tRBracket)
			x = indexExpr{x: x, index: idx}
		default:
			return x
		}
	}
}

func (p *parser) primary() expr {
	t := p.next()
	switch t.Kind {
	case tString:
		if t.Exp {
			return expandStr{raw: t.Raw, off: t.Off, here: t.Here}
		}
		return strLit{s: t.Raw, off: t.Off}
	case tVar:
		return varRef{name: t.Text, display: p.src(t), off: t.Off}
	case tLParen:
		p.skipNewlines()
		if p.peek().Kind == tRParen {
			p.next()
			return &arrayExpr{off: t.Off}
		}
		e := p.pipelineExpr()
		p.skipNewlines()
		p.skipTo(tRParen)
		return e
	case tAtParen:
		b := p.block(tRParen)
		return subExpr{body: b, off: t.Off}.asArray()
	case tSubExpr:
		return subExpr{body: p.block(tRParen), off: t.Off}
	case tAtBrace:
		return p.hashLiteral()
	case tLBrace:
		return scriptBlock{body: p.block(tRBrace)}
	case tWord:
		if isNumber(t.Text) {
			return strLit{s: t.Text, off: t.Off}
		}
		// a bare word in expression mode: a command whose output is the value
		return opaque{text: t.Text, off: t.Off}
	}
	return opaque{text: t.Text, off: t.Off}
}

// asArray marks @( … ): its value is always an array.
func (s subExpr) asArray() expr { return arraySub(s) }

type arraySub subExpr

func (p *parser) hashLiteral() expr {
	h := hashLit{}
	for {
		p.skipNewlines()
		t := p.peek()
		if t.Kind == tRBrace || t.Kind == tEOF {
			p.next()
			return h
		}
		key := p.next()
		k := key.Text
		if key.Kind == tString {
			k = key.Raw
		}
		if op := p.peek(); op.Kind == tOp && op.Text == "=" {
			p.next()
			p.skipNewlines()
			h.keys = append(h.keys, strings.ToLower(k))
			h.vals = append(h.vals, p.assignValue())
		}
	}
}

// scopeless drops the global:/script:/local:/private: qualifier; env: is kept.
func scopeless(name string) string {
	for _, pfx := range []string{"global:", "script:", "local:", "private:", "using:"} {
		if strings.HasPrefix(name, pfx) {
			return name[len(pfx):]
		}
	}
	return name
}
