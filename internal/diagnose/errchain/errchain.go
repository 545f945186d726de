// Package errchain reads one error message the way Go components build them — "doing X: doing Y:
// reason" (fmt.Errorf with %w), klog's structured err="…", gRPC's "rpc error: code = … desc = …",
// hcsshim's "hcs::Op id: reason (0x…)" — and returns the chain of causes from the outermost to the
// innermost, the codes it carries (errno text, Win32/HRESULT/NTSTATUS numbers) and the objects it
// names (files, config fields, preflight checks, networks, endpoints), so that a line nobody wrote
// a catalogue entry for still says what failed, where, and the innermost reason.
package errchain

import (
	"strconv"
	"strings"
)

// Chain is one message split into its causes.
type Chain struct {
	// Segments are the causes, outermost first; the last is the innermost reason.
	Segments []string `json:"segments"`
	// Codes found in the message: errno meanings and numeric Windows codes.
	Codes []Code `json:"codes,omitempty"`
	// Objects named by the message: what failed and where.
	Objects []Object `json:"objects,omitempty"`
}

// Innermost returns the innermost cause ("" for an empty chain). A last segment that is only a
// containerd error class is skipped: containerd's errdefs turns a gRPC status back into an error
// as "<desc>: <class>" (github.com/containerd/errdefs errors.go: ErrUnknown "unknown",
// ErrFailedPrecondition "failed precondition", ...; grpc.go FromGRPC wraps the description), so
// "…: Access is denied.: unknown" has its reason in the segment before the class word.
func (c Chain) Innermost() string {
	n := len(c.Segments)
	if n == 0 {
		return ""
	}
	if n > 1 && errdefsClass(c.Segments[n-1]) {
		return c.Segments[n-2]
	}
	return c.Segments[n-1]
}

// errdefsClass reports the containerd errdefs class words that carry no reason of their own.
// "not found", "permission denied" and "invalid argument" are left out: they are also the
// whole reason of errno and HNS messages.
func errdefsClass(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "unknown", "failed precondition", "already exists", "unavailable", "not implemented", "internal",
		"aborted", "out of range", "data loss", "unauthenticated", "resource exhausted", "conflict", "not modified":
		return true
	}
	return false
}

// Code is an error code found in a message.
type Code struct {
	Kind  string `json:"kind"`  // errno, win32 (a number: Win32, HRESULT or NTSTATUS), grpc, http
	Value string `json:"value"` // ENOENT, 0x80070002, Unavailable, 403
}

// Object is something the message says failed or was involved.
type Object struct {
	Kind  string `json:"kind"` // file, field, check, network, endpoint, url, service, image, line
	Value string `json:"value"`
}

const maxSegments = 16

// Parse splits msg into its chain. It never fails and never panics; an empty message gives an
// empty chain. Messages longer than 8 KiB are read up to that size.
func Parse(msg string) Chain {
	if len(msg) > 8<<10 {
		msg = msg[:8<<10]
	}
	var c Chain
	for _, part := range structuredParts(msg) {
		c.split(part)
	}
	c.Codes = codes(msg)
	c.Objects = objects(msg)
	return c
}

// structuredParts separates klog's structured form `"message" key="value" err="…"` into the
// message and the error value (the error is the deeper cause, so it comes last). A message
// without structured keys is returned whole.
func structuredParts(msg string) []string {
	msg = strings.TrimSpace(msg)
	var head, errv string
	for _, key := range []string{` err="`, ` error="`, `"err":"`, `"error":"`} {
		i := strings.Index(msg, key)
		if i < 0 {
			continue
		}
		v, _, ok := goUnquotePrefix(msg[i+len(key)-1:])
		if !ok {
			continue
		}
		head, errv = msg[:i], v
		break
	}
	if errv == "" {
		return []string{stripKeyValues(unquoteWhole(msg))}
	}
	head = stripKeyValues(unquoteWhole(strings.TrimSpace(head)))
	if head == "" {
		return []string{errv}
	}
	return []string{head, errv}
}

// unquoteWhole removes the quotes around a klog structured message: "Failed to X" → Failed to X.
func unquoteWhole(s string) string {
	if len(s) >= 2 && s[0] == '"' {
		if v, n, ok := goUnquotePrefix(s); ok {
			return v + s[n:]
		}
	}
	return s
}

