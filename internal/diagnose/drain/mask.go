package drain

import (
	"net/netip"
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

// Placeholders of the built-in masks. keep marks a span that is copied as it is, so that no
// later mask cuts into it.
const (
	phKLOG   = "<KLOG>"
	phTS     = "<TS>"
	phURL    = "<URL>"
	phQuoted = "<QUOTED>"
	phUUID   = "<UUID>"
	phID     = "<ID>"
	phMAC    = "<MAC>"
	phIP     = "<IP>"
	phPath   = "<PATH>"
	phDur    = "<DUR>"
	phHex    = "<HEX>"
	phNum    = "<NUM>"
	phHost   = "<HOST>"
	keep     = ""
)

// masker applies the configured masks, then the built-in ones.
type masker struct {
	extra   []Mask
	builtin bool
}

func newMasker(extra []Mask, builtin bool) *masker { return &masker{extra: extra, builtin: builtin} }

// apply returns s with every mask applied; it returns s itself when nothing matched.
func (m *masker) apply(s string) string {
	for _, x := range m.extra {
		if x.Re != nil {
			s = x.Re.ReplaceAllLiteralString(s, x.Replacement)
		}
	}
	if !m.builtin {
		return s
	}
	var b *strings.Builder
	last := 0
	scanMasks(s, func(start, end int, ph string) {
		if ph == keep {
			return
		}
		if b == nil {
			b = &strings.Builder{}
			b.Grow(len(s))
		}
		b.WriteString(s[last:start])
		b.WriteString(ph)
		last = end
	})
	if b == nil {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// scanMasks reports the spans of s the built-in masks take, left to right, without overlap.
// At each byte the masks are tried in the order below and the first that matches there wins;
// a regular expression per mask would say the same (each matcher's comment gives it), but Go's
// regexp runs a combined alternation of them at about 1 MB/s, a hundred times slower than this.
// "\b" is an ASCII word boundary as in RE2, "\s" ASCII white space.
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
//     with a zone or prefix length), checked by net/netip.
//   - Windows paths (C:\k\…, \\?\…), Unix paths of two or more segments (one segment such as
//     "/healthz" or "ns/name" is kept: it is usually a constant endpoint or caught as a quoted value).
//   - Go durations as time.Duration.String prints them ("5m0s", "1.5s", "300ms").
//   - 0x hex, decimal numbers (also dotted versions), bare hex words of 8+ digits with a decimal
//     digit or of 12+ (short container ids, counters, HRESULTs without 0x).
//   - host:port with a dotted host name ("registry.k8s.io:443", "node1.corp.example:10250"); a
//     bare dotted name stays (it is as often a constant: "kubernetes.io/hostname", "v1.Service").
func scanMasks(s string, emit func(start, end int, ph string)) {
	for i := 0; i < len(s); {
		end, ph := matchAt(s, i)
		if end > i {
			emit(i, end, ph)
			i = end
			continue
		}
		i++
	}
}

// matchAt returns the end and placeholder of the first mask matching at s[i:], or (i, "").
func matchAt(s string, i int) (int, string) {
	c := s[i]
	prevWord := i > 0 && isWord(s[i-1])
	if isWord(c) {
		if prevWord {
			// Inside a word only a UUID can start (it has no \b: "k8s_pod_<uid>_1").
			if e := uuidEnd(s, i); e > 0 {
				return e, phUUID
			}
			return i, ""
		}
		// A word starts here (\b).
		if i == 0 {
			if e := klogEnd(s); e > 0 {
				return e, phKLOG
			}
		}
		if e := goSourceEnd(s, i); e > 0 {
			return e, keep
		}
		if e := timestampEnd(s, i); e > 0 {
			return e, phTS
		}
		if e := urlEnd(s, i); e > 0 {
			return e, phURL
		}
		if e := uuidEnd(s, i); e > 0 {
			return e, phUUID
		}
		if e := hexRunEnd(s, i, 64, 64); e > 0 {
			return e, phID
		}
		if e := macEnd(s, i); e > 0 {
			return e, phMAC
		}
		if e := ipv4End(s, i); e > 0 {
			// A comma-separated list of addresses is one value ("10.0.0.1,10.0.0.2" in
			// X-Forwarded-For, endpoint lists).
			for e < len(s)-1 && s[e] == ',' && isDigitB(s[e+1]) {
				f := ipv4End(s, e+1)
				if f == 0 {
					break
				}
				e = f
			}
			return e, phIP
		}
		if e := ipv6End(s, i); e > 0 {
			return e, phIP
		}
		if e := winPathEnd(s, i); e > 0 {
			return e, phPath
		}
		if e := durationEnd(s, i); e > 0 {
			return e, phDur
		}
		if e := hex0xEnd(s, i); e > 0 {
			return e, phHex
		}
		if e := numberEnd(s, i); e > 0 {
			return e, phNum
		}
		if e := hexRunEnd(s, i, 8, len(s)); e > 0 && (e-i >= 12 || hasDigit(s[i:e])) {
			return e, phHex
		}
		if e := hostPortEnd(s, i); e > 0 {
			return e, phHost
		}
		return i, ""
	}
	switch c {
	case '"', '\'', '\\':
		if e := quotedEnd(s, i); e > 0 {
			return e, phQuoted
		}
		if e := winPathEnd(s, i); e > 0 {
			return e, phPath
		}
	case '[':
		if e := bracketIPEnd(s, i); e > 0 {
			return e, phIP
		}
	case ':':
		if !prevWord {
			if e := ipv6End(s, i); e > 0 {
				return e, phIP
			}
		}
	case '/', '.':
		if e := unixPathEnd(s, i); e > 0 {
			return e, phPath
		}
	}
	return i, ""
}

func isWord(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isDigitB(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDigitB(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// isSpaceB is RE2's \s: [\t\n\f\r ].
func isSpaceB(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// boundaryAt reports \b at position j of s.
func boundaryAt(s string, j int) bool {
	before := j > 0 && isWord(s[j-1])
	after := j < len(s) && isWord(s[j])
	return before != after
}

// digitsEnd returns the end of the run of at most max digits at s[i:] (i when none).
func digitsEnd(s string, i, max int) int {
	j := i
	for j < len(s) && j-i < max && isDigitB(s[j]) {
		j++
	}
	return j
}

// exactDigits reports whether s[i:i+n] are n digits.
func exactDigits(s string, i, n int) bool { return i+n <= len(s) && digitsEnd(s, i, n) == i+n }

// klogEnd: ^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+ +\d+\b
func klogEnd(s string) int {
	if len(s) < 16 || strings.IndexByte("IWEF", s[0]) < 0 || !exactDigits(s, 1, 4) || s[5] != ' ' ||
		!exactDigits(s, 6, 2) || s[8] != ':' || !exactDigits(s, 9, 2) || s[11] != ':' || !exactDigits(s, 12, 2) || s[14] != '.' {
		return 0
	}
	j := digitsEnd(s, 15, len(s))
	if j == 15 || j >= len(s) || s[j] != ' ' {
		return 0
	}
	for j < len(s) && s[j] == ' ' {
		j++
	}
	k := digitsEnd(s, j, len(s))
	if k == j || !boundaryAt(s, k) {
		return 0
	}
	return k
}

// goSourceEnd: \b[\w.-]+\.go:\d+\] (klog's call site), kept as it is.
func goSourceEnd(s string, i int) int {
	j := i
	for j < len(s) && (isWord(s[j]) || s[j] == '.' || s[j] == '-') {
		j++
	}
	if j-i < 4 || j >= len(s) || s[j] != ':' || s[j-3:j] != ".go" {
		return 0
	}
	k := digitsEnd(s, j+1, len(s))
	if k == j+1 || k >= len(s) || s[k] != ']' {
		return 0
	}
	return k + 1
}

// timestampEnd: \b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2}\b)?
func timestampEnd(s string, i int) int {
	if !exactDigits(s, i, 4) || i+19 > len(s) || s[i+4] != '-' || !exactDigits(s, i+5, 2) || s[i+7] != '-' ||
		!exactDigits(s, i+8, 2) || (s[i+10] != 'T' && s[i+10] != ' ') || !exactDigits(s, i+11, 2) || s[i+13] != ':' ||
		!exactDigits(s, i+14, 2) || s[i+16] != ':' || !exactDigits(s, i+17, 2) {
		return 0
	}
	j := i + 19
	if j+1 < len(s) && (s[j] == '.' || s[j] == ',') && isDigitB(s[j+1]) {
		j = digitsEnd(s, j+1, len(s))
	}
	if j < len(s) && s[j] == 'Z' {
		return j + 1
	}
	if j < len(s) && (s[j] == '+' || s[j] == '-') && exactDigits(s, j+1, 2) {
		k := j + 3
		if k < len(s) && s[k] == ':' {
			k++
		}
		if exactDigits(s, k, 2) && boundaryAt(s, k+2) {
			return k + 2
		}
	}
	return j
}

// urlEnd: \b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>\\]*[^\s"'<>\\.,:;)\]]
func urlEnd(s string, i int) int {
	if !isLetter(s[i]) {
		return 0
	}
	j := i + 1
	for j < len(s) && (isLetter(s[j]) || isDigitB(s[j]) || s[j] == '+' || s[j] == '.' || s[j] == '-') {
		j++
	}
	if !strings.HasPrefix(s[j:], "://") {
		return 0
	}
	j += 3
	start := j
	for j < len(s) && !isSpaceB(s[j]) && strings.IndexByte(`"'<>\`, s[j]) < 0 {
		j++
	}
	for j > start && strings.IndexByte(".,:;)]", s[j-1]) >= 0 {
		j--
	}
	if j == start {
		return 0
	}
	return j
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// quotedEnd: \\?"[^"\s\\]+\\?" | '[^'\s]+'
func quotedEnd(s string, i int) int {
	j := i
	q := s[j]
	if q == '\\' {
		if j+1 >= len(s) || s[j+1] != '"' {
			return 0
		}
		j++
		q = '"'
	}
	j++
	start := j
	for j < len(s) && s[j] != q && !isSpaceB(s[j]) && (q == '\'' || s[j] != '\\') {
		j++
	}
	if j == start || j >= len(s) {
		return 0
	}
	if s[j] == q {
		return j + 1
	}
	if q == '"' && s[j] == '\\' && j+1 < len(s) && s[j+1] == '"' {
		return j + 2
	}
	return 0
}

// uuidEnd: [0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}
func uuidEnd(s string, i int) int {
	if i+36 > len(s) {
		return 0
	}
	for k := 0; k < 36; k++ {
		c := s[i+k]
		switch k {
		case 8, 13, 18, 23:
			if c != '-' {
				return 0
			}
		default:
			if !isHex(c) {
				return 0
			}
		}
	}
	return i + 36
}

// hexRunEnd: \b[0-9a-fA-F]{min,max}\b (the whole word must be hex, of min..max digits).
func hexRunEnd(s string, i, min, max int) int {
	j := i
	for j < len(s) && isHex(s[j]) {
		j++
	}
	if n := j - i; n < min || n > max || !boundaryAt(s, j) {
		return 0
	}
	return j
}

// macEnd: \b[0-9a-fA-F]{2}(?:[:-][0-9a-fA-F]{2}){5}\b
func macEnd(s string, i int) int {
	if i+17 > len(s) {
		return 0
	}
	for k := 0; k < 17; k++ {
		c := s[i+k]
		if k%3 == 2 {
			if c != ':' && c != '-' {
				return 0
			}
		} else if !isHex(c) {
			return 0
		}
	}
	if !boundaryAt(s, i+17) {
		return 0
	}
	return i + 17
}

// ipv4End: \b(?:\d{1,3}\.){3}\d{1,3}(?:/\d{1,2}\b)?(?::\d{1,5}\b)?\b with a valid address.
func ipv4End(s string, i int) int {
	j := i
	for octet := 0; octet < 4; octet++ {
		k := digitsEnd(s, j, 4)
		if k == j || k-j > 3 {
			return 0
		}
		j = k
		if octet < 3 {
			if j >= len(s) || s[j] != '.' {
				return 0
			}
			j++
		}
	}
	if !boundaryAt(s, j) {
		return 0
	}
	if _, err := netip.ParseAddr(s[i:j]); err != nil {
		return 0
	}
	if j < len(s) && s[j] == '/' {
		if k := digitsEnd(s, j+1, 3); k > j+1 && k-j-1 <= 2 && boundaryAt(s, k) {
			j = k
		}
	}
	if j < len(s) && s[j] == ':' {
		if k := digitsEnd(s, j+1, 6); k > j+1 && k-j-1 <= 5 && boundaryAt(s, k) {
			j = k
		}
	}
	return j
}

// isV6Char: characters an IPv6 address (with an IPv4 tail) is made of.
func isV6Char(c byte) bool { return isHex(c) || c == ':' || c == '.' }

// ipv6End: an IPv6 address that net/netip accepts, starting at a word start or at "::" after a
// non-word byte, written with "::" or in full (8 groups), optionally with %zone and /prefix;
// the longest such text that ends at a word boundary.
func ipv6End(s string, i int) int {
	j := i
	for j < len(s) && j-i < 46 && isV6Char(s[j]) {
		j++
	}
	for end := j; end > i; end-- {
		if s[end-1] != ':' && !boundaryAt(s, end) {
			continue
		}
		a := s[i:end]
		if strings.Count(a, ":") < 2 {
			return 0
		}
		if ip, err := netip.ParseAddr(a); err != nil || !ip.Is6() {
			continue
		}
		if end < len(s) && s[end] == '%' {
			k := end + 1
			for k < len(s) && (isWord(s[k]) || s[k] == '.') {
				k++
			}
			if k > end+1 {
				end = k
			}
		}
		if end < len(s) && s[end] == '/' {
			if k := digitsEnd(s, end+1, 4); k > end+1 && k-end-1 <= 3 && boundaryAt(s, k) {
				end = k
			}
		}
		return end
	}
	return 0
}

// bracketIPEnd: \[IPv6(%zone)?\](:\d{1,5})?
func bracketIPEnd(s string, i int) int {
	k := strings.IndexByte(s[i+1:min(len(s), i+64)], ']')
	if k < 0 {
		return 0
	}
	end := i + 1 + k
	ip, err := netip.ParseAddr(s[i+1 : end])
	if err != nil || !ip.Is6() {
		return 0
	}
	end++
	if end < len(s) && s[end] == ':' {
		if d := digitsEnd(s, end+1, 5); d > end+1 {
			end = d
		}
	}
	return end
}

// winPathEnd: (?:\b[A-Za-z]:[\\/]|\\\\[?.]\\)(?:[^\s"'<>|*?]*[^\s"'<>|*?.,:;)])?
func winPathEnd(s string, i int) int {
	var j int
	switch {
	case isLetter(s[i]) && i+2 < len(s) && s[i+1] == ':' && (s[i+2] == '\\' || s[i+2] == '/'):
		j = i + 3
	case strings.HasPrefix(s[i:], `\\?\`) || strings.HasPrefix(s[i:], `\\.\`):
		j = i + 4
	default:
		return 0
	}
	start := j
	for j < len(s) && !isSpaceB(s[j]) && strings.IndexByte(`"'<>|*?`, s[j]) < 0 {
		j++
	}
	for j > start && strings.IndexByte(".,:;)", s[j-1]) >= 0 {
		j--
	}
	return j
}

// isPathChar: [\w.@%+~=-], a character of a Unix path segment.
func isPathChar(c byte) bool { return isWord(c) || strings.IndexByte(".@%+~=-", c) >= 0 }

// unixPathEnd: (?:\.{1,2})?(?:/[\w.@%+~=-]+){2,}/?
func unixPathEnd(s string, i int) int {
	j := i
	for j < len(s) && j-i < 3 && s[j] == '.' {
		j++
	}
	if j-i > 2 {
		return 0
	}
	segs := 0
	for j < len(s) && s[j] == '/' {
		k := j + 1
		for k < len(s) && isPathChar(s[k]) {
			k++
		}
		if k == j+1 {
			break
		}
		segs++
		j = k
	}
	if segs < 2 {
		return 0
	}
	if j < len(s) && s[j] == '/' {
		j++
	}
	return j
}

// durationEnd: \b(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+\b, the longest that ends at \b.
func durationEnd(s string, i int) int {
	j, best := i, 0
	for {
		k := digitsEnd(s, j, len(s))
		if k == j {
			return best
		}
		if k+1 < len(s) && s[k] == '.' && isDigitB(s[k+1]) {
			k = digitsEnd(s, k+1, len(s))
		}
		u := unitLen(s[k:])
		if u == 0 {
			return best
		}
		j = k + u
		if boundaryAt(s, j) {
			best = j
		}
	}
}

func unitLen(s string) int {
	for _, u := range []string{"ns", "us", "µs", "ms", "s", "m", "h"} {
		if strings.HasPrefix(s, u) {
			return len(u)
		}
	}
	return 0
}

// hex0xEnd: \b0[xX][0-9a-fA-F]+\b
func hex0xEnd(s string, i int) int {
	if i+2 >= len(s) || s[i] != '0' || (s[i+1] != 'x' && s[i+1] != 'X') {
		return 0
	}
	j := i + 2
	for j < len(s) && isHex(s[j]) {
		j++
	}
	if j == i+2 || !boundaryAt(s, j) {
		return 0
	}
	return j
}

// numberEnd: \b\d+(?:\.\d+)*\b, the longest that ends at \b.
func numberEnd(s string, i int) int {
	j := digitsEnd(s, i, len(s))
	if j == i {
		return 0
	}
	best := 0
	if boundaryAt(s, j) {
		best = j
	}
	for j+1 < len(s) && s[j] == '.' && isDigitB(s[j+1]) {
		j = digitsEnd(s, j+1, len(s))
		if boundaryAt(s, j) {
			best = j
		}
	}
	return best
}

// hostPortEnd: \b(?:[\w-]+\.)+[A-Za-z][\w-]*:\d{1,5}\b, a dotted host name whose last label starts
// with a letter, and a port.
func hostPortEnd(s string, i int) int {
	j, dots, label := i, 0, i
	for j < len(s) && (isWord(s[j]) || s[j] == '-' || s[j] == '.') {
		if s[j] == '.' {
			if j == label { // empty label
				return 0
			}
			dots++
			label = j + 1
		}
		j++
	}
	if dots == 0 || label == j || !isLetter(s[label]) || j >= len(s) || s[j] != ':' {
		return 0
	}
	k := digitsEnd(s, j+1, 6)
	if k == j+1 || k-j-1 > 5 || !boundaryAt(s, k) {
		return 0
	}
	return k
}
