// Package psscript reads the PowerShell that starts Kubernetes node services: it tokenises a
// script, parses the statements that build command lines (assignments, arrays, +=, here-strings,
// splatting, param() defaults, if/else, functions, Invoke-Expression, Start-Process, & exe,
// New-Service, sc.exe, nssm, scripts written to disk by Set-Content/Out-File) and evaluates them
// abstractly, so that `kubewin check` sees the command lines the script really runs.
//
// The evaluation is static: nothing is executed. A value the script computes at run time (a
// JSON file's content, $(hostname), a function's output) is carried as an unresolved value with
// its name, never guessed empty. A condition that cannot be decided splits the evaluation into
// one world per branch (at most maxWorlds), so each branch's command line is reported as its own.
//
// Tokenisation follows the PowerShell language specification (about_Parsing, about_Quoting_Rules,
// about_Special_Characters); tests compare it with the tree-sitter-powershell grammar
// (internal/testenv/psgrammar).
package psscript

import (
	"strings"
)

type tokKind int

const (
	tEOF      tokKind = iota
	tNewline          // newline or ;
	tLBrace           // {
	tRBrace           // }
	tLParen           // (
	tRParen           // )
	tAtParen          // @(
	tAtBrace          // @{
	tSubExpr          // $(
	tLBracket         // [
	tRBracket         // ]
	tString           // '…' / "…" / here-strings
	tVar              // $name, ${name}, $env:X, @name (splat), an unresolved marker
	tWord             // a generic token: command names, bare arguments, -Parameters, operators written as words
	tOp               // = += -= + , | & ! . :: > >> 2>&1
)

// token is one lexical element. Off is the byte offset of its first character in the source;
// Space tells whether whitespace (or a line continuation) preceded it, which decides whether
// adjacent elements form one command argument ("--x=$v\y").
type token struct {
	Kind  tokKind
	Text  string // words, operators; the name for tVar (lower-cased scope kept: "env:path")
	Raw   string // tString: the contents between the quotes, escapes not yet applied
	Exp   bool   // tString: expandable ("…", @"…"@)
	Here  bool   // tString: a here-string
	Splat bool   // tVar written @name
	Off   int
	Space bool
}

// Marker bytes delimit an unresolved value inside an evaluated string: \x01name\x02.
const (
	markOpen  = '\x01'
	markClose = '\x02'
)

// lexer splits PowerShell source into tokens. It never fails: an unterminated string runs to
// the end of the input and is reported in errs.
type lexer struct {
	// open counts [ tokens not yet closed
	open int
	src  string
	base int
	toks []token
	errs []Problem
}

// Problem is a tokenisation or parse problem at a byte offset of the source.
type Problem struct {
	Off     int
	Message string
}

func lex(src string, base int) ([]token, []Problem) {
	l := &lexer{src: src, base: base}
	l.run()
	return l.toks, l.errs
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' }

// isWordEnd reports whether c ends a generic token in command mode.
func isWordEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ';', '|', '&', '(', ')', '{', '}', '"', '\'', '$', ',':
		return true
	}
	return false
}

