package discover

import (
	"path"
	"strings"
)

// componentArgs returns the flags given to component in a container's command and args, as
// static pods (kubeadm: the binary, then flags), go-runner wrappers (kops: go-runner flags, the
// binary, then its flags) and shell wrappers (`sh -c "exec kube-controller-manager --a=b ..."`)
// write them. Only flags after the component's binary are returned when the binary is found, so
// a wrapper's own flags (go-runner --log-file) are not taken for the component's. The last
// occurrence of a flag wins, as with pflag. Single-dash long flags (-v=2) are accepted.
func componentArgs(component string, command, args []string) map[string]string {
	tokens := expandShell(append(append([]string(nil), command...), args...))
	start := 0
	for i, tok := range tokens {
		if path.Base(tok) == component {
			start = i + 1
			break
		}
	}
	return parseFlags(tokens[start:])
}

// expandShell splits the script argument of `sh -c SCRIPT` (and bash, ash) into words so the
// flags inside it can be read. Quotes group words; nothing is executed or expanded.
func expandShell(tokens []string) []string {
	out := make([]string, 0, len(tokens))
	for i := 0; i < len(tokens); i++ {
		tok := tokens[i]
		out = append(out, tok)
		if tok == "-c" && i > 0 && isShell(tokens[i-1]) && i+1 < len(tokens) {
			out = append(out, shellWords(tokens[i+1])...)
			i++
		}
	}
	return out
}

func isShell(tok string) bool {
	switch path.Base(tok) {
	case "sh", "bash", "ash", "dash":
		return true
	}
	return false
}

// shellWords splits s at unquoted blanks and at ; & | so that `a --x=1 2>&1 | tee` yields the
// flags of a. Single and double quotes group; backslash escapes the next byte outside single
// quotes.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote byte
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' && i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote = c
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			flush()
		case c == ';' || c == '&' || c == '|':
			flush()
			words = append(words, string(c))
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words
}

// parseFlags reads --name=value and --name value (when the next token is not a flag); a flag
// without a value is "true".
func parseFlags(tokens []string) map[string]string {
	flags := map[string]string{}
	for i := 0; i < len(tokens); i++ {
		tok := tokens[i]
		if len(tok) < 2 || tok[0] != '-' || tok == "--" {
			continue
		}
		name := strings.TrimLeft(tok, "-")
		if name == "" {
			continue
		}
		if k, v, ok := strings.Cut(name, "="); ok {
			if k != "" {
				flags[k] = v
			}
			continue
		}
		if i+1 < len(tokens) && !strings.HasPrefix(tokens[i+1], "-") && !isShellOperator(tokens[i+1]) {
			flags[name] = tokens[i+1]
			i++
			continue
		}
		flags[name] = "true"
	}
	return flags
}

func isShellOperator(tok string) bool { return tok == ";" || tok == "&" || tok == "|" }
