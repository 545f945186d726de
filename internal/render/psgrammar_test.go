package render

import (
	"sort"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/testenv/psgrammar"
)

// TestRenderedPowerShellParses: every .ps1 of every Windows node, on every design, is parsed by
// the real PowerShell grammar (tree-sitter-powershell, hack/psgrammar) with no ERROR or MISSING
// node. PowerShell itself cannot run here; a script that does not parse would fail on the node
// before its first line ran.
func TestRenderedPowerShellParses(t *testing.T) {
	variants := designVariants(t)
	names := make([]string, 0, len(variants))
	for name := range variants {
		names = append(names, name)
	}
	sort.Strings(names)
	var docs []psgrammar.Document
	for _, name := range names {
		p := variants[name]
		for _, n := range p.Nodes {
			if n.Windows == nil {
				continue
			}
			files, err := windowsNodeFiles(p, n, newYAMLEncoder())
			if err != nil {
				t.Fatalf("%s/%s: %v", name, n.Name, err)
			}
			for _, f := range files {
				if strings.HasSuffix(f.Path, ".ps1") {
					docs = append(docs, psgrammar.Document{Name: name + ":" + f.Path, Text: string(f.Data)})
				}
			}
		}
	}
	if len(docs) < 4*len(names) {
		t.Fatalf("only %d scripts rendered for %d designs", len(docs), len(names))
	}
	results, err := psgrammar.Parse(docs, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if !r.OK() {
			lines := strings.Split(docs[i].Text, "\n")
			for _, p := range r.Problems {
				line := ""
				if p.Row < len(lines) {
					line = lines[p.Row]
				}
				t.Errorf("%s: %s\n    %s", r.Name, p, line)
			}
		}
	}
	t.Logf("%d PowerShell scripts of %d designs parsed", len(docs), len(names))
}
