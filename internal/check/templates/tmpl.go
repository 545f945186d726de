// Package templates finds template-engine syntax in configuration artefacts — Jinja2 and Ansible
// ({{ expr }}, {% stmt %}, {# comment #}), Go text/template and Helm ({{ .X }}, {{- if }},
// {{ end }}), and Ruby ERB (<%= expr %>, <% code %>, <%- code -%>, <%# comment %>; BOSH job
// templates, Chef and Puppet templates) — so that check reads a template as what it is: text whose placeholders are known
// only when the template is rendered. It is the first step of check's input stage, before any
// language reader runs.
//
// Syntax facts: Jinja2 delimiters and whitespace control ({%- -%}, {{- -}}) from
// https://jinja.palletsprojects.com/en/stable/templates/ ("Synopsis", "Whitespace Control");
// Ansible renders with trim_blocks=True, so a line holding only a statement disappears from the
// output (https://docs.ansible.com/ansible/latest/collections/ansible/builtin/template_module.html,
// option trim_blocks, default true). Go template actions and their trim markers from
// https://pkg.go.dev/text/template ("Text and spaces", "Actions"). ERB tags from Ruby's ERB
// documentation (https://docs.ruby-lang.org/en/master/ERB.html, "Recognized Tags": <% code %>,
// <%= expr %>, <%# comment %>, <%% a literal <%; trim_mode "-" adds <%- and -%>, which BOSH
// uses: https://bosh.io/docs/jobs/#templates); a code tag may run over many lines.
package templates

import (
	"strings"
)

// Kind of a template span.
type Kind int

const (
	// Expr is an expression whose value is inserted ({{ x }}, {{ .Values.x | quote }}).
	Expr Kind = iota + 1
	// Stmt is a statement that controls rendering ({% if %}, {% endfor %}, {{ if .X }},
	// {{- end }}); it inserts no text of its own.
	Stmt
	// Comment is a template comment ({# … #}, {{/* … */}}).
	Comment
)

// Span is one template construct at [Start, End) of the text.
type Span struct {
	Start, End int
	Kind       Kind
	// Inner is the text between the delimiters, trim markers and spaces removed.
	Inner string
}

// goStmts are the Go template actions that control rendering instead of inserting a value
// (text/template "Actions"); "template"/"include" insert text and stay expressions.
var goStmts = map[string]bool{"if": true, "else": true, "end": true, "range": true, "with": true,
	"define": true, "block": true, "break": true, "continue": true}

// Scan returns the template spans of text in order (see At for what a span is).
func Scan(text string) []Span {
	var out []Span
	lastERB := strings.LastIndex(text, "%>")
	for i := 0; i+1 < len(text); i++ {
		if text[i] != '{' && (text[i] != '<' || i > lastERB) {
			continue
		}
		if s, ok := At(text, i); ok {
			out = append(out, s)
			i = s.End - 1
		}
	}
	return out
}

// At returns the template span that starts at offset i of text, if one does. Expressions and
// statements close on the line they open (as templates are written; it also keeps a text full
// of openers linear); comments may run over lines. An opener without its closer is not a span
// (a PowerShell scriptblock "{{" nested in code), nor is "{{" that opens a JSON object inside
// an object ({"a":{"b":1}}).
func At(text string, i int) (Span, bool) {
	if i+1 < len(text) && text[i] == '<' {
		return erbAt(text, i)
	}
	if i+1 >= len(text) || text[i] != '{' {
		return Span{}, false
	}
	var closer string
	kind := Expr
	switch text[i+1] {
	case '{':
		closer = "}}"
	case '%':
		closer, kind = "%}", Stmt
	case '#':
		closer, kind = "#}", Comment
	default:
		return Span{}, false
	}
	rest := text[i+2:]
	if kind != Comment && !strings.HasPrefix(strings.TrimLeft(rest, "- "), "/*") {
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[:nl]
		}
	}
	j := strings.Index(rest, closer)
	if j < 0 {
		return Span{}, false
	}
	end := i + 2 + j + 2
	inner := strings.TrimSpace(strings.Trim(strings.TrimSpace(text[i+2:end-2]), "-+"))
	if kind == Expr {
		if inner == "" || strings.HasPrefix(inner, "\"") && strings.Contains(inner, "\":") {
			return Span{}, false
		}
		word := inner
		if k := strings.IndexAny(word, " \t("); k >= 0 {
			word = word[:k]
		}
		switch {
		case strings.HasPrefix(inner, "/*"):
			kind = Comment
		case goStmts[word]:
			kind = Stmt
		}
	}
	return Span{Start: i, End: end, Kind: kind, Inner: inner}, true
}

