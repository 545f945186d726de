package render

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"sort"
	"strings"
	"text/template"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubewin/kubewin/internal/plan"
)

// Windows services: containerd, then the kubelet (depends on containerd), then, in flannel
// designs, flanneld (depends on the kubelet, which registers the Node whose pod CIDR flanneld
// leases), then kube-proxy (depends on flanneld, which creates the HNS network kube-proxy
// programs; otherwise on nothing: a kubelet restart must not stop kube-proxy, which the SCM
// does to the dependents of a stopped service). A service that exits is restarted by the SCM's
// recovery actions.
//
// Boot order: containerd starts automatically; kubelet, flanneld and kube-proxy are "manual"
// and started by the boot task (hns\setup.ps1 -Boot) only once the HNS network exists, with a
// record of each failure in the log directory -- never a kubelet that registers the node Ready
// while its pod network is missing after a reboot. The task is registered with settings of its
// own, not Task Scheduler's defaults (bootTaskSettings).
//
// Logs: under the SCM nothing reads a service's stdout/stderr and klog's --log-file is gone
// (removed in 1.26), so kubelet and kube-proxy run through kube-log-runner (shipped with the
// Windows node binaries; k8s.io/component-base/logs/kube-log-runner), which writes the
// child's output to a file and rotates it (-log-file-size, -log-file-age). This is how the
// Kubernetes GCE Windows nodes (kubernetes/kubernetes cluster/gce/windows/k8s-node-setup.psm1)
// and OpenShift's WMCO run the kubelet. They keep --windows-service for graceful shutdown.
// flanneld does not speak to the SCM at all, so WinSW runs it and rotates its log (flannel.go).
// containerd cannot run under kube-log-runner: run as a service (--run-service) it points its
// stderr at NUL unless --log-file names a file (containerd v2.1.0
// cmd/containerd/command/service_windows.go registerUnregisterService), and it does not rotate
// that file. So it keeps --log-file, and the hourly task kubewin-logs (install.ps1 -RotateLogs)
// rotates the logs nothing else rotates, as the GCE Windows nodes do (kubernetes v1.37.1
// cluster/gce/windows/common.psm1 Schedule-LogRotation, Rotate-File): a file over
// kube-log-runner's size limit is copied aside and truncated in place, and copies older than
// kube-log-runner's age limit are removed.

const (
	hnsTaskName = "kubewin-hns"
	logTaskName = "kubewin-logs"
	// containerdLogFile is containerd's --log-file in the node's log directory; bootLogFile the
	// record hns\setup.ps1 -Boot keeps there.
	containerdLogFile = "containerd.log"
	bootLogFile       = "kubewin-boot.log"
	// recoveryActions restart after 10 s, 10 s, then 30 s; the failure count resets after a day.
	recoveryActions = "restart/10000/restart/10000/restart/30000"
	recoveryReset   = "86400"
	localSystem     = "LocalSystem"
	// Log rotation of kube-log-runner: a new file at 100 MB, files older than a week removed.
	// The log task applies the same limits to the files it rotates.
	logFileSize = "100M"
	logFileAge  = "168h"
	// flanneld's log (WinSW roll-by-size): a new file at 10 MB (sizeThreshold is in KB), the
	// last 8 kept (winsw/winsw v2.12.0 doc/loggingAndErrorReporting.md).
	wrapperLogKB    = 10240
	wrapperLogFiles = 8
	// kubeletConfWait bounds install.ps1's wait for the kubelet's kubeconfig (TLS bootstrap: the
	// node's CSR must be approved).
	kubeletConfWait = 300
)

