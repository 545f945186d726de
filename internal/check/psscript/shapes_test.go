package psscript

import (
	"reflect"
	"strings"
	"testing"
)

// Script shapes that start the kubelet or kube-proxy indirectly, each written here in the
// shape of a class seen in real node scripts (issue 24): a command line inside a string a
// child PowerShell runs, cmd /c, options-building functions, hashtable splatting.
func TestEvaluateIndirectShapes(t *testing.T) {
	tests := []struct {
		name, src, prog string
		want            [][]string
	}{
		{"Start-Process powershell -ArgumentList -c, a string the child parses",
			"Start-Process powershell -ArgumentList \"-c\", \"C:\\k\\kubelet.exe --v=2 --cluster-dns=10.96.0.10\"\n",
			"kubelet", [][]string{{"--v=2", "--cluster-dns=10.96.0.10"}}},
		{"Start-Process powershell with -NoProfile -ExecutionPolicy Bypass -Command",
			"$dns = '10.0.0.10'\nStart-Process -FilePath powershell.exe -ArgumentList \"-NoProfile -ExecutionPolicy Bypass -Command C:\\k\\kube-proxy.exe --v=4 --cluster-cidr=$dns\"\n",
			"kube-proxy", [][]string{{"--v=4", "--cluster-cidr=10.0.0.10"}}},
		{"powershell -Command with & and a quoted program",
			"powershell.exe -NoProfile -Command \"& 'C:\\k\\kubelet.exe' --v=3\"\n",
			"kubelet", [][]string{{"--v=3"}}},
		{"powershell /c (the slash form) and the default -Command for a string",
			"powershell /c \"C:\\k\\kubelet.exe --v=1\"\npwsh \"C:\\k\\kube-proxy.exe --v=5\"\n",
			"kube", [][]string{{"--v=1"}, {"--v=5"}}},
		{"powershell -File is a script file, not read here",
			"powershell -File C:\\k\\kubelet.exe --v=1\n",
			"kubelet", nil},
		{"cmd /c inside PowerShell",
			"cmd /c \"C:\\k\\kubelet.exe --v=2 --max-pods=20\"\n",
			"kubelet", [][]string{{"--v=2", "--max-pods=20"}}},
		{"Start-Process cmd -ArgumentList /c",
			"Start-Process cmd -ArgumentList '/c C:\\k\\kube-proxy.exe --v=2'\n",
			"kube-proxy", [][]string{{"--v=2"}}},
		{"options-building function returning an array",
			"function Get-KubeletArgs {\n  param($Dns, $Pods = 30)\n  $a = @()\n  $a += \"--cluster-dns=$Dns\"\n  $a += \"--max-pods=$Pods\"\n  return $a\n}\n$kubeletArgs = Get-KubeletArgs -Dns 10.96.0.10\n& C:\\k\\kubelet.exe $kubeletArgs\n",
			"kubelet", [][]string{{"--cluster-dns=10.96.0.10", "--max-pods=30"}}},
		{"function with positional arguments and its output as bare expressions",
			"function Opts($ip) {\n  \"--node-ip=$ip\"\n}\nC:\\k\\kubelet.exe $(Opts 10.1.1.1) --v=2\n",
			"kubelet", [][]string{{"--node-ip=10.1.1.1", "--v=2"}}},
		{"a function that runs the kubelet itself: the call's arguments replace the definition's",
			"function Start-Kubelet([string]$Dns) {\n  & C:\\k\\kubelet.exe --cluster-dns=$Dns\n}\nStart-Kubelet -Dns 10.2.0.10\n",
			"kubelet", [][]string{{"--cluster-dns=10.2.0.10"}}},
		{"New-Service through a splatted hashtable",
			"$p = @{ Name = 'kubelet'; BinaryPathName = 'C:\\k\\kubelet.exe --windows-service --v=2' }\nNew-Service @p\n",
			"kubelet", [][]string{{"--windows-service", "--v=2"}}},
		{"start line assembled from fragments and -join",
			"$parts = @('C:\\k\\kubelet.exe', '--v=2')\n$parts += '--max-pods=10'\nInvoke-Expression ($parts -join ' ')\n$cmd = 'C:\\k\\kube-proxy.exe ' + \"--v=4 \" + '--hostname-override=n1'\nInvoke-Expression $cmd\n",
			"kube", [][]string{{"--v=2", "--max-pods=10"}, {"--v=4", "--hostname-override=n1"}}},
		{"a Write-Host with a parenthesised string naming kubelet.exe is not a run",
			"function Dl($dest) {\n  Write-Host(\"Downloading to $dest\")\n}\nDl C:\\k\\kubelet.exe\n",
			"kubelet", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := argsOf(Evaluate(tt.src), tt.prog)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// A script that writes the kubelet's arguments to a data file for another script to read
// reports the write (check follows it to the reader or says it is read at run time).
func TestEvaluateDataWrites(t *testing.T) {
	for _, tt := range []struct {
		name, src, target string
		flags             []string
	}{
		{"ConvertTo-Json of a hashtable piped to Set-Content",
			"$a = @('--cluster-dns=10.96.0.10', '--max-pods=30')\n$cfg = @{ KubeletArgs = $a; Name = 'n1' }\n$cfg | ConvertTo-Json | Set-Content C:\\k\\kubeletconfig.json\n",
			`C:\k\kubeletconfig.json`, []string{"--cluster-dns=10.96.0.10", "--max-pods=30"}},
		{"Out-File of a string",
			"'--v=2 --node-ip=1.2.3.4' | Out-File -FilePath C:\\k\\kubelet.env\n",
			`C:\k\kubelet.env`, []string{"--v=2", "--node-ip=1.2.3.4"}},
		{"a hashtable member read back",
			"$cfg = @{ Args = @('--v=9') }\n& C:\\k\\kubelet.exe $cfg.Args\n",
			"", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := Evaluate(tt.src)
			if tt.target == "" {
				if got := argsOf(r, "kubelet"); !reflect.DeepEqual(got, [][]string{{"--v=9"}}) {
					t.Errorf("member of a hashtable: %q", got)
				}
				return
			}
			if len(r.Writes) != 1 || r.Writes[0].Target != tt.target {
				t.Fatalf("writes = %+v", r.Writes)
			}
			for _, f := range tt.flags {
				if !strings.Contains(r.Writes[0].Text, f) {
					t.Errorf("%q not in the written text %q", f, r.Writes[0].Text)
				}
			}
		})
	}
}

// A function that calls itself, or a child PowerShell that starts another, ends: calls are
// bounded in depth and number.
func TestEvaluateRecursionEnds(t *testing.T) {
	for _, src := range []string{
		"function f($x) { f $x; return $x }\n$a = f 1\n& C:\\k\\kubelet.exe --v=$a\n",
		"function g { g; g; g }\ng\n",
		"powershell -c \"powershell -c 'powershell -c \\\"C:\\k\\kubelet.exe --v=2\\\"'\"\n",
	} {
		Evaluate(src) // must return
	}
}

// TestTransientRuns: Start-Process -PassThru in a script that stops processes is a run the
// script ends itself (aks-engine's kubeletstart.ps1 ran the kubelet until the pod CIDR was
// assigned, then `$process | Stop-Process`); without -PassThru or without a stop it is not.
func TestTransientRuns(t *testing.T) {
	tests := []struct {
		name, src string
		want      bool
	}{
		{"-PassThru, then Stop-Process", "$p = Start-Process -FilePath c:\\k\\kubelet.exe -PassThru -ArgumentList '--v=2'\n$p | Stop-Process\n", true},
		{"abbreviated -Pass and .Kill()", "$p = Start-Process c:\\k\\kubelet.exe -Pass -ArgumentList '--v=2'\n$p.Kill()\n", true},
		{"-PassThru, never stopped", "$p = Start-Process -FilePath c:\\k\\kubelet.exe -PassThru -ArgumentList '--v=2'\n$p.Id | Out-File pid\n", false},
		{"stopped elsewhere, no -PassThru", "Start-Process -FilePath c:\\k\\kubelet.exe -ArgumentList '--v=2'\nStop-Process -Name flanneld\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Evaluate(tt.src)
			if len(r.Invocations) != 1 {
				t.Fatalf("%d invocations, want 1: %+v", len(r.Invocations), r.Invocations)
			}
			if got := r.Invocations[0].Transient; got != tt.want {
				t.Errorf("Transient = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestAssembledScriptPositions: a script the file writes is parsed from its assembled text;
// when that text is not the file's own bytes (a here-string with expansions), every position
// in it is pinned to where the written value is, so it stays inside the file. A literal found
// as it is in the file (at the value, or once anywhere) keeps its own positions.
func TestAssembledScriptPositions(t *testing.T) {
	tests := []struct {
		name, src, at string // at: the text whose offset positions must equal
		pinned        bool
	}{
		{"expanded here-string",
			"$a = '--v=2 --max-pods=30 --node-ip=10.0.0.1 --cluster-dns=10.0.0.10'\n$s = @\"\nc:\\k\\kubelet.exe $a --hostname-override=n1 --resolv-conf=x\n\"@\n$s | Out-File c:\\k\\start.ps1\n", "$s | Out-File", true},
		{"literal here-string through a variable: found in the file, own positions",
			"$s = @'\nc:\\k\\kubelet.exe --v=2 --hostname-override=n1\n'@\n$s | Out-File c:\\k\\start.ps1\n", "--hostname-override", false},
		{"verbatim here-string written directly",
			"Set-Content -Path c:\\k\\start.ps1 -Value @'\nc:\\k\\kubelet.exe --v=2 --hostname-override=n1\n'@\n", "--hostname-override", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Evaluate(tt.src)
			if len(r.Invocations) != 1 {
				t.Fatalf("%d invocations, want 1", len(r.Invocations))
			}
			inv := r.Invocations[0]
			for _, a := range inv.Args {
				if a.Off < 0 || a.Off >= len(tt.src) {
					t.Errorf("%s at offset %d, outside the %d-byte file", a.Text, a.Off, len(tt.src))
				}
			}
			last := inv.Args[len(inv.Args)-1]
			if tt.pinned {
				if want := strings.Index(tt.src, tt.at); last.Off != want || inv.Off != want {
					t.Errorf("last arg at %d, invocation at %d, want both pinned at %d", last.Off, inv.Off, want)
				}
			} else if want := strings.Index(tt.src, last.Text); last.Off != want {
				t.Errorf("%s at %d, want its own offset %d", last.Text, last.Off, want)
			}
		})
	}
}
