package diagnose

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const logsDir = "../../testdata/logs"

func mustCatalogue(t testing.TB) *Catalogue {
	t.Helper()
	c, err := Compile(DefaultSignatures())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func findingIDs(r *Report) map[string]Finding {
	m := map[string]Finding{}
	for _, f := range r.Findings {
		m[f.ID] = f
	}
	return m
}

// TestCatalogueEntries fires every signature on its real example line and checks that its near
// miss (usually a line with the same literal that must not be confused) does not fire it.
func TestCatalogueEntries(t *testing.T) {
	c := mustCatalogue(t)
	if n := len(c.Signatures()); n < 50 {
		t.Fatalf("catalogue has %d entries, want >= 50", n)
	}
	for _, s := range c.Signatures() {
		t.Run(s.ID, func(t *testing.T) {
			ex := filepath.Join(logsDir, "signatures", s.ID+".log")
			r := Scan(context.Background(), c, []string{ex}, nil, Options{Workers: 1})
			if len(r.Errors) > 0 {
				t.Fatalf("example: %+v", r.Errors)
			}
			nm := filepath.Join(logsDir, "nearmiss", s.ID+".log")
			if s.Identity {
				// Identity entries name the input's node instead of producing a finding.
				if len(r.Findings) != 0 || len(r.Inputs) != 1 || len(r.Inputs[0].Nodes) != 1 {
					t.Fatalf("identity example: findings %v, inputs %+v", keys(findingIDs(r)), r.Inputs)
				}
				r = Scan(context.Background(), c, []string{nm}, nil, Options{Workers: 1})
				if len(r.Inputs) != 1 || len(r.Inputs[0].Nodes) != 0 {
					t.Errorf("identity near miss names a node: %+v", r.Inputs)
				}
				return
			}
			f, ok := findingIDs(r)[s.ID]
			if !ok {
				t.Fatalf("%s does not fire on its example; findings: %v", s.ID, keys(findingIDs(r)))
			}
			if f.Count < 1 || f.Sample == "" || f.Cause == "" || f.Fix == "" {
				t.Errorf("incomplete finding %+v", f)
			}
			if strings.Contains(f.Cause+f.Fix, "{") {
				t.Errorf("unrendered placeholder in %q / %q", f.Cause, f.Fix)
			}
			r = Scan(context.Background(), c, []string{nm}, nil, Options{Workers: 1})
			if len(r.Errors) > 0 {
				t.Fatalf("near miss: %+v", r.Errors)
			}
			if _, ok := findingIDs(r)[s.ID]; ok {
				t.Errorf("%s fires on its near miss %s", s.ID, nm)
			}
		})
	}
}

// TestCatalogueTestdataComplete keeps testdata and catalogue in step: no example without an entry.
func TestCatalogueTestdataComplete(t *testing.T) {
	c := mustCatalogue(t)
	ids := map[string]bool{}
	for _, s := range c.Signatures() {
		ids[s.ID] = true
	}
	for _, dir := range []string{"signatures", "nearmiss"} {
		ents, err := os.ReadDir(filepath.Join(logsDir, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if id := strings.TrimSuffix(e.Name(), ".log"); !ids[id] {
				t.Errorf("%s/%s has no catalogue entry", dir, e.Name())
			}
		}
	}
}

func TestCompileRejectsBadEntries(t *testing.T) {
	good := Signature{ID: "X-ONE", Component: "x", Severity: SevError, Title: "t", Literal: "abcd", Pattern: "abcd", Cause: "c", Fix: "f"}
	tests := []struct {
		name string
		mut  func(*Signature)
		want string
	}{
		{"lower id", func(s *Signature) { s.ID = "x-one" }, "upper case"},
		{"short literal", func(s *Signature) { s.Literal = "ab" }, "too short"},
		{"bad regexp", func(s *Signature) { s.Pattern = "(" }, "pattern"},
		{"bad severity", func(s *Signature) { s.Severity = "fatal" }, "severity"},
		{"no fix", func(s *Signature) { s.Fix = "" }, "required"},
		{"literal inside klog header", func(s *Signature) { s.Literal = "E0101 10:00" }, "klog header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := good
			tt.mut(&s)
			_, err := Compile([]Signature{s})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "signature 0") {
				t.Fatalf("err = %v, want mention of %q and the entry", err, tt.want)
			}
		})
	}
	if _, err := Compile([]Signature{good, good}); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Fatalf("duplicate IDs: err = %v", err)
	}
}

func keys(m map[string]Finding) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
