package diagnose

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// Severity of a signature: error entries make `kubewin diagnose` exit 1; warning entries are real
// but not fatal; info entries are known noise (explained, and kept out of the unmatched summary).
type Severity string

const (
	SevError   Severity = "error"
	SevWarning Severity = "warning"
	SevInfo    Severity = "info"
)

func (s Severity) rank() int {
	switch s {
	case SevError:
		return 0
	case SevWarning:
		return 1
	}
	return 2
}

// Signature is one known failure. Entries are data: they live in one sig_<family>.go file per
// component family, and each has an example line under testdata/logs/signatures/<ID>.log and a
// near miss under testdata/logs/nearmiss/<ID>.log.
type Signature struct {
	ID        string   `json:"id"`        // stable, upper case, family prefix: KUBELET-RESOLV-CONF
	Component string   `json:"component"` // kubelet, kube-proxy, containerd, cni, hns, flannel, cert, service, events
	Severity  Severity `json:"severity"`
	Title     string   `json:"title"` // one line: what happened
	// Literal must occur in every matching line (in any ASCII case); it drives the prefilter
	// (prefilter.go), so it should be as long and rare as possible.
	Literal string `json:"literal"`
	// Pattern confirms the match on the raw line, ASCII case-insensitively (compiled with (?i)),
	// and captures values with named groups
	// ((?P<service>...), node, port, code, flag, ...) that Cause and Fix may use as {name}.
	Pattern string `json:"pattern"`
	Cause   string `json:"cause"`
	Fix     string `json:"fix"`
	// FixLinux replaces Fix when the finding's lines come from a Linux node (lineOS): the same
	// failure has other commands and paths there (systemctl, /etc/cni/net.d).
	FixLinux string   `json:"fixLinux,omitempty"`
	Refs     []string `json:"refs"`
	// Fallback entries (generic error-code tables) are only tried when no specific entry
	// matched the line.
	Fallback bool `json:"fallback,omitempty"`
	// Identity entries are not failures: a match names the node that wrote the input (its
	// (?P<node>) group), and findings from that input are attributed to the node.
	Identity bool `json:"identity,omitempty"`
}

// Catalogue is the compiled signature set. It is immutable after Compile and safe for
// concurrent use.
type Catalogue struct {
	sigs []Signature
	// res confirm candidates; where need[i] is set, res[i] is written for the ASCII-lower-cased
	// line (prefilter_fold.go), otherwise it is the (?i) pattern for the line as it is.
	res []*regexp.Regexp
	// need is nil where the pattern is not lowered; otherwise what the lower-cased line must
	// contain for res to match (checked first, prefilter_fold.go).
	need     []*required
	literals []string // distinct prefilter keys (distinct after ASCII case folding), markers included
	litSigs  [][]int  // literal index -> signature indexes in evaluation order
	marker   []bool   // literal index -> is an error-level marker, not a signature literal
	exact    []bool   // literal index -> matches only in its own case (klog severity markers)
	scanner  *foldScanner
	// nodeGroup is the index of the (?P<node>) group of each signature's regexp, 0 if none.
	nodeGroup []int
	// sources are the source entries (sources.go), in catalogue order.
	sources []compiledSource
}

// markerLiterals make non-klog error lines candidates so they reach the unmatched summary.
// Besides logrus key=value levels: Calico's "[ERROR]"-style levels, logrus text ("ERRO[0000]"),
// JSON lines, journald-wrapped klog ("kubelet[1046]: E0510 ..."). Like signature literals they
// match in any ASCII case ("rror" finds "Error", "ERROR"), except exactMarkers.
func markerLiterals() []string {
	return append([]string{"level=error", "level=fatal", "level=warn", "[ERROR]", "[FATAL]", "[CRITICAL]", "[PANIC]", "[WARNING]",
		"ERRO[", "FATA[", "WARN[", `"level":"error"`, `"level":"fatal"`, `"level":"warn`,
		// kubeadm's preflight levels, PowerShell error records and Write-Warning, Go panics.
		"[ERROR ", "[WARNING ", "CategoryInfo", "FullyQualifiedErrorId", "WARNING: ", "panic: ", "fatal error: ",
		// The message line of a PowerShell error record, "Verb-Noun : message" (the console
		// host's error view prints the command's name before the exception's message; PowerShell
		// 5.1 DefaultFormatters ErrorRecord, PowerShell/PowerShell src/System.Management.Automation/
		// FormatAndOutput/DefaultFormatters/PowerShellCore_format_ps1xml.cs): the message itself
		// often has no error word ("The term 'x' is not recognized", "No matching … objects found
		// by CIM query"), so the separator makes the line a candidate and cmdletHeaderLen decides.
		" : ",
		// JSON logs: klog's JSON format has no level key, errors carry "err" (k8s.io/component-base
		// logs/json: zapr.ErrorKey("err")); ETW/HCS records carry a numeric "Level".
		`"err":`, `"Level":`, `"level":`,
		// Lines with no level of their own (plain output, keepalived's syslog messages) are
		// judged by their wording (wordingSeverity): these words make them candidates.
		"rror", "ailed", "ailure", "nable to", "annot ", "ould not", "ouldn't", "can't",
		"nvalid", "enied", "ot found", "efused", "imed out", "atal", "anic", "xception", "arning", "WARN",
		"o such file", "not running", "xited with", "not supported", "nknown keyword", "orbidden", "does not exist",
		"keepalived"}, "deprecated")
}

