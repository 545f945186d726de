// Package psgrammar is a test oracle for PowerShell: it parses scripts with the real
// tree-sitter-powershell grammar (its WebAssembly build, run by web-tree-sitter under Node.js,
// both pinned in hack/psgrammar/package-lock.json) and returns the grammar's ERROR and MISSING
// nodes and, on request, its tokens (leaf nodes).
//
// kubewin cannot run PowerShell here (no Windows host; pwsh is not in the registries this project
// reaches), so a real grammar is the strongest judge available of the .ps1 files it renders and of
// its own PowerShell tokeniser. The grammar is installed by hack/psgrammar/install.sh, which
// hack/install-deps.sh calls; Parse runs it too, so a test never skips for lack of it.
package psgrammar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Problem is one ERROR or MISSING node of the parse tree. Row and Col are 0-based.
type Problem struct {
	Kind string `json:"kind"` // ERROR or MISSING
	Type string `json:"type"` // the node type (for MISSING: what the grammar expected)
	Row  int    `json:"row"`
	Col  int    `json:"col"`
	Text string `json:"text"` // the first 120 characters the node covers (ERROR only)
}

func (p Problem) String() string {
	if p.Kind == "MISSING" {
		return fmt.Sprintf("%d:%d: missing %s", p.Row+1, p.Col+1, p.Type)
	}
	return fmt.Sprintf("%d:%d: syntax error at %q", p.Row+1, p.Col+1, p.Text)
}

// Token is one leaf of the parse tree, in document order. Row and Col are 0-based.
type Token struct {
	Type string `json:"type"`
	Text string `json:"text"`
	Row  int    `json:"row"`
	Col  int    `json:"col"`
}

// Result is the grammar's verdict on one document.
type Result struct {
	Name     string    `json:"file"`
	Problems []Problem `json:"errors"`
	Tokens   []Token   `json:"tokens,omitempty"`
}

// OK reports whether the document parsed with no ERROR or MISSING node.
func (r Result) OK() bool { return len(r.Problems) == 0 }

// Document is a named PowerShell text.
type Document struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// Parse parses every document in one Node.js process and returns one Result per document, in order.
// withTokens adds the grammar's leaves to each Result.
func Parse(docs []Document, withTokens bool) ([]Result, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	if err := install(dir); err != nil {
		return nil, err
	}
	input, err := json.Marshal(docs)
	if err != nil {
		return nil, fmt.Errorf("encode documents for the PowerShell grammar: %w", err)
	}
	args := []string{filepath.Join(dir, "parse.mjs")}
	if withTokens {
		args = append(args, "--tokens")
	}
	args = append(args, "-")
	cmd := exec.Command("node", args...)
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("run the PowerShell grammar (node %s): %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var results []Result
	dec := json.NewDecoder(&stdout)
	for dec.More() {
		var r Result
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("read the PowerShell grammar's output: %w", err)
		}
		results = append(results, r)
	}
	if len(results) != len(docs) {
		return nil, fmt.Errorf("the PowerShell grammar answered for %d of %d documents", len(results), len(docs))
	}
	return results, nil
}

// ParseFiles reads and parses the named files.
func ParseFiles(withTokens bool, paths ...string) ([]Result, error) {
	docs := make([]Document, 0, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read PowerShell file: %w", err)
		}
		docs = append(docs, Document{Name: p, Text: string(b)})
	}
	return Parse(docs, withTokens)
}

// Dir returns hack/psgrammar of the repository this package is built from (found by walking up
// from the working directory to go.mod), or KUBEWIN_PSGRAMMAR_DIR when set.
func Dir() (string, error) {
	if d := os.Getenv("KUBEWIN_PSGRAMMAR_DIR"); d != "" {
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find hack/psgrammar: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "hack", "psgrammar"), nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("find hack/psgrammar: no go.mod above the working directory")
		}
	}
}

func install(dir string) error {
	var stderr bytes.Buffer
	cmd := exec.Command("bash", filepath.Join(dir, "install.sh"))
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("install the PowerShell grammar (%s/install.sh; needs node and npm): %w\n%s", dir, err, stderr.String())
	}
	return nil
}