// erbAt reads an ERB tag at offset i: <%= … %> (or <%== … %>) inserts a value, <%# … %> is a
// comment, any other <% … %> is Ruby code that controls rendering (if/each/end, assignments)
// and inserts nothing of its own. <%% is ERB's escape for a literal "<%", not a tag. Tags may
// run over lines (BOSH templates put whole Ruby blocks in one <%- … -%>).
func erbAt(text string, i int) (Span, bool) {
	if !strings.HasPrefix(text[i:], "<%") || strings.HasPrefix(text[i:], "<%%") {
		return Span{}, false
	}
	open := i + 2
	kind := Stmt
	switch {
	case strings.HasPrefix(text[open:], "=="):
		kind, open = Expr, open+2
	case strings.HasPrefix(text[open:], "="):
		kind, open = Expr, open+1
	case strings.HasPrefix(text[open:], "#"):
		kind, open = Comment, open+1
	case strings.HasPrefix(text[open:], "-"):
		open++
	}
	j := strings.Index(text[open:], "%>")
	if j < 0 {
		return Span{}, false
	}
	end := open + j + 2
	inner := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(text[open:end-2]), "-"))
	if kind == Expr && inner == "" {
		return Span{}, false
	}
	return Span{Start: i, End: end, Kind: kind, Inner: inner}, true
}

// IsERB reports whether s is an ERB span (<% … %>) rather than a Jinja or Go one.
func (s Span) IsERB(text string) bool { return strings.HasPrefix(text[s.Start:], "<%") }

// HasSyntax reports whether text holds template-engine syntax: a statement or comment, or an
// expression span. A lone "{{" in code is not enough (Scan requires the closer).
func HasSyntax(text string) bool {
	if !strings.Contains(text, "{{") && !strings.Contains(text, "{%") && !strings.Contains(text, "{#") && !strings.Contains(text, "<%") {
		return false
	}
	return len(Scan(text)) > 0
}

// Info describes the template syntax of a file.
type Info struct {
	// Exprs are the placeholder expressions in order of appearance (Inner text), each once.
	Exprs []string
	// StmtLines are the 1-based lines that hold only statements or comments: the renderer
	// drops them (trim_blocks), so a command continued across them continues.
	StmtLines map[int]bool
	// IncludeLines are lines that hold only an expression: text of unknown shape (an included
	// block, toYaml of a value) is inserted there.
	IncludeLines map[int]bool
	// Conditional is set when the file has statements: parts of it are rendered or not.
	Conditional bool
}

// Describe summarises the template syntax of text.
func Describe(text string) Info {
	info := Info{StmtLines: map[int]bool{}, IncludeLines: map[int]bool{}}
	spans := Scan(text)
	seen := map[string]bool{}
	for _, s := range spans {
		switch s.Kind {
		case Expr:
			if !seen[s.Inner] {
				seen[s.Inner] = true
				info.Exprs = append(info.Exprs, s.Inner)
			}
		case Stmt:
			info.Conditional = true
		}
	}
	forLines(text, spans, func(line int, only Kind) {
		switch only {
		case Stmt, Comment:
			info.StmtLines[line] = true
		case Expr:
			info.IncludeLines[line] = true
		}
	})
	return info
}

