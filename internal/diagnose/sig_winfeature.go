package diagnose

// The Windows "Containers" optional feature and the PowerShell records of the commands that
// install it and start the services that depend on it. Message formats are PowerShell's own:
// Microsoft.PowerShell.Commands.Management ServiceResources.resx (CouldNotStartService "Service
// '{1} ({0})' cannot be started due to the following error: {2}", StartServiceFailed "Failed to
// start service '{1} ({0})'."), System.ServiceProcess's ServiceController.Start
// ("Cannot start service {0} on computer '{1}'."), and DISM's CBS_E_SOURCE_MISSING (0x800f081f,
// "The source files could not be found.") as Install-WindowsFeature / Install-Package relay it.

const (
	refWinContainersFeature = "https://learn.microsoft.com/virtualization/windowscontainers/quick-start/set-up-environment"
	refPSStartService       = "https://learn.microsoft.com/powershell/module/microsoft.powershell.management/start-service"
	refDismSourceMissing    = "https://learn.microsoft.com/windows-hardware/manufacture/desktop/configure-a-windows-repair-source"

	winContainersFeatureFix = "Enable the feature and restart before anything starts the runtime: Install-WindowsFeature -Name Containers " +
		"(Server) or Enable-WindowsOptionalFeature -Online -FeatureName Containers -All, then Restart-Computer; in a provisioning " +
		"script wait for (Get-WindowsFeature Containers).InstallState -eq 'Installed' after the reboot before starting docker/containerd."
)

func containersMissing(id, literal, pattern string) Signature {
	return Signature{
		ID: id, Component: "windows", Severity: SevError,
		Title:   "the Windows Containers feature is not installed",
		Literal: literal,
		Pattern: pattern,
		Cause: "“{msg}”: the Windows Containers optional feature is not installed (or not yet active): its registry key, its PowerShell " +
			"module[[ ({cmd})]] and the Host Compute Service exist only with it, so the container runtime and every script that " +
			"prepares it fail.",
		Fix:  winContainersFeatureFix,
		Refs: []string{refWinContainersFeature},
	}
}

