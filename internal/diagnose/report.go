package diagnose

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kubewin/kubewin/internal/diagnose/drain"
	"github.com/kubewin/kubewin/internal/diagnose/errchain"
	"github.com/kubewin/kubewin/internal/diagnose/srcmsg"
)

const (
	maxNodes = 20 // nodes listed per finding
	maxFiles = 20 // files listed per finding
)

// Location is a line in an input; Input names bundle members as bundle.zip!path/in/bundle.
type Location struct {
	Input string `json:"input"`
	Line  int64  `json:"line"`
}

// Finding is one signature that matched, aggregated over all inputs.
type Finding struct {
	ID        string            `json:"id"`
	Component string            `json:"component"`
	Severity  Severity          `json:"severity"`
	Title     string            `json:"title"`
	Count     int64             `json:"count"` // occurrences; a kubectl event row "(x12 over …)" counts 12
	Lines     int64             `json:"lines"` // physical lines that matched
	First     string            `json:"first,omitempty"`
	Last      string            `json:"last,omitempty"`
	Nodes     []string          `json:"nodes,omitempty"`
	Files     []Location        `json:"files"` // first occurrence per input, in input order
	MoreFiles int               `json:"moreFiles,omitempty"`
	Sample    string            `json:"sample"`
	SampleAt  Location          `json:"sampleAt"` // where Sample (and so Cause's captured values) comes from
	Captures  map[string]string `json:"captures,omitempty"`
	Cause     string            `json:"cause"`
	Fix       string            `json:"fix"`
	// OS is the node OS the finding's lines show ("linux", "windows"; "" when they do not say);
	// Fix is written for it where the entry has OS-specific fixes.
	OS   string   `json:"os,omitempty"`
	Refs []string `json:"refs,omitempty"`
	// Source is the source location a source entry matched (findings from source entries only).
	Source *SourceRef `json:"source,omitempty"`
	// Innermost is the innermost reason of the sample's error chain (errchain) when Cause does
	// not already quote it: an entry explains a family of messages, this says what this one said.
	Innermost string `json:"innermost,omitempty"`

	first, last Timestamp
	order       int
	samplePlain bool
	linux       bool
	windows     bool
}

// Unmatched is a group of error or warning lines (any format: klog, logrus, JSON, syslog,
// kubeadm, PowerShell records, plain messages judged by their wording) that no signature
// explained. It still says what it can: the component, the innermost reason of the error chain
// and what the message names.
type Unmatched struct {
	Key       string   `json:"key"`
	Severity  Severity `json:"severity"` // error or warning
	Component string   `json:"component,omitempty"`
	Count     int64    `json:"count"`
	First     string   `json:"first,omitempty"`
	Last      string   `json:"last,omitempty"`
	At        Location `json:"at"`
	Sample    string   `json:"sample"`
	// Innermost is the innermost cause of the message's error chain (errchain).
	Innermost string `json:"innermost,omitempty"`
	// Codes are the error codes the message carries, decoded where a table knows them.
	Codes []CodeInfo `json:"codes,omitempty"`
	// Objects are what failed or was involved: files, config fields, preflight checks, networks.
	Objects []errchain.Object `json:"objects,omitempty"`
	// Template is the group's message template (Drain, internal/diagnose/drain): the words its
	// lines share, with <*> where they differ; groups with the same template are merged.
	Template string `json:"template,omitempty"`
	// Groups is how many line keys the template merged (1 when nothing was merged).
	Groups int `json:"groups,omitempty"`
	// Source is where the message was printed, from the components' own source (srcmsg);
	// CauseSource where its innermost cause was made, when that is another file.
	Source      *SourceRef `json:"source,omitempty"`
	CauseSource *SourceRef `json:"causeSource,omitempty"`

	first, last Timestamp
	order       int
	sevByte     byte
	msg         string
	caller      string
	aborts      bool
}

// CodeInfo is an error code with its meaning.
type CodeInfo struct {
	Kind    string `json:"kind"`
	Value   string `json:"value"`
	Meaning string `json:"meaning,omitempty"`
}

// InputSummary describes one leaf input that was scanned.
type InputSummary struct {
	Name           string   `json:"name"`
	Encoding       Encoding `json:"encoding"`
	Bytes          int64    `json:"bytes"` // text bytes scanned (after decompression and decoding)
	Lines          int64    `json:"lines"`
	TruncatedLines []int64  `json:"truncatedLines,omitempty"`
	// BinarySkipped counts NUL and control bytes skipped in binary runs of a text log (a
	// crash-truncated or preallocated file); the text around them was scanned.
	BinarySkipped int64 `json:"binarySkipped,omitempty"`
	// Nodes named by the input itself ("Successfully registered node node009").
	Nodes []string `json:"nodes,omitempty"`
}