// exactMarkers are markers that match only in their own case: a klog severity letter after a
// journald/syslog program prefix ("kubelet[1046]: E0510 …", "kubelet: W0310 …"; months 01-12).
// Folded, ": e0" would make every hexadecimal id after a colon a candidate.
func exactMarkers() []string {
	return []string{"]: E", "]: F", "]: W", ": E0", ": E1", ": F0", ": F1", ": W0", ": W1"}
}

// DefaultSignatures returns the built-in catalogue entries, family by family.
func DefaultSignatures() []Signature {
	var all []Signature
	for _, fam := range [][]Signature{
		kubeletSignatures(), kubeProxySignatures(), containerdSignatures(), cniSignatures(),
		hnsSignatures(), flannelSignatures(), certSignatures(), serviceSignatures(), eventSignatures(),
		calicoSignatures(), joinSignatures(), windowsNoiseSignatures(), rke2Signatures(), kubeletFileSignatures(), kubeProxyLBFallback(), windowsFeatureSignatures(), windowsRecordSignatures(), winErrorSignatures(), localizedSignatures(),
		keepalivedSignatures(), kubeProxyLinuxSignatures(), kubeProxyRuntimeSignatures(), criSignatures(), kernelSignatures(), kubeadmPreflightSignatures(), systemdSignatures(),
	} {
		all = append(all, fam...)
	}
	return all
}

// DefaultCatalogue compiles the built-in signatures and source entries.
func DefaultCatalogue() (*Catalogue, error) {
	return Compile(DefaultSignatures(), DefaultSourceEntries()...)
}

// Compile validates and compiles signatures and source entries. Errors name the entry and field.
func Compile(sigs []Signature, sources ...SourceEntry) (*Catalogue, error) {
	c := &Catalogue{}
	seen := map[string]bool{}
	litIndex := map[string]int{} // folded key -> literal index
	addLit := func(l string, marker, exact bool) int {
		l = trieKey(l)
		folded := foldString(l)
		if i, ok := litIndex[folded]; ok {
			// One key for every spelling: a case-insensitive one covers the exact ones.
			c.exact[i] = c.exact[i] && exact
			return i
		}
		litIndex[folded] = len(c.literals)
		c.literals = append(c.literals, l)
		c.litSigs = append(c.litSigs, nil)
		c.marker = append(c.marker, marker)
		c.exact = append(c.exact, exact)
		return len(c.literals) - 1
	}
	// Specific entries first, fallbacks after, catalogue order within each group.
	order := make([]int, len(sigs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return !sigs[order[a]].Fallback && sigs[order[b]].Fallback })
	for _, i := range order {
		s := sigs[i]
		where := fmt.Sprintf("signature %d (%s)", i, s.ID)
		switch {
		case s.ID == "" || strings.ToUpper(s.ID) != s.ID:
			return nil, fmt.Errorf("%s: ID must be non-empty upper case", where)
		case seen[s.ID]:
			return nil, fmt.Errorf("%s: duplicate ID", where)
		case s.Component == "" || s.Title == "" || (!s.Identity && (s.Cause == "" || s.Fix == "")):
			return nil, fmt.Errorf("%s: component, title, cause and fix are required", where)
		case inKlogHeaderAlphabet(upperASCII(s.Literal)):
			return nil, fmt.Errorf("%s: literal %q could match inside a klog header, which the prefilter skips", where, s.Literal)
		case len(s.Literal) < 4:
			return nil, fmt.Errorf("%s: literal %q too short for a prefilter (need >= 4 bytes)", where, s.Literal)
		case s.Severity != SevError && s.Severity != SevWarning && s.Severity != SevInfo:
			return nil, fmt.Errorf("%s: severity %q: expected error, warning or info", where, s.Severity)
		}
		seen[s.ID] = true
		// Case-insensitive like the prefilter: components change the case of their messages
		// between releases ("Unable to find HNS Network" became "unable to find …").
		re, need, err := lowerPattern(s.Pattern)
		if err == nil && need == nil {
			re, err = regexp.Compile("(?i)" + s.Pattern)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: pattern: %w", where, err)
		}
		idx := len(c.sigs)
		c.sigs = append(c.sigs, s)
		if s.Identity && re.SubexpIndex("node") < 0 {
			return nil, fmt.Errorf("%s: identity pattern needs a (?P<node>...) group", where)
		}
		c.res = append(c.res, re)
		c.need = append(c.need, need)
		c.nodeGroup = append(c.nodeGroup, max(re.SubexpIndex("node"), 0))
		li := addLit(s.Literal, false, false)
		c.litSigs[li] = append(c.litSigs[li], idx)
	}
	for _, m := range markerLiterals() {
		addLit(m, true, false)
	}
	for _, m := range exactMarkers() {
		addLit(m, true, true)
	}
	var err error
	if c.scanner, err = newFoldScanner(c.literals, c.exact); err != nil {
		return nil, err
	}
	srcs, err := compileSources(sources, seen)
	if err != nil {
		return nil, err
	}
	c.sources = srcs
	return c, nil
}

