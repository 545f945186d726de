package psscript

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// args returns the argument texts of every invocation of a program whose name contains prog.
func argsOf(r Result, prog string) [][]string {
	var out [][]string
	for _, inv := range r.Invocations {
		if strings.Contains(strings.ToLower(inv.Program), prog) {
			var a []string
			for _, x := range inv.Args {
				a = append(a, x.Text)
			}
			out = append(out, a)
		}
	}
	return out
}

func TestEvaluateConstructs(t *testing.T) {
	tests := []struct {
		name, src string
		want      [][]string
	}{
		{"array one flag per line, passed as a variable",
			"$KubeletArgs = @(\n  '--v=2',\n  '--proxy-mode=kernelspace',\n  '--resolv-conf=\"\"'\n)\n& C:\\k\\kubelet.exe $KubeletArgs\n",
			[][]string{{"--v=2", "--proxy-mode=kernelspace", "--resolv-conf="}}},
		{"array with trailing commas inside strings stays clean",
			"$a = @(\"--proxy-mode=kernelspace\",\n\"--v=4\")\nkube-proxy.exe $a\n",
			[][]string{{"--proxy-mode=kernelspace", "--v=4"}}},
		{"+= on an array and on a scalar",
			"$a = @('--v=2')\n$a += '--max-pods=30'\n$a += @('--x=1', '--y=2')\nC:\\k\\kubelet.exe @a\n",
			[][]string{{"--v=2", "--max-pods=30", "--x=1", "--y=2"}}},
		{"param defaults and $env:",
			"param([string]$NodeIP = '10.0.0.5', $Dir = \"C:\\k\")\n$env:NODE_NAME = 'n1'\n& \"$Dir\\kubelet.exe\" --node-ip=$NodeIP --hostname-override=$env:NODE_NAME\n",
			[][]string{{"--node-ip=10.0.0.5", "--hostname-override=n1"}}},
		{"unresolved value is named, not guessed empty",
			"$x = Get-Content flags.txt\nkubelet.exe --v=2 $x\n",
			[][]string{{"--v=2", "$x"}}},
		{"Start-Process joins ArgumentList and the program splits it",
			"$argList = @(\"--hostname-override=n1\", \"--resolv-conf=\"\"\"\"\", \"--feature-gates=A=true,B=false\")\nStart-Process -FilePath c:\\k\\kubelet.exe -PassThru -ArgumentList $argList\n",
			[][]string{{"--hostname-override=n1", "--resolv-conf=", "--feature-gates=A=true,B=false"}}},
		{"Invoke-Expression of a built string",
			"$cmd = \"C:\\k\\kubelet.exe --v=3 --enforce-node-allocatable=`\"`\"\"\nInvoke-Expression $cmd\n",
			[][]string{{"--v=3", "--enforce-node-allocatable="}}},
		{"here-string script written to disk",
			"$s = @'\nC:\\k\\kube-proxy.exe --proxy-mode=kernelspace --v=4\n'@\nSet-Content -Path C:\\k\\start-kp.ps1 -Value $s\n",
			[][]string{{"--proxy-mode=kernelspace", "--v=4"}}},
		{"New-Service -BinaryPathName",
			"New-Service -Name kubelet -BinaryPathName \"C:\\k\\kubelet.exe --windows-service --v=2\" -StartupType Automatic\n",
			[][]string{{"--windows-service", "--v=2"}}},
		{"arguments built from a literal hashtable in a loop (GetEnumerator)",
			"$KubeletArguments = @{\n  \"v\"=\"1\";\n  \"cgroups-per-qos\"=\"false\"\n}\n$p = @()\nforeach($v in $KubeletArguments.GetEnumerator()) {\n  $p += \"--$($v.Name)=$($v.Value)\"\n}\n& C:\\k\\kubelet.exe @p\n",
			[][]string{{"--cgroups-per-qos=false", "--v=1"}}},
		{"an entry of a hashtable literal set later ($h.'key' = …)",
			"$A = @{\n  \"source-vip\"=\"$null\";\n  \"v\"=\"1\"\n}\n$A.'source-vip' = \"10.0.0.9\"\n$A.v = \"2\"\n$p = @()\nforeach($v in $A.GetEnumerator()) {\n  $p += \"--$($v.Name)=$($v.Value)\"\n}\n& C:\\k\\kube-proxy.exe @p\n",
			[][]string{{"--source-vip=10.0.0.9", "--v=2"}}},
		{"a loop over a list read at run time runs once with an unknown element",
			"$h = Get-Content a.json | ConvertFrom-Json\n$p = @()\nforeach($v in $h.GetEnumerator()) {\n  $p += \"--$($v.Name)=$($v.Value)\"\n}\n& C:\\k\\kubelet.exe @p\n",
			[][]string{{"--$v.name=$v.value"}}},
		{"sc.exe create binPath=",
			"sc.exe create kube-proxy binPath= \"C:\\k\\kube-proxy.exe --windows-service --proxy-mode=kernelspace\" start= auto\n",
			[][]string{{"--windows-service", "--proxy-mode=kernelspace"}}},
		{"nssm install and AppParameters",
			"nssm install kubelet C:\\k\\kubelet.exe\nnssm set kubelet AppParameters --v=2 --node-ip=10.0.0.5\n",
			[][]string{{"--v=2", "--node-ip=10.0.0.5"}}},
		{"if/else: one command line per branch",
			"param($Runtime = 'unknown')\n$a = @('--v=2')\nif ($Mode -eq 'docker') { $a += '--network-plugin=cni' } else { $a += '--container-runtime-endpoint=npipe:////./pipe/containerd-containerd' }\nkubelet.exe $a\n",
			[][]string{{"--v=2", "--network-plugin=cni"}, {"--v=2", "--container-runtime-endpoint=npipe:////./pipe/containerd-containerd"}}},
		{"a decided condition takes one branch",
			"$Runtime = 'containerd'\nif ($Runtime -eq 'docker') { $f = '--docker' } else { $f = '--containerd' }\nkubelet.exe $f\n",
			[][]string{{"--containerd"}}},
		{"an assigned comparison keeps later tests consistent",
			"$useCtr = ($rt -eq 'containerd')\nif ($rt -eq 'containerd') { $x = '--ctr' } else { $x = '--docker' }\nif ($useCtr) { $y = '--a' } else { $y = '--b' }\nkubelet.exe $x $y\n",
			[][]string{{"--ctr", "--a"}, {"--docker", "--b"}}},
		{"-join and -replace",
			"$l = @('--a=1','--b=kubenet')\n$l = $l -replace 'kubenet', 'cni'\n$cmd = 'C:\\k\\kubelet.exe ' + ($l -join ' ')\nInvoke-Expression $cmd\n",
			[][]string{{"--a=1", "--b=cni"}}},
		{"[io.path]::Combine and a function's defaults",
			"function Start-Kubelet($Dir = 'C:\\k') {\n  & ([io.path]::Combine($Dir, 'kubelet.exe')) --v=2\n}\n",
			[][]string{{"--v=2"}}},
		{"kube-log-runner launcher is reported as written",
			"& C:\\k\\kube-log-runner.exe -log-file=C:\\k\\kubelet.log C:\\k\\kubelet.exe --v=2\n",
			nil},
		{"typographic quotes are PowerShell quotes",
			"kubelet.exe \u201c--v=2\u201d\n",
			[][]string{{"--v=2"}}},
		{"a flag keeps its commas in argument mode",
			"C:\\k\\kubelet.exe --tls-cipher-suites=A,B --v=2\n",
			[][]string{{"--tls-cipher-suites=A,B", "--v=2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Evaluate(tt.src)
			got := argsOf(r, "kube")
			if tt.want == nil {
				if len(r.Invocations) != 1 || !strings.Contains(r.Invocations[0].Program, "kube-log-runner") {
					t.Fatalf("got %+v", r.Invocations)
				}
				return
			}
			if strings.Contains(tt.name, "kube-log-runner") {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %q\nwant %q\nall %+v", got, tt.want, r.Invocations)
			}
		})
	}
}

func TestUnresolvedIsMarked(t *testing.T) {
	r := Evaluate("$Global:ClusterConfiguration = ConvertFrom-Json (Get-Content c.json)\n$a = $Global:ClusterConfiguration.Kubelet.ConfigArgs\n$a += '--v=2'\nC:\\k\\kubelet.exe $a --dir=$Global:KubeDir\\x\n")
	if len(r.Invocations) != 1 {
		t.Fatalf("%+v", r.Invocations)
	}
	args := r.Invocations[0].Args
	if len(args) != 3 || !args[0].Whole || args[0].Text != "$a" || args[1].Text != "--v=2" || len(args[1].Unresolved) != 0 {
		t.Fatalf("args %+v", args)
	}
	if args[2].Whole || len(args[2].Unresolved) != 1 || args[2].Text != `--dir=$Global:KubeDir\x` {
		t.Errorf("partly unresolved arg %+v", args[2])
	}
}

func TestServiceAndEnvironment(t *testing.T) {
	r := Evaluate("$env:KUBE_NETWORK = 'l2bridge'\nnssm install kube-proxy C:\\k\\kube-proxy.exe --v=4\nnssm set kube-proxy AppEnvironmentExtra KUBE_NETWORK=cbr0\n")
	if len(r.Invocations) != 1 {
		t.Fatalf("%+v", r.Invocations)
	}
	inv := r.Invocations[0]
	if inv.Service != "kube-proxy" || inv.Origin != "nssm AppParameters" || inv.Env["KUBE_NETWORK"] != "cbr0" {
		t.Errorf("%+v", inv)
	}
}

func TestWorldsAreBounded(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 40; i++ {
		b.WriteString("if ($x" + itoa(i) + " -eq 'a') { $f += '--a" + itoa(i) + "' }\n")
	}
	b.WriteString("kubelet.exe $f\n")
	r := Evaluate(b.String())
	if n := len(r.Invocations); n == 0 || n > maxWorlds {
		t.Fatalf("%d invocations, want 1..%d", n, maxWorlds)
	}
}

func TestSplitWindows(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{`a b`, []string{"a", "b"}},
		{`"a b" c`, []string{"a b", "c"}},
		{`--x="" --y`, []string{"--x=", "--y"}},
		{`a\\"b c"`, []string{`a\b c`}},
		{`a\"b`, []string{`a"b`}},
		{`C:\k\x.exe`, []string{`C:\k\x.exe`}},
		{`"a""b"`, []string{`a"b`}},
	}
	for _, tt := range tests {
		var got []string
		for _, a := range splitWindows(tt.in, 0) {
			got = append(got, a.Text)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitWindows(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzEvaluate(f *testing.F) {
	for _, s := range []string{
		"& C:\\k\\kubelet.exe @a --v=2",
		"$h = @{ a = '1'; b = @{ c = 2 } }\nforeach ($v in $h.GetEnumerator()) { foreach ($w in $h.Keys) { $p += \"--$($v.Name)=$($v.Value)$w\" } }\nkubelet.exe @p",
		"$a = @'\nx\n'@\nSet-Content x.ps1 $a",
		"if ($a -eq 'b') { kubelet.exe } elseif (!$c) { } else { throw }",
		"function f($x = 1) { param($y) kube-proxy.exe $x }",
		"\"$(\"$(x)\")\" `\n $x[0].y::z",
		"nssm set kubelet AppParameters \"--a=b\"",
		"\x01unres\x02 kubelet.exe",
		"function o($d) { \"--x=$d\"; return @('--y') }\n$a = o 1\nC:\\k\\kubelet.exe $a",
		"Start-Process powershell -ArgumentList '-c', 'cmd /c C:\\k\\kubelet.exe --v=2'",
		"$p = @{ BinaryPathName = 'x.exe C:\\k\\kubelet.exe' }\nNew-Service @p\n@{a=@('--v')} | ConvertTo-Json | Out-File x.json",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		r := Evaluate(src)
		for _, inv := range r.Invocations {
			for _, a := range inv.Args {
				if strings.ContainsAny(a.Text, "\x01\x02") {
					t.Fatalf("marker leaked into %q", a.Text)
				}
			}
		}
	})
}

// PrepareNode.ps1 (sig-windows-tools, 2022) adds dockershim flags for < 1.24 and log flags for
// < 1.26 around the kubelet line it writes into StartKubelet.ps1: judged for one release, it
// runs exactly one kubelet command line, the one of that release.
func TestVersionAwareScriptForOneRelease(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fieldDir, "02-sigwin-preparenode-2023.ps1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		minor          int
		plugin, logDir bool
	}{{23, true, true}, {25, false, true}, {27, false, false}} {
		r := EvaluateWith(string(data), Options{KubernetesMinor: tt.minor})
		lines := argsOf(r, "kubelet.exe")
		if len(lines) != 1 {
			t.Fatalf("1.%d: %d kubelet command lines, want 1: %q", tt.minor, len(lines), lines)
		}
		has := func(p string) bool {
			return slices.ContainsFunc(lines[0], func(a string) bool { return strings.HasPrefix(a, p) })
		}
		if has("--network-plugin=") != tt.plugin || has("--log-dir=") != tt.logDir || !has("--resolv-conf=") {
			t.Errorf("1.%d: %q", tt.minor, lines[0])
		}
	}
}
