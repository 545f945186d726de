package diagnose

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// maxUnmatchedText is the number of unmatched groups listed in text output (JSON lists all kept).
const maxUnmatchedText = 20

// WriteJSON writes the report as indented JSON (no HTML escaping, so samples stay readable).
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report for people: errors and warnings in full, known noise in one line
// each, then the unmatched error groups and the inputs that could not be read.
func WriteText(w io.Writer, r *Report) error {
	tw := &textWriter{w: w}
	var nErr, nWarn, nInfo int
	for _, f := range r.Findings {
		switch f.Severity {
		case SevError:
			nErr++
		case SevWarning:
			nWarn++
		default:
			nInfo++
		}
	}
	var unm int64
	for _, u := range r.Unmatched {
		unm += u.Count
	}
	unm += r.UnmatchedOther
	tw.printf("kubewin diagnose: %s, %s, %s scanned: %d error, %d warning and %d known-noise signatures; %d unmatched error lines in %d groups\n",
		plural(len(r.Inputs), "input"), humanBytes(r.Bytes), plural64(r.Lines, "line"), nErr, nWarn, nInfo, unm, len(r.Unmatched))
	for _, f := range r.Findings {
		if f.Severity == SevInfo {
			continue
		}
		tw.printf("\n%-7s %s  [%s] %s\n", strings.ToUpper(string(f.Severity)), f.ID, f.Component, f.Title)
		when := ""
		if f.First != "" {
			when = fmt.Sprintf("   first %s   last %s", f.First, f.Last)
		}
		if f.Lines > 0 && f.Lines != f.Count {
			// kubectl event rows carry "(x12 over 13m)": occurrences, not lines.
			tw.printf("  count   %d occurrences in %s%s\n", f.Count, plural64(f.Lines, "line"), when)
		} else {
			tw.printf("  count   %d%s\n", f.Count, when)
		}
		if len(f.Nodes) > 0 {
			tw.printf("  nodes   %s\n", strings.Join(f.Nodes, ", "))
		}
		tw.printf("  where   %s\n", locations(f.Files, f.MoreFiles))
		tw.printf("  sample  %s:%d  %s\n", f.SampleAt.Input, f.SampleAt.Line, oneLine(f.Sample, 400))
		if f.Source != nil {
			tw.printf("  source  %s\n", f.Source.describe())
		}
		tw.printf("  cause   %s\n", f.Cause)
		if f.Innermost != "" {
			tw.printf("  reason  %s\n", oneLine(f.Innermost, 200))
		}
		tw.printf("  fix     %s\n", f.Fix)
		if len(f.Refs) > 0 {
			tw.printf("  refs    %s\n", strings.Join(f.Refs, " "))
		}
	}
	if nInfo > 0 {
		tw.printf("\nKnown noise (harmless, explained):\n")
		for _, f := range r.Findings {
			if f.Severity == SevInfo {
				tw.printf("  %-32s x%-6d %s: %s\n", f.ID, f.Count, f.Title, f.Cause)
			}
		}
	}
	if len(r.Unmatched) > 0 || r.UnmatchedOther > 0 {
		tw.printf("\nUnmatched error lines (no signature), most frequent first:\n")
		for i, u := range r.Unmatched {
			if i == maxUnmatchedText {
				tw.printf("  … %d more groups (use -o json)\n", len(r.Unmatched)-i)
				break
			}
			tw.unmatched(u)
		}
		if r.UnmatchedOther > 0 {
			tw.printf("  %6d  lines in further groups beyond the distinct-group cap\n", r.UnmatchedOther)
		}
	}
	if len(r.Warnings) > 0 {
		tw.printf("\nUnmatched warning lines (no signature), most frequent first:\n")
		for i, u := range r.Warnings {
			if i == maxUnmatchedText {
				tw.printf("  … %d more groups (use -o json)\n", len(r.Warnings)-i)
				break
			}
			tw.unmatched(u)
		}
	}
	if len(r.Errors) > 0 {
		tw.printf("\nInputs that could not be read (the rest was analysed):\n")
		for _, e := range r.Errors {
			tw.printf("  %s\n", e.String())
		}
	}
	if len(r.Skipped) > 0 {
		tw.printf("\nSkipped:\n")
		for _, e := range r.Skipped {
			tw.printf("  %s: %s\n", e.Input, e.Err)
		}
	}
	var trunc []string
	for _, in := range r.Inputs {
		for _, l := range in.TruncatedLines {
			trunc = append(trunc, fmt.Sprintf("%s:%d", in.Name, l))
		}
	}
	if len(trunc) > 0 {
		tw.printf("\nOver-long lines cut for scanning: %s\n", strings.Join(trunc, ", "))
	}
	for _, in := range r.Inputs {
		if in.BinarySkipped > 0 {
			tw.printf("\n%s: skipped %d bytes of binary data (NUL or control bytes: a crash-truncated or preallocated log); the text around them was scanned\n", in.Name, in.BinarySkipped)
		}
	}
	if len(r.Findings) == 0 && len(r.Unmatched) == 0 && len(r.Warnings) == 0 && len(r.Errors) == 0 {
		tw.printf("\nNo known failure found.\n")
	}
	return tw.err
}

