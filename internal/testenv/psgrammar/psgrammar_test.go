package psgrammar

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		wantOK  bool
		wantTok string // a token text the grammar must produce (withTokens)
	}{
		{name: "splat", text: "param([string]$a = \"x\")\n$kargs = @(\"--foo=$a\", '--bar')\n& kubelet.exe @kargs\n", wantOK: true, wantTok: "@kargs"},
		{name: "continuation", text: "New-HNSNetwork -Type L2Bridge `\n  -AddressPrefix \"10.0.0.0/24\"\n", wantOK: true, wantTok: "-AddressPrefix"},
		{name: "here-string", text: "$c = @\"\nline $x\n\"@\nWrite-Host $c\n", wantOK: true},
		{name: "unclosed paren", text: "if ($x {\n  Write-Host 'a'\n}\n", wantOK: false},
		{name: "bom", text: "\ufeffWrite-Host 'ok'\n", wantOK: true},
	}
	docs := make([]Document, len(tests))
	for i, tc := range tests {
		docs[i] = Document{Name: tc.name, Text: tc.text}
	}
	results, err := Parse(docs, true)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range tests {
		r := results[i]
		if r.Name != tc.name {
			t.Errorf("result %d is for %q, want %q", i, r.Name, tc.name)
		}
		if r.OK() != tc.wantOK {
			t.Errorf("%s: OK() = %v, want %v (problems %v)", tc.name, r.OK(), tc.wantOK, r.Problems)
		}
		if tc.wantTok == "" {
			continue
		}
		var texts []string
		for _, tok := range r.Tokens {
			texts = append(texts, tok.Text)
		}
		if !strings.Contains(strings.Join(texts, "\x00"), tc.wantTok) {
			t.Errorf("%s: no token %q among %q", tc.name, tc.wantTok, texts)
		}
	}
}