// Scheduled task settings (New-ScheduledTaskSettingsSet,
// https://learn.microsoft.com/powershell/module/scheduledtasks/new-scheduledtasksettingsset).
// Its defaults do not fit a task that must run at every boot: DisallowStartIfOnBatteries and
// StopIfGoingOnBatteries are true, so a node on a UPS that reports a battery (or a laptop-class
// host) would not start or would stop the task, and ExecutionTimeLimit is 72 hours
// (https://learn.microsoft.com/windows/win32/taskschd/taskschedulerschema-settingstype-complextype,
// https://learn.microsoft.com/windows/win32/taskschd/tasksettings-executiontimelimit).
//
// The boot task retries until the pod network exists and the services are started (hns.go),
// which after an outage can take longer than any fixed limit; ending it would leave the node's
// services stopped, so it gets no limit (PT0S: "will enable the task to run indefinitely",
// https://learn.microsoft.com/windows/win32/taskschd/taskschedulerschema-executiontimelimit-settingstype-element).
// Should it still fail (powershell.exe not starting, an error outside the retry loop), Task
// Scheduler restarts it ("if the task fails for any reason",
// https://learn.microsoft.com/windows/win32/taskschd/taskschedulerschema-restartonfailure-settingstype-element)
// every minute, up to 255 times (the schema's bounds: Interval PT1M..P31D, Count an
// unsignedByte, taskschedulerschema-restarttype-complextype). Each run is idempotent.
// The log task copies at most a few hundred MB: 30 minutes is ample, and a hung run must not
// block the next hour's.
const (
	bootTaskSettings = "-AllowStartIfOnBatteries -DontStopIfGoingOnBatteries -ExecutionTimeLimit ([TimeSpan]::Zero) " +
		"-RestartCount 255 -RestartInterval (New-TimeSpan -Minutes 1)"
	logTaskSettings = "-AllowStartIfOnBatteries -DontStopIfGoingOnBatteries -ExecutionTimeLimit (New-TimeSpan -Minutes 30) " +
		"-StartWhenAvailable"
)

type winService struct {
	Name, DisplayName, Description string
	// Binary and Args are the program the service runs; BinaryPath is what the SCM starts:
	// Binary plus Args quoted for its command line, or the wrapper.
	Binary string
	Args   []string
	// DependsOn are the services that must run first.
	DependsOn []string
	// Account is empty for LocalSystem.
	Account string
	// Manual services are started by the boot task after the HNS network exists.
	Manual     bool
	BinaryPath string
	// Wrapper is set for a program that does not implement the service protocol itself.
	Wrapper *serviceWrapper
}

// serviceWrapper is WinSW running a service's program: Exe is what the SCM starts, and it reads
// Config (its own name, .xml) from beside itself.
type serviceWrapper struct {
	Exe, Config string
	// SHA256 is the digest install.ps1 requires of Exe before it installs the service.
	SHA256 string
	// Environment is added to the program's environment (NAME=value).
	Environment []string
	// WorkDir is the program's working directory; LogDir and LogName place its logs.
	WorkDir, LogDir, LogName string
	// XML is the content of Config, rendered by WindowsServices.
	XML string
}

// winswConfig is WinSW's XML configuration, with the elements v2 reads
// (winsw/winsw v2.12.0 src/WinSW.Core/Configuration/XmlServiceConfig.cs). Elements that only
// WinSW's own "install" command reads (startmode, depend, onfailure) are left out:
// install.ps1 registers the service itself, as it does the others.
type winswConfig struct {
	XMLName          xml.Name   `xml:"service"`
	ID               string     `xml:"id"`
	Name             string     `xml:"name"`
	Description      string     `xml:"description"`
	Executable       string     `xml:"executable"`
	Arguments        string     `xml:"arguments"`
	WorkingDirectory string     `xml:"workingdirectory"`
	Env              []winswEnv `xml:"env"`
	LogPath          string     `xml:"logpath"`
	LogName          string     `xml:"logname"`
	Log              winswLog   `xml:"log"`
}

type winswEnv struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type winswLog struct {
	Mode          string `xml:"mode,attr"`
	SizeThreshold int    `xml:"sizeThreshold"`
	KeepFiles     int    `xml:"keepFiles"`
}

// wrapperXML renders s's WinSW configuration; args is its command line after the program.
func wrapperXML(s winService, args string) (string, error) {
	w := s.Wrapper
	c := winswConfig{ID: s.Name, Name: s.DisplayName, Description: s.Description, Executable: s.Binary,
		Arguments: args, WorkingDirectory: w.WorkDir, LogPath: w.LogDir, LogName: w.LogName,
		Log: winswLog{Mode: "roll-by-size", SizeThreshold: wrapperLogKB, KeepFiles: wrapperLogFiles}}
	for _, e := range w.Environment {
		name, value, ok := strings.Cut(e, "=")
		if !ok || name == "" {
			return "", fmt.Errorf("environment entry %q of service %s: expected NAME=value", e, s.Name)
		}
		c.Env = append(c.Env, winswEnv{Name: name, Value: value})
	}
	b, err := xml.MarshalIndent(c, "", "  ")
	if err != nil {
		return "", fmt.Errorf("WinSW configuration of service %s: %w", s.Name, err)
	}
	return string(b), nil
}