// maxTrieKey bounds the prefilter keys: the automaton's size grows with the total length of its
// keys (a transition row per state, and the fewer rows the more of the walk stays in the CPU's
// first-level cache), and a 16-byte prefix of a literal is as selective in practice: the
// benchmark mix gives the same report with 12, 16 and 24, and 16 took ≈ 5 % less CPU than 24;
// the pattern confirms every candidate line anyway (bench/README.md, diagnose).
const maxTrieKey = 16

// trieKey is the prefilter key of a literal: its first maxTrieKey bytes, cut at a rune boundary.
func trieKey(l string) string {
	if len(l) <= maxTrieKey {
		return l
	}
	n := maxTrieKey
	for n > 0 && !utf8.RuneStart(l[n]) {
		n--
	}
	return l[:n]
}

// foldString is s with ASCII upper-case letters in lower case.
func foldString(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = foldASCII(c)
	}
	return string(b)
}

// upperASCII is s with ASCII lower-case letters in upper case.
func upperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// Signatures returns the compiled entries in evaluation order.
func (c *Catalogue) Signatures() []Signature { return c.sigs }

// Literals returns the prefilter literal set (signature literals and markers).
func (c *Catalogue) Literals() []string { return c.literals }

var (
	placeholder = regexp.MustCompile(`\{([a-z_]+)\}`)
	optional    = regexp.MustCompile(`\[\[(.*?)\]\]`)
)

// render fills {name} placeholders with captured values. A segment written [[ ... ]] is kept only
// when every placeholder in it was captured (so "validity period[[ (now {now})]]" reads well
// whether or not the line carried the time); a missing value outside such a segment is written
// as "(not in the log line)", never as a literal placeholder.
func render(tmpl string, caps map[string]string) string {
	tmpl = optional.ReplaceAllStringFunc(tmpl, func(seg string) string {
		body := seg[2 : len(seg)-2]
		for _, m := range placeholder.FindAllStringSubmatch(body, -1) {
			if caps[m[1]] == "" {
				return ""
			}
		}
		return body
	})
	return placeholder.ReplaceAllStringFunc(tmpl, func(m string) string {
		if v := caps[m[1:len(m)-1]]; v != "" {
			return v
		}
		return "(not in the log line)"
	})
}

// captures extracts named groups from a match, decoding Go-escaped text in their values.
func captures(re *regexp.Regexp, line []byte, loc []int) map[string]string {
	var caps map[string]string
	for i, name := range re.SubexpNames() {
		if name == "" || 2*i+1 >= len(loc) || loc[2*i] < 0 {
			continue
		}
		if caps == nil {
			caps = map[string]string{}
		}
		caps[name] = decodeValue(line[loc[2*i]:loc[2*i+1]])
	}
	deriveWinCaptures(caps)
	return caps
}

// decodeValue makes a captured value readable: Go escapes (as in the body of a %q string) are
// turned back into bytes and decoded, other text is decoded as it stands.
func decodeValue(v []byte) string {
	if bytes.Contains(v, []byte(`\x`)) || bytes.Contains(v, []byte(`\u`)) {
		raw, _ := UnquoteGoBytes(string(v))
		var sb strings.Builder
		writeVisible(&sb, DecodeText(raw))
		return sb.String()
	}
	if bytes.Contains(v, []byte(`\"`)) {
		// A value captured inside a quoted klog/logrus field keeps its escaped quotes; show them plainly.
		v = bytes.ReplaceAll(v, []byte(`\"`), []byte(`"`))
	}
	return DecodeText(v)
}
