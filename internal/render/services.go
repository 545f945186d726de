package render

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"text/template"

	"github.com/kubewin/kubewin/internal/plan"
)

// Windows services: containerd, then the kubelet (depends on containerd), then kube-proxy
// (depends on the kubelet). kubelet and kube-proxy run with --windows-service so that they
// speak to the Service Control Manager themselves (clean stop, pre-shutdown for graceful node
// shutdown). A service that exits is restarted by the SCM's recovery actions.

const (
	hnsTaskName = "kubewin-hns"
	// recoveryActions restart after 10 s, 10 s, then 30 s; the failure count resets after a day.
	recoveryActions = "restart/10000/restart/10000/restart/30000"
	recoveryReset   = "86400"
	localSystem     = "LocalSystem"
)

type winService struct {
	Name, DisplayName, Description string
	Binary                         string
	Args                           []string
	DependsOn                      []string
	// Account is empty for LocalSystem.
	Account string
	// BinaryPath is Binary plus Args, quoted for the SCM command line.
	BinaryPath string
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
			Binary:      windowsContainerdDir + `\containerd.exe`,
			Args: []string{"--config=" + WindowsContainerdConfigPath(), "--run-service",
				"--log-file=" + winPath(w.LogDir, "containerd.log")},
		},
		{
			Name: "kubelet", DisplayName: "Kubernetes Node Agent",
			Description: "Kubernetes kubelet of node " + n.Name,
			Binary:      winPath(w.InstallDir, "kubelet.exe"),
			Args:        kubeletFlags,
			DependsOn:   []string{"containerd"},
		},
		{
			Name: "kube-proxy", DisplayName: "Kubernetes Network Proxy",
			Description: "Kubernetes kube-proxy (winkernel) of node " + n.Name,
			Binary:      winPath(w.InstallDir, "kube-proxy.exe"),
			Args:        KubeProxyFlags(n),
			DependsOn:   []string{"kubelet"},
			Account:     proxyAccount,
		},
	}
	for i := range svcs {
		parts := []string{winArg(svcs[i].Binary)}
		for _, a := range svcs[i].Args {
			if strings.Contains(a, `"`) {
				return nil, fmt.Errorf("render services for %s: argument %q contains a double quote", n.Name, a)
			}
			parts = append(parts, winArg(a))
		}
		svcs[i].BinaryPath = strings.Join(parts, " ")
	}
	return svcs, nil
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

var servicesTmpl = template.Must(template.New("services").Funcs(psFuncs).Parse(`# Installs the Kubernetes node services of {{.Node}}: containerd -> kubelet -> kube-proxy.
# {{.Gen}}
#
# Before running (see README.md): this bundle is in {{.BundleDir}}, kubelet.exe and
# kube-proxy.exe are in {{.InstallDir}}, containerd.exe is in {{.ContainerdDir}}, the CNI
# plugins (win-bridge.exe, host-local.exe) are in {{.CNIBinDir}}, and the credentials exist.
# Running it again reinstalls the services with the same settings.
#Requires -RunAsAdministrator
$ErrorActionPreference = 'Stop'

$BundleDir = {{q .BundleDir}}

# 1. Configuration files where the programs read them.
New-Item -ItemType Directory -Force -Path {{range $i, $d := .Dirs}}{{if $i}}, {{end}}{{q $d}}{{end}} | Out-Null
Copy-Item -Force -Path (Join-Path $BundleDir {{q .CNISource}}) -Destination {{q .CNIConfDir}}
Copy-Item -Force -Path (Join-Path $BundleDir 'containerd\config.toml') -Destination {{q .ContainerdConfig}}
{{- if .Registries}}
Copy-Item -Force -Recurse -Path (Join-Path $BundleDir 'containerd\certs.d') -Destination {{q .ContainerdDir}}
{{- end}}

# 2. The HNS network: now, and at every boot (HNS networks do not survive a reboot).
$setup = Join-Path $BundleDir 'hns\setup.ps1'
& $setup
if (-not (Get-ScheduledTask -TaskName {{q .TaskName}} -ErrorAction SilentlyContinue)) {
    $action = New-ScheduledTaskAction -Execute 'powershell.exe' -Argument "-NoProfile -ExecutionPolicy Bypass -File ` + "`" + `"$setup` + "`" + `""
    $trigger = New-ScheduledTaskTrigger -AtStartup
    Register-ScheduledTask -TaskName {{q .TaskName}} -Action $action -Trigger $trigger -User 'NT AUTHORITY\SYSTEM' -RunLevel Highest | Out-Null
}

# 3. Services, in dependency order.
function Install-NodeService {
    param([string]$Name, [string]$DisplayName, [string]$Description, [string]$BinaryPath, [string[]]$DependsOn, [string]$Account)
    if (Get-Service -Name $Name -ErrorAction SilentlyContinue) {
        Stop-Service -Name $Name -Force -ErrorAction SilentlyContinue
        sc.exe delete $Name | Out-Null
        for ($i = 0; Get-Service -Name $Name -ErrorAction SilentlyContinue; $i++) {
            if ($i -ge 30) { throw "service $Name is still marked for deletion; close services.msc and retry" }
            Start-Sleep -Seconds 1
        }
    }
    $params = @{ Name = $Name; BinaryPathName = $BinaryPath; DisplayName = $DisplayName; Description = $Description; StartupType = 'Automatic' }
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
{{range .Services}}
Install-NodeService -Name {{q .Name}} -DisplayName {{q .DisplayName}} -Description {{q .Description}} -DependsOn @({{range $i, $d := .DependsOn}}{{if $i}}, {{end}}{{q $d}}{{end}}) -Account {{q .Account}} ` + "`" + `
    -BinaryPath {{q .BinaryPath}}
{{- end}}
{{- if .ProxyAccount}}

# kube-proxy runs as {{.ProxyAccount}} (seed 000 FAQ 6: as LocalSystem, win-bridge endpoints
# flip to remote on some builds); that account must read its configuration and kubeconfig.
icacls {{q .ProxyConfigDir}} /grant "{{.ProxyAccount}}:(OI)(CI)R" | Out-Null
icacls {{q .ProxyKubeconfig}} /grant "{{.ProxyAccount}}:R" | Out-Null
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
		winPath(w.InstallDir, pkiSubdir), windowsContainerdDir}
	sort.Strings(dirs)
	var b bytes.Buffer
	err = servicesTmpl.Execute(&b, map[string]any{
		"Node": n.Name, "Gen": generatedBy, "BundleDir": BundleDir(w), "InstallDir": w.InstallDir,
		"ContainerdDir": windowsContainerdDir, "CNIBinDir": w.CNIBinDir, "CNIConfDir": w.CNIConfDir,
		"Dirs": dirs, "CNISource": `cni\` + CNIConfigName(w), "ContainerdConfig": WindowsContainerdConfigPath(),
		"Registries": len(p.Images.InsecureRegistries) > 0, "TaskName": hnsTaskName,
		"Reset": recoveryReset, "Actions": recoveryActions, "Services": svcs,
		"ProxyAccount": svcs[2].Account, "ProxyConfigDir": winPath(BundleDir(w), "kube-proxy"),
		"ProxyKubeconfig": winPath(w.InstallDir, kubeProxyKubeconfig),
	})
	if err != nil {
		return nil, fmt.Errorf("render services for %s: %w", n.Name, err)
	}
	return b.Bytes(), nil
}