// goUnquotePrefix unquotes the Go-quoted string at the start of s (s[0] == '"') and returns its
// value and the bytes it took; a string with invalid escapes is returned as written.
func goUnquotePrefix(s string) (string, int, bool) {
	if s == "" || s[0] != '"' {
		return "", 0, false
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			v, err := strconv.Unquote(s[:i+1])
			if err != nil {
				return s[1:i], i + 1, true
			}
			return v, i + 1, true
		}
	}
	return "", 0, false
}

// stripKeyValues drops trailing klog key="value" / key=value pairs from a structured message:
// they name objects (pod=…, node=…) but are not causes.
func stripKeyValues(s string) string {
	for {
		s = strings.TrimRight(s, " ")
		i := strings.LastIndexByte(s, ' ')
		if i < 0 {
			return s
		}
		kv := s[i+1:]
		eq := strings.IndexByte(kv, '=')
		if eq <= 0 || !isIdent(kv[:eq]) || (len(kv) > eq+1 && kv[eq+1] == '"' && !strings.HasSuffix(kv, `"`)) {
			return s
		}
		s = s[:i]
	}
}

func isIdent(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.') {
			return false
		}
	}
	return s != ""
}

// split appends the causes of one part to the chain.
func (c *Chain) split(s string) {
	s = strings.TrimSpace(s)
	for s != "" && len(c.Segments) < maxSegments {
		// gRPC status: "rpc error: code = Unknown desc = <cause>" — the description is the cause.
		if i := strings.Index(s, "rpc error: code = "); i >= 0 {
			if d := strings.Index(s[i:], " desc = "); d >= 0 {
				if pre := strings.TrimRight(strings.TrimSpace(s[:i]), ":"); pre != "" {
					c.add(pre)
				}
				c.add(s[i : i+d])
				s = strings.TrimSpace(s[i+d+len(" desc = "):])
				continue
			}
		}
		i := nextSplit(s)
		if i < 0 {
			c.add(s)
			return
		}
		c.add(s[:i])
		s = strings.TrimSpace(s[i+1:])
	}
}

func (c *Chain) add(seg string) {
	seg = strings.TrimSpace(strings.Trim(strings.TrimSpace(seg), ",;"))
	if seg == "" {
		return
	}
	if n := len(c.Segments); n > 0 && c.Segments[n-1] == seg {
		return
	}
	c.Segments = append(c.Segments, seg)
}

// nextSplit returns the index of the ':' that ends the first cause of s, or -1. A colon splits
// when a space follows and it is not inside quotes, brackets or parentheses, not part of a time
// ("12:30:01"), an address ("10.0.0.1:6443"), a URL scheme ("https://"), a Windows drive
// ("C:\"), a "key: value" label whose value is a number, or the cmdlet header of a PowerShell
// error record is kept with its message.
func nextSplit(s string) int {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if quote != 0 {
			if ch == '\\' {
				i++
			} else if ch == quote {
				quote = 0
			}
			continue
		}
		switch ch {
		case '"', '`':
			quote = ch
		case '\'':
			// An apostrophe inside a word ("can't") is not a quote.
			if i == 0 || s[i-1] == ' ' || s[i-1] == '(' || s[i-1] == '=' {
				quote = ch
			}
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		case ':':
			if depth > 0 || i == 0 || i+1 >= len(s) || s[i+1] != ' ' {
				continue
			}
			if i+2 >= len(s) || isValueStart(s[i+2]) {
				continue
			}
			if label := lastWord(s[:i]); isLabel(label) {
				continue
			}
			return i
		}
	}
	return -1
}

// isValueStart reports whether the text after ": " starts a value ("driver: \"systemd\" is
// different", "code: 2", "line: [1 2]") rather than a wrapped cause, which starts with a word.
func isValueStart(c byte) bool {
	return c == '"' || c == '\'' || c == '[' || c == '{' || c == '(' || c == '-' || (c >= '0' && c <= '9')
}

func lastWord(s string) string {
	if i := strings.LastIndexByte(s, ' '); i >= 0 {
		return s[i+1:]
	}
	return s
}

// isLabel reports words that introduce a value rather than end a cause ("line 12: …" is a
// position, "code: 2" a field); the text after them belongs to the same segment.
func isLabel(w string) bool {
	switch strings.ToLower(w) {
	case "code", "status", "errno", "hresult", "exitcode", "pid", "port", "id":
		return true
	}
	return false
}
