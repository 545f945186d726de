package render

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// PowerShell cannot run on the machines that build and test kubewin, so the scripts are checked
// for content: the node's values, the order of the steps, idempotency guards, and what they
// must never do. psStructure is a structural check (balanced brackets outside strings and
// comments), not a PowerShell parser.

var forbiddenPS = []*regexp.Regexp{
	regexp.MustCompile(`(?i)Set-NetFirewallProfile`),
	regexp.MustCompile(`(?i)-Enabled\s+(False|\$false)`),
	regexp.MustCompile(`(?i)netsh\s+advfirewall\s+set\s+\w+\s+state\s+off`),
	regexp.MustCompile(`(?i)Stop-Service\s+(-Name\s+)?['"]?MpsSvc`),
	regexp.MustCompile(`(?i)Set-ExecutionPolicy\s+Unrestricted`),
	regexp.MustCompile(`(?i)admin\.conf`),
}

// psStructure reports unbalanced (), {} or [] and unterminated strings, ignoring string
// contents and # comments. Backtick escapes inside double-quoted strings and line
// continuations are honoured.
func psStructure(src string) error {
	var stack []rune
	pairs := map[rune]rune{')': '(', '}': '{', ']': '['}
	line := 1
	rs := []rune(src)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch c {
		case '\n':
			line++
		case '#':
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
			line++
		case '\'':
			for i++; ; i++ {
				if i >= len(rs) {
					return fmt.Errorf("line %d: unterminated single-quoted string", line)
				}
				if rs[i] == '\'' {
					if i+1 < len(rs) && rs[i+1] == '\'' {
						i++
						continue
					}
					break
				}
				if rs[i] == '\n' {
					line++
				}
			}
		case '"':
			for i++; ; i++ {
				if i >= len(rs) {
					return fmt.Errorf("line %d: unterminated double-quoted string", line)
				}
				if rs[i] == '`' {
					i++
					continue
				}
				if rs[i] == '"' {
					break
				}
				if rs[i] == '\n' {
					line++
				}
			}
		case '`':
			i++ // escape or line continuation
			if i < len(rs) && rs[i] == '\n' {
				line++
			}
		case '(', '{', '[':
			stack = append(stack, c)
		case ')', '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != pairs[c] {
				return fmt.Errorf("line %d: unbalanced %c", line, c)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("unclosed %c at end of script", stack[len(stack)-1])
	}
	return nil
}

func TestPSStructureCheckerCatchesMistakes(t *testing.T) {
	for _, bad := range []string{"if ($a) { Write-Host 'x'", "Write-Host 'it''s", `Write-Host "a`, "foo)", "@(1, 2"} {
		if psStructure(bad) == nil {
			t.Errorf("%q passed the structure check", bad)
		}
	}
	if err := psStructure("# it's a comment (\n$x = @{ A = 'b''c'; D = \"e`\"f\" }\nfoo `\n  -Bar"); err != nil {
		t.Errorf("valid snippet rejected: %v", err)
	}
}

func TestAllScriptsAreSafeAndWellFormed(t *testing.T) {
	for name, p := range designVariants(t) {
		for path, data := range mustRender(t, p) {
			if !strings.HasSuffix(path, ".ps1") {
				continue
			}
			s := string(data)
			for _, re := range forbiddenPS {
				if re.MatchString(s) {
					t.Errorf("%s %s matches forbidden %s", name, path, re)
				}
			}
			if err := psStructure(s); err != nil {
				t.Errorf("%s %s: %v", name, path, err)
			}
			for _, must := range []string{"#Requires -RunAsAdministrator\n", "$ErrorActionPreference = 'Stop'\n"} {
				if !strings.Contains(s, must) {
					t.Errorf("%s %s lacks %q", name, path, must)
				}
			}
			if !isASCII(data) || strings.Contains(s, "\r") {
				t.Errorf("%s %s: not ASCII with LF line endings", name, path)
			}
		}
	}
}

// inOrder asserts that the fragments appear in s in the given order.
func inOrder(t *testing.T, what, s string, fragments ...string) {
	t.Helper()
	at := 0
	for _, f := range fragments {
		i := strings.Index(s[at:], f)
		if i < 0 {
			t.Errorf("%s: %q missing or out of order", what, f)
			return
		}
		at += i + len(f)
	}
}

