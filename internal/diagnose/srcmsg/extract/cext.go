package extract

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// CSource is a C source tree (keepalived) to extract from.
type CSource struct {
	FS        fs.FS
	Module    string // source package name, recorded as the module
	Version   string
	Component string
	OS        string
}

// cLevels maps keepalived's log_message priorities and report_config_error kinds to levels.
// keepalived logs most failures at LOG_INFO (lib/logger.c, keepalived/core/*), so LOG_INFO is
// kept as "info" for the caller to weigh; LOG_DEBUG is dropped.
var cLevels = map[string]string{
	"LOG_EMERG": LevelFatal, "LOG_ALERT": LevelFatal, "LOG_CRIT": LevelFatal,
	"LOG_ERR": LevelError, "LOG_WARNING": LevelWarning, "LOG_NOTICE": LevelNotice, "LOG_INFO": "info",
}

// cCalls are the logging entry points whose second argument is a printf format
// (keepalived lib/logger.h: log_message; lib/parser.h: report_config_error).
var cCalls = []string{"log_message(", "report_config_error("}

// ExtractC adds the formats of src's .c files to set.
func ExtractC(src CSource, set *Set) (int, error) {
	var files []string
	err := fs.WalkDir(src.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".c") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("walk %s: %w", src.Module, err)
	}
	sort.Strings(files)
	n := 0
	for _, p := range files {
		data, err := fs.ReadFile(src.FS, p)
		if err != nil {
			return n, fmt.Errorf("read %s: %w", p, err)
		}
		for _, m := range CFormats(string(data)) {
			if !Meaningful(m.format) {
				continue
			}
			set.Add(Record{Component: src.Component, OS: src.OS, Module: src.Module, File: path.Clean(p),
				Func: m.fn, Level: m.level, Format: m.format}, src.Version)
			n++
		}
	}
	return n, nil
}

// CFormats finds log_message/report_config_error calls in C text, joining adjacent string
// literals and reading PRIxNN macros as a verb.
func CFormats(text string) []found {
	var out []found
	fn := ""
	lineStart := 0
	for i := 0; i < len(text); i++ {
		if i == lineStart {
			fn = cFuncHeader(text[i:], fn)
		}
		if text[i] == '\n' {
			lineStart = i + 1
			continue
		}
		for _, c := range cCalls {
			if !strings.HasPrefix(text[i:], c) || (i > 0 && isIdent(text[i-1])) {
				continue
			}
			j := i + len(c)
			j = skipSpace(text, j)
			k := j
			for k < len(text) && (isIdent(text[k]) || text[k] == '|' || text[k] == ' ') {
				k++
			}
			first := strings.TrimSpace(text[j:k])
			if k >= len(text) || text[k] != ',' {
				continue
			}
			format, ok := cLiterals(text, k+1)
			if !ok {
				continue
			}
			level := LevelNotice
			if c == "log_message(" {
				lvl, known := cLevels[strings.TrimSpace(strings.Split(first, "|")[0])]
				if !known {
					continue
				}
				level = lvl
			} else if strings.Contains(first, "WARNING") || strings.Contains(first, "DEPRECATED") {
				level = LevelWarning
			} else if strings.Contains(first, "FATAL") {
				level = LevelFatal
			} else {
				level = LevelError
			}
			out = append(out, found{fn: fn, level: level, format: format})
		}
	}
	return out
}

// cFuncHeader returns the function a column-0 definition line starts, or prev.
func cFuncHeader(line, prev string) string {
	if end := strings.IndexByte(line, '\n'); end >= 0 {
		line = line[:end]
	}
	if line == "" || !isIdent(line[0]) || strings.HasSuffix(strings.TrimSpace(line), ";") {
		return prev
	}
	p := strings.IndexByte(line, '(')
	if p <= 0 {
		return prev
	}
	head := strings.TrimRight(line[:p], " ")
	k := len(head)
	for k > 0 && isIdent(head[k-1]) {
		k--
	}
	name := head[k:]
	switch name {
	case "", "if", "while", "for", "switch", "return", "sizeof":
		return prev
	}
	return name
}

func isIdent(c byte) bool { return c == '_' || isLetter(c) || c >= '0' && c <= '9' }

func skipSpace(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\\':
			i++
		case strings.HasPrefix(s[i:], "/*"):
			e := strings.Index(s[i+2:], "*/")
			if e < 0 {
				return len(s)
			}
			i += e + 4
		case strings.HasPrefix(s[i:], "//"):
			e := strings.IndexByte(s[i:], '\n')
			if e < 0 {
				return len(s)
			}
			i += e
		default:
			return i
		}
	}
	return i
}

// cLiterals reads adjacent C string literals from i; PRIu32-style macros between them stand for
// the integer conversion they expand to.
func cLiterals(s string, i int) (string, bool) {
	var b strings.Builder
	any := false
	for {
		i = skipSpace(s, i)
		if i >= len(s) {
			break
		}
		if s[i] == '"' {
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' && i+1 < len(s) {
					switch s[i+1] {
					case 'n', 't', 'r':
						b.WriteByte(' ')
					default:
						b.WriteByte(s[i+1])
					}
					i += 2
					continue
				}
				b.WriteByte(s[i])
				i++
			}
			i++
			any = true
			continue
		}
		if strings.HasPrefix(s[i:], "PRI") {
			j := i
			for j < len(s) && isIdent(s[j]) {
				j++
			}
			b.WriteByte('d')
			i = j
			continue
		}
		break
	}
	return b.String(), any
}
