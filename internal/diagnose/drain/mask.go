package drain

import (
	"regexp"
	"strings"
)

// Mask replaces every match of Re with Replacement before a message is split into tokens.
// Masks run in the order given, each over the output of the previous one, as logparser's
// Drain preprocessing does (logpai/logparser logparser/Drain/Drain.py, LogParser.preprocess:
// re.sub(rex, "<*>", line) per regex).
type Mask struct {
	Re          *regexp.Regexp
	Replacement string
}

// defaultMask is one alternative of the built-in masker: a pattern and the placeholder that
// replaces what it matches.
type defaultMask struct {
	name    string // placeholder, e.g. "<IP>"; "" keeps the match as it is
	pattern string
}

// Building blocks of the built-in patterns.
const (
	hex4  = `[0-9a-fA-F]{1,4}`
	ipv4  = `(?:\d{1,3}\.){3}\d{1,3}`
	durU  = `(?:ns|us|µs|ms|s|m|h)`
	durN  = `\d+(?:\.\d+)?`
	pathC = `[\w.@%+~=-]` // characters of a Unix path segment
	// v6tail is what may follow "::": groups, optionally ending in an IPv4 address (tried first,
	// so "::ffff:10.1.2.3" is one address).
	v6tail = `(?:(?:` + hex4 + `:){0,5}` + ipv4 + `|` + hex4 + `(?::` + hex4 + `){0,6})?`
	// ipv6 inside brackets: full, or compressed with "::".
	ipv6 = `(?:` + hex4 + `:){7}` + hex4 + `|(?:(?:` + hex4 + `:){1,6}|:):` + v6tail
)

// defaultMasks are tried at each position in this order; the leftmost match wins, and among
// matches starting at the same byte the earlier alternative wins (Go's regexp is leftmost-first,
// https://pkg.go.dev/regexp: "the one that a backtracking implementation would have chosen").
// So the more specific shapes come first: a UUID before a number, an IP with its port before a
// number, a path (which may contain a UUID or IP) from its first slash.
//
// Why each is variable in kubelet/containerd/kube-proxy/CNI/HNS lines:
//   - klog header "E1128 16:50:47.123456    1234" (k8s.io/klog/v2 klog.go, formatHeader:
//     Lmmdd hh:mm:ss.uuuuuu threadid file:line]); "file.go:line]" is kept whole (its line number
//     unmasked), it names the call site. Callers that have the message alone pass just that.
//   - timestamps (RFC 3339 and "2006-01-02 15:04:05"), URLs (API server addresses, object paths).
//   - quoted strings without white space: klog's structured values pod="ns/name", podUID="…",
//     containerID="containerd://…", image refs; quoted text with spaces is prose (klog's message,
//     a wrapped err="…") and stays, so its variable words are masked one by one.
//   - UUIDs: pod UIDs, HNS endpoint/network GUIDs; 64-hex: container and sandbox ids
//     (containerd, CRI), image digests after "sha256:".
//   - MAC, IPv4 (with CIDR prefix or port), IPv6 (bracketed with a port, full or compressed,
//     with a prefix length).
//   - Windows paths (C:\k\…, \\?\…), Unix paths of two or more segments (one segment such as
//     "/healthz" or "ns/name" is kept: it is usually a constant endpoint or caught as a quoted value).
//   - Go durations as time.Duration.String prints them ("5m0s", "1.5s", "300ms").
//   - 0x hex, decimal numbers (also dotted versions), bare hex runs of 12+ digits (short container ids).
func defaultMasks() []defaultMask {
	return []defaultMask{
		{"<KLOG>", `^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+ +\d+\b`},
		{"", `\b[\w.-]+\.go:\d+\]`},
		{"<TS>", `\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2}\b)?`},
		{"<URL>", `\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>\\]*[^\s"'<>\\.,:;)\]]`},
		{"<QUOTED>", `\\?"[^"\s\\]+\\?"|'[^'\s]+'`},
		{"<UUID>", `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`},
		{"<ID>", `\b[0-9a-fA-F]{64}\b`},
		{"<MAC>", `\b[0-9a-fA-F]{2}(?:[:-][0-9a-fA-F]{2}){5}\b`},
		{"<IP>", `\[(?:` + ipv6 + `)(?:%[\w.]+)?\](?::\d{1,5})?`},
		{"<IP>", `\b` + ipv4 + `(?:/\d{1,2})?(?::\d{1,5})?\b`},
		{"<IP>", `(?:\b(?:` + hex4 + `:){7}` + hex4 + `\b` +
			`|\b(?:` + hex4 + `:){1,6}:` + v6tail + `(?:%[\w.]+)?` +
			`|\B::` + v6tail + `\b)(?:/\d{1,3}\b)?`},
		{"<PATH>", `(?:\b[A-Za-z]:[\\/]|\\\\[?.]\\)(?:[^\s"'<>|*?]*[^\s"'<>|*?.,:;)])?`},
		{"<PATH>", `(?:\.{1,2})?(?:/` + pathC + `+){2,}/?`},
		{"<DUR>", `\b` + durN + durU + `(?:` + durN + durU + `)*\b`},
		{"<HEX>", `\b0[xX][0-9a-fA-F]+\b`},
		{"<NUM>", `\b\d+(?:\.\d+)*\b`},
		{"<HEX>", `\b[0-9a-fA-F]{12,}\b`},
	}
}

// masker applies the configured masks, then the built-in ones in one pass of one regexp.
type masker struct {
	extra []Mask
	all   *regexp.Regexp // nil when the built-in masks are off
	names []string       // placeholder of each capture group of all, by group index
}

func newMasker(extra []Mask, builtin bool) *masker {
	m := &masker{extra: extra}
	if !builtin {
		return m
	}
	ds := defaultMasks()
	var b strings.Builder
	m.names = make([]string, len(ds)+1)
	for i, d := range ds {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString("(" + d.pattern + ")")
		m.names[i+1] = d.name
	}
	// The patterns are constants of this package, tested by TestDefaultMasks: MustCompile
	// can only fail on a programming error.
	m.all = regexp.MustCompile(b.String())
	return m
}

// apply returns s with every mask applied; it returns s itself when nothing matched.
func (m *masker) apply(s string) string {
	for _, x := range m.extra {
		if x.Re != nil {
			s = x.Re.ReplaceAllLiteralString(s, x.Replacement)
		}
	}
	if m.all == nil {
		return s
	}
	locs := m.all.FindAllStringSubmatchIndex(s, -1)
	if len(locs) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, loc := range locs {
		b.WriteString(s[last:loc[0]])
		if name := m.names[groupOf(loc)]; name != "" {
			b.WriteString(name)
		} else {
			b.WriteString(s[loc[0]:loc[1]])
		}
		last = loc[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// groupOf returns the index of the first capture group that took part in a match.
func groupOf(loc []int) int {
	for g := 1; 2*g < len(loc); g++ {
		if loc[2*g] >= 0 {
			return g
		}
	}
	return 0
}