// InputError is an input that could not be read, completely or from some point on.
type InputError struct {
	Input string `json:"input"`
	// Line is the last line read before the error (0 when nothing was read).
	Line   int64  `json:"line,omitempty"`
	Offset int64  `json:"offset,omitempty"` // decoded bytes read before the error
	Err    string `json:"error"`
}

// Report is the result of a scan; its JSON and text renderings are deterministic.
type Report struct {
	Inputs    []InputSummary `json:"inputs"`
	Findings  []Finding      `json:"findings"`
	Unmatched []Unmatched    `json:"unmatched"`
	// Warnings are the warning-level groups no signature explained (same shape as Unmatched).
	Warnings []Unmatched `json:"warnings,omitempty"`
	// UnmatchedOther counts error lines whose key did not fit under the distinct-key cap.
	UnmatchedOther int64        `json:"unmatchedOther,omitempty"`
	Errors         []InputError `json:"errors,omitempty"`
	Skipped        []InputError `json:"skipped,omitempty"`
	Bytes          int64        `json:"bytes"`
	Lines          int64        `json:"lines"`
}

// HasErrorFindings reports whether an error-severity signature matched.
func (r *Report) HasErrorFindings() bool {
	for _, f := range r.Findings {
		if f.Severity == SevError {
			return true
		}
	}
	return false
}

// aggregator merges chunk results in input order. Only the merge goroutine touches it.
type aggregator struct {
	cat          *Catalogue
	sources      *srcmsg.Index
	maxUnmatched int
	findings     map[int]*Finding
	fileSeen     map[int]map[string]bool
	unmatched    map[string]*Unmatched
	unmOther     int64
	truncated    map[*streamState][]int64
	inputNodes   map[string][]string // input name -> nodes named by identity lines
}

func newAggregator(cat *Catalogue, maxUnmatched int, sources *srcmsg.Index) *aggregator {
	return &aggregator{cat: cat, sources: sources, maxUnmatched: maxUnmatched, findings: map[int]*Finding{},
		fileSeen: map[int]map[string]bool{}, unmatched: map[string]*Unmatched{},
		truncated: map[*streamState][]int64{}, inputNodes: map[string][]string{}}
}

func (a *aggregator) merge(r *chunkResult) {
	if r.truncated > 0 && len(a.truncated[r.st]) < 100 {
		a.truncated[r.st] = append(a.truncated[r.st], r.truncated)
	}
	for _, n := range r.nodes {
		if ns := a.inputNodes[r.st.name]; len(ns) < maxNodes && !slices.Contains(ns, n) {
			a.inputNodes[r.st.name] = append(ns, n)
		}
	}
	for _, si := range r.sigOrder {
		p := r.sigs[si]
		f := a.findings[si]
		if f == nil {
			s := a.cat.sigs[si]
			f = &Finding{ID: s.ID, Component: s.Component, Severity: s.Severity, Title: s.Title,
				Sample: p.sample, SampleAt: Location{Input: r.st.name, Line: p.sampleLine}, Captures: p.caps, Cause: render(s.Cause, p.caps), Fix: render(s.Fix, p.caps),
				Refs: s.Refs, first: p.first, last: p.last, order: len(a.findings), samplePlain: p.plain}
			a.findings[si] = f
			a.fileSeen[si] = map[string]bool{}
		} else if f.samplePlain && !p.plain {
			s := a.cat.sigs[si]
			f.Sample, f.Captures, f.samplePlain = p.sample, p.caps, false
			f.SampleAt = Location{Input: r.st.name, Line: p.sampleLine}
			f.Cause, f.Fix = render(s.Cause, p.caps), render(s.Fix, p.caps)
		}
		if p.aborts && f.Severity != SevError {
			f.Severity = SevError
		}
		f.linux, f.windows = f.linux || p.linux, f.windows || p.windows
		f.Count += p.count
		f.Lines += p.lines
		widenSpan(&f.first, &f.last, p.first, p.last)
		for _, n := range p.nodes {
			if len(f.Nodes) < maxNodes && !slices.Contains(f.Nodes, n) {
				f.Nodes = append(f.Nodes, n)
			}
		}
		if seen := a.fileSeen[si]; !seen[r.st.name] {
			seen[r.st.name] = true
			if len(f.Files) < maxFiles {
				f.Files = append(f.Files, Location{Input: r.st.name, Line: p.line})
			} else {
				f.MoreFiles++
			}
		}
	}
	for _, k := range r.unmOrder {
		p := r.unmatched[k]
		u := a.unmatched[k]
		if u == nil {
			if len(a.unmatched) >= a.maxUnmatched {
				a.unmOther += p.count
				continue
			}
			u = &Unmatched{Key: k, At: Location{Input: r.st.name, Line: p.line}, Sample: p.sample,
				Component: p.component, first: p.first, last: p.last, order: len(a.unmatched), sevByte: p.severity, msg: p.msg, caller: p.caller}
			a.unmatched[k] = u
		}
		if severityRank(p.severity) < severityRank(u.sevByte) {
			u.sevByte = p.severity
		}
		u.aborts = u.aborts || p.aborts
		u.Count += p.count
		widenSpan(&u.first, &u.last, p.first, p.last)
	}
}