// unmatched prints one group: the sample, then what the message itself says — the component,
// the innermost reason of its error chain, decoded codes and the objects it names.
func (t *textWriter) unmatched(u Unmatched) {
	comp := ""
	if u.Component != "" {
		comp = "[" + u.Component + "] "
	}
	t.printf("  %6d  %s:%d  %s%s\n", u.Count, u.At.Input, u.At.Line, comp, oneLine(u.Sample, 200))
	if u.Source != nil {
		t.printf("          printed by: %s\n", u.Source.describe())
	}
	if u.CauseSource != nil {
		t.printf("          cause made in: %s\n", u.CauseSource.describe())
	}
	if u.Innermost != "" {
		t.printf("          innermost: %s\n", oneLine(u.Innermost, 160))
	}
	for _, c := range u.Codes {
		if c.Meaning != "" {
			t.printf("          %s %s: %s\n", c.Kind, c.Value, c.Meaning)
		}
	}
	if len(u.Objects) > 0 {
		var parts []string
		for _, o := range u.Objects {
			parts = append(parts, o.Kind+" "+o.Value)
		}
		t.printf("          names: %s\n", strings.Join(parts, ", "))
	}
}

// String renders an input error with its position.
func (e InputError) String() string {
	var pos []string
	if e.Line > 0 {
		pos = append(pos, fmt.Sprintf("after line %d", e.Line))
	}
	if e.Offset > 0 {
		pos = append(pos, fmt.Sprintf("byte %d", e.Offset))
	}
	if len(pos) > 0 {
		return fmt.Sprintf("%s (%s): %s", e.Input, strings.Join(pos, ", "), e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Input, e.Err)
}

type textWriter struct {
	w   io.Writer
	err error
}

func (t *textWriter) printf(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format, args...)
	}
}

func locations(files []Location, more int) string {
	var parts []string
	for i, l := range files {
		if i == 3 {
			more += len(files) - 3
			break
		}
		parts = append(parts, fmt.Sprintf("%s:%d", l.Input, l.Line))
	}
	s := strings.Join(parts, ", ")
	if more > 0 {
		s += fmt.Sprintf(" (+%d more inputs)", more)
	}
	return s
}

func plural(n int, w string) string { return plural64(int64(n), w) }

func plural64(n int64, w string) string {
	if n == 1 {
		return "1 " + w
	}
	return fmt.Sprintf("%d %ss", n, w)
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// WriteCatalogueText lists the catalogue: ID, severity, component, literal and title.
func WriteCatalogueText(w io.Writer, c *Catalogue) error {
	tw := &textWriter{w: w}
	tw.printf("%d signatures (fallbacks are tried only when no specific entry matches a line)\n\n", len(c.sigs))
	for _, s := range c.sigs {
		fb := ""
		switch {
		case s.Fallback:
			fb = " (fallback)"
		case s.Identity:
			fb = " (identity: names the node, not a finding)"
		}
		tw.printf("%-40s %-7s %-10s %s%s\n", s.ID, s.Severity, s.Component, s.Title, fb)
	}
	if len(c.sources) > 0 {
		tw.printf("\n%d source entries (explain every message printed from a code path of the components' sources; tried on lines no signature matched)\n\n", len(c.sources))
		for _, s := range c.sources {
			where := s.File
			if s.Func != "" {
				where += " " + s.Func
			}
			tw.printf("%-40s %-7s %-10s %s  [%s]\n", s.ID, s.Severity, s.Component, s.Title, where)
		}
	}
	return tw.err
}

// WriteCatalogueJSON writes the catalogue entries as JSON, in evaluation order.
func WriteCatalogueJSON(w io.Writer, c *Catalogue) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(c.sigs)
}
