package render

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"text/template"

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
// and started by the boot task (hns\setup.ps1 -Boot) only once the HNS network exists, with
// bounded retries and a record of each failure in the log directory — never a kubelet that
// registers the node Ready while its pod network is missing after a reboot.
//
// Logs: under the SCM nothing reads a service's stdout/stderr and klog's --log-file is gone
// (removed in 1.26), so kubelet and kube-proxy run through kube-log-runner (shipped with the
// Windows node binaries; k8s.io/component-base/logs/kube-log-runner), which writes the
// child's output to a file and rotates it (-log-file-size, -log-file-age). This is how the
// Kubernetes GCE Windows nodes (kubernetes/kubernetes cluster/gce/windows/k8s-node-setup.psm1)
// and OpenShift's WMCO run the kubelet. They keep --windows-service for graceful shutdown.
// flanneld does not speak to the SCM at all, so nssm runs it and rotates its log (flannel.go).

const (
	hnsTaskName = "kubewin-hns"
	// recoveryActions restart after 10 s, 10 s, then 30 s; the failure count resets after a day.
	recoveryActions = "restart/10000/restart/10000/restart/30000"
	recoveryReset   = "86400"
	localSystem     = "LocalSystem"
	// Log rotation of kube-log-runner: a new file at 100 MB, files older than a week removed.
	logFileSize = "100M"
	logFileAge  = "168h"
)

type winService struct {
	Name, DisplayName, Description string
	Binary                         string
	Args                           []string
	DependsOn                      []string
	// Account is empty for LocalSystem.
	Account string
	// Manual services are started by the boot task after the HNS network exists.
	Manual bool
	// BinaryPath is Binary plus Args, quoted for the SCM command line; with NSSM it is
	// nssm.exe, and Binary and Args are nssm's parameters.
	BinaryPath string
	// NSSM is set for a program that does not implement the service protocol itself.
	NSSM *nssmParams
}

