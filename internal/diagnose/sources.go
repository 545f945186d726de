package diagnose

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kubewin/kubewin/internal/diagnose/errchain"
	"github.com/kubewin/kubewin/internal/diagnose/srcmsg"
)

// Recognition from the components' own source: a line no signature explains is matched to the
// message format in the pinned upstream sources that printed it (internal/diagnose/srcmsg), so
// it says which component, file and function wrote it and at which level, whatever its
// wording in this release. Source entries (sig_source_*.go) then attach a cause and a fix to
// every message of one code path at once: all of keepalived's config-parser errors, every
// kubeadm preflight check, kube-proxy's config validation.

// SourceRef is the source location of a message.
type SourceRef struct {
	Component string `json:"component"`
	Module    string `json:"module"`
	File      string `json:"file"`
	Func      string `json:"func,omitempty"`
	Level     string `json:"level"`
	Format    string `json:"format"`
	// Versions: the first and last pinned release that print this format.
	Versions []string `json:"versions"`
	Exact    bool     `json:"exact"` // false: a near match (wording changed between releases)
}

func sourceRef(h srcmsg.Hit) *SourceRef {
	vs := h.Versions
	if len(vs) > 2 {
		vs = []string{vs[0], vs[len(vs)-1]}
	}
	return &SourceRef{Component: h.Component, Module: h.Module, File: h.File, Func: h.Func, Level: h.Level,
		Format: h.Format, Versions: append([]string(nil), vs...), Exact: h.Exact}
}

// SourceEntry gives the cause and fix of every message printed from one code path. A group
// matches when one of its source hits (the message or a cause inside it) has the entry's
// component, a file matching File, a function matching Func (when set) and a format matching
// Format (unanchored, when set).
type SourceEntry struct {
	ID        string   `json:"id"`
	Component string   `json:"component"`      // srcmsg component: keepalived, kubeadm, kube-proxy, ...
	File      string   `json:"file"`           // regexp, anchored, on the file's path in its module
	Func      string   `json:"func,omitempty"` // regexp, anchored, on the enclosing function (Type.Method)
	Format    string   `json:"format,omitempty"`
	Severity  Severity `json:"severity"`
	Title     string   `json:"title"`
	// Cause and Fix may use {innermost} (the innermost cause), {object} (the first thing the
	// message names), {path} (the first file it names), {check} (a kubeadm preflight check),
	// {func}, {file} (the source file) and {format}; [[…]] keeps a part only when its values exist.
	Cause    string   `json:"cause"`
	Fix      string   `json:"fix"`
	FixLinux string   `json:"fixLinux,omitempty"`
	Refs     []string `json:"refs"`
}

type compiledSource struct {
	SourceEntry
	file, fn, format *regexp.Regexp
}

// DefaultSourceEntries returns the built-in source entries, family by family.
func DefaultSourceEntries() []SourceEntry {
	var all []SourceEntry
	for _, fam := range [][]SourceEntry{keepalivedSourceEntries(), kubeadmSourceEntries(), configSourceEntries(), runtimeSourceEntries(), nodeSourceEntries()} {
		all = append(all, fam...)
	}
	return all
}

func compileSources(entries []SourceEntry, seen map[string]bool) ([]compiledSource, error) {
	var out []compiledSource
	for i, e := range entries {
		where := fmt.Sprintf("source entry %d (%s)", i, e.ID)
		switch {
		case e.ID == "" || strings.ToUpper(e.ID) != e.ID:
			return nil, fmt.Errorf("%s: ID must be non-empty upper case", where)
		case seen[e.ID]:
			return nil, fmt.Errorf("%s: duplicate ID", where)
		case e.Component == "" || e.File == "" || e.Title == "" || e.Cause == "" || e.Fix == "":
			return nil, fmt.Errorf("%s: component, file, title, cause and fix are required", where)
		case e.Severity != SevError && e.Severity != SevWarning && e.Severity != SevInfo:
			return nil, fmt.Errorf("%s: severity %q", where, e.Severity)
		}
		seen[e.ID] = true
		c := compiledSource{SourceEntry: e}
		var err error
		if c.file, err = regexp.Compile(`^(?:` + e.File + `)$`); err != nil {
			return nil, fmt.Errorf("%s: file: %w", where, err)
		}
		if e.Func != "" {
			if c.fn, err = regexp.Compile(`^(?:` + e.Func + `)$`); err != nil {
				return nil, fmt.Errorf("%s: func: %w", where, err)
			}
		}
		if e.Format != "" {
			re, err := regexp.Compile(e.Format)
			if err != nil {
				return nil, fmt.Errorf("%s: format: %w", where, err)
			}
			c.format = re
		}
		out = append(out, c)
	}
	return out, nil
}

