package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Script shapes of issue 24 read through Load, each a small fragment in the shape of a class
// seen in real node scripts: which command lines come out, with which origin, and what is
// reported as not read.
func TestLoadScriptShapes(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string
		want   []string // "component origin-substring flag..." per command line
		unread []string // KW0015 messages' substrings
	}{
		{"New-Service with a service host before the kubelet",
			map[string]string{"install.ps1": "New-Service -Name kubelet -BinaryPathName \"C:\\k\\kubelet-service.exe C:\\k\\kubelet.exe --v=2\"\n"},
			[]string{"kubelet via kubelet-service.exe --v"}, nil},
		{"wins cli prc run --path --args",
			map[string]string{"run.ps1": "& wins.exe cli prc run --path C:\\k\\kube-proxy.exe --args \"--v=4 --proxy-mode=kernelspace\"\n"},
			[]string{"kube-proxy via wins.exe --v --proxy-mode"}, nil},
		{"taskkill naming the kubelet is not a run",
			map[string]string{"stop.ps1": "taskkill.exe /im kubelet.exe /f\n& C:\\k\\kube-proxy.exe --v=2\n"},
			[]string{"kube-proxy & operator --v"}, nil},
		{"cmd batch with ^ continuations and sc.exe create binpath=",
			map[string]string{"start.cmd": "@echo off\r\nset DNS=10.96.0.10\r\nC:\\k\\kubelet.exe --v=2 ^\r\n  --cluster-dns=%DNS% ^\r\n  --eviction-hard=memory.available<5%%\r\nsc.exe create kube-proxy binpath= \"C:\\k\\kube-proxy.exe --v=3\" start= auto\r\n"},
			[]string{"kubelet command --v --cluster-dns --eviction-hard", "kube-proxy sc create binPath --v"}, nil},
		{"flags written to JSON and read by a sibling among the inputs",
			map[string]string{
				"write.ps1": "$a = @('--cluster-dns=10.96.0.10', '--max-pods=30')\n@{ KubeletArgs = $a } | ConvertTo-Json | Set-Content C:\\k\\kubeletargs.json\n",
				"read.ps1":  "$c = Get-Content C:\\k\\kubeletargs.json | ConvertFrom-Json\n& C:\\k\\kubelet.exe $c.KubeletArgs --v=2\n"},
			[]string{"kubelet & operator --v", "kubelet flags written to C:\\k\\kubeletargs.json, read by --cluster-dns --max-pods"}, nil},
		{"flags written to JSON without the reader: reported as read at run time",
			map[string]string{"write.ps1": "$a = @('--cluster-dns=10.96.0.10')\n@{ KubeletArgs = $a } | ConvertTo-Json | Set-Content C:\\k\\kubeletargs.json\n"},
			nil, []string{"read at run time"}},
		{"a kubelet line in a shape not read is reported with its line",
			map[string]string{"odd.ps1": "# set up\nRegister-Thing -Exe C:\\k\\kubelet.exe -Flags \"--v=2\"\n"},
			nil, []string{"line 2 starts or registers kubelet"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var files []string
			for name, text := range tt.files {
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				files = append(files, p)
			}
			ctx, _, err := Load(Input{Files: files, KubernetesVersion: "1.30"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, cl := range ctx.CommandLines {
				s := string(cl.Component) + " " + cl.Origin
				for _, f := range cl.Flags {
					s += " --" + f.Name
				}
				got = append(got, s)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("command lines %q, want %d like %q", got, len(tt.want), tt.want)
			}
			for _, w := range tt.want {
				found := false
				for _, g := range got {
					comp, rest, _ := strings.Cut(w, " ")
					origin, flags, _ := strings.Cut(rest, " --")
					if strings.HasPrefix(g, comp+" ") && strings.Contains(g, origin) && strings.HasSuffix(g, " --"+flags) {
						found = true
					}
				}
				if !found {
					t.Errorf("no command line like %q in %q", w, got)
				}
			}
			var unread []string
			for _, p := range ctx.Problems {
				if p.RuleID == "KW0015" {
					unread = append(unread, p.Message)
				}
			}
			if len(unread) != len(tt.unread) {
				t.Fatalf("KW0015 %q, want %q", unread, tt.unread)
			}
			for i, u := range tt.unread {
				if !strings.Contains(unread[i], u) {
					t.Errorf("KW0015 %q, want %q in it", unread[i], u)
				}
			}
		})
	}
}