// forLines calls fn for every line made only of template spans (and blanks): only is Expr
// when an expression is among them, else Stmt or Comment.
func forLines(text string, spans []Span, fn func(line int, only Kind)) {
	k := 0
	start, line := 0, 1
	for start <= len(text) {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		for k < len(spans) && spans[k].End <= start {
			k++
		}
		only, pos, ok := Kind(0), start, true
		lines := 1 // lines covered: more when a statement or comment runs over lines
		for j := k; ok; j++ {
			for pos < end && isBlank(text[pos]) {
				pos++
			}
			if pos >= end {
				break
			}
			if j >= len(spans) || spans[j].Start != pos {
				ok = false
				break
			}
			if spans[j].Kind == Expr || only == 0 {
				only = spans[j].Kind
			}
			pos = spans[j].End
			if pos > end {
				// a span running over lines: the lines it covers hold nothing else. A
				// statement or comment so written (an ERB <%- … -%> block of Ruby) drops
				// all of them when the rest of its last line is blank; an expression
				// inserts text of unknown shape, so such lines are left as they are
				if spans[j].Kind == Expr || only == Expr {
					ok = false
					break
				}
				lines += strings.Count(text[end:pos], "\n")
				if e := strings.IndexByte(text[pos:], '\n'); e < 0 {
					end = len(text)
				} else {
					end = pos + e
				}
			}
		}
		if ok && only != 0 {
			for l := line; l < line+lines; l++ {
				fn(l, only)
			}
		}
		if end == len(text) {
			break
		}
		start, line = end+1, line+lines
	}
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

// Blank rewrites a template of a data format (YAML, JSON, TOML) so that its parser reads the
// rendered structure, keeping every line where it was: statement and comment spans become
// spaces, a line holding only an expression becomes blank (its text is unknown), and an
// expression written where a value belongs unquoted is quoted, so the value is the
// placeholder text and rules can see it is one (an unquoted whole YAML mapping value becomes
// null: see quote). Line numbers are unchanged; columns on a line
// with a quoted placeholder shift by two.
func Blank(text string) string {
	spans := Scan(text)
	if len(spans) == 0 {
		return text
	}
	if t := firstBranches(text, spans); t != text {
		text, spans = t, Scan(t)
	}
	blankLine := map[int]bool{}
	forLines(text, spans, func(line int, only Kind) { blankLine[line] = true })
	var b strings.Builder
	b.Grow(len(text) + 16)
	line, pos, skip := 1, 0, 0
	for i, s := range spans {
		if i < skip {
			continue // inside a scalar already written
		}
		skip = i + 1
		b.WriteString(text[pos:s.Start])
		line += strings.Count(text[pos:s.Start], "\n")
		body := text[s.Start:s.End]
		switch {
		case s.Kind != Expr || blankLine[line]:
			b.WriteString(spaces(body))
		case insideQuotes(text, s.Start):
			b.WriteString(body)
		default:
			if end, ok := scalarRunsOn(text, s); ok {
				// the placeholder starts a plain scalar that goes on after it
				// ({{ host }}:{{ port }}, {{ dir }}/ca.crt): the whole scalar is the value
				whole := text[s.Start:end]
				b.WriteString(`"` + strings.ReplaceAll(strings.ReplaceAll(whole, `\`, `\\`), `"`, `'`) + `"`)
				line += strings.Count(whole, "\n")
				pos = end
				for skip < len(spans) && spans[skip].Start < end {
					skip++
				}
				continue
			}
			b.WriteString(quote(text, s))
		}
		line += strings.Count(body, "\n")
		pos = s.End
	}
	b.WriteString(text[pos:])
	return b.String()
}

// firstBranches blanks the {% elif %}/{% else %} branches of every conditional (Go
// templates' {{ else }} and {{ else if }} too), keeping lines: a data format rendered with
// each condition's first branch is one rendering the template can produce, where the union
// of the branches (what scripts are read as) would give a mapping the same key twice.
func firstBranches(text string, spans []Span) string {
	type frame struct {
		isIf, skipping bool
		from           int
	}
	var stack []frame
	var cut [][2]int
	for _, sp := range spans {
		if sp.Kind != Stmt {
			continue
		}
		word := sp.Inner
		if k := strings.IndexAny(word, " \t("); k >= 0 {
			word = word[:k]
		}
		top := len(stack) - 1
		switch word {
		case "if":
			stack = append(stack, frame{isIf: true})
		case "for", "range", "with", "define", "block", "macro", "call", "filter", "raw", "set":
			if word == "set" && !strings.Contains(sp.Inner, "=") {
				stack = append(stack, frame{}) // a block set ({% set x %}…{% endset %})
			} else if word != "set" {
				stack = append(stack, frame{})
			}
		case "elif", "else":
			if top >= 0 && !stack[top].skipping {
				stack[top].skipping, stack[top].from = true, sp.Start
			}
		case "end", "endif", "endfor", "endmacro", "endcall", "endfilter", "endraw", "endset", "endblock", "endwith":
			if top < 0 {
				continue
			}
			if stack[top].skipping {
				cut = append(cut, [2]int{stack[top].from, sp.Start})
			}
			stack = stack[:top]
		}
	}
	if len(cut) == 0 {
		return text
	}
	b := []byte(text)
	for _, c := range cut {
		for i := c[0]; i < c[1]; i++ {
			if b[i] != '\n' && b[i] != '\r' {
				b[i] = ' '
			}
		}
	}
	return string(b)
}

// OnlyStatements reports whether line holds only template statements and comments ({% if %},
// {{- end }}, {# … #}) and blanks: a line the renderer drops.
func OnlyStatements(line string) bool {
	found := false
	forLines(line, Scan(line), func(_ int, only Kind) { found = only != Expr })
	return found
}

// spaces replaces every byte of s but line ends with a space.
func spaces(s string) string {
	r := []byte(s)
	for i, c := range r {
		if c != '\n' && c != '\r' {
			r[i] = ' '
		}
	}
	return string(r)
}

// insideQuotes reports whether offset at of text lies inside a '…' or "…" string that opened
// earlier on the same line.
func insideQuotes(text string, at int) bool {
	ls := strings.LastIndexByte(text[:at], '\n') + 1
	var q byte
	for i := ls; i < at; i++ {
		c := text[i]
		switch {
		case q == 0 && (c == '"' || c == '\''):
			q = c
		case q != 0 && c == '\\' && q == '"':
			i++
		case c == q:
			q = 0
		}
	}
	return q != 0
}

// scalarRunsOn reports whether expression span s starts a value (as quote decides) and the
// plain scalar it starts goes on after it on the same line; end is where that scalar ends
// (before a trailing comma or an inline " #" comment, and trailing blanks).
func scalarRunsOn(text string, s Span) (end int, ok bool) {
	if quote(text, s) == text[s.Start:s.End] {
		return 0, false // not at the start of a value
	}
	le := strings.IndexByte(text[s.End:], '\n')
	if le < 0 {
		le = len(text) - s.End
	}
	rest := text[s.End : s.End+le]
	if i := strings.Index(rest, " #"); i >= 0 {
		rest = rest[:i]
	}
	rest = strings.TrimRight(rest, " \t\r")
	rest = strings.TrimSuffix(rest, ",")
	if rest == "" || strings.ContainsAny(rest[:1], " \t,]}") || strings.Contains(rest, `"`) {
		return 0, false
	}
	return s.End + len(rest), true
}

// quote quotes an unquoted expression span when it starts a value; a whole YAML mapping value
// becomes null (after ": ", "= ", "[",
// ","); one inside a plain word (foo-{{ x }}) is part of that word and left alone.
func quote(text string, s Span) string {
	body := text[s.Start:s.End]
	ls := strings.LastIndexByte(text[:s.Start], '\n') + 1
	pre := text[ls:s.Start]
	before := strings.TrimSpace(pre)
	spaced := len(pre) > len(strings.TrimRight(pre, " \t"))
	starts := before == "" || before == "-" ||
		(spaced || strings.HasSuffix(before, "[") || strings.HasSuffix(before, ",")) &&
			(strings.HasSuffix(before, ":") || strings.HasSuffix(before, "=") || strings.HasSuffix(before, "[") || strings.HasSuffix(before, ","))
	if !starts {
		return body
	}
	le := strings.IndexByte(text[s.End:], '\n')
	if le < 0 {
		le = len(text) - s.End
	}
	after := strings.TrimSpace(text[s.End : s.End+le])
	if strings.HasSuffix(before, ":") && spaced && (after == "" || strings.HasPrefix(after, "#")) {
		// a YAML mapping value left unquoted by the author is, in practice, not a string
		// (strictARP: {{ ENABLE_ARP }}, replicas: {{ n }}): null decodes into any field's type
		// and is read as unset, where a quoted string would not decode into a bool or number
		return "null" + strings.Repeat(" ", max(len(body)-4, 0))
	}
	return `"` + strings.ReplaceAll(strings.ReplaceAll(body, `\`, `\\`), `"`, `'`) + `"`
}
