package psscript

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/upstream")

// The scripts are the real ones of the check field corpus (testdata/check-field: MANIFEST.tsv
// names repository, path and commit of each); their goldens live here.
const fieldDir = "../../../testdata/check-field"

var fieldScripts = filepath.Join(fieldDir, "*.ps*1")

// render prints the invocations of a result one per block, deterministically: the program, how
// it runs, the line, then each argument; unresolved values are shown as $name.
func render(src string, r Result) string {
	var b strings.Builder
	for _, inv := range r.Invocations {
		line := 1 + strings.Count(src[:min(inv.Off, len(src))], "\n")
		fmt.Fprintf(&b, "%s  [%s", inv.Program, inv.Origin)
		if inv.Service != "" {
			fmt.Fprintf(&b, " service=%s", inv.Service)
		}
		if inv.Embedded {
			b.WriteString(" embedded")
		}
		fmt.Fprintf(&b, " line=%d]\n", line)
		for _, a := range inv.Args {
			mark := ""
			if len(a.Unresolved) > 0 {
				mark = "   (unresolved: " + strings.Join(a.Unresolved, ", ") + ")"
			}
			fmt.Fprintf(&b, "    %q%s\n", a.Text, mark)
		}
		keys := make([]string, 0, len(inv.Env))
		for k := range inv.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "    env %s=%q\n", k, inv.Env[k])
		}
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "problem at %d: %s\n", p.Off, p.Message)
	}
	return b.String()
}

// TestUpstreamScripts: the real scripts of the field corpus are read into the command lines they
// run; the golden files (testdata/upstream/<script>.golden) were checked by hand against them.
func TestUpstreamScripts(t *testing.T) {
	files, err := filepath.Glob(fieldScripts)
	if err != nil || len(files) == 0 {
		t.Fatalf("no upstream scripts: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got := render(string(data), Evaluate(string(data)))
			golden := filepath.Join("testdata", "upstream", filepath.Base(f)+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if got != string(want) {
				t.Errorf("invocations differ from %s:\n--- got\n%s--- want\n%s", golden, got, want)
			}
		})
	}
}
