package templates

import (
	"strings"
	"testing"
)

func TestScan(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		want       []Kind
		inner      []string
	}{
		{"jinja expression with filter", `--cert-dir={{ systemdrive.stdout | trim }}/pki`, []Kind{Expr}, []string{"systemdrive.stdout | trim"}},
		{"jinja statement and comment", "{% if x %}\n{# note #}\n{% endif %}", []Kind{Stmt, Comment, Stmt}, []string{"if x", "note", "endif"}},
		{"whitespace control", "{%- if a -%}{{- b -}}", []Kind{Stmt, Expr}, []string{"if a", "b"}},
		{"go template actions", "{{ if .Values.x }}{{ .Values.y | quote }}{{- end }}", []Kind{Stmt, Expr, Stmt}, []string{"if .Values.x", ".Values.y | quote", "end"}},
		{"go template comment", "{{/* helm note */}}", []Kind{Comment}, []string{"/* helm note */"}},
		{"helm include is an expression", `{{ include "x.labels" . | nindent 4 }}`, []Kind{Expr}, []string{`include "x.labels" . | nindent 4`}},
		{"no closer", "$a = {{ not closed", nil, nil},
		{"JSON object in object is not a template", `{"a":{"b":{"c":1}}}`, nil, nil},
		{"PowerShell scriptblock pair is not a template", "$s = {{\n  Write-Host x\n}}", nil, nil},
		{"envsubst is not engine syntax", `root = "${ROOT}"`, nil, nil},
		{"ERB expression, code and comment", `--ip=<%= spec.ip %> <% if x -%>--y<% end %><%# note %>`, []Kind{Expr, Stmt, Stmt, Comment}, []string{"spec.ip", "if x", "end", "note"}},
		{"ERB code tag over lines (BOSH)", "<%-\n  if_p('args') do |args|\n-%>\n<%= \"--#{flag}=#{v}\" %>", []Kind{Stmt, Expr}, []string{"if_p('args') do |args|", `"--#{flag}=#{v}"`}},
		{"ERB literal <%% is not a tag", "<%% not a tag %>", nil, nil},
		{"ERB opener without closer", "$x = '<%= p(\"a\")'", nil, nil},
		{"a redirect is not ERB", "kubelet < in.txt > out.log", nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Scan(tt.text)
			if len(got) != len(tt.want) {
				t.Fatalf("Scan(%q) = %+v, want kinds %v", tt.text, got, tt.want)
			}
			for i, s := range got {
				if s.Kind != tt.want[i] || s.Inner != tt.inner[i] {
					t.Errorf("span %d = %+v, want kind %v inner %q", i, s, tt.want[i], tt.inner[i])
				}
				if (tt.text[s.Start] != '{' || tt.text[s.End-1] != '}') && (!strings.HasPrefix(tt.text[s.Start:], "<%") || !strings.HasSuffix(tt.text[:s.End], "%>")) {
					t.Errorf("span %d [%d,%d) = %q does not cover the delimiters", i, s.Start, s.End, tt.text[s.Start:s.End])
				}
			}
			if HasSyntax(tt.text) != (len(tt.want) > 0) {
				t.Errorf("HasSyntax = %v with %d spans", HasSyntax(tt.text), len(tt.want))
			}
		})
	}
}

// An ERB code tag over several lines (a BOSH template's Ruby block) drops all of its lines,
// so a PowerShell command continued before it continues after it.
func TestDescribeERBBlock(t *testing.T) {
	text := "kubelet `\n  <%-\n    if_p('a') do |args|\n  -%>\n  <%= \"--#{k}\" %> `\n  <%- end -%>\n  --v=2\n"
	info := Describe(text)
	for _, l := range []int{2, 3, 4, 6} {
		if !info.StmtLines[l] {
			t.Errorf("line %d is inside a code tag, not a statement line (%v)", l, info.StmtLines)
		}
	}
	for _, l := range []int{1, 5, 7} {
		if info.StmtLines[l] {
			t.Errorf("line %d holds text, taken for a statement line", l)
		}
	}
}