// WindowsServices returns the services of a Windows node in dependency order.
func WindowsServices(p *plan.Plan, n plan.NodePlan) ([]winService, error) {
	w := n.Windows
	if w == nil {
		return nil, fmt.Errorf("render services for %s: not a Windows node", n.Name)
	}
	kubeletFlags, err := KubeletFlags(p, n)
	if err != nil {
		return nil, err
	}
	proxyAccount := w.KubeProxyServiceAccount
	if strings.EqualFold(proxyAccount, localSystem) {
		proxyAccount = ""
	}
	svcs := []winService{
		{
			Name: "containerd", DisplayName: "containerd container runtime",
			Description: "Container runtime for Kubernetes (CRI at " + w.ContainerdPipe + ")",
			// Its own --log-file, rotated by the log task (see above).
			Binary: windowsContainerdDir + `\containerd.exe`,
			Args: []string{"--config=" + WindowsContainerdConfigPath(), "--run-service",
				"--log-file=" + winPath(w.LogDir, containerdLogFile)},
		},
		{
			Name: "kubelet", DisplayName: "Kubernetes Node Agent",
			Description: "Kubernetes kubelet of node " + n.Name,
			Binary:      winPath(w.InstallDir, kubeLogRunner),
			Args:        logRunnerArgs(w, "kubelet.log", winPath(w.InstallDir, "kubelet.exe"), kubeletFlags),
			DependsOn:   []string{"containerd"},
			Manual:      true,
		},
		{
			Name: "kube-proxy", DisplayName: "Kubernetes Network Proxy",
			Description: "Kubernetes kube-proxy (winkernel) of node " + n.Name,
			Binary:      winPath(w.InstallDir, kubeLogRunner),
			Args:        logRunnerArgs(w, "kube-proxy.log", winPath(w.InstallDir, "kube-proxy.exe"), KubeProxyFlags(n)),
			Account:     proxyAccount,
			Manual:      true,
		},
	}
	if usesFlannel(w) {
		args, err := FlanneldArgs(n)
		if err != nil {
			return nil, err
		}
		flanneld := winService{
			Name: flanneldServiceName, DisplayName: "flannel",
			Description: "flanneld (" + w.CNIDelegate + ", HNS network " + w.HNSNetworkName + ") of node " + n.Name + ", run by WinSW",
			Binary:      winPath(w.InstallDir, "flanneld.exe"),
			Args:        args,
			DependsOn:   []string{"kubelet"},
			Manual:      true,
			Wrapper: &serviceWrapper{Exe: winPath(w.InstallDir, flanneldWrapperExe), Config: winPath(w.InstallDir, flanneldWrapperConfig),
				SHA256: winswSHA256, Environment: FlanneldEnvironment(n), WorkDir: w.InstallDir, LogDir: w.LogDir, LogName: flanneldLogName},
		}
		svcs[2].DependsOn = []string{flanneldServiceName}
		svcs = []winService{svcs[0], svcs[1], flanneld, svcs[2]}
	}
	for i := range svcs {
		var parts []string
		for _, a := range svcs[i].Args {
			if strings.Contains(a, `"`) {
				return nil, fmt.Errorf("render services for %s: argument %q contains a double quote", n.Name, a)
			}
			parts = append(parts, winArg(a))
		}
		if svcs[i].Wrapper != nil {
			// WinSW expands %VAR% in its configuration (XmlServiceConfig.cs), and the XML is
			// embedded in install.ps1 as a here-string that a line break could end.
			for _, v := range append(append([]string{svcs[i].Binary}, svcs[i].Args...), svcs[i].Wrapper.Environment...) {
				if strings.ContainsAny(v, "%\r\n") {
					return nil, fmt.Errorf("render services for %s: %q of service %s contains %% or a line break", n.Name, v, svcs[i].Name)
				}
			}
			x, err := wrapperXML(svcs[i], strings.Join(parts, " "))
			if err != nil {
				return nil, fmt.Errorf("render services for %s: %w", n.Name, err)
			}
			svcs[i].Wrapper.XML = x
			svcs[i].BinaryPath = winArg(svcs[i].Wrapper.Exe)
			continue
		}
		svcs[i].BinaryPath = strings.Join(append([]string{winArg(svcs[i].Binary)}, parts...), " ")
	}
	return svcs, nil
}