func (e *compiledSource) matches(h *srcmsg.Hit) bool {
	if h.Component != e.Component {
		return false
	}
	if !e.file.MatchString(h.File) || (e.fn != nil && !e.fn.MatchString(h.Func)) {
		return false
	}
	return e.format == nil || e.format.MatchString(h.Format)
}

// sourceSeverity maps a source level to the line severity it implies: what a component logs
// at error (or fatal) is an error; warnings and keepalived's notices about failures are warnings;
// a format only returned as an error is as severe as the line that carries it (0: unknown).
func sourceSeverity(level string) byte {
	switch level {
	case "error":
		return 'E'
	case "fatal":
		return 'F'
	case "warning", "notice":
		return 'W'
	}
	return 0
}

// attachSources looks up each group's message in the index: the location that printed it and
// the one that made its innermost cause. Groups whose severity was pending (a line with no level
// of its own) take the level of the format that printed them, or are dropped when the source
// does not say it is a failure. Groups that a source entry covers become findings (explained).
func (a *aggregator) attachSources(groups []*Unmatched) (kept []*Unmatched, explained []*Finding) {
	kept = groups[:0]
	if a.sources == nil {
		for _, u := range groups {
			if u.sevByte != sevPending {
				kept = append(kept, u)
			}
		}
		return kept, nil
	}
	for _, u := range groups {
		hits := byCaller(a.sources.Match(sourceMessage(u.msg)), u.caller)
		printer, inner := printingHit(hits), innermostHit(hits)
		if printer != nil {
			u.Source = sourceRef(*printer)
		}
		if inner != nil && (printer == nil || inner.File != printer.File) {
			u.CauseSource = sourceRef(*inner)
		}
		if u.sevByte == sevPending {
			// The format that printed the line gives its level; a near match, or a format
			// found only inside the message, says nothing about this line's level.
			u.sevByte = 0
			if printer != nil && printer.Exact {
				u.sevByte = sourceSeverity(printer.Level)
			}
			if u.sevByte == 0 {
				continue
			}
		}
		if printer == nil {
			kept = append(kept, u)
			continue
		}
		if f := a.sourceFinding(u, hits, printer.Component); f != nil {
			explained = append(explained, f)
			continue
		}
		kept = append(kept, u)
	}
	return kept, explained
}

// sourceFinding turns a group into the finding of the first source entry that covers one of its
// hits, or returns nil.
func (a *aggregator) sourceFinding(u *Unmatched, hits []srcmsg.Hit, printer string) *Finding {
	for i := range a.cat.sources {
		e := &a.cat.sources[i]
		for hi := range hits {
			h := &hits[hi]
			if !e.matches(h) || !specificFor(h, u.Component) || !entryLevel(e, h) || h.Component != printer {
				// Causes wrapped inside a message count only within the component that printed
				// it: kubelet calling the iptables helpers kube-proxy also uses is not kube-proxy.
				continue
			}
			c := errchain.Parse(u.msg)
			caps := map[string]string{"innermost": c.Innermost(), "func": h.Func, "file": h.File, "format": h.Format}
			for _, o := range c.Objects {
				if caps["object"] == "" {
					caps["object"] = o.Value
				}
				if o.Kind == "file" && caps["path"] == "" {
					caps["path"] = o.Value
				}
				if o.Kind == "check" && caps["check"] == "" {
					caps["check"] = o.Value
				}
			}
			fix := e.Fix
			os := lineOS([]byte(u.Sample))
			if e.FixLinux != "" && os == osLinux {
				fix = e.FixLinux
			}
			sev := e.Severity
			if u.aborts {
				sev = SevError // as for signatures: the line is fatal to its component's operation
			}
			return &Finding{ID: e.ID, Component: e.Component, Severity: sev, Title: e.Title, Count: u.Count, Lines: u.Count,
				Files: []Location{u.At}, Sample: u.Sample, SampleAt: u.At, Captures: caps, OS: os.String(),
				Cause: render(e.Cause, caps), Fix: render(fix, caps), Refs: e.Refs, first: u.first, last: u.last,
				Source: sourceRef(*h)}
		}
	}
	return nil
}