func isVarNameByte(c byte) bool {
	return c == '_' || c == '?' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func (l *lexer) emit(t token) {
	switch t.Kind {
	case tLBracket:
		l.open++
	case tRBracket:
		l.open--
	}
	l.toks = append(l.toks, t)
}

func (l *lexer) run() {
	s := l.src
	space := true
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isSpaceByte(c):
			i++
			space = true
			continue
		case c == '`' && i+1 < len(s) && (s[i+1] == '\n' || (s[i+1] == '\r' && i+2 < len(s) && s[i+2] == '\n')):
			// line continuation
			i += 2
			if s[i-1] == '\r' {
				i++
			}
			space = true
			continue
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		case c == '<' && i+1 < len(s) && s[i+1] == '#':
			end := strings.Index(s[i+2:], "#>")
			if end < 0 {
				i = len(s)
			} else {
				i += 2 + end + 2
			}
			space = true
			continue
		}
		start := i
		t := token{Off: l.base + i, Space: space}
		space = false
		switch {
		case c == '\n' || c == ';':
			t.Kind, t.Text = tNewline, string(c)
			i++
			space = true
		case c == '{':
			t.Kind, i = tLBrace, i+1
		case c == '}':
			t.Kind, i = tRBrace, i+1
		case c == '(':
			t.Kind, i = tLParen, i+1
		case c == ')':
			t.Kind, i = tRParen, i+1
		case c == '[' && !l.indexing(t.Space):
			t.Kind, i = tLBracket, i+1
		case c == ']' && l.openBrackets() > 0:
			t.Kind, i = tRBracket, i+1
		case c == '@' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\'') && hereStart(s, i+2):
			i = l.hereString(&t, i)
		case c == '@' && i+1 < len(s) && s[i+1] == '(':
			t.Kind, i = tAtParen, i+2
		case c == '@' && i+1 < len(s) && s[i+1] == '{':
			t.Kind, i = tAtBrace, i+2
		case c == '@' && i+1 < len(s) && isVarNameByte(s[i+1]):
			j := i + 1
			for j < len(s) && isVarNameByte(s[j]) {
				j++
			}
			t.Kind, t.Text, t.Splat, i = tVar, strings.ToLower(s[i+1:j]), true, j
		case c == '$' && i+1 < len(s) && s[i+1] == '(':
			t.Kind, i = tSubExpr, i+2
		case c == '$' && i+1 < len(s) && (s[i+1] == '{' || isVarNameByte(s[i+1]) || s[i+1] == '$' || s[i+1] == '^'):
			name, j := varName(s, i+1)
			t.Kind, t.Text, i = tVar, name, j
		case c == '\'' || isSingleQuote(s, i):
			i = l.singleQuoted(&t, i)
		case c == '"' || isDoubleQuote(s, i):
			i = l.doubleQuoted(&t, i)
		case c == ',' || c == '|' || c == '!':
			t.Kind, t.Text, i = tOp, string(c), i+1
		case c == '&' && i+1 < len(s) && s[i+1] == '&':
			t.Kind, t.Text, i = tOp, "&&", i+2
		case c == '&':
			t.Kind, t.Text, i = tOp, "&", i+1
		case c == '=' || ((c == '+' || c == '-') && i+1 < len(s) && s[i+1] == '=' && (i+2 >= len(s) || s[i+2] != '=')):
			n := 1
			if c != '=' {
				n = 2
			}
			t.Kind, t.Text, i = tOp, s[i:i+n], i+n
		default:
			j := l.word(i)
			if j == i {
				j = i + 1
			}
			t.Kind, t.Text, i = tWord, s[start:j], j
			switch t.Text {
			case "+", "::", ">", ">>", "2>&1", "*>&1":
				t.Kind = tOp
			}
		}
		l.emit(t)
	}
	l.emit(token{Kind: tEOF, Off: l.base + len(s), Space: true})
}

// indexing reports whether a [ here indexes the value before it ($a[0], (…)[1]) rather than
// opening a type literal.
func (l *lexer) indexing(space bool) bool {
	if space || len(l.toks) == 0 {
		return false
	}
	switch l.toks[len(l.toks)-1].Kind {
	case tVar, tString, tRParen, tRBracket:
		return true
	}
	return false
}

// openBrackets counts [ tokens not yet closed, so that ] inside a generic token (a regex
// class) is not taken for a type literal's end.
func (l *lexer) openBrackets() int { return l.open }

// word scans a generic token from i: it runs to whitespace or a special character; a backtick
// escapes the next character; "=" inside is part of the word ("--v=3", "binPath=").
func (l *lexer) word(i int) int {
	s := l.src
	for i < len(s) {
		c := s[i]
		if c == '`' && i+1 < len(s) && s[i+1] != '\n' && s[i+1] != '\r' {
			i += 2
			continue
		}
		if c == markOpen {
			// a value an outer evaluation left unresolved: runtime text, part of the word
			j := strings.IndexByte(s[i:], markClose)
			if j < 0 {
				return len(s)
			}
			i += j + 1
			continue
		}
		if isWordEnd(c) || isSingleQuote(s, i) || isDoubleQuote(s, i) {
			return i
		}
		if c == ']' && l.openBrackets() > 0 {
			return i
		}
		if c == '[' && i > 0 && s[i-1] == '.' {
			return i
		}
		i++
	}
	return i
}