const kubeLogRunner = "kube-log-runner.exe"

// logRunnerArgs runs program with args under kube-log-runner, into logDir\logFile, rotated.
func logRunnerArgs(w *plan.WindowsNodePlan, logFile, program string, args []string) []string {
	out := []string{"-log-file=" + winPath(w.LogDir, logFile), "-log-file-size=" + logFileSize, "-log-file-age=" + logFileAge, program}
	return append(out, args...)
}

func serviceNamed(svcs []winService, name string) winService {
	for _, s := range svcs {
		if s.Name == name {
			return s
		}
	}
	return winService{}
}

// winArg quotes a command-line argument containing blanks the way Windows' argument parser
// (CommandLineToArgvW, and Go's os.Args on Windows) expects: --flag="C:\Program Files\x" is
// read back as --flag=C:\Program Files\x.
func winArg(a string) string {
	if !strings.ContainsAny(a, " \t") {
		return a
	}
	if name, value, ok := strings.Cut(a, "="); ok && strings.HasPrefix(name, "-") {
		return name + `="` + value + `"`
	}
	return `"` + a + `"`
}

var servicesTmpl = template.Must(template.New("services").Funcs(psFuncs).Funcs(template.FuncMap{"join": strings.Join}).Parse(`# Installs the Kubernetes node services of {{.Node}}: {{range $i, $s := .Services}}{{if $i}} -> {{end}}{{$s.Name}}{{end}}.
# {{.Gen}}
#
# Before running (see README.md): this bundle is in {{.BundleDir}}, kubelet.exe,
# kube-proxy.exe and kube-log-runner.exe{{if .InstallFiles}} (and {{join .InstallFiles ", "}}){{end}} are in {{.InstallDir}}, containerd.exe is in {{.ContainerdDir}}, the CNI
# plugins ({{join .CNIFiles ", "}}) are in {{.CNIBinDir}}, and the credentials exist.
# Running it again reinstalls the services with the same settings. With -RotateLogs (the hourly
# task {{.LogTask}}) it only rotates the logs that no program rotates itself.
param([switch]$RotateLogs)
#Requires -RunAsAdministrator
$ErrorActionPreference = 'Stop'

$BundleDir = {{q .BundleDir}}
$LogDir    = {{q .LogDir}}

# containerd's log (its own --log-file) and the boot task's record grow without bound: a file
# of {{.RotateBytes}} bytes or more is copied to <name>-<yyyyMMdd-HHmmss>.log and cut to zero,
# and such copies older than {{.RotateHours}} hours are removed (kube-log-runner's names and
# limits for the kubelet's and kube-proxy's logs). containerd keeps the file open for appending,
# sharing read and write (Go's os.OpenFile on Windows), so the file is opened sharing both, and
# copied and cut on one handle; containerd's next write lands at the new end.
function Invoke-LogRotation {
    foreach ($name in @({{range $i, $f := .RotateFiles}}{{if $i}}, {{end}}{{q $f}}{{end}})) {
        $path = Join-Path $LogDir $name
        $base = [System.IO.Path]::GetFileNameWithoutExtension($name)
        if ((Test-Path -LiteralPath $path) -and (Get-Item -LiteralPath $path).Length -ge {{.RotateBytes}}) {
            $copy = Join-Path $LogDir ('{0}-{1}.log' -f $base, (Get-Date -Format 'yyyyMMdd-HHmmss'))
            $src = [System.IO.File]::Open($path, [System.IO.FileMode]::Open, [System.IO.FileAccess]::ReadWrite, [System.IO.FileShare]::ReadWrite)
            try {
                $dst = [System.IO.File]::Open($copy, [System.IO.FileMode]::CreateNew, [System.IO.FileAccess]::Write, [System.IO.FileShare]::None)
                try { $src.CopyTo($dst) } finally { $dst.Dispose() }
                $src.SetLength(0)
            } finally {
                $src.Dispose()
            }
        }
        $cutoff = (Get-Date).AddHours(-{{.RotateHours}})
        Get-ChildItem -LiteralPath $LogDir -Filter "$base-*.log" | Where-Object { $_.LastWriteTime -lt $cutoff } | Remove-Item -Force
    }
}

if ($RotateLogs) {
    Invoke-LogRotation
    return
}

# A bundle copied from a downloaded zip carries the "downloaded from the internet" mark, and
# PowerShell then refuses to run its scripts from the boot task.
Get-ChildItem -LiteralPath $BundleDir -Recurse -File | Unblock-File

# 1. Configuration files where the programs read them.
New-Item -ItemType Directory -Force -Path {{range $i, $d := .Dirs}}{{if $i}}, {{end}}{{q $d}}{{end}} | Out-Null
Copy-Item -Force -Path (Join-Path $BundleDir {{q .CNISource}}) -Destination {{q .CNIConfDir}}
Copy-Item -Force -Path (Join-Path $BundleDir 'containerd\config.toml') -Destination {{q .ContainerdConfig}}
{{- if .Registries}}
Copy-Item -Force -Recurse -Path (Join-Path $BundleDir 'containerd\certs.d') -Destination {{q .ContainerdDir}}
{{- end}}
{{- if .FlannelNetConf}}
Copy-Item -Force -Path (Join-Path $BundleDir {{q .FlannelNetConfSource}}) -Destination {{q .FlannelNetConf}}
{{- end}}

# 2. Credentials: protected DACLs, SYSTEM and Administrators only plus the grants listed
# (inheritance from C:\ would let every local user read the node's private key and
# kubeconfigs). The same list kubewin join applies (render's host effects). Directories pass
# their ACEs on (OICI); a file gets plain ACEs. A path that does not exist yet is protected
# again at the end, once the kubelet has written the credentials.
function Protect-Path {
    param([string]$Path, [string[]]$Grant)
    if (-not (Test-Path -LiteralPath $Path)) { return }
    # The DACL kubewin join sets (render.SDDLRights): protected, SYSTEM and Administrators full
    # access, then the grants "SID-or-account|rights"; the whole DACL is replaced, so a grant
    # an earlier install gave another account is taken back. Well-known accounts come as SIDs:
    # their names are localized or not resolvable (learn.microsoft.com networkservice-account).
    $inherit = ''
    if (Test-Path -LiteralPath $Path -PathType Container) { $inherit = 'OICI' }
    $sddl = "D:PAI(A;$inherit;FA;;;SY)(A;$inherit;FA;;;BA)"
    foreach ($g in $Grant) {
        $account, $rights = $g -split '\|'
        $sid = $account
        if ($account -notmatch '^S-1-') {
            $sid = (New-Object System.Security.Principal.NTAccount($account)).Translate([System.Security.Principal.SecurityIdentifier]).Value
        }
        $sddl += "(A;$inherit;$rights;;;$sid)"
    }
    $acl = Get-Acl -LiteralPath $Path
    $acl.SetSecurityDescriptorSddlForm($sddl, 'Access')
    Set-Acl -LiteralPath $Path -AclObject $acl
}
function Protect-NodePaths {
{{- range .ACLs}}
    Protect-Path -Path {{q .Path}} -Grant @({{range $i, $g := .Grants}}{{if $i}}, {{end}}{{q $g}}{{end}})
{{- end}}
}
Protect-NodePaths

# 3. The HNS network at every boot (HNS networks do not survive a reboot), before the node
# services: the boot task runs setup.ps1 -Boot, which retries and then starts them in order.
# Task Scheduler's default settings would not start it on battery power, stop it when the power
# fails over to a battery, and end it after 72 hours: it gets its own (services.go).
$setup = Join-Path $BundleDir 'hns\setup.ps1'
& $setup
Unregister-ScheduledTask -TaskName {{q .TaskName}} -Confirm:$false -ErrorAction SilentlyContinue
$action = New-ScheduledTaskAction -Execute 'powershell.exe' -Argument "-NoProfile -ExecutionPolicy Bypass -File ` + "`" + `"$setup` + "`" + `" -Boot"
$trigger = New-ScheduledTaskTrigger -AtStartup
$settings = New-ScheduledTaskSettingsSet {{.BootTaskSettings}}
Register-ScheduledTask -TaskName {{q .TaskName}} -Action $action -Trigger $trigger -Settings $settings -User 'NT AUTHORITY\SYSTEM' -RunLevel Highest | Out-Null

# The log rotation above, every hour from now on (a repeating trigger outlives reboots).
Unregister-ScheduledTask -TaskName {{q .LogTask}} -Confirm:$false -ErrorAction SilentlyContinue
$self = Join-Path $BundleDir 'services\install.ps1'
$action = New-ScheduledTaskAction -Execute 'powershell.exe' -Argument "-NoProfile -ExecutionPolicy Bypass -File ` + "`" + `"$self` + "`" + `" -RotateLogs" -WorkingDirectory $LogDir
$trigger = New-ScheduledTaskTrigger -Once -At (Get-Date) -RepetitionInterval (New-TimeSpan -Hours 1)
$settings = New-ScheduledTaskSettingsSet {{.LogTaskSettings}}
Register-ScheduledTask -TaskName {{q .LogTask}} -Action $action -Trigger $trigger -Settings $settings -User 'NT AUTHORITY\SYSTEM' -RunLevel Highest | Out-Null

# 4. Services, in dependency order.
function Install-NodeService {
    param([string]$Name, [string]$DisplayName, [string]$Description, [string]$BinaryPath, [string[]]$DependsOn, [string]$Account, [string]$StartupType)
    if (Get-Service -Name $Name -ErrorAction SilentlyContinue) {
        Stop-Service -Name $Name -Force -ErrorAction SilentlyContinue
        sc.exe delete $Name | Out-Null
        for ($i = 0; Get-Service -Name $Name -ErrorAction SilentlyContinue; $i++) {
            if ($i -ge 30) { throw "service $Name is still marked for deletion; close services.msc and retry" }
            Start-Sleep -Seconds 1
        }
    }
    $params = @{ Name = $Name; BinaryPathName = $BinaryPath; DisplayName = $DisplayName; Description = $Description; StartupType = $StartupType }
    if ($DependsOn) { $params.DependsOn = $DependsOn }
    New-Service @params | Out-Null
    if ($Account) {
        sc.exe config $Name obj= $Account | Out-Null
        if ($LASTEXITCODE -ne 0) { throw "sc.exe config $Name obj= $Account failed ($LASTEXITCODE)" }
    }
    # Restart on failure; failureflag applies the actions also when the process exits with an error.
    sc.exe failure $Name reset= {{.Reset}} actions= {{.Actions}} | Out-Null
    if ($LASTEXITCODE -ne 0) { throw "sc.exe failure $Name failed ($LASTEXITCODE)" }
    sc.exe failureflag $Name 1 | Out-Null
    Write-Host "Installed service $Name"
}
{{- if .Wrapped}}

# WinSW runs programs that do not speak to the Service Control Manager themselves; it reads the
# program, its arguments, environment and logs from the .xml of its own name beside it. Only the
# pinned release is installed (README.md, step 2).
function Install-ServiceWrapper {
    param([string]$Exe, [string]$Digest, [string]$Application, [string]$Config, [string]$Xml)
    foreach ($f in @($Exe, $Application)) {
        if (-not (Test-Path -LiteralPath $f)) { throw "$f is missing (README.md, step 2)" }
    }
    $hash = (Get-FileHash -Algorithm SHA256 -LiteralPath $Exe).Hash
    if ($hash -ne $Digest) { throw "$Exe has SHA-256 $hash, expected $Digest (README.md, step 2)" }
    [System.IO.File]::WriteAllText($Config, $Xml)
}
{{- end}}
{{range .Services}}
{{- if .Wrapper}}
$wrapperXml = @'
{{.Wrapper.XML}}
'@
Install-ServiceWrapper -Exe {{q .Wrapper.Exe}} -Digest {{q .Wrapper.SHA256}} -Application {{q .Binary}} -Config {{q .Wrapper.Config}} -Xml $wrapperXml
{{- end}}
Install-NodeService -Name {{q .Name}} -DisplayName {{q .DisplayName}} -Description {{q .Description}} -DependsOn @({{range $i, $d := .DependsOn}}{{if $i}}, {{end}}{{q $d}}{{end}}) -Account {{q .Account}} -StartupType {{if .Manual}}'Manual'{{else}}'Automatic'{{end}} ` + "`" + `
    -BinaryPath {{q .BinaryPath}}
{{- end}}

# 5. containerd and the kubelet first. kube-proxy{{if .FlannelNetConf}} and flanneld use{{else}} uses{{end}} the node's own credential,
# the client certificate the kubelet obtains with the bootstrap kubeconfig and renews itself
# (README.md, step 4): the kubeconfig the kubelet writes once its CSR is approved.
{{range .Early}}Start-Service -Name {{q .}}
{{end -}}
$kubeletConf = {{q .KubeletKubeconfig}}
for ($i = 0; -not ((Test-Path -LiteralPath $kubeletConf) -and (Select-String -LiteralPath $kubeletConf -Pattern 'client-key:' -Quiet)); $i++) {
    if ($i -ge {{.KubeletConfWait}}) { throw "the kubelet has not written $kubeletConf in {{.KubeletConfWait}} s: is its CSR approved (kubectl get csr)? Then run this script again" }
    Start-Sleep -Seconds 1
}
Copy-Item -Force -LiteralPath $kubeletConf -Destination {{q .ProxyKubeconfig}}
{{- if .ProxyAccount}}
# kube-proxy runs as {{.ProxyAccount}} (seed 000 FAQ 6: as LocalSystem, win-bridge endpoints
# flip to remote on some builds); the list gives that account read access to its
# configuration, its kubeconfig, its programs and the node's certificate, and its log directory.
{{- end}}
Protect-NodePaths

{{range .Late}}Start-Service -Name {{q .}}
{{end}}Get-Service {{range $i, $s := .Services}}{{if $i}}, {{end}}{{q $s.Name}}{{end}}
`))