// specificFor reports whether a hit may carry a source entry for a line of the given component:
// a format rare enough to name one place (srcmsg's Specific: "%s does not exist" is printed by
// dozens of functions of many components, "%s contents are not set to %s" by one), or a generic
// one when the line itself names the same component (kubeadm's "[ERROR FileAvailable--…]: …
// already exists").
func specificFor(h *srcmsg.Hit, lineComponent string) bool {
	return h.Specific || (lineComponent != "" && lineComponent == h.Component)
}

// entryLevel reports whether a hit's level is one an entry explains: failures (error, fatal,
// returned errors, info records that carry an error, keepalived's notices about failures);
// warning-level formats only for warning entries; never plain info.
func entryLevel(e *compiledSource, h *srcmsg.Hit) bool {
	switch h.Level {
	case "info":
		return false
	case "warning":
		return e.Severity != SevError
	}
	return true
}

// byCaller keeps, among the hits for the message itself, those printed from the file the klog
// header names ("kubelet_network.go:274]"), when any is: the same format is often printed from
// several places (kube-proxy's iptables and IPVS proxiers and the kubelet all log "Failed to
// ensure that %s chain %s exists"), and the call site tells which one wrote this line. Hits for
// causes inside the message are kept.
func byCaller(hits []srcmsg.Hit, caller string) []srcmsg.Hit {
	file, _, _ := strings.Cut(caller, ":")
	stem := strings.TrimSuffix(file, ".go")
	if stem == "" || len(hits) < 2 {
		return hits
	}
	fromCaller := func(h *srcmsg.Hit) bool {
		base := h.File[strings.LastIndexByte(h.File, '/')+1:]
		return base == file || strings.HasPrefix(base, stem+"_")
	}
	any := false
	for i := range hits {
		if hits[i].Start == 0 && errPart(&hits[i]) == 0 && fromCaller(&hits[i]) {
			any = true
			break
		}
	}
	if !any {
		return hits
	}
	kept := hits[:0:0]
	for i := range hits {
		if hits[i].Start != 0 || errPart(&hits[i]) != 0 || fromCaller(&hits[i]) {
			kept = append(kept, hits[i])
		}
	}
	return kept
}

// describe renders a source location for people: "keepalived lib/parser.c (report_config_error),
// error, 2.2.7".
func (r *SourceRef) describe() string {
	var sb strings.Builder
	sb.WriteString(r.Component + " " + r.File)
	if r.Func != "" {
		sb.WriteString(" (" + r.Func + ")")
	}
	sb.WriteString(", " + r.Level)
	if len(r.Versions) > 0 {
		sb.WriteString(", " + strings.Join(r.Versions, " … "))
	}
	if !r.Exact {
		sb.WriteString(", wording differs")
	}
	return sb.String()
}

// printingHit is the hit for the message itself (offset 0 of the message, not of an err=
// value): the format of the call that printed the line. srcmsg orders specific formats first,
// so among several it is the most telling. nil when only causes inside the message matched.
func printingHit(hits []srcmsg.Hit) *srcmsg.Hit {
	for i := range hits {
		if hits[i].Start == 0 && (hits[i].Part == "" || hits[i].Part == "msg") {
			return &hits[i]
		}
	}
	for i := range hits {
		if hits[i].Start == 0 {
			return &hits[i]
		}
	}
	return nil
}

// innermostHit is the hit furthest into the message: the format of the innermost cause it
// wraps (an err= value counts as deeper than the message).
func innermostHit(hits []srcmsg.Hit) *srcmsg.Hit {
	var best *srcmsg.Hit
	for i := range hits {
		h := &hits[i]
		if best == nil || errPart(h) > errPart(best) || (errPart(h) == errPart(best) && h.Start > best.Start) {
			best = h
		}
	}
	return best
}

func errPart(h *srcmsg.Hit) int {
	if h.Part == "" || h.Part == "msg" {
		return 0
	}
	return 1
}

// sourceMessage is the part of a message its component's format printed: kubeadm's preflight
// output puts "[ERROR Name]: " before the check's own error (checks.go PreflightError.Error).
func sourceMessage(msg string) string {
	if strings.HasPrefix(msg, "[ERROR ") || strings.HasPrefix(msg, "[WARNING ") {
		if i := strings.Index(msg, "]: "); i > 0 {
			return msg[i+3:]
		}
	}
	return msg
}
