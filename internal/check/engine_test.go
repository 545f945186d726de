package check

import (
	"strings"
	"testing"
)

func TestRunSurvivesAPanickingRule(t *testing.T) {
	rules := []Rule{
		{ID: "KW9001", Name: "boom", Family: FamilyInput, Severity: Warning, Check: func(*Context, Emitter) { panic("nil map") }},
		{ID: "KW9002", Name: "fine", Family: FamilyInput, Severity: Info, Check: func(_ *Context, emit Emitter) {
			emit(Finding{Location: Location{File: "f"}, Message: "m"})
		}},
	}
	rep := Run(&Context{}, rules, Options{})
	if len(rep.Findings) != 2 || !rep.Failed {
		t.Fatalf("%+v", rep.Findings)
	}
	var boom Finding
	for _, f := range rep.Findings {
		if f.RuleID == "KW9001" {
			boom = f
		}
	}
	if boom.Severity != Error || !strings.Contains(boom.Message, "internal error in rule KW9001: nil map") {
		t.Errorf("%+v", boom)
	}
}

func TestRunDedupesAndSorts(t *testing.T) {
	rules := []Rule{{ID: "KW9003", Name: "twice", Family: FamilyInput, Severity: Warning, Check: func(_ *Context, emit Emitter) {
		emit(Finding{Location: Location{File: "b", Line: 2}, Message: "x"})
		emit(Finding{Location: Location{File: "a", Line: 9}, Message: "y"})
		emit(Finding{Location: Location{File: "b", Line: 2}, Message: "x"})
		emit(Finding{Location: Location{File: "a", Line: 1}, Message: "z", Severity: Info})
	}}}
	rep := Run(&Context{}, rules, Options{Threshold: Error})
	var got []string
	for _, f := range rep.Findings {
		got = append(got, f.Location.String()+" "+f.Message)
	}
	want := []string{"a:1 z", "a:9 y", "b:2 x"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %v, want %v", got, want)
	}
	if rep.Failed || rep.Counts["warning"] != 2 || rep.Counts["info"] != 1 {
		t.Errorf("failed %v counts %v", rep.Failed, rep.Counts)
	}
}

func TestValidateCatalogue(t *testing.T) {
	ok := Rule{ID: "KW1234", Name: "n", Family: FamilyCNI, Severity: Error, Summary: "s", Why: "w", Fix: "f", Reference: "r",
		Check: func(*Context, Emitter) {}}
	if err := ValidateCatalogue([]Rule{ok}); err != nil {
		t.Fatal(err)
	}
	bad := ok
	bad.ID = "X1"
	if ValidateCatalogue([]Rule{bad}) == nil {
		t.Error("bad ID accepted")
	}
	noWhy := ok
	noWhy.Why = ""
	if ValidateCatalogue([]Rule{noWhy}) == nil {
		t.Error("rule without why accepted")
	}
	if ValidateCatalogue([]Rule{ok, ok}) == nil {
		t.Error("duplicate ID accepted")
	}
}

// A problem written in each branch of a script is one finding listing the other lines; two
// findings (two distinct runs) stay two.
func TestMergeCopies(t *testing.T) {
	f := func(line int, msg string) Finding {
		return Finding{RuleID: "KW1104", Location: Location{File: "s.ps1", Line: line}, Message: msg}
	}
	got := mergeCopies([]Finding{f(10, "a"), f(20, "a"), f(30, "a"), f(40, "b"), f(50, "b")})
	if len(got) != 3 {
		t.Fatalf("%d findings, want 3: %+v", len(got), got)
	}
	if got[0].Location.Line != 10 || !strings.Contains(got[0].Message, "lines 20, 30") {
		t.Errorf("merged finding %+v", got[0])
	}
	if got[1].Location.Line != 40 || got[2].Location.Line != 50 || got[1].Message != "b" {
		t.Errorf("two copies were merged: %+v", got[1:])
	}
}
