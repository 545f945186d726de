package check

import (
	"strings"
	"unicode/utf8"

	"github.com/kubewin/kubewin/internal/check/templates"
)

// Dialect is the quoting convention of a command line.
type Dialect int

const (
	// DialectAuto picks a dialect from the text (see GuessDialect).
	DialectAuto Dialect = iota
	// DialectSh: POSIX shell. '…' literal, "…" with \ escapes, \ escapes outside quotes,
	// $VAR references, "\" + newline continues the line.
	DialectSh
	// DialectCmd: cmd.exe and the Windows argv rules (CommandLineToArgvW, also used by Go on
	// Windows): "…" groups, backslashes are literal except before a quote, "" inside quotes is
	// a quote, ^ escapes outside quotes, %VAR% references, "^" + newline continues.
	DialectCmd
	// DialectPowerShell: '…' literal ('' is a quote), "…" with ` escapes and $var expansion,
	// ` escapes outside quotes, --% stops parsing, "`" + newline continues.
	DialectPowerShell
)

func (d Dialect) String() string {
	switch d {
	case DialectSh:
		return "sh"
	case DialectCmd:
		return "cmd"
	case DialectPowerShell:
		return "powershell"
	}
	return "auto"
}

// Token is one argument of a command line as the program receives it.
type Token struct {
	Text string
	// Offset and End are byte offsets of the token's source text in the input.
	Offset, End int
	// Quoted is true when any part of the token was quoted.
	Quoted bool
	// Typographic is true when the token used typographic quotes or dashes (“ ” ‘ ’ – —) that a
	// blog or word processor substituted for ASCII; they were read as their ASCII meaning.
	Typographic bool
	// Vars are the variable references ($global:X, $env:X, %X%, $X) left unexpanded in Text.
	Vars []string
}

// TokenError is a quoting problem found while splitting.
type TokenError struct {
	Offset  int
	Message string
}

// GuessDialect picks a dialect: PowerShell when the text uses PowerShell variables or
// backtick continuations, cmd when it has %VAR%, ^ escapes or Windows paths, sh otherwise.
func GuessDialect(s string) Dialect {
	switch {
	case strings.Contains(s, "$global:") || strings.Contains(s, "$env:") || strings.Contains(s, "$script:") ||
		strings.Contains(s, "`\n") || strings.Contains(s, "`\r\n"):
		return DialectPowerShell
	case hasWindowsPath(s) || strings.Contains(s, "^\n") || hasPercentVar(s):
		return DialectCmd
	}
	return DialectSh
}

func hasWindowsPath(s string) bool {
	for i := 0; i+2 < len(s); i++ {
		c := s[i]
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) && s[i+1] == ':' && (s[i+2] == '\\' || s[i+2] == '/') &&
			(i == 0 || !isWordByte(s[i-1])) {
			return true
		}
	}
	return strings.Contains(s, `\\.\pipe`) || strings.Contains(s, ".exe")
}

func isWordByte(c byte) bool {
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func hasPercentVar(s string) bool {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return false
	}
	j := strings.IndexByte(s[i+1:], '%')
	return j > 0 && isCmdVarName(s[i+1:i+1+j])
}

// isCmdVarName reports whether the text between two % signs names a variable. cmd.exe allows
// odd names, but none in real scripts holds spaces, quotes, a comma or a redirection: between
// "%" of two eviction thresholds (memory.available<5%,nodefs.available<10%) is text.
func isCmdVarName(name string) bool {
	return name != "" && !strings.ContainsAny(name, " \t\"\n<>,|&^=")
}

// typographic quote and dash runes.
const (
	ldquo  = '\u201c' // “
	rdquo  = '\u201d' // ”
	bdquo  = '\u201e' // „
	lsquo  = '\u2018' // ‘
	rsquo  = '\u2019' // ’
	endash = '\u2013' // –
	emdash = '\u2014' // —
	minus  = '\u2212' // −
)

func isTypoDouble(r rune) bool { return r == ldquo || r == rdquo || r == bdquo }
func isTypoSingle(r rune) bool { return r == lsquo || r == rsquo }
func isTypoDash(r rune) bool   { return r == endash || r == emdash || r == minus }

// Tokenize splits a command line into the arguments the program receives. It never fails:
// quoting problems (an unterminated quote) are returned as errors next to the best-effort
// tokens.
func Tokenize(s string, d Dialect) ([]Token, []TokenError) {
	if d == DialectAuto {
		d = GuessDialect(s)
	}
	t := tokenizer{s: s, d: d}
	t.run()
	return t.toks, t.errs
}

