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
// programs, or else on the kubelet). kubelet and kube-proxy run with --windows-service so
// that they speak to the Service Control Manager themselves (clean stop, pre-shutdown for
// graceful node shutdown); flanneld cannot, so nssm runs it (see flannel.go). A service that
// exits is restarted by the SCM's recovery actions.

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
# Before running (see README.md): this bundle is in {{.BundleDir}}, kubelet.exe and
# kube-proxy.exe{{if .InstallFiles}} (and {{join .InstallFiles ", "}}){{end}} are in {{.InstallDir}}, containerd.exe is in {{.ContainerdDir}}, the CNI
# plugins ({{join .CNIFiles ", "}}) are in {{.CNIBinDir}}, and the credentials exist.
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
{{- if .FlannelNetConf}}
Copy-Item -Force -Path (Join-Path $BundleDir {{q .FlannelNetConfSource}}) -Destination {{q .FlannelNetConf}}
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
    New-ItemProperty -Path $key -Name 'AppEnvironmentExtra' -PropertyType MultiString -Value $Environment -Force | Out-Null
}
{{- end}}
{{range .Services}}
Install-NodeService -Name {{q .Name}} -DisplayName {{q .DisplayName}} -Description {{q .Description}} -DependsOn @({{range $i, $d := .DependsOn}}{{if $i}}, {{end}}{{q $d}}{{end}}) -Account {{q .Account}} ` + "`" + `
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
		"ProxyKubeconfig": winPath(w.InstallDir, kubeProxyKubeconfig),
	})
	if err != nil {
		return nil, fmt.Errorf("render services for %s: %w", n.Name, err)
	}
	return b.Bytes(), nil
}
