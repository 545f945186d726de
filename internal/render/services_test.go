package render

import (
	"encoding/xml"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// scheduledTask returns the lines of install.ps1 that build and register the task name: from
// its Unregister-ScheduledTask to its Register-ScheduledTask.
func scheduledTask(t *testing.T, script, name string) string {
	t.Helper()
	start := strings.Index(script, "Unregister-ScheduledTask -TaskName '"+name+"'")
	if start < 0 {
		t.Fatalf("install.ps1 does not (re)register task %s:\n%s", name, script)
	}
	end := strings.Index(script[start:], "Register-ScheduledTask -TaskName '"+name+"'")
	if end < 0 {
		t.Fatalf("install.ps1 does not register task %s", name)
	}
	endLine := strings.IndexByte(script[start+end:], '\n')
	return script[start : start+end+endLine]
}

// issue 22 item 1: the boot task is registered with settings of its own. Task Scheduler's
// defaults (New-ScheduledTaskSettingsSet without parameters) do not start it on battery power,
// stop it when the power goes to a battery and end it after 72 hours.
func TestBootTaskSettings(t *testing.T) {
	for name, p := range designVariants(t) {
		for _, n := range windowsNodes(p) {
			data, err := ServicesScript(p, n)
			if err != nil {
				t.Fatal(err)
			}
			task := scheduledTask(t, string(data), hnsTaskName)
			inOrder(t, name+" boot task", task, "New-ScheduledTaskAction -Execute 'powershell.exe'", " -Boot\"",
				"New-ScheduledTaskTrigger -AtStartup", "$settings = New-ScheduledTaskSettingsSet ",
				"-AllowStartIfOnBatteries", "-DontStopIfGoingOnBatteries", "-ExecutionTimeLimit ([TimeSpan]::Zero)",
				"-RestartCount ", "-RestartInterval (New-TimeSpan -Minutes ",
				"Register-ScheduledTask -TaskName 'kubewin-hns' -Action $action -Trigger $trigger -Settings $settings -User 'NT AUTHORITY\\SYSTEM' -RunLevel Highest")
			// The Task Scheduler schema's bounds (restartType: Count 1..255, Interval PT1M..P31D).
			m := regexp.MustCompile(`-RestartCount (\d+) -RestartInterval \(New-TimeSpan -Minutes (\d+)\)`).FindStringSubmatch(task)
			if m == nil {
				t.Fatalf("%s: no restart settings in\n%s", name, task)
			}
			count, _ := strconv.Atoi(m[1])
			minutes, _ := strconv.Atoi(m[2])
			if count < 1 || count > 255 || minutes < 1 || minutes > 31*24*60 {
				t.Errorf("%s: RestartCount %d / RestartInterval %d min outside the schema's bounds", name, count, minutes)
			}
		}
	}
}

// issue 22 item 3: containerd's own log is rotated. containerd keeps --log-file (as a service it
// sends its output nowhere else); the hourly task runs install.ps1 -RotateLogs, which rotates it
// with kube-log-runner's limits before the script does anything else.
func TestContainerdLogIsRotated(t *testing.T) {
	p := examplePlan(t)
	n := windowsNode(t, p, "node009")
	svcs, err := WindowsServices(p, n)
	if err != nil {
		t.Fatal(err)
	}
	ctrd := serviceNamed(svcs, "containerd")
	if !slices.Contains(ctrd.Args, `--log-file=C:\k\logs\containerd.log`) || !slices.Contains(ctrd.Args, "--run-service") {
		t.Fatalf("containerd's command line %q lost its log file or its service mode", ctrd.Args)
	}
	data, err := ServicesScript(p, n)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	size, age, err := logRotationLimits()
	if err != nil {
		t.Fatal(err)
	}
	// kube-log-runner reads 100M as a resource.Quantity (10^8 bytes) and 168h as a duration.
	if size != 100_000_000 || age != 7*24*time.Hour {
		t.Errorf("rotation limits %d bytes, %s", size, age)
	}
	inOrder(t, "install.ps1 (rotation)", s,
		"param([switch]$RotateLogs)", "#Requires -RunAsAdministrator", "$LogDir    = 'C:\\k\\logs'",
		"function Invoke-LogRotation {", "foreach ($name in @('containerd.log', 'kubewin-boot.log'))",
		"(Get-Item -LiteralPath $path).Length -ge 100000000",
		"[System.IO.File]::Open($path, [System.IO.FileMode]::Open, [System.IO.FileAccess]::ReadWrite, [System.IO.FileShare]::ReadWrite)",
		"$src.CopyTo($dst)", "$src.SetLength(0)", "(Get-Date).AddHours(-168)", "-Filter \"$base-*.log\"",
		"if ($RotateLogs) {", "Invoke-LogRotation", "return", "}",
		// nothing is installed before the -RotateLogs branch returned
		"Unblock-File", "Install-NodeService -Name 'containerd'")
	task := scheduledTask(t, s, logTaskName)
	inOrder(t, "log task", task, "$self = Join-Path $BundleDir 'services\\install.ps1'",
		"-File `\"$self`\" -RotateLogs\" -WorkingDirectory $LogDir",
		"New-ScheduledTaskTrigger -Once -At (Get-Date) -RepetitionInterval (New-TimeSpan -Hours 1)",
		"New-ScheduledTaskSettingsSet -AllowStartIfOnBatteries -DontStopIfGoingOnBatteries -ExecutionTimeLimit (New-TimeSpan -Minutes 30)",
		"Register-ScheduledTask -TaskName 'kubewin-logs' -Action $action -Trigger $trigger -Settings $settings -User 'NT AUTHORITY\\SYSTEM'")
	// The file the boot record is kept in by hns\setup.ps1.
	setup, err := HNSSetupScript(p, n)
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, "setup.ps1", setup, "'"+bootLogFile+"'")
}

