package diagnose

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// corpusLines are real lines to compare matchers on: the seed and signature logs and the
// catalogue-writing part of the field corpus (not its sealed part), plus case variants.
func corpusLines(t *testing.T) [][]byte {
	t.Helper()
	var out [][]byte
	add := func(b []byte) {
		out = append(out, b, bytes.ToUpper(b), bytes.ToLower(b))
	}
	files, err := filepath.Glob(filepath.Join(logsDir, "*", "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	top, _ := filepath.Glob(filepath.Join(logsDir, "*.log"))
	files = append(files, top...)
	for _, f := range []string{"errors.tsv", "benign.tsv"} {
		files = append(files, filepath.Join("..", "..", "testdata", "diagnose-field", f))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for ln := range bytes.Lines(b) {
			if ln = bytes.TrimRight(ln, "\r\n"); len(ln) > 0 {
				if strings.HasSuffix(f, ".tsv") {
					ln = ln[bytes.LastIndexByte(ln, '\t')+1:]
				}
				add(ln)
			}
		}
	}
	if len(out) < 1000 {
		t.Fatalf("only %d corpus lines", len(out))
	}
	return out
}

// TestLoweredPatternsEquivalent: every catalogue pattern rewritten for lower-cased lines finds
// the same match, with the same groups, as the pattern with (?i) on the line as it is, on every
// corpus line that contains the entry's literal (the lines the scan confirms).
func TestLoweredPatternsEquivalent(t *testing.T) {
	lines := corpusLines(t)
	cat := mustCatalogue(t)
	lowered, matched := 0, 0
	for si, s := range cat.sigs {
		ref := regexp.MustCompile("(?i)" + s.Pattern)
		if !cat.lowered[si] {
			continue
		}
		lowered++
		re := cat.res[si]
		if !slices.Equal(re.SubexpNames(), ref.SubexpNames()) {
			t.Fatalf("%s: groups %q, want %q", s.ID, re.SubexpNames(), ref.SubexpNames())
		}
		var buf []byte
		lit := []byte(foldString(trieKey(s.Literal)))
		for _, ln := range lines {
			buf = lowerASCII(buf, ln)
			if !bytes.Contains(buf, lit) {
				continue
			}
			got, want := re.FindSubmatchIndex(buf), ref.FindSubmatchIndex(ln)
			if !slices.Equal(got, want) {
				t.Errorf("%s on %q: lowered %v, (?i) %v", s.ID, ln, got, want)
			}
			if want != nil {
				matched++
			}
		}
	}
	if lowered < len(cat.sigs)*9/10 {
		t.Errorf("only %d of %d patterns could be lowered", lowered, len(cat.sigs))
	}
	if matched < 2*lowered {
		t.Errorf("only %d matches compared for %d patterns: the corpus is missing", matched, lowered)
	}
}

func TestLowerPattern(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		ok      bool
		match   []string // lines (original case) the pattern must find
		miss    []string
	}{
		{`Unable to find (?P<n>\S+)`, true, []string{"unable to find cbr0", "UNABLE TO FIND x"}, []string{"Unable to lose x"}},
		{`[A-Z_]+\(\d+\)`, true, []string{"type=rtm_newroute(24)"}, []string{"(24)"}},
		{`(?-i:Error) x`, false, nil, nil},
		{`(?-i:[A-Z])x`, false, nil, nil},
		{`(?-i:error) x`, true, []string{"ERROR x", "error x"}, nil},
		{`Grün ist (?P<w>\w+)`, true, []string{"grün IST gut", "GRüN ist gut", "GRÜN ist gut"}, []string{"Grun ist gut"}},
	} {
		re, ok, err := lowerPattern(tc.pattern)
		if err != nil || ok != tc.ok {
			t.Errorf("%s: ok %v err %v, want ok %v", tc.pattern, ok, err, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		for _, l := range tc.match {
			if !re.Match(lowerASCII(nil, []byte(l))) {
				t.Errorf("%s: does not match %q", tc.pattern, l)
			}
		}
		for _, l := range tc.miss {
			if re.Match(lowerASCII(nil, []byte(l))) {
				t.Errorf("%s: matches %q", tc.pattern, l)
			}
		}
	}
}