// fill writes the aggregated state into the report in a stable order: findings by severity,
// count (descending), ID; unmatched groups by count (descending), then first appearance.
func (a *aggregator) fill(rep *Report) {
	for si, f := range a.findings {
		f.First, f.Last = f.first.String(), f.last.String()
		os := osOf(f.linux, f.windows)
		f.OS = os.String()
		if s := a.cat.sigs[si]; s.FixLinux != "" && os == osLinux {
			f.Fix = render(s.FixLinux, f.Captures)
		}
		// Attribute the finding to the nodes its inputs name (only the inputs listed in Files).
		for _, loc := range f.Files {
			for _, n := range a.inputNodes[loc.Input] {
				if len(f.Nodes) < maxNodes && !slices.Contains(f.Nodes, n) {
					f.Nodes = append(f.Nodes, n)
				}
			}
		}
		sort.Strings(f.Nodes)
		rep.Findings = append(rep.Findings, *f)
	}
	groups, explained := a.attachSources(mergeByTemplate(a.unmatched))
	rep.Findings = append(rep.Findings, mergeSourceFindings(explained)...)
	for i := range rep.Findings {
		rep.Findings[i].setInnermost()
	}
	sort.Slice(rep.Findings, func(i, j int) bool {
		x, y := rep.Findings[i], rep.Findings[j]
		if x.Severity.rank() != y.Severity.rank() {
			return x.Severity.rank() < y.Severity.rank()
		}
		if x.Count != y.Count {
			return x.Count > y.Count
		}
		return x.ID < y.ID
	})
	for _, u := range groups {
		u.First, u.Last = u.first.String(), u.last.String()
		u.describe()
		if u.Severity == SevWarning {
			rep.Warnings = append(rep.Warnings, *u)
			continue
		}
		rep.Unmatched = append(rep.Unmatched, *u)
	}
	sort.Slice(rep.Warnings, func(i, j int) bool {
		x, y := rep.Warnings[i], rep.Warnings[j]
		if x.Count != y.Count {
			return x.Count > y.Count
		}
		return x.order < y.order
	})
	sort.Slice(rep.Unmatched, func(i, j int) bool {
		x, y := rep.Unmatched[i], rep.Unmatched[j]
		if x.Severity.rank() != y.Severity.rank() {
			return x.Severity.rank() < y.Severity.rank()
		}
		if x.Count != y.Count {
			return x.Count > y.Count
		}
		return x.order < y.order
	})
	rep.UnmatchedOther = a.unmOther
}

