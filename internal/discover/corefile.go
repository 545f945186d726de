package discover

import (
	"fmt"
	"strings"
)

// A Corefile is read here with a small lexer rather than CoreDNS's caddyfile package because
// that package follows `import` directives into the local filesystem (k3s and AKS Corefiles
// import /etc/coredns/custom/*), and discovery must read nothing but the API.

// corefileToken is one word of a Corefile with the line it is on.
type corefileToken struct {
	text   string
	line   int
	quoted bool
}

// lexCorefile splits a Corefile into words: blanks separate, # starts a comment outside quotes,
// { and } are words of their own, "..." groups (backslash escapes inside quotes).
func lexCorefile(src string) ([]corefileToken, error) {
	var toks []corefileToken
	line := 1
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '{' || c == '}':
			toks = append(toks, corefileToken{text: string(c), line: line})
			i++
		case c == '"':
			start := line
			var b strings.Builder
			i++
			closed := false
			for i < len(src) {
				if src[i] == '\\' && i+1 < len(src) {
					b.WriteByte(src[i+1])
					i += 2
					continue
				}
				if src[i] == '"' {
					closed = true
					i++
					break
				}
				if src[i] == '\n' {
					line++
				}
				b.WriteByte(src[i])
				i++
			}
			if !closed {
				return nil, fmt.Errorf("line %d: unterminated quoted string", start)
			}
			toks = append(toks, corefileToken{text: b.String(), line: start, quoted: true})
		default:
			j := i
			for j < len(src) && !strings.ContainsRune(" \t\r\n{}\"#", rune(src[j])) {
				j++
			}
			toks = append(toks, corefileToken{text: src[i:j], line: line})
			i = j
		}
	}
	return toks, nil
}

// corefileDirective is a plugin line inside a server block: its name and the arguments on the
// same line (its own block, if any, is skipped).
type corefileDirective struct {
	name string
	args []string
	line int
}

type corefileServerBlock struct {
	keys       []string
	directives []corefileDirective
}

// parseCorefile returns the server blocks of a Corefile with their top-level directives.
func parseCorefile(src string) ([]corefileServerBlock, error) {
	toks, err := lexCorefile(src)
	if err != nil {
		return nil, err
	}
	var blocks []corefileServerBlock
	i := 0
	for i < len(toks) {
		var sb corefileServerBlock
		for i < len(toks) && !(toks[i].text == "{" && !toks[i].quoted) {
			if toks[i].text == "}" && !toks[i].quoted {
				return nil, fmt.Errorf("line %d: unexpected }", toks[i].line)
			}
			for _, k := range strings.Split(toks[i].text, ",") {
				if k = strings.TrimSpace(k); k != "" {
					sb.keys = append(sb.keys, k)
				}
			}
			i++
		}
		if i == len(toks) {
			if len(sb.keys) > 0 {
				return nil, fmt.Errorf("line %d: server block %q has no body", toks[len(toks)-1].line, strings.Join(sb.keys, " "))
			}
			break
		}
		if len(sb.keys) == 0 {
			return nil, fmt.Errorf("line %d: server block without a zone", toks[i].line)
		}
		open := toks[i].line
		i++ // {
		closed := false
		for i < len(toks) {
			t := toks[i]
			if !t.quoted && t.text == "}" {
				closed = true
				i++
				break
			}
			if !t.quoted && t.text == "{" {
				return nil, fmt.Errorf("line %d: block without a directive", t.line)
			}
			d := corefileDirective{name: t.text, line: t.line}
			i++
			for i < len(toks) && toks[i].line == d.line && !(!toks[i].quoted && (toks[i].text == "{" || toks[i].text == "}")) {
				d.args = append(d.args, toks[i].text)
				i++
			}
			if i < len(toks) && !toks[i].quoted && toks[i].text == "{" {
				depth := 0
				for ; i < len(toks); i++ {
					if toks[i].quoted {
						continue
					}
					if toks[i].text == "{" {
						depth++
					} else if toks[i].text == "}" {
						depth--
						if depth == 0 {
							i++
							break
						}
					}
				}
				if depth != 0 {
					return nil, fmt.Errorf("line %d: block of %s is not closed", d.line, d.name)
				}
			}
			sb.directives = append(sb.directives, d)
		}
		if !closed {
			return nil, fmt.Errorf("line %d: server block %q is not closed", open, strings.Join(sb.keys, " "))
		}
		blocks = append(blocks, sb)
	}
	return blocks, nil
}

// corefileClusterDomains returns the zones the kubernetes plugin serves, in order, without the
// reverse (.arpa) zones and without trailing dots. When the plugin lists no zones it serves its
// server block's zones.
func corefileClusterDomains(src string) ([]string, error) {
	blocks, err := parseCorefile(src)
	if err != nil {
		return nil, err
	}
	var zones []string
	seen := map[string]bool{}
	add := func(z string) {
		z = strings.ToLower(strings.TrimSuffix(zoneOfKey(z), "."))
		if z == "" || strings.HasSuffix(z, ".arpa") || seen[z] {
			return
		}
		seen[z] = true
		zones = append(zones, z)
	}
	for _, b := range blocks {
		for _, d := range b.directives {
			if d.name != "kubernetes" {
				continue
			}
			if len(d.args) == 0 {
				for _, k := range b.keys {
					add(k)
				}
			}
			for _, a := range d.args {
				add(a)
			}
		}
	}
	return zones, nil
}

// zoneOfKey turns a server block key (dns://cluster.local:53, .:53) into its zone.
func zoneOfKey(k string) string {
	if i := strings.Index(k, "://"); i >= 0 {
		k = k[i+3:]
	}
	if i := strings.LastIndex(k, ":"); i >= 0 {
		k = k[:i]
	}
	if k == "." {
		return ""
	}
	return k
}