// nssmParams are the values nssm reads from the service's Parameters registry key.
type nssmParams struct {
	Exe           string
	AppParameters string
	AppDirectory  string
	// Environment is added to the service's environment (AppEnvironmentExtra).
	Environment []string
	// LogFile receives stdout and stderr (AppStdout, AppStderr).
	LogFile string
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
			// containerd keeps its own --log-file, which it does not rotate (issue 11 item 13,
			// decided, not fixed): it speaks to the SCM itself (--run-service), and whether it
			// still does under kube-log-runner — as the kubelet does in OpenShift WMCO and on GCE
			// Windows nodes — cannot be checked without a Windows host. Its log grows slowly
			// (errors and pulls), the kubelet's and kube-proxy's are the large ones.
			Binary: windowsContainerdDir + `\containerd.exe`,
			Args: []string{"--config=" + WindowsContainerdConfigPath(), "--run-service",
				"--log-file=" + winPath(w.LogDir, "containerd.log")},
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
			Description: "flanneld (" + w.CNIDelegate + ", HNS network " + w.HNSNetworkName + ") of node " + n.Name + ", run by nssm",
			Binary:      winPath(w.InstallDir, "flanneld.exe"),
			Args:        args,
			DependsOn:   []string{"kubelet"},
			Manual:      true,
			NSSM: &nssmParams{Exe: winPath(w.InstallDir, "nssm.exe"), AppDirectory: w.InstallDir,
				Environment: FlanneldEnvironment(n), LogFile: winPath(w.LogDir, flanneldLogFile)},
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
		if svcs[i].NSSM != nil {
			svcs[i].NSSM.AppParameters = strings.Join(parts, " ")
			svcs[i].BinaryPath = winArg(svcs[i].NSSM.Exe)
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
# Running it again reinstalls the services with the same settings.
#Requires -RunAsAdministrator
$ErrorActionPreference = 'Stop'

$BundleDir = {{q .BundleDir}}

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

# 2. Credentials: readable by SYSTEM and Administrators only (inheritance from C:\ would let
# every local user read the node's private key and kubeconfigs).
icacls {{q .PKIDir}} /inheritance:r /grant:r 'SYSTEM:(OI)(CI)F' 'BUILTIN\Administrators:(OI)(CI)F' | Out-Null
if ($LASTEXITCODE -ne 0) { throw "icacls {{.PKIDir}} failed ($LASTEXITCODE)" }
foreach ($kc in @({{range $i, $k := .Kubeconfigs}}{{if $i}}, {{end}}{{q $k}}{{end}})) {
    if (Test-Path -LiteralPath $kc) {
        icacls $kc /inheritance:r /grant:r 'SYSTEM:F' 'BUILTIN\Administrators:F' | Out-Null
        if ($LASTEXITCODE -ne 0) { throw "icacls $kc failed ($LASTEXITCODE)" }
    }
}

# 3. The HNS network at every boot (HNS networks do not survive a reboot), before the node
# services: the boot task runs setup.ps1 -Boot, which retries and then starts them in order.
$setup = Join-Path $BundleDir 'hns\setup.ps1'
& $setup
Unregister-ScheduledTask -TaskName {{q .TaskName}} -Confirm:$false -ErrorAction SilentlyContinue
$action = New-ScheduledTaskAction -Execute 'powershell.exe' -Argument "-NoProfile -ExecutionPolicy Bypass -File ` + "`" + `"$setup` + "`" + `" -Boot"
$trigger = New-ScheduledTaskTrigger -AtStartup
Register-ScheduledTask -TaskName {{q .TaskName}} -Action $action -Trigger $trigger -User 'NT AUTHORITY\SYSTEM' -RunLevel Highest | Out-Null

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
{{- if .NSSM}}

# nssm.exe runs programs that do not speak to the Service Control Manager themselves; it reads
# the program, its arguments, environment and log file from the service's Parameters key.
function Set-NssmParameters {
    param([string]$Name, [string]$Nssm, [string]$Application, [string]$AppParameters, [string]$AppDirectory, [string[]]$Environment, [string]$LogFile)
    foreach ($f in @($Nssm, $Application)) {
        if (-not (Test-Path -LiteralPath $f)) { throw "$f is missing (README.md, step 2)" }
    }
    $key = "HKLM:\SYSTEM\CurrentControlSet\Services\$Name\Parameters"
    New-Item -Path $key -Force | Out-Null
    $values = @{ Application = $Application; AppParameters = $AppParameters; AppDirectory = $AppDirectory; AppStdout = $LogFile; AppStderr = $LogFile }
    foreach ($v in $values.GetEnumerator()) {
        New-ItemProperty -Path $key -Name $v.Key -PropertyType ExpandString -Value $v.Value -Force | Out-Null
    }
    # Rotate the log at 10 MB, also while the service runs (nssm AppRotate*).
    foreach ($v in @{ AppRotateFiles = 1; AppRotateOnline = 1; AppRotateBytes = 10485760 }.GetEnumerator()) {
        New-ItemProperty -Path $key -Name $v.Key -PropertyType DWord -Value $v.Value -Force | Out-Null
    }
    New-ItemProperty -Path $key -Name 'AppEnvironmentExtra' -PropertyType MultiString -Value $Environment -Force | Out-Null
}
{{- end}}
{{range .Services}}
Install-NodeService -Name {{q .Name}} -DisplayName {{q .DisplayName}} -Description {{q .Description}} -DependsOn @({{range $i, $d := .DependsOn}}{{if $i}}, {{end}}{{q $d}}{{end}}) -Account {{q .Account}} -StartupType {{if .Manual}}'Manual'{{else}}'Automatic'{{end}} ` + "`" + `
    -BinaryPath {{q .BinaryPath}}
{{- if .NSSM}}
Set-NssmParameters -Name {{q .Name}} -Nssm {{q .NSSM.Exe}} -Application {{q .Binary}} -AppDirectory {{q .NSSM.AppDirectory}} ` + "`" + `
    -Environment @({{range $i, $e := .NSSM.Environment}}{{if $i}}, {{end}}{{q $e}}{{end}}) -LogFile {{q .NSSM.LogFile}} ` + "`" + `
    -AppParameters {{q .NSSM.AppParameters}}
{{- end}}
{{- end}}
{{- if .ProxyAccount}}

# kube-proxy runs as {{.ProxyAccount}} (seed 000 FAQ 6: as LocalSystem, win-bridge endpoints
# flip to remote on some builds); that account must read its configuration and kubeconfig.
icacls {{q .ProxyConfigDir}} /grant "{{.ProxyAccount}}:(OI)(CI)R" | Out-Null
icacls {{q .ProxyKubeconfig}} /grant "{{.ProxyAccount}}:R" | Out-Null
icacls {{q .LogDir}} /grant "{{.ProxyAccount}}:(OI)(CI)M" | Out-Null
{{- end}}

{{range .Services}}Start-Service -Name {{q .Name}}
{{end}}Get-Service {{range $i, $s := .Services}}{{if $i}}, {{end}}{{q $s.Name}}{{end}}
`))

// ServicesScript renders services/install.ps1.
func ServicesScript(p *plan.Plan, n plan.NodePlan) ([]byte, error) {
	svcs, err := WindowsServices(p, n)
	if err != nil {
		return nil, err
	}
	w := n.Windows
	dirs := []string{w.CNIConfDir, w.CNIBinDir, w.LogDir, winPath(w.InstallDir, "cni", "ipam"),
		winPath(w.InstallDir, pkiSubdir), WindowsStaticPodDir(w), windowsContainerdDir}
	netConf, nssm := "", false
	if usesFlannel(w) {
		dirs = append(dirs, flannelNetConfDir)
		netConf = FlannelNetConfPath()
	}
	for _, s := range svcs {
		nssm = nssm || s.NSSM != nil
	}
	sort.Strings(dirs)
	progs := windowsCNIAndFlannelPrograms(w)
	proxy := serviceNamed(svcs, "kube-proxy")
	var b bytes.Buffer
	err = servicesTmpl.Execute(&b, map[string]any{
		"Node": n.Name, "Gen": generatedBy, "BundleDir": BundleDir(w), "InstallDir": w.InstallDir,
		"ContainerdDir": windowsContainerdDir, "CNIBinDir": w.CNIBinDir, "CNIConfDir": w.CNIConfDir,
		"Dirs": dirs, "CNISource": `cni\` + CNIConfigName(w), "ContainerdConfig": WindowsContainerdConfigPath(),
		"Registries": len(p.Images.InsecureRegistries) > 0, "TaskName": hnsTaskName,
		"Reset": recoveryReset, "Actions": recoveryActions, "Services": svcs, "NSSM": nssm,
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

// nodeKubeconfigs are the kubeconfigs of a Windows node: they hold credentials.
func nodeKubeconfigs(w *plan.WindowsNodePlan) []string {
	out := []string{winPath(w.InstallDir, bootstrapKubeconfig), winPath(w.InstallDir, kubeletKubeconfig),
		winPath(w.InstallDir, kubeProxyKubeconfig)}
	if usesFlannel(w) {
		out = append(out, winPath(w.InstallDir, flanneldKubeconfig))
	}
	return out
}
