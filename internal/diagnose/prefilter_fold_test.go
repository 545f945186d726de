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
	lowered, matched, prechecked := 0, 0, 0
	for si, s := range cat.sigs {
		ref := regexp.MustCompile("(?i)" + s.Pattern)
		need := cat.need[si]
		if need == nil {
			continue
		}
		lowered++
		if len(need.all)+len(need.anyOf) > 0 {
			prechecked++
		}
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
			if want != nil && !need.possible(buf) {
				t.Errorf("%s on %q: required literals %q %q missing from a matching line", s.ID, ln, need.all, need.anyOf)
			}
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
	if prechecked < len(cat.sigs)/3 {
		t.Errorf("only %d patterns have required literals", prechecked)
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
		re, need, err := lowerPattern(tc.pattern)
		ok := need != nil
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

func TestRequiredLiterals(t *testing.T) {
	for _, tc := range []struct {
		pattern  string
		possible []string // lower-cased lines that must pass the check
		skipped  []string // lines the check rejects
	}{
		{`(?:\] node|Error from server \(NotFound\): nodes) "(?P<node>[^"]+)" not found`,
			[]string{`] node "n1" not found`, `error from server (notfound): nodes "n1" not found`},
			[]string{`container "abc" not found in pod's containers`, `] node "n1" missing`}},
		{`Unable to find (?:hns|HNS) Network(?: x)?`, []string{"unable to find hns network", "unable to find the hns network"}, []string{"unable to find network"}},
		{`a(?:bc|d)e`, []string{"xyz"}, nil}, // a branch without a literal of 3 bytes: no group
		{`(?:foo)+bar\d{2,}(?:baz)?`, []string{"foobar12"}, []string{"foo baz"}},
	} {
		_, need, err := lowerPattern(tc.pattern)
		if err != nil || need == nil {
			t.Fatalf("%s: %v", tc.pattern, err)
		}
		for _, l := range tc.possible {
			if !need.possible([]byte(l)) {
				t.Errorf("%s: %q rejected (all %q, any of %q)", tc.pattern, l, need.all, need.anyOf)
			}
		}
		for _, l := range tc.skipped {
			if need.possible([]byte(l)) {
				t.Errorf("%s: %q not rejected (all %q, any of %q)", tc.pattern, l, need.all, need.anyOf)
			}
		}
	}
}