func TestDescribe(t *testing.T) {
	text := "a: 1\n{% if x %}\n  b: {{ y }}\n{% endif %}{# c #}\n{{ extra | b64decode }}\nc: {{ y }}\n"
	info := Describe(text)
	if !info.Conditional {
		t.Error("statements present, Conditional false")
	}
	if want := []string{"y", "extra | b64decode"}; strings.Join(info.Exprs, ",") != strings.Join(want, ",") {
		t.Errorf("Exprs = %q, want %q (each once, in order)", info.Exprs, want)
	}
	for _, l := range []int{2, 4} {
		if !info.StmtLines[l] {
			t.Errorf("line %d holds only statements, not in StmtLines %v", l, info.StmtLines)
		}
	}
	if len(info.StmtLines) != 2 {
		t.Errorf("StmtLines = %v, want lines 2 and 4", info.StmtLines)
	}
	if !info.IncludeLines[5] || len(info.IncludeLines) != 1 {
		t.Errorf("IncludeLines = %v, want line 5", info.IncludeLines)
	}
}

func TestBlank(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"statement lines become blank, lines kept", "a = 1\n{% if x %}\nb = 2\n{% endif %}\n", "a = 1\n          \nb = 2\n           \n"},
		{"CRLF kept", "{% if x %}\r\nb = 2\r\n", "          \r\nb = 2\r\n"},
		{"quoted placeholder left as written", `image = "{{ pause_image }}"`, `image = "{{ pause_image }}"`},
		{"TOML value quoted", `strict = {{ ARP }}`, `strict = "{{ ARP }}"`},
		{"whole unquoted YAML value is null", "strictARP: {{ ARP }}\n", "strictARP: null     \n"},
		{"YAML value with more text quoted", "a: {{ x }} # c\nb: [{{ y }}]\n", "a: null    # c\nb: [\"{{ y }}\"]\n"},
		{"YAML list item quoted", "- {{ h }}\n", "- \"{{ h }}\"\n"},
		{"inner double quotes become single", `v = {{ m["k"] }}`, `v = "{{ m['k'] }}"`},
		{"part of a word stays", "url: http://{{ host }}:6443\n", "url: http://{{ host }}:6443\n"},
		{"flag value in a word stays", "args: --x={{ v }}\n", "args: --x={{ v }}\n"},
		{"expression-only line is blank", "a: 1\n  {{ toYaml .Values.extra | nindent 2 }}\n", "a: 1\n  " + strings.Repeat(" ", len("{{ toYaml .Values.extra | nindent 2 }}")) + "\n"},
		{"inline statements blanked", "{% for h in hs %}{% if h %}\n  x\n", "                           \n  x\n"},
		// a placeholder that starts a plain scalar going on after it: the scalar is one string
		{"placeholder then more of the scalar", "e: {{ host }}:{{ port }}\nc: {{ dir }}/ca.crt # x\n", "e: \"{{ host }}:{{ port }}\"\nc: \"{{ dir }}/ca.crt\" # x\n"},
		{"JSON value with a suffix, comma kept", "\"a\": {{ x }}/b,\n", "\"a\": \"{{ x }}/b\",\n"},
		// data formats are read with each condition's first branch: the union would repeat keys
		{"else branch blanked", "{% if a %}\nk: 1\n{% elif b %}\nk: 2\n{% else %}\nk: 3\n{% endif %}\n", "          \nk: 1\n            \n    \n          \n    \n           \n"},
		{"Go template else blanked", "{{ if .A }}\nk: 1\n{{ else }}\nk: 2\n{{ end }}\n", "           \nk: 1\n          \n    \n         \n"},
		{"nested loop inside a branch kept", "{% if a %}\n{% for x in y %}\nk: 1\n{% endfor %}\n{% endif %}\n", "          \n                \nk: 1\n            \n           \n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Blank(tt.in)
			if got != tt.want {
				t.Errorf("Blank(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if strings.Count(got, "\n") != strings.Count(tt.in, "\n") {
				t.Errorf("line count changed")
			}
		})
	}
}