// ServicesScript renders services/install.ps1.
func ServicesScript(p *plan.Plan, n plan.NodePlan) ([]byte, error) {
	effects, err := NodeEffects(p, n)
	if err != nil {
		return nil, err
	}
	return servicesScript(p, n, effects)
}

// bundleACL is a protected DACL of install.ps1: the path, and "account|access" grants.
type bundleACL struct {
	Path   string
	Grants []string
}

// servicesScript renders install.ps1 from the node's host effects: its services, registry
// hosts and protected DACLs.
func servicesScript(p *plan.Plan, n plan.NodePlan, effects []HostEffect) ([]byte, error) {
	var svcs []winService
	for _, e := range EffectsOf(effects, EffectService) {
		svcs = append(svcs, *e.Service)
	}
	w := n.Windows
	var acls []bundleACL
	for _, e := range EffectsOf(effects, EffectACL) {
		path, err := bundleACLPath(e.ACL.Target, w)
		if err != nil {
			return nil, fmt.Errorf("render services for %s: %w", n.Name, err)
		}
		a := bundleACL{Path: path}
		for _, g := range e.ACL.Grants {
			account := g.Account
			if sid, ok := WellKnownSID(account); ok {
				account = sid
			}
			rights, ok := SDDLRights[g.Access]
			if strings.ContainsAny(account, "|'") || !ok {
				return nil, fmt.Errorf("render services for %s: grant %q (%s): an account without | or ', access R or M", n.Name, g.Account, g.Access)
			}
			a.Grants = append(a.Grants, account+"|"+rights)
		}
		acls = append(acls, a)
	}
	dirs := []string{w.CNIConfDir, w.CNIBinDir, w.LogDir, winPath(w.InstallDir, "cni", "ipam"),
		winPath(w.InstallDir, pkiSubdir), WindowsStaticPodDir(w), windowsContainerdDir}
	netConf, wrapped := "", false
	if usesFlannel(w) {
		dirs = append(dirs, flannelNetConfDir)
		netConf = FlannelNetConfPath()
	}
	// containerd and the kubelet start first; the others need the kubelet's kubeconfig.
	var early, late []string
	for _, s := range svcs {
		wrapped = wrapped || s.Wrapper != nil
		if len(late) == 0 && (s.Name == "containerd" || s.Name == "kubelet") {
			early = append(early, s.Name)
		} else {
			late = append(late, s.Name)
		}
	}
	sort.Strings(dirs)
	progs := windowsCNIAndFlannelPrograms(w)
	proxy := serviceNamed(svcs, "kube-proxy")
	rotateBytes, rotateAge, err := logRotationLimits()
	if err != nil {
		return nil, fmt.Errorf("render services for %s: %w", n.Name, err)
	}
	var b bytes.Buffer
	err = servicesTmpl.Execute(&b, map[string]any{
		"Node": n.Name, "Gen": generatedBy, "BundleDir": BundleDir(w), "InstallDir": w.InstallDir,
		"ContainerdDir": windowsContainerdDir, "CNIBinDir": w.CNIBinDir, "CNIConfDir": w.CNIConfDir,
		"Dirs": dirs, "CNISource": `cni\` + CNIConfigName(w), "ContainerdConfig": WindowsContainerdConfigPath(),
		"Registries": len(EffectsOf(effects, EffectRegistryHost)) > 0, "ACLs": acls, "TaskName": hnsTaskName, "LogTask": logTaskName,
		"BootTaskSettings": bootTaskSettings, "LogTaskSettings": logTaskSettings,
		"RotateFiles": []string{containerdLogFile, bootLogFile}, "RotateBytes": rotateBytes, "RotateHours": int64(rotateAge.Hours()),
		"Reset": recoveryReset, "Actions": recoveryActions, "Services": svcs, "Wrapped": wrapped,
		"Early": early, "Late": late, "KubeletKubeconfig": winPath(w.InstallDir, kubeletKubeconfig), "KubeletConfWait": kubeletConfWait,
		"InstallFiles": programsIn(progs, w.InstallDir), "CNIFiles": programsIn(progs, w.CNIBinDir),
		"FlannelNetConf": netConf, "FlannelNetConfSource": flannelBundleNetConf,
		"ProxyAccount": proxy.Account, "ProxyConfigDir": winPath(BundleDir(w), "kube-proxy"),
		"ProxyKubeconfig": winPath(w.InstallDir, kubeProxyKubeconfig), "LogDir": w.LogDir,
		"PKIDir": winPath(w.InstallDir, pkiSubdir), "Kubeconfigs": nodeKubeconfigs(w),
	})
	if err != nil {
		return nil, fmt.Errorf("render services for %s: %w", n.Name, err)
	}
	return b.Bytes(), nil
}

// logRotationLimits are kube-log-runner's limits (logFileSize, logFileAge) as it reads them:
// the size as a resource.Quantity (100M is 10^8 bytes), the age as a Go duration.
func logRotationLimits() (int64, time.Duration, error) {
	size, err := resource.ParseQuantity(logFileSize)
	if err != nil {
		return 0, 0, fmt.Errorf("log file size %q: %w", logFileSize, err)
	}
	age, err := time.ParseDuration(logFileAge)
	if err != nil {
		return 0, 0, fmt.Errorf("log file age %q: %w", logFileAge, err)
	}
	return size.Value(), age, nil
}

// bundleACLPath is where an ACL target is in the bundle's layout on the node.
func bundleACLPath(t ACLTarget, w *plan.WindowsNodePlan) (string, error) {
	switch t {
	case ACLDataDir:
		return w.InstallDir, nil
	case ACLPKIDir:
		return winPath(w.InstallDir, pkiSubdir), nil
	case ACLKubeProxyConfigDir:
		return winPath(BundleDir(w), "kube-proxy"), nil
	case ACLKubeProxyKubeconfig:
		return winPath(w.InstallDir, kubeProxyKubeconfig), nil
	case ACLKubeProxyBinary:
		return winPath(w.InstallDir, "kube-proxy.exe"), nil
	case ACLKubeLogRunner:
		return winPath(w.InstallDir, kubeLogRunner), nil
	case ACLLogDir:
		return w.LogDir, nil
	}
	return "", fmt.Errorf("ACL target %q: unknown", t)
}

// nodeKubeconfigs are the kubeconfigs of a Windows node: they hold credentials.
func nodeKubeconfigs(w *plan.WindowsNodePlan) []string {
	return []string{winPath(w.InstallDir, bootstrapKubeconfig), winPath(w.InstallDir, kubeletKubeconfig),
		winPath(w.InstallDir, kubeProxyKubeconfig)}
}