func TestHNSSetupScript(t *testing.T) {
	p := examplePlan(t)
	n := windowsNode(t, p, "node009")
	data, err := HNSSetupScript(p, n)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	wantContains(t, "setup.ps1", data, "$NetworkName  = 'l2bridge'", "$AdapterName  = 'eth1'",
		"$AddressPrefix = '10.160.11.0/24'", "$Gateway      = '10.160.11.1'", "$EndpointName = 'cbr0'",
		"$EndpointIP   = '10.160.11.2'", "-CompartmentID 1", "$vnic = 'vEthernet (cbr0)'", "-Forwarding Enabled")
	// Create-if-missing, in dependency order: network, endpoint, attach, forwarding.
	inOrder(t, "setup.ps1", s,
		"Import-Module (Join-Path $InstallDir 'hns.psm1')",
		"if (-not $network) {", "New-HnsNetwork -Type $NetworkType",
		"if (-not $endpoint) {", "New-HnsEndpoint -NetworkId $network.Id",
		"Attach-HnsHostEndpoint -EndpointID $endpoint.Id -CompartmentID 1",
		"foreach ($alias in @('vEthernet (cbr0)', 'vEthernet (eth1)'))", "Set-NetIPInterface -InterfaceAlias $alias -AddressFamily IPv4 -Forwarding Enabled")
	// issue 11 item 13: a placeholder network owns the vSwitch before the pod network exists.
	inOrder(t, "setup.ps1 (placeholder)", s, "Get-NetAdapter -Physical", "New-HnsNetwork -Type L2Bridge -Name 'External' -AddressPrefix '192.168.255.0/30'",
		"New-HnsNetwork -Type $NetworkType -Name $NetworkName")
	// issue 11 item 11: the adapter is found by its MAC and given the planned name, before the
	// network is created on it.
	inOrder(t, "setup.ps1 (adapter)", s, "$AdapterMAC   = '"+windowsMAC(n.ClusterNICMAC)+"'",
		"Get-NetAdapter -Physical | Where-Object { $_.MacAddress -eq $AdapterMAC }",
		"Rename-NetAdapter -Name $adapter.Name -NewName $AdapterName", "New-HnsNetwork -Type $NetworkType")
	if n.ClusterNICMAC == "" || !strings.Contains(windowsMAC(n.ClusterNICMAC), "-") {
		t.Errorf("example node009 has no usable cluster NIC MAC %q", n.ClusterNICMAC)
	}
	// issue 11 item 9: at boot the network first (retried with a capped backoff and never given
	// up: issue 22), then the services; hns is started first (issue 22, K2s#593).
	inOrder(t, "setup.ps1 (boot)", s, "param([switch]$Boot)", "function Initialize-PodNetwork {", "Start-Service -Name 'hns'",
		"if (-not $Boot) {", "'kubewin-boot.log'", "$delay = 5", "Initialize-PodNetwork",
		"$delay = [Math]::Min($delay * 2, 60)",
		"foreach ($svc in @('kubelet', 'kube-proxy'))", "Start-Service -Name $svc")
	if strings.Contains(s, "giving up after") {
		t.Error("setup.ps1 -Boot gives up building the pod network")
	}

	cleanup, err := HNSCleanupScript(p, n)
	if err != nil {
		t.Fatal(err)
	}
	inOrder(t, "cleanup.ps1", string(cleanup), "Detach-HnsHostEndpoint", "-Type endpoints -Id $endpoint.Id",
		"-Type networks -Id $network.Id")
	wantContains(t, "cleanup.ps1", cleanup, "if ($endpoint) {", "if ($network) {")

	// host-gw: the Windows host routes every other node's pod CIDR.
	hg := designVariants(t)["host-gw"]
	hn := windowsNode(t, hg, "node009")
	data, err = HNSSetupScript(hg, hn)
	if err != nil {
		t.Fatal(err)
	}
	if len(hn.Windows.Routes) == 0 {
		t.Fatal("host-gw plan has no Windows routes")
	}
	for _, r := range hn.Windows.Routes {
		wantContains(t, "host-gw setup.ps1", data, fmt.Sprintf("Destination = '%s'; Via = '%s'", r.Destination, r.Via))
	}
	inOrder(t, "host-gw setup.ps1", string(data), "-Forwarding Enabled", "$Routes = @(", "New-NetRoute")
	cleanup, _ = HNSCleanupScript(hg, hn)
	inOrder(t, "host-gw cleanup.ps1", string(cleanup), "Remove-NetRoute", "Detach-HnsHostEndpoint")

	// flannel: only the External placeholder; flanneld owns the pod network.
	for _, d := range []string{"flannel-host-gw", "flannel-vxlan"} {
		fp := designVariants(t)[d]
		fn := windowsNode(t, fp, "node009")
		data, err := HNSSetupScript(fp, fn)
		if err != nil {
			t.Fatal(err)
		}
		wantContains(t, d+" setup.ps1", data, "$NetworkName  = 'External'")
		if strings.Contains(string(data), "New-HnsEndpoint") {
			t.Errorf("%s: setup.ps1 creates an endpoint flanneld owns", d)
		}
		// issue 11 item 3: on flannel/vxlan the source VIP is reserved in host-local's store
		// before the node services start.
		if d == "flannel-vxlan" {
			vip := fn.Windows.KubeProxySourceVIP
			inOrder(t, d+" setup.ps1 (source VIP)", string(data), "function Initialize-PodNetwork {",
				"$store = 'C:\\var\\lib\\cni\\networks\\"+fn.Windows.HNSNetworkName+"'", "$reservation = Join-Path $store '"+vip+"'",
				"if (-not (Test-Path -LiteralPath $reservation))", "foreach ($svc in @(")
		} else if strings.Contains(string(data), "$reservation") {
			t.Errorf("%s reserves a source VIP it does not use", d)
		}
		if (d == "flannel-vxlan") != strings.Contains(string(data), "VSID = ") {
			t.Errorf("%s: VSID subnet policy wrong:\n%s", d, data)
		}
		// issue 11 item 13: cleanup removes flanneld's network too, and stops the task and the
		// services that would re-create or use it.
		cleanup, err := HNSCleanupScript(fp, fn)
		if err != nil {
			t.Fatal(err)
		}
		inOrder(t, d+" cleanup.ps1", string(cleanup), "Unregister-ScheduledTask -TaskName 'kubewin-hns'",
			"Stop-Service -Name $svc", "foreach ($name in @('"+fn.Windows.HNSNetworkName+"', $NetworkName))", "-Type networks -Id $network.Id")
	}
}