// OnlyStatements: the lines a renderer drops (statements and comments only).
func TestOnlyStatements(t *testing.T) {
	for _, tt := range []struct {
		line string
		want bool
	}{{"{% if x %}", true}, {"  {%- endif -%}  ", true}, {"{# note #}", true}, {"{{ if .X }}", true},
		{"{{ x }}", false}, {"a: {{ x }}", false}, {"apiVersion: v1", false}, {"", false}} {
		if got := OnlyStatements(tt.line); got != tt.want {
			t.Errorf("OnlyStatements(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

func FuzzScan(f *testing.F) {
	for _, s := range []string{"{% if kube_version is version('1.22', '<') %}\n--x\n{% else %}\n--y\n{% endif %}", "e: {{ h }}:{{ p }}\n{% if a %}\nk: 1\n{% else %}\nk: 2\n{% endif %}\n", "{{ if .A }}x{{ else }}y{{ end }}{{ end }}{% endif %}", "{{ a }}", "{% if %}\n{{ b | c }}\n{% endif %}", "{#", "{{-x-}}", "x = {{ y }}\ny: {{z}}", "{{/* c */}}", "{{\n}}", "a{%b%}c{#d#}e{{f}}",
		"<%-\n  if_p('k') do |args|\n-%>\n  <%= \"--#{flag}\" %> `\n<%- end -%>\n", "<% if a %>k: 1<% else %>k: 2<% end %>", "<%%", "<%= %>", "<%# c\n%>", "x <%= y %>: <%= z %>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		prev := 0
		for _, sp := range Scan(s) {
			if sp.Start < prev || sp.End <= sp.Start || sp.End > len(s) || (s[sp.Start] != '{' || s[sp.End-1] != '}') && (!strings.HasPrefix(s[sp.Start:], "<%") || !strings.HasSuffix(s[:sp.End], "%>")) {
				t.Fatalf("bad span %+v in %q", sp, s)
			}
			prev = sp.End
		}
		b := Blank(s)
		if strings.Count(b, "\n") != strings.Count(s, "\n") {
			t.Fatalf("Blank changed the line count of %q: %q", s, b)
		}
		if Blank(s) != b {
			t.Fatal("Blank is not deterministic")
		}
		for l := range VersionBelow(s) {
			if l < 1 || l > strings.Count(s, "\n")+1 {
				t.Fatalf("VersionBelow line %d outside %q", l, s)
			}
		}
		info := Describe(s)
		for l := range info.StmtLines {
			if info.IncludeLines[l] {
				t.Fatalf("line %d both a statement and an include line in %q", l, s)
			}
		}
	})
}

// VersionBelow: lines inside a "release below X" branch are bounded by X; else branches and
// other conditions are not.
func TestVersionBelow(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		line       int
		want       string // "" unbounded
	}{
		{"ansible version test", "a\n{% if kube_version is version('v1.22.0', '<') %}\n--x\n{% endif %}\n--y\n", 3, "1.22"},
		{"after endif", "a\n{% if kube_version is version('v1.22.0', '<') %}\n--x\n{% endif %}\n--y\n", 5, ""},
		{"<= bounds the next minor", "{% if kube_version is version('1.21', '<=') %}\n--x\n{% endif %}\n", 2, "1.22"},
		{"else branch unbounded", "{% if kube_version is version('1.22', 'lt') %}\n--x\n{% else %}\n--z\n{% endif %}\n", 4, ""},
		{"plain comparison, nested in a loop", "{% for a in b %}\n{% if kube_version < 'v1.24' %}\n--x\n{% endif %}\n{% endfor %}\n", 3, "1.24"},
		{"helm semverCompare", "{{- if semverCompare \"<1.25-0\" .Capabilities.KubeVersion.GitVersion }}\n- --x\n{{- end }}\n", 2, "1.25"},
		{"not a version test", "{% if dynamic_kubelet_configuration %}\n--x\n{% endif %}\n", 2, ""},
		{"a greater-than test", "{% if kube_version is version('1.22', '>=') %}\n--x\n{% endif %}\n", 2, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, ok := VersionBelow(tt.text)[tt.line]
			got := ""
			if ok {
				got = b.String()
			}
			if got != tt.want {
				t.Errorf("line %d bounded below %q, want %q", tt.line, got, tt.want)
			}
		})
	}
}