func varName(s string, i int) (string, int) {
	if s[i] == '{' {
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return strings.ToLower(s[i+1:]), len(s)
		}
		return strings.ToLower(s[i+1 : i+j]), i + j + 1
	}
	if s[i] == '$' || s[i] == '^' {
		return s[i : i+1], i + 1
	}
	j := i
	for j < len(s) && isVarNameByte(s[j]) {
		j++
	}
	// scope or drive qualifier: $env:Path, $global:X, $script:X
	if j+1 < len(s) && s[j] == ':' && isVarNameByte(s[j+1]) && s[j+1] != '?' {
		k := j + 1
		for k < len(s) && isVarNameByte(s[k]) {
			k++
		}
		return strings.ToLower(s[i:k]), k
	}
	return strings.ToLower(s[i:j]), j
}

// PowerShell accepts typographic quotes as quotes (about_Quoting_Rules).
func isSingleQuote(s string, i int) bool {
	return strings.HasPrefix(s[i:], "\u2018") || strings.HasPrefix(s[i:], "\u2019") || strings.HasPrefix(s[i:], "\u201a") || strings.HasPrefix(s[i:], "\u201b")
}

func isDoubleQuote(s string, i int) bool {
	return strings.HasPrefix(s[i:], "\u201c") || strings.HasPrefix(s[i:], "\u201d") || strings.HasPrefix(s[i:], "\u201e")
}

func quoteLen(s string, i int) int {
	if s[i] == '\'' || s[i] == '"' {
		return 1
	}
	return 3
}

func (l *lexer) singleQuoted(t *token, i int) int {
	s := l.src
	i += quoteLen(s, i)
	var b strings.Builder
	for i < len(s) {
		if s[i] == '\'' || isSingleQuote(s, i) {
			n := quoteLen(s, i)
			if i+n < len(s) && (s[i+n] == '\'' || isSingleQuote(s, i+n)) {
				b.WriteByte('\'')
				i += n + quoteLen(s, i+n)
				continue
			}
			t.Kind, t.Raw = tString, b.String()
			return i + n
		}
		b.WriteByte(s[i])
		i++
	}
	l.errs = append(l.errs, Problem{Off: t.Off, Message: "unterminated single-quoted string"})
	t.Kind, t.Raw = tString, b.String()
	return i
}

func (l *lexer) doubleQuoted(t *token, i int) int {
	s := l.src
	i += quoteLen(s, i)
	start := i
	depth := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == markOpen:
			if j := strings.IndexByte(s[i:], markClose); j > 0 {
				i += j + 1
				continue
			}
		case c == '`' && i+1 < len(s):
			i += 2
			continue
		case c == '$' && i+1 < len(s) && s[i+1] == '(':
			depth++
			i += 2
			continue
		case c == ')' && depth > 0:
			depth--
		case depth == 0 && (c == '"' || isDoubleQuote(s, i)):
			n := quoteLen(s, i)
			if i+n < len(s) && (s[i+n] == '"' || isDoubleQuote(s, i+n)) {
				i += n + quoteLen(s, i+n)
				continue
			}
			t.Kind, t.Raw, t.Exp = tString, s[start:i], true
			return i + n
		}
		i++
	}
	l.errs = append(l.errs, Problem{Off: t.Off, Message: "unterminated double-quoted string"})
	t.Kind, t.Raw, t.Exp = tString, s[start:], true
	return i
}

// hereStart: a here-string's opening @" or @' must end its line.
func hereStart(s string, i int) bool {
	for i < len(s) && isSpaceByte(s[i]) {
		i++
	}
	return i >= len(s) || s[i] == '\n'
}

func (l *lexer) hereString(t *token, i int) int {
	s := l.src
	q := s[i+1]
	t.Kind, t.Exp, t.Here = tString, q == '"', true
	j := strings.IndexByte(s[i:], '\n')
	if j < 0 {
		l.errs = append(l.errs, Problem{Off: t.Off, Message: "unterminated here-string"})
		return len(s)
	}
	body := i + j + 1
	closing := "\n" + string(q) + "@"
	end := strings.Index(s[body-1:], closing)
	if end < 0 {
		l.errs = append(l.errs, Problem{Off: t.Off, Message: "unterminated here-string"})
		t.Raw = s[body:]
		return len(s)
	}
	if body-1+end > body {
		t.Raw = strings.TrimSuffix(s[body:body-1+end], "\r")
	}
	return body - 1 + end + len(closing)
}