func TestServicesScript(t *testing.T) {
	p := examplePlan(t)
	n := windowsNode(t, p, "node009")
	data, err := ServicesScript(p, n)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	inOrder(t, "install.ps1", s,
		"Copy-Item -Force -Path (Join-Path $BundleDir 'cni\\l2bridge.conf') -Destination 'C:\\k\\cni\\conf'",
		"& $setup", "Register-ScheduledTask -TaskName 'kubewin-hns'",
		"Install-NodeService -Name 'containerd'",
		"Install-NodeService -Name 'kubelet'", "-DependsOn @('containerd')",
		"Install-NodeService -Name 'kube-proxy'", "-DependsOn @() -Account '' -StartupType 'Manual'",
		"Start-Service -Name 'containerd'", "Start-Service -Name 'kubelet'", "Start-Service -Name 'kube-proxy'")
	// issue 11 items 9 and 13: unblocked bundle, credentials for SYSTEM and Administrators only,
	// the boot task runs setup.ps1 -Boot, kubelet and kube-proxy start after the network.
	inOrder(t, "install.ps1 (boot, ACLs)", s, "Unblock-File",
		"$acl.SetSecurityDescriptorSddlForm($sddl, 'Access')", "Set-Acl -LiteralPath $Path -AclObject $acl", "Protect-Path -Path 'C:\\k' -Grant @()",
		"Protect-Path -Path 'C:\\k\\pki' -Grant @()", "Protect-NodePaths", "& $setup", `-Argument "-NoProfile -ExecutionPolicy Bypass -File `+"`"+`"$setup`+"`"+`" -Boot"`,
		"Install-NodeService -Name 'containerd'", "-StartupType 'Automatic'", "Install-NodeService -Name 'kubelet'", "-StartupType 'Manual'")
	wantContains(t, "install.ps1", data, "sc.exe failure $Name reset= 86400 actions= restart/10000/restart/10000/restart/30000",
		"sc.exe failureflag $Name 1",
		// issue 11 item 8: kubelet and kube-proxy write rotated logs through kube-log-runner.
		"C:\\k\\kube-log-runner.exe -log-file=C:\\k\\logs\\kube-proxy.log -log-file-size=100M -log-file-age=168h C:\\k\\kube-proxy.exe --config=C:\\k\\kubewin\\kube-proxy\\config.yaml --windows-service",
		"--run-service", `"C:\Program Files\containerd\containerd.exe" --config="C:\Program Files\containerd\config.toml"`)
	flags, _ := KubeletFlags(p, n)
	wantContains(t, "install.ps1", data, "'C:\\k\\kube-log-runner.exe -log-file=C:\\k\\logs\\kubelet.log -log-file-size=100M -log-file-age=168h C:\\k\\kubelet.exe "+strings.Join(flags, " ")+"'")
	if strings.Count(s, "--windows-service") != 2 {
		t.Errorf("--windows-service should be on the kubelet and kube-proxy command lines:\n%s", s)
	}

	svcs, _ := WindowsServices(p, n)
	// kube-proxy must not depend on the kubelet: the SCM stops a service's dependents with it.
	if svcs[0].Name != "containerd" || svcs[1].DependsOn[0] != "containerd" || svcs[2].Name != "kube-proxy" || len(svcs[2].DependsOn) != 0 {
		t.Errorf("service order/dependencies wrong: %+v", svcs)
	}
	// issue 11 item 7: LocalSystem by default (example: no account in the spec).
	if n.Windows.KubeProxyServiceAccount != "LocalSystem" || strings.Contains(s, "sc.exe config $Name obj= ") && strings.Contains(s, "NetworkService") {
		t.Errorf("kube-proxy account = %q, want LocalSystem by default", n.Windows.KubeProxyServiceAccount)
	}

	w := *n.Windows
	w.KubeProxyServiceAccount = `NT AUTHORITY\NetworkService`
	n.Windows = &w
	data, _ = ServicesScript(p, n)
	wantContains(t, "install.ps1 (NetworkService)", data, "-Account 'NT AUTHORITY\\NetworkService'",
		`Protect-Path -Path 'C:\k\kubewin\kube-proxy' -Grant @('S-1-5-20|FRFX')`)
}