func windowsFeatureSignatures() []Signature {
	return []Signature{
		{
			// OneGet/MicrosoftDockerProvider (Install-Package docker) and Install-WindowsFeature print
			// this when the feature was added but the restart that activates it has not happened.
			ID: "WIN-CONTAINERS-FEATURE-RESTART-PENDING", Component: "windows", Severity: SevError,
			Title:   "the Windows Containers feature is installed but waits for a restart",
			Literal: "restart is required to enable the containers feature",
			Pattern: `(?P<msg>(?:A )?restart is required to enable the containers feature[^"]*?)\s*$`,
			Cause: "“{msg}”: the Containers feature was just installed and only becomes active after a restart; until then the Host Compute " +
				"Service (vmcompute) and the container storage filters are not running, so a docker/containerd started before the " +
				"reboot fails to start or to create any container.",
			Fix:  winContainersFeatureFix,
			Refs: []string{refWinContainersFeature, "https://github.com/OneGet/MicrosoftDockerProvider"},
		},
		// The Containers feature creates HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion\
		// Virtualization\Containers; scripts that read it (Get-ItemProperty) fail with PathNotFound
		// when the feature is not installed. Install-ContainerOSImage is a command of the feature's
		// Containers module, so "not recognized" means the module (the feature) is absent.
		containersMissing("WIN-CONTAINERS-FEATURE-MISSING", `Virtualization\Containers`,
			`(?P<msg>Cannot find path 'HKLM:\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Virtualization\\Containers' because it does not exist\.?)`),
		containersMissing("WIN-CONTAINERS-FEATURE-MODULE-MISSING", "ContainerOSImage",
			`(?P<msg>The term '(?P<cmd>Install-ContainerOSImage)' is not recognized as the name of a cmdlet)`),
		containersMissing("WIN-CONTAINERS-FEATURE-NOT-ENABLED", "Containers feature is not",
			`(?P<msg>(?:The )?(?:Windows )?Containers feature is not (?:enabled|installed))`),
		{
			// Start-Service's error when the Service Control Manager refuses the start of vmcompute:
			// the Hyper-V Host Compute Service runs only when the Containers (or Hyper-V) feature is
			// active and the hypervisor/virtualization support it needs is present.
			ID: "WIN-VMCOMPUTE-NOT-STARTING", Component: "windows", Severity: SevError,
			Title:   "the Host Compute Service (vmcompute) cannot be started",
			Literal: "vmcompute",
			Pattern: `(?P<msg>Service '[^']*\(vmcompute\)' cannot be started.*|Cannot start service vmcompute.*|Failed to start service '[^']*\(vmcompute\)'.*)`,
			Cause: "“{msg}”: the Hyper-V Host Compute Service (vmcompute), which creates every Windows container, did not start: the Containers " +
				"feature is not installed or its restart is pending, or (for Hyper-V isolation and Docker Desktop) the Hyper-V feature or " +
				"hardware virtualization is off; no container runtime can work on this host until it runs.",
			Fix: "Get-WindowsOptionalFeature -Online -FeatureName Containers,Microsoft-Hyper-V and enable what is missing, restart, then " +
				"Start-Service vmcompute; read the System event log (Service Control Manager) for the start error; enable VT-x/AMD-V " +
				"(nested virtualization on a VM) for Hyper-V isolation.",
			Refs: []string{refWinContainersFeature, refPSStartService},
		},
		{
			// ServiceResources.resx CouldNotStartService / StartServiceFailed.
			ID: "WIN-PS-START-SERVICE-FAILED", Component: "powershell", Severity: SevError,
			Title:   "Start-Service could not start a Windows service",
			Literal: "start service",
			Pattern: `(?P<msg>Service '(?P<display>[^']*) \((?P<service>[^)]+)\)' cannot be started due to the following error: (?P<reason>.+)|Failed to start service '(?P<display>[^']*) \((?P<service>[^)]+)\)'\.?)`,
			Cause: "“{msg}”: Start-Service asked the Service Control Manager to start[[ {service}]] and it did not reach " +
				"Running: the program exited during start-up (its own log or the Application event log says why — for " +
				"docker/containerd typically the Containers feature not active, a bad daemon.json/config.toml, or a data root it cannot " +
				"open), a dependency is not running, or the service is disabled.",
			Fix: "Get-Service <name> -RequiredServices; read the System log (Service Control Manager events 7000/7009/7023/7024) and the " +
				"Application log for the service; run the binary in a console with its service arguments to see its error.",
			Refs: []string{refPSStartService, refPSErrorRecord},
		},
		{
			// CBS_E_SOURCE_MISSING: the feature's payload was removed from the image (Features on
			// Demand) and no source (install media, Windows Update/WSUS) was reachable.
			ID: "WIN-FEATURE-SOURCE-MISSING", Component: "windows", Severity: SevError,
			Title:   "a Windows feature could not be installed: its source files are missing (0x800f081f)",
			Literal: "0x800f081f",
			Pattern: `(?P<msg>(?:The source files could not be found.*?)?(?:Error: )?0x800f081f)`,
			Cause: "“{msg}”: DISM/Install-WindowsFeature could not find the feature's payload (CBS_E_SOURCE_MISSING, 0x800f081f): the files " +
				"were removed from the image and neither Windows Update nor a repair source was reachable, so the feature (for " +
				"example Containers, installed by Install-Package docker) was not enabled.",
			Fix: "Install with a source: Install-WindowsFeature <name> -Source wim:D:\\sources\\install.wim:<index> (matching build), " +
				"or allow Windows Update / set the repair source policy ('Specify settings for optional component installation and " +
				"component repair'); then restart.",
			Refs: []string{refDismSourceMissing},
		},
		{
			// ServerManager's Install-WindowsFeature error (also relayed by OneGet/MicrosoftDockerProvider's
			// Install-Package docker, which installs the Containers feature): the message row of the
			// record; its continuation rows carry DISM's reason and code.
			ID: "WIN-FEATURE-INSTALL-FAILED", Component: "windows", Severity: SevError,
			Title:   "a Windows feature could not be installed",
			Literal: "request to add or remove features",
			Pattern: `(?:(?P<cmd>Install-Package|Install-WindowsFeature|Add-WindowsFeature) : )?(?P<msg>The request to add or remove features on the specified\s*(?:server failed\.?)?)`,
			Cause: "“{msg}”:[[ {cmd}]] could not install a Windows feature (for Install-Package docker: the Containers feature), so " +
				"nothing that needs it (vmcompute, docker, containerd) will work; the record's next rows give DISM's reason and code " +
				"(0x800f081f: the feature's source files are missing; 0x800f0922: an installer failed; a pending reboot or servicing operation).",
			Fix: "Read the code in the next rows; install the feature alone with Install-WindowsFeature Containers -Source <wim> if its " +
				"source is missing, restart first if a servicing operation is pending (Get-WindowsFeature shows InstallPending), then rerun.",
			Refs: []string{refWinContainersFeature, refDismSourceMissing},
		},
		{
			// The FullyQualifiedErrorId row of the same record: DISM API errors surface as
			// DISMAPI_Error__<reason>,Microsoft.Windows.ServerManager.Commands.AddWindowsFeatureCommand.
			ID: "WIN-FEATURE-DISMAPI-ERROR", Component: "windows", Severity: SevError,
			Title:   "a Windows feature could not be installed (DISM API error record)",
			Literal: "DISMAPI_Error__",
			Pattern: `(?P<msg>DISMAPI_Error__(?P<reason>\w+))`,
			Cause: "“{msg}”: DISM refused to add a Windows feature (reason {reason}); the feature (for Install-Package docker: Containers) " +
				"is not installed, so the container runtime cannot start. The record's message rows give DISM's code.",
			Fix: "Read the code in the record (0x800f081f: give -Source or allow Windows Update; 0x800f0922: restart and retry); check " +
				"Get-WindowsFeature Containers and the CBS log (C:\\Windows\\Logs\\CBS\\CBS.log).",
			Refs: []string{refDismSourceMissing},
		},
	}
}