// issue 22 item 5: flanneld runs under WinSW, configured by the XML install.ps1 writes beside
// it, and install.ps1 refuses a WinSW binary that is not the pinned release.
func TestFlanneldWrapperConfig(t *testing.T) {
	for _, variant := range []string{"flannel-host-gw", "flannel-vxlan"} {
		p := designVariants(t)[variant]
		n := windowsNode(t, p, "node009")
		svcs, err := WindowsServices(p, n)
		if err != nil {
			t.Fatal(err)
		}
		f := serviceNamed(svcs, flanneldServiceName)
		if f.Wrapper == nil || f.BinaryPath != `C:\k\flanneld-service.exe` || f.Wrapper.Config != `C:\k\flanneld-service.xml` {
			t.Fatalf("%s: flanneld is not run by WinSW: %+v", variant, f)
		}
		// What WinSW v2 reads (XmlServiceConfig.cs): //id, //executable, //arguments, //env
		// name/value attributes, //logpath, //logname, //log mode with sizeThreshold (KB) and keepFiles.
		var got struct {
			Env []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"env"`
			Log struct {
				Mode          string `xml:"mode,attr"`
				SizeThreshold int    `xml:"sizeThreshold"`
				KeepFiles     int    `xml:"keepFiles"`
			} `xml:"log"`
		}
		type alias struct {
			XMLName xml.Name `xml:"service"`
			ID      string   `xml:"id"`
			Name    string   `xml:"name"`
			Exe     string   `xml:"executable"`
			Args    string   `xml:"arguments"`
			WD      string   `xml:"workingdirectory"`
			LogPath string   `xml:"logpath"`
			LogName string   `xml:"logname"`
		}
		var a alias
		if err := xml.Unmarshal([]byte(f.Wrapper.XML), &a); err != nil {
			t.Fatalf("%s: WinSW XML does not parse: %v\n%s", variant, err, f.Wrapper.XML)
		}
		if err := xml.Unmarshal([]byte(f.Wrapper.XML), &got); err != nil {
			t.Fatal(err)
		}
		wantArgs, _ := FlanneldArgs(n)
		if a.ID != "flanneld" || a.Exe != `C:\k\flanneld.exe` || a.Args != strings.Join(wantArgs, " ") ||
			a.WD != `C:\k` || a.LogPath != `C:\k\logs` || a.LogName != "flanneld" {
			t.Errorf("%s: WinSW XML %+v", variant, a)
		}
		if len(got.Env) != 1 || got.Env[0].Name != "NODE_NAME" || got.Env[0].Value != n.Name {
			t.Errorf("%s: flanneld's environment %+v lacks NODE_NAME=%s", variant, got.Env, n.Name)
		}
		if got.Log.Mode != "roll-by-size" || got.Log.SizeThreshold != 10240 || got.Log.KeepFiles != 8 {
			t.Errorf("%s: flanneld's log is not rotated: %+v", variant, got.Log)
		}
		data, err := ServicesScript(p, n)
		if err != nil {
			t.Fatal(err)
		}
		s := string(data)
		inOrder(t, variant+" install.ps1", s, "function Install-ServiceWrapper {",
			"$hash = (Get-FileHash -Algorithm SHA256 -LiteralPath $Exe).Hash", "if ($hash -ne $Digest) { throw",
			"[System.IO.File]::WriteAllText($Config, $Xml)",
			"$wrapperXml = @'\n"+f.Wrapper.XML+"\n'@\n",
			"Install-ServiceWrapper -Exe 'C:\\k\\flanneld-service.exe' -Digest '"+winswSHA256+"' -Application 'C:\\k\\flanneld.exe' -Config 'C:\\k\\flanneld-service.xml' -Xml $wrapperXml\n",
			"Install-NodeService -Name 'flanneld'", "-BinaryPath 'C:\\k\\flanneld-service.exe'")
		for _, bad := range []string{"nssm", "Nssm", "nssm.cc"} {
			if strings.Contains(s, bad) {
				t.Errorf("%s: install.ps1 still mentions %q", variant, bad)
			}
		}
	}
	// A value WinSW would expand (%VAR%) or that would end the here-string is refused.
	p := designVariants(t)["flannel-vxlan"]
	n := windowsNode(t, p, "node009")
	w := *n.Windows
	w.InstallDir = `C:\k%TEMP%`
	n.Windows = &w
	if _, err := WindowsServices(p, n); err == nil || !strings.Contains(err.Error(), "contains %") {
		t.Errorf("install dir with %%TEMP%% accepted: %v", err)
	}
}

// issue 22 item 2: kube-proxy (and flanneld) use the node's own credential. install.ps1 waits
// for the kubeconfig the kubelet writes after TLS bootstrap and gives kube-proxy a copy, before
// it starts kube-proxy (and flanneld); no separate credential is asked for.
func TestServicesUseNodeCredential(t *testing.T) {
	for name, p := range designVariants(t) {
		for _, n := range windowsNodes(p) {
			data, err := ServicesScript(p, n)
			if err != nil {
				t.Fatal(err)
			}
			s := string(data)
			late := []string{"Start-Service -Name 'kube-proxy'"}
			if usesFlannel(n.Windows) {
				late = []string{"Start-Service -Name 'flanneld'", "Start-Service -Name 'kube-proxy'"}
				args, _ := FlanneldArgs(n)
				if !slices.Contains(args, `--kubeconfig-file=C:\k\kubelet.conf`) {
					t.Errorf("%s/%s: flanneld does not use the node's kubeconfig: %q", name, n.Name, args)
				}
			}
			inOrder(t, name+" install.ps1", s, append([]string{
				"Start-Service -Name 'containerd'", "Start-Service -Name 'kubelet'",
				"$kubeletConf = 'C:\\k\\kubelet.conf'", "Select-String -LiteralPath $kubeletConf -Pattern 'client-key:' -Quiet",
				"throw \"the kubelet has not written $kubeletConf in 300 s: is its CSR approved",
				"Copy-Item -Force -LiteralPath $kubeletConf -Destination 'C:\\k\\kube-proxy.conf'",
				"Protect-NodePaths"}, late...)...)
			if strings.Contains(s, "flanneld.conf") {
				t.Errorf("%s/%s: install.ps1 still expects a kubeconfig of flanneld's own", name, n.Name)
			}
		}
	}
	// An account other than LocalSystem reads the node's certificate its kubeconfig names.
	p := examplePlan(t)
	n := windowsNode(t, p, "node009")
	w := *n.Windows
	w.KubeProxyServiceAccount = `NT AUTHORITY\NetworkService`
	n.Windows = &w
	data, err := ServicesScript(p, n)
	if err != nil {
		t.Fatal(err)
	}
	inOrder(t, "install.ps1 (NetworkService)", string(data),
		`Protect-Path -Path 'C:\k\pki' -Grant @('S-1-5-20|FRFX')`,
		`Protect-Path -Path 'C:\k\kube-proxy.conf' -Grant @('S-1-5-20|FRFX')`,
		"Copy-Item -Force -LiteralPath $kubeletConf", "Protect-NodePaths", "Start-Service -Name 'kube-proxy'")
}
