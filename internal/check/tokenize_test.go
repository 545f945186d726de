package check

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kubewin/kubewin/internal/check/templates"
)

func texts(toks []Token) []string {
	out := []string{}
	for _, t := range toks {
		out = append(out, t.Text)
	}
	return out
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		name string
		in   string
		d    Dialect
		want []string
		errs int
	}{
		{"empty value trailing =", `kubelet.exe --enforce-node-allocatable= --resolv-conf=`, DialectCmd,
			[]string{"kubelet.exe", "--enforce-node-allocatable=", "--resolv-conf="}, 0},
		{"cmd quoted empty", `--enforce-node-allocatable="" --resolv-conf=""`, DialectCmd,
			[]string{"--enforce-node-allocatable=", "--resolv-conf="}, 0},
		{"cmd quoted list", `--feature-gates="A=true,B=true"`, DialectCmd, []string{"--feature-gates=A=true,B=true"}, 0},
		{"cmd backslashes literal", `c:\k\kubelet.exe --kubeconfig=c:\k\config`, DialectCmd,
			[]string{`c:\k\kubelet.exe`, `--kubeconfig=c:\k\config`}, 0},
		{"cmd backslash before quote", `"a\"b" "c\\" d`, DialectCmd, []string{`a"b`, `c\`, "d"}, 0},
		{"cmd doubled quote", `"a""b"`, DialectCmd, []string{`a"b`}, 0},
		{"cmd caret", `a^&b ^"c`, DialectCmd, []string{"a&b", `"c`}, 0},
		{"cmd percent var", `--node-labels=%LABELS%`, DialectCmd, []string{"--node-labels=%LABELS%"}, 0},
		{"cmd continuation", "kubelet.exe ^\r\n --v=2", DialectCmd, []string{"kubelet.exe", "--v=2"}, 0},
		{"sh quotes", `kubelet --a='x y' --b="p \"q\" \$r" c\ d`, DialectSh, []string{"kubelet", "--a=x y", `--b=p "q" $r`, "c d"}, 0},
		{"sh continuation", "kubelet \\\n  --v=2", DialectSh, []string{"kubelet", "--v=2"}, 0},
		{"sh empty", `--resolv-conf=""`, DialectSh, []string{"--resolv-conf="}, 0},
		{"ps single", "'it''s' \"a`\"b\"", DialectPowerShell, []string{"it's", `a"b`}, 0},
		{"ps var", `--node-labels=$global:KubeletNodeLabels --x="$env:FOO/bar"`, DialectPowerShell,
			[]string{"--node-labels=$global:KubeletNodeLabels", "--x=$env:FOO/bar"}, 0},
		{"ps backslash literal", `c:\k\kubelet.exe --resolv-conf=""`, DialectPowerShell, []string{`c:\k\kubelet.exe`, "--resolv-conf="}, 0},
		{"ps stop parsing", `kubelet.exe --% --a="x y" %B%`, DialectPowerShell, []string{"kubelet.exe", "--a=x y", "%B%"}, 0},
		{"ps continuation", "kubelet.exe `\n --v=2", DialectPowerShell, []string{"kubelet.exe", "--v=2"}, 0},
		{"typographic", `c:/k/kubelet.exe –feature-gates=”WinOverlay=true,WinDSR=true” –enable-dsr=true`, DialectCmd,
			[]string{"c:/k/kubelet.exe", "--feature-gates=WinOverlay=true,WinDSR=true", "--enable-dsr=true"}, 0},
		{"unterminated", `--a="x y`, DialectCmd, []string{"--a=x y"}, 1},
		{"unterminated single", `--a='x`, DialectSh, []string{"--a=x"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			toks, errs := Tokenize(tt.in, tt.d)
			if got := texts(toks); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Tokenize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if len(errs) != tt.errs {
				t.Errorf("errors = %v, want %d", errs, tt.errs)
			}
		})
	}
}

func TestTokenizeMetadata(t *testing.T) {
	toks, _ := Tokenize(`a –b="c" $global:X`, DialectPowerShell)
	if len(toks) != 3 {
		t.Fatalf("tokens %q", texts(toks))
	}
	if toks[0].Offset != 0 || toks[0].End != 1 {
		t.Errorf("offsets of %q: %d-%d", toks[0].Text, toks[0].Offset, toks[0].End)
	}
	if !toks[1].Typographic || !toks[1].Quoted || toks[1].Offset != 2 {
		t.Errorf("token 1: %+v", toks[1])
	}
	if !reflect.DeepEqual(toks[2].Vars, []string{"global:X"}) {
		t.Errorf("vars: %v", toks[2].Vars)
	}
}

func TestGuessDialect(t *testing.T) {
	for in, want := range map[string]Dialect{
		`c:\k\kubelet.exe --v=2`:                    DialectCmd,
		`--node-labels=$global:KubeletNodeLabels`:   DialectPowerShell,
		`/usr/bin/kubelet --config=/var/lib/x.yaml`: DialectSh,
		`kubelet --x=%FOO%`:                         DialectCmd,
	} {
		if got := GuessDialect(in); got != want {
			t.Errorf("GuessDialect(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestQuoteArgsRoundTrip(t *testing.T) {
	args := []string{"", "plain", "with space", `back\slash\`, `quote"inside`, "it's", "‘typo’ “x”", "$notavar", "%NOTVAR%", "–dash", "a^b", "tab\there"}
	for _, d := range []Dialect{DialectSh, DialectCmd, DialectPowerShell} {
		line := QuoteArgs(args, d)
		toks, errs := Tokenize(line, d)
		if len(errs) > 0 || !reflect.DeepEqual(texts(toks), args) {
			t.Errorf("%v: %q -> %q (errors %v)", d, line, texts(toks), errs)
		}
	}
}

// FuzzTokenize checks that any input splits without panicking into tokens whose offsets lie
// inside the input, and that quoting any argument list gives it back unchanged.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{
		`c:/k/kubelet.exe --v=2 --enforce-node-allocatable= --resolv-conf=`,
		`--enforce-node-allocatable="" --feature-gates="A=true,B=true"`,
		`c:\k\kubelet.exe --node-labels=$global:KubeletNodeLabels --x="a b"`,
		"kubelet \\\n --v=2 'a b' \"c\\\"d\"",
		`kubelet.exe --% --a="x y" %B%`,
		"–feature-gates=”WinOverlay=true,WinDSR=true”",
		`"unterminated`, "`", "^", `\`, "\xff\xfe", "a\"\"b",
	} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(1))
		f.Add(s, uint8(2))
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, dsel uint8) {
		d := Dialect(dsel % 4)
		toks, errs := Tokenize(s, d)
		for _, tk := range toks {
			if tk.Offset < 0 || tk.End > len(s) || tk.Offset > tk.End {
				t.Fatalf("token %q offsets %d-%d outside input of %d bytes", tk.Text, tk.Offset, tk.End, len(s))
			}
		}
		for _, e := range errs {
			if e.Offset < 0 || e.Offset > len(s) {
				t.Fatalf("error offset %d outside input", e.Offset)
			}
		}
		if d == DialectAuto {
			return
		}
		// Round trip: the fuzzed string's words, quoted, come back unchanged.
		args := strings.Fields(s)
		if !utf8.ValidString(s) || templates.HasSyntax(s) {
			// template syntax is rendered before any shell reads quotes, so quoting cannot
			// make "{{ x }}" or "{% y %}" literal: no round trip to expect
			return
		}
		line := QuoteArgs(args, d)
		back, errs := Tokenize(line, d)
		if len(errs) > 0 || !reflect.DeepEqual(texts(back), nonNil(args)) {
			t.Fatalf("%v round trip of %q via %q gave %q (errors %v)", d, args, line, texts(back), errs)
		}
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// A template's placeholders are one piece of the word they are in, whatever spaces, quotes or
// pipes they hold, and recorded as references known only when the template is rendered; its
// statements and comments leave nothing (issue 24: the Jinja filter "| trim" and "{% endif %}"
// were read as kubelet arguments).
func TestTokenizeTemplates(t *testing.T) {
	for _, tt := range []struct {
		name string
		d    Dialect
		in   string
		want []string
		vars [][]string
	}{
		{"jinja filter inside a flag value", DialectCmd, `--cert-dir={{ systemdrive.stdout | trim }}/pki --v=2`,
			[]string{"--cert-dir={{ systemdrive.stdout | trim }}/pki", "--v=2"}, [][]string{{"{{ systemdrive.stdout | trim }}"}, nil}},
		{"quoted program path with a placeholder", DialectCmd, `"{{ install_path }}\kubelet.exe" --windows-service`,
			[]string{`{{ install_path }}\kubelet.exe`, "--windows-service"}, [][]string{{"{{ install_path }}"}, nil}},
		{"sh unit program", DialectSh, `ExecStart={{ bin_dir }}/kubelet --root-dir={{ ROOT }}`,
			[]string{"ExecStart={{ bin_dir }}/kubelet", "--root-dir={{ ROOT }}"}, [][]string{{"{{ bin_dir }}"}, {"{{ ROOT }}"}}},
		{"statements leave nothing", DialectSh, `kubelet {% if x == "y" %} --a=1 {% endif %}{# c #} --b=2`,
			[]string{"kubelet", "--a=1", "--b=2"}, [][]string{nil, nil, nil}},
		{"statement glued to a word", DialectPowerShell, `--x{% if y %}=1{% endif %}`, []string{"--x=1"}, [][]string{nil}},
		{"single quotes do not hide a placeholder", DialectSh, `--pod-infra-container-image='{{ pause }}'`,
			[]string{"--pod-infra-container-image={{ pause }}"}, [][]string{{"{{ pause }}"}}},
		{"a scriptblock is not a template", DialectPowerShell, "{{\n}}", []string{"{{", "}}"}, [][]string{nil, nil}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			toks, errs := Tokenize(tt.in, tt.d)
			if len(errs) > 0 || !reflect.DeepEqual(texts(toks), tt.want) {
				t.Fatalf("Tokenize(%q) = %q (errors %v), want %q", tt.in, texts(toks), errs, tt.want)
			}
			for i, tk := range toks {
				if !reflect.DeepEqual(tk.Vars, tt.vars[i]) {
					t.Errorf("token %q vars %q, want %q", tk.Text, tk.Vars, tt.vars[i])
				}
			}
		})
	}
}