type tokenizer struct {
	s    string
	d    Dialect
	toks []Token
	errs []TokenError

	cur     strings.Builder
	in      bool // inside a token
	tok     Token
	varOpen bool
	// tmplOnly: the token so far holds only template statements or comments
	tmplOnly bool
}

func (t *tokenizer) start(i int) {
	if !t.in {
		t.in = true
		t.tok = Token{Offset: i}
		t.cur.Reset()
		t.tmplOnly = false
	}
}

// template consumes a template-engine span at i (templates.At: {{ expr }}, {% stmt %}, {# c #},
// ERB's <%= expr %> and <% code %>) as
// one piece whatever the dialect, so that its spaces and quotes do not split or open anything:
// an expression is kept literally and recorded as a reference whose value is known only when
// the template is rendered (never a flag or a path of its own); a statement or comment
// inserts nothing. It returns the index after the span.
func (t *tokenizer) template(i int) (int, bool) {
	if t.s[i] != '{' && t.s[i] != '<' {
		return 0, false
	}
	sp, ok := templates.At(t.s, i)
	if !ok {
		return 0, false
	}
	if sp.Kind == templates.Expr {
		text := t.s[sp.Start:sp.End]
		t.tok.Vars = append(t.tok.Vars, text)
		t.cur.WriteString(text)
		t.tmplOnly = false
		return sp.End, true
	}
	if t.cur.Len() == 0 {
		t.tmplOnly = true
	}
	return sp.End, true
}

func (t *tokenizer) end(i int) {
	if !t.in {
		return
	}
	if t.cur.Len() == 0 && !t.tok.Quoted && t.tmplOnly {
		// only template statements or comments ({% if x %}): the renderer leaves nothing
		t.in = false
		return
	}
	t.tok.Text = t.cur.String()
	t.tok.End = i
	t.toks = append(t.toks, t.tok)
	t.in = false
}

func (t *tokenizer) add(r rune) { t.cur.WriteRune(r) }

func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v'
}

// continuation reports whether s[i:] starts with a line continuation for the dialect and
// returns its length.
func (t *tokenizer) continuation(i int) int {
	var c byte
	switch t.d {
	case DialectSh:
		c = '\\'
	case DialectCmd:
		c = '^'
	case DialectPowerShell:
		c = '`'
	}
	if i >= len(t.s) || t.s[i] != c {
		return 0
	}
	if strings.HasPrefix(t.s[i+1:], "\r\n") {
		return 3
	}
	if strings.HasPrefix(t.s[i+1:], "\n") {
		return 2
	}
	return 0
}

func (t *tokenizer) run() {
	s := t.s
	i := 0
	for i < len(s) {
		if n := t.continuation(i); n > 0 {
			t.end(i)
			i += n
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case isSpace(r):
			t.end(i)
			i += size
		case t.d == DialectPowerShell && !t.in && strings.HasPrefix(s[i:], "--%") &&
			(i+3 == len(s) || isSpace(rune(s[i+3]))):
			// Stop-parsing token: the rest is passed through with cmd rules.
			i += 3
			rest := tokenizer{s: s[i:], d: DialectCmd}
			rest.run()
			for _, tk := range rest.toks {
				tk.Offset += i
				tk.End += i
				t.toks = append(t.toks, tk)
			}
			for _, e := range rest.errs {
				e.Offset += i
				t.errs = append(t.errs, e)
			}
			return
		default:
			t.start(i)
			i = t.word(i)
		}
	}
	t.end(len(s))
}