func TestWinArg(t *testing.T) {
	for in, want := range map[string]string{
		`--config=C:\k\x.yaml`:          `--config=C:\k\x.yaml`,
		`--config=C:\Program Files\x`:   `--config="C:\Program Files\x"`,
		`C:\Program Files\a\b.exe`:      `"C:\Program Files\a\b.exe"`,
		`--node-labels=a=b,c=d`:         `--node-labels=a=b,c=d`,
		"--log-file=C:\\my logs\\a.log": `--log-file="C:\my logs\a.log"`,
	} {
		if got := winArg(in); got != want {
			t.Errorf("winArg(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFirewallScript(t *testing.T) {
	for name, p := range designVariants(t) {
		for _, n := range windowsNodes(p) {
			data, err := FirewallScript(n)
			if err != nil {
				t.Fatal(err)
			}
			s := string(data)
			for _, port := range []string{"LocalPort = '10250'", "LocalPort = '10256'", "Protocol = 'TCP'; LocalPort = '30000-32767'", "Protocol = 'UDP'; LocalPort = '30000-32767'"} {
				if !strings.Contains(s, port) {
					t.Errorf("%s/%s: missing %s", name, n.Name, port)
				}
			}
			overlay := n.Windows.HNSNetworkType == "Overlay"
			if overlay != strings.Contains(s, "LocalPort = '4789'") {
				t.Errorf("%s/%s: VXLAN rule present=%v, overlay=%v", name, n.Name, !overlay, overlay)
			}
			if got := strings.Count(s, "@{ Name = "); got != 4+map[bool]int{true: 1}[overlay] {
				t.Errorf("%s/%s: %d rules; only the needed ports may be opened", name, n.Name, got)
			}
			wantContains(t, "rules.ps1", data, "-Direction Inbound -Action Allow", "Get-NetFirewallRule -Name $r.Name -ErrorAction SilentlyContinue | Remove-NetFirewallRule")
		}
	}
}