// oneLine shortens s for text output.
func oneLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if len([]rune(s)) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// setInnermost names the innermost reason of the sample line's error chain unless the cause
// already says it (case and spacing aside) or the message is that reason and nothing more.
func (f *Finding) setInnermost() {
	l := ParseLine([]byte(f.Sample))
	msg := strings.TrimSpace(string(l.Msg))
	if msg == "" {
		msg = strings.TrimSpace(f.Sample)
	}
	in := strings.TrimSpace(errchain.Parse(msg).Innermost())
	if in == "" || in == msg || len(in) < 4 {
		return
	}
	norm := func(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
	if strings.Contains(norm(f.Cause), norm(in)) {
		return
	}
	f.Innermost = in
}

// describe fills what an unmatched group can say without an entry: severity, the innermost cause
// of its first message, the codes (Windows codes decoded with winerror.h names) and the objects.
func (u *Unmatched) describe() {
	u.Severity = SevWarning
	if u.sevByte == 'E' || u.sevByte == 'F' {
		u.Severity = SevError
	}
	c := errchain.Parse(u.msg)
	if in := c.Innermost(); in != "" && in != strings.TrimSpace(u.msg) {
		u.Innermost = in
	}
	u.Objects = c.Objects
	for _, code := range c.Codes {
		ci := CodeInfo{Kind: code.Kind, Value: code.Value}
		switch code.Kind {
		case "win32":
			if _, name, ok := decodeWinCode(code.Value); ok && name != "" {
				ci.Meaning = name + " (" + humanizeWinName(name) + ")"
			}
		case "errno":
			ci.Meaning = errnoMeaning(code.Value)
		}
		u.Codes = append(u.Codes, ci)
	}
	// A line that is only a code ("Exception code: 0xc0000409", "Error: 0x800f081f") has no
	// chain to split; its decoded code is its innermost reason.
	if u.Innermost == "" {
		for _, ci := range u.Codes {
			if ci.Meaning != "" {
				u.Innermost = ci.Value + " " + ci.Meaning
				break
			}
		}
	}
}

// errnoMeaning says what an errno means for a node, in the words a fix starts from.
func errnoMeaning(name string) string {
	switch name {
	case "ENOENT":
		return "a file, directory or executable the component needs does not exist"
	case "EACCES", "EPERM":
		return "the component lacks the permission or privilege for the operation"
	case "ECONNREFUSED":
		return "nothing listens at the address it connects to"
	case "EADDRINUSE":
		return "another process already holds the address or port"
	case "ETIMEDOUT", "DeadlineExceeded":
		return "the peer did not answer in time (down, filtered, or unreachable)"
	case "EHOSTUNREACH", "ENETUNREACH":
		return "no route to the peer"
	case "EEXIST":
		return "the object already exists (left from an earlier run?)"
	case "ENOSPC":
		return "the disk is full"
	case "EBUSY":
		return "the resource is in use"
	}
	return ""
}

// mergeByTemplate runs the unmatched groups, in the order they first appeared, through a Drain
// template miner and merges the groups that share a template: lines that differ in more than the
// ids and numbers the group key hides (a pod name, a path, a word) become one ranked group. The
// severity class and the component lead the mined message, so that errors and warnings, and
// different components, never share a template.
func mergeByTemplate(groups map[string]*Unmatched) []*Unmatched {
	ordered := make([]*Unmatched, 0, len(groups))
	for _, u := range groups {
		ordered = append(ordered, u)
	}
	sort.Slice(ordered, func(i, j int) bool { return ordered[i].order < ordered[j].order })
	m := drain.New(drain.Config{})
	ids := make([]int, len(ordered))
	for i, u := range ordered {
		class := "W"
		if u.sevByte == 'E' || u.sevByte == 'F' {
			class = "E"
		}
		ids[i], _ = m.Add(class + " " + strconv.Quote(u.Component) + " " + u.msg)
	}
	templates := map[int]string{}
	for _, c := range m.Clusters() {
		// Drop the class and component tokens the message was given above.
		t := c.Template
		for range 2 {
			if i := strings.IndexByte(t, ' '); i >= 0 {
				t = t[i+1:]
			}
		}
		templates[c.ID] = t
	}
	byID := map[int]*Unmatched{}
	var out []*Unmatched
	for i, u := range ordered {
		head := byID[ids[i]]
		if head == nil {
			u.Template, u.Groups = templates[ids[i]], 1
			byID[ids[i]] = u
			out = append(out, u)
			continue
		}
		head.Groups++
		head.Count += u.Count
		widenSpan(&head.first, &head.last, u.first, u.last)
		if severityRank(u.sevByte) < severityRank(head.sevByte) {
			head.sevByte = u.sevByte
		}
		head.aborts = head.aborts || u.aborts
	}
	return out
}

// mergeSourceFindings folds the findings source entries gave, one per entry.
func mergeSourceFindings(found []*Finding) []Finding {
	var out []Finding
	index := map[string]int{}
	for _, f := range found {
		i, ok := index[f.ID]
		if !ok {
			index[f.ID] = len(out)
			out = append(out, *f)
			continue
		}
		g := &out[i]
		g.Count += f.Count
		g.Lines += f.Lines
		if len(g.Files) < maxFiles && !slices.Contains(g.Files, f.Files[0]) {
			g.Files = append(g.Files, f.Files[0])
		}
		widenSpan(&g.first, &g.last, f.first, f.last)
		if f.Severity.rank() < g.Severity.rank() {
			g.Severity = f.Severity
		}
	}
	for i := range out {
		out[i].First, out[i].Last = out[i].first.String(), out[i].last.String()
	}
	return out
}