// word consumes one piece (a quoted run, an escape, or one plain rune) starting at i and
// returns the index after it.
func (t *tokenizer) word(i int) int {
	s := t.s
	if n, ok := t.template(i); ok {
		return n
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	switch {
	case r == utf8.RuneError && size == 1:
		// Invalid UTF-8 is kept byte for byte.
		t.cur.WriteByte(s[i])
		return i + 1
	case isTypoDash(r) && t.cur.Len() == 0:
		// A blog turned "--" into "–": read it as the flag prefix it stood for.
		t.tok.Typographic = true
		t.cur.WriteString("--")
		return i + size
	case r == '"' || isTypoDouble(r):
		if isTypoDouble(r) {
			t.tok.Typographic = true
		}
		return t.doubleQuoted(i + size)
	case r == '\'' && t.d != DialectCmd, isTypoSingle(r) && t.d != DialectCmd:
		if isTypoSingle(r) {
			t.tok.Typographic = true
		}
		return t.singleQuoted(i + size)
	case r == '\\' && t.d == DialectSh:
		if i+1 < len(s) {
			r2, s2 := utf8.DecodeRuneInString(s[i+1:])
			t.add(r2)
			return i + 1 + s2
		}
		return i + 1
	case r == '\\' && t.d == DialectCmd:
		return t.backslashes(i, false)
	case r == '^' && t.d == DialectCmd:
		if i+1 < len(s) {
			r2, s2 := utf8.DecodeRuneInString(s[i+1:])
			t.add(r2)
			return i + 1 + s2
		}
		return i + 1
	case r == '`' && t.d == DialectPowerShell:
		if i+1 < len(s) {
			r2, s2 := utf8.DecodeRuneInString(s[i+1:])
			t.add(psEscape(r2))
			return i + 1 + s2
		}
		return i + 1
	case r == '$' && (t.d == DialectPowerShell || t.d == DialectSh):
		return t.variable(i)
	case r == '%' && t.d == DialectCmd:
		if j := strings.IndexByte(s[i+1:], '%'); j > 0 && isCmdVarName(s[i+1:i+1+j]) {
			name := s[i+1 : i+1+j]
			t.tok.Vars = append(t.tok.Vars, name)
			t.cur.WriteString(s[i : i+2+j])
			return i + 2 + j
		}
		t.add(r)
		return i + size
	default:
		t.add(r)
		return i + size
	}
}

// psEscape maps PowerShell backtick escapes to their characters.
func psEscape(r rune) rune {
	switch r {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	case '0':
		return 0
	}
	return r
}

// variable reads a $name reference (PowerShell $global:Name, $env:NAME, ${…}; sh $NAME, ${NAME})
// and keeps it literally in the token, recording its name for later substitution.
func (t *tokenizer) variable(i int) int {
	s := t.s
	j := i + 1
	if j < len(s) && s[j] == '(' {
		// $(command): a subexpression (PowerShell) or command substitution (sh), evaluated
		// when the line runs; keep it literally and record it as unresolvable.
		depth := 0
		for k := j; k < len(s); k++ {
			switch s[k] {
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 {
					t.tok.Vars = append(t.tok.Vars, s[i:k+1])
					t.cur.WriteString(s[i : k+1])
					return k + 1
				}
			}
		}
		t.add('$')
		return j
	}
	if j < len(s) && s[j] == '{' {
		k := strings.IndexByte(s[j:], '}')
		if k < 0 {
			t.add('$')
			return j
		}
		name := s[j+1 : j+k]
		t.tok.Vars = append(t.tok.Vars, name)
		t.cur.WriteString(s[i : j+k+1])
		return j + k + 1
	}
	for j < len(s) && (isWordByte(s[j]) || (s[j] == ':' && t.d == DialectPowerShell && j+1 < len(s) && isWordByte(s[j+1]))) {
		j++
	}
	if j == i+1 {
		t.add('$')
		return j
	}
	name := s[i+1 : j]
	t.tok.Vars = append(t.tok.Vars, name)
	t.cur.WriteString(s[i:j])
	return j
}

// backslashes applies the Windows argv rule to a run of backslashes at i: 2n backslashes and a
// quote give n backslashes and toggle quoting; 2n+1 give n and a literal quote; backslashes
// not followed by a quote are literal. It returns the index after the run (and after the
// quote, when one was consumed literally). inQuote tells whether we are inside "…".
func (t *tokenizer) backslashes(i int, inQuote bool) int {
	s := t.s
	j := i
	for j < len(s) && s[j] == '\\' {
		j++
	}
	n := j - i
	if j < len(s) && s[j] == '"' {
		t.cur.WriteString(strings.Repeat(`\`, n/2))
		if n%2 == 1 {
			t.add('"')
			return j + 1
		}
		return j // the quote toggles; the caller handles it
	}
	t.cur.WriteString(strings.Repeat(`\`, n))
	return j
}

func (t *tokenizer) doubleQuoted(i int) int {
	s := t.s
	t.tok.Quoted = true
	open := i
	for i < len(s) {
		if n, ok := t.template(i); ok {
			i = n
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"' || isTypoDouble(r):
			if isTypoDouble(r) {
				t.tok.Typographic = true
			}
			// "" inside quotes is a literal quote in cmd (Windows argv) and PowerShell.
			if (t.d == DialectCmd || t.d == DialectPowerShell) && r == '"' && i+1 < len(s) && s[i+1] == '"' {
				t.add('"')
				i += 2
				continue
			}
			return i + size
		case r == '\\' && t.d == DialectSh:
			if i+1 < len(s) && strings.ContainsRune("$`\"\\\n", rune(s[i+1])) {
				if s[i+1] != '\n' {
					t.add(rune(s[i+1]))
				}
				i += 2
				continue
			}
			t.add(r)
			i++
		case r == '\\' && t.d == DialectCmd:
			i = t.backslashes(i, true)
		case r == '`' && t.d == DialectPowerShell:
			if i+1 < len(s) {
				r2, s2 := utf8.DecodeRuneInString(s[i+1:])
				t.add(psEscape(r2))
				i += 1 + s2
				continue
			}
			i++
		case r == '$' && (t.d == DialectPowerShell || t.d == DialectSh):
			i = t.variable(i)
		case r == '%' && t.d == DialectCmd:
			i = t.word(i)
		case r == utf8.RuneError && size == 1:
			t.cur.WriteByte(s[i])
			i++
		default:
			t.add(r)
			i += size
		}
	}
	t.errs = append(t.errs, TokenError{Offset: open - 1, Message: "unterminated double quote"})
	return i
}

func (t *tokenizer) singleQuoted(i int) int {
	s := t.s
	t.tok.Quoted = true
	open := i
	for i < len(s) {
		if n, ok := t.template(i); ok {
			// the template engine renders before the shell sees its quotes
			i = n
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == '\'' || isTypoSingle(r) {
			if isTypoSingle(r) {
				t.tok.Typographic = true
			}
			if t.d == DialectPowerShell && i+size < len(s) {
				// Two quote characters in a row are one literal quote (PowerShell treats the
				// typographic ones as quotes too).
				if r2, s2 := utf8.DecodeRuneInString(s[i+size:]); r2 == '\'' || isTypoSingle(r2) {
					t.add(r2)
					i += size + s2
					continue
				}
			}
			return i + size
		}
		if r == utf8.RuneError && size == 1 {
			t.cur.WriteByte(s[i])
			i++
			continue
		}
		t.add(r)
		i += size
	}
	t.errs = append(t.errs, TokenError{Offset: open - 1, Message: "unterminated single quote"})
	return i
}

// QuoteArgs renders tokens so that Tokenize with the same dialect gives them back; the fuzz
// test relies on this round trip.
func QuoteArgs(args []string, d Dialect) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteArg(a, d))
	}
	return b.String()
}

func quoteArg(a string, d Dialect) string {
	switch d {
	case DialectSh:
		var b strings.Builder
		b.WriteByte('\'')
		for _, r := range a {
			if r == '\'' || isTypoSingle(r) {
				// Close the quote, escape the character, reopen.
				b.WriteString("'\\")
				b.WriteRune(r)
				b.WriteByte('\'')
				continue
			}
			b.WriteRune(r)
		}
		b.WriteByte('\'')
		return b.String()
	case DialectPowerShell:
		var b strings.Builder
		b.WriteByte('\'')
		for _, r := range a {
			if r == '\'' || isTypoSingle(r) {
				b.WriteRune(r)
			}
			b.WriteRune(r)
		}
		b.WriteByte('\'')
		return b.String()
	default: // cmd / Windows argv
		var b strings.Builder
		b.WriteByte('"')
		bs := 0
		for _, r := range a {
			switch r {
			case '\\':
				bs++
				continue
			case '"':
				b.WriteString(strings.Repeat(`\`, 2*bs+1))
				b.WriteByte('"')
			case ldquo, rdquo, bdquo:
				// No escape exists inside "…" for these: step outside and use ^.
				b.WriteString(strings.Repeat(`\`, 2*bs))
				b.WriteString(`"^`)
				b.WriteRune(r)
				b.WriteByte('"')
			default:
				b.WriteString(strings.Repeat(`\`, bs))
				b.WriteRune(r)
			}
			bs = 0
		}
		b.WriteString(strings.Repeat(`\`, 2*bs))
		b.WriteByte('"')
		return b.String()
	}
}
