package diagnose

// Windows start-up output: PowerShell error records and the failure records of Windows
// components built on WIL (vmcompute.exe, the HNS). The message texts are PowerShell's own
// resources and WIL's failure-string format, so every command a join or CNI script runs is
// covered, not the few that appeared in threads.
const (
	// CommandNotFoundException: PowerShell/PowerShell src/System.Management.Automation/resources/
	// DiscoveryExceptions.resx CommandNotFoundException ("The term '{0}' is not recognized as the
	// name of a cmdlet, function, script file, or operable program. Check the spelling of the name,
	// or if a path was included, verify that the path is correct and try again."; PowerShell 7:
	// "... as a name of a cmdlet, function, script file, or executable program.").
	refPSCommandNotFound = "https://learn.microsoft.com/en-us/dotnet/api/system.management.automation.commandnotfoundexception"
	// CDXML (cmdletization) queries: "No matching {0} objects found by CIM query for instances of
	// the {1} class on the {2} CIM server: {3}. Verify query parameters and retry.",
	// FullyQualifiedErrorId CmdletizationQuery_NotFound (Microsoft.PowerShell.Cmdletization).
	refPSCimNotFound = "https://learn.microsoft.com/en-us/powershell/module/nettcpip/get-netipaddress"
	// ErrorRecord layout as the console prints it (message line, "At <script>:<line> char:<col>",
	// "+ CategoryInfo : <category>: (<target>:<type>) [<command>], <exception>",
	// "+ FullyQualifiedErrorId : <id>,<command>").
	refPSErrorRecord = "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_error_handling"
	// WIL failure strings: microsoft/wil include/wil/result_macros.h GetFailureLogString:
	// "%hs(%u)\%hs!%p: (caller: %p) %hs(%d) tid(%x) %08X %ws    Msg:[%ws] CallContext:[%hs]" with
	// the type FailFast, Exception, ReturnHr or LogHr.
	refWILFailure = "https://github.com/microsoft/wil/blob/master/include/wil/result_macros.h"
)

const (
	psCommandNotFoundCause = "[[{msg}: ]]PowerShell has no command[[ {cmd}]] in this session, so the script stopped there: the module " +
		"that provides it is not installed or not imported, or the script runs in another PowerShell or Windows " +
		"edition than it was written for — Windows PowerShell 5.1 cmdlets such as Get-WmiObject do not exist in " +
		"PowerShell 7 (pwsh); Get-WindowsFeature/Install-WindowsFeature (ServerManager) exist only on Windows Server, " +
		"not on Windows 10/11; the HNS cmdlets (Get-HnsNetwork, New-HnsNetwork) come from hns.psm1 (microsoft/SDN), " +
		"which must be imported first; the old Containers module cmdlets (Get-ContainerNetwork) are gone from current " +
		"Windows."
	psCommandNotFoundFix = "Get-Command <name> -All and Get-Module -ListAvailable show whether it exists; import the module " +
		"(Import-Module C:\\k\\hns.psm1), run the script with the PowerShell it targets (powershell.exe for 5.1 scripts, " +
		"or replace Get-WmiObject with Get-CimInstance), install the role on Server (Install-WindowsFeature Containers) " +
		"or use Enable-WindowsOptionalFeature -Online -FeatureName Containers on a client, then rerun the script."
	psCimNotFoundCause = "[[No matching {class} objects found: ]]A CIM-based cmdlet[[ ({cmd})]] found no[[ {class}]] object matching its filter[[ (interface " +
		"alias {alias})]]: the object does not exist, or not under that name. For MSFT_NetIPAddress / MSFT_NetAdapter " +
		"in a node-join script the adapter name passed to it is wrong: once the HNS network (vSwitch) is created the " +
		"host's address moves to the virtual adapter 'vEthernet (<adapter>)', before that it is on the physical adapter " +
		"(often not named 'Ethernet'), and AddressFamily = 2 asks for IPv4 only."
	psCimNotFoundFix = "List what exists: Get-NetAdapter; Get-NetIPAddress -AddressFamily IPv4 | Format-Table " +
		"InterfaceAlias,IPAddress. Pass the alias that holds the node's address to the script (its -InterfaceName / " +
		"-ManagementIP parameter), or create the HNS network first and use 'vEthernet (<adapter>)'."
	wilCause = "[[{module} ]]recorded a failure[[ ({type})]][[ at {file}:{line}]][[ with HRESULT {code}]][[ ({code_what})]]" +
		"[[: {text}]][[; message: {msg}]]. vmcompute.exe is the Host Compute Service (containers and their network " +
		"compartments), the HNS writes the same records: the operation named in the message failed for the reason " +
		"the code gives; resource errors (ERROR_NO_SYSTEM_RESOURCES, 1450) mean the host ran out of a kernel resource " +
		"(network compartments, non-paged pool), usually after many containers were created and not cleaned up."
	wilFix = "Read the Microsoft-Windows-Hyper-V-Compute and Host-Network-Service event logs around this time " +
		"(Get-WinEvent -LogName Microsoft-Windows-Hyper-V-Compute-Admin); remove leftover containers and endpoints " +
		"(docker/ctr/crictl rm, Get-HnsEndpoint | Remove-HnsEndpoint); for resource exhaustion restart the host, and " +
		"keep Windows updated."
)

// windowsRecordSignatures: PowerShell error records and WIL failure records.
func windowsRecordSignatures() []Signature {
	ps := func(id, title, literal, pattern, cause, fix, ref string) Signature {
		return Signature{ID: id, Component: "powershell", Severity: SevError, Title: title, Literal: literal, Pattern: pattern,
			Cause: cause, Fix: fix, Refs: []string{ref, refPSErrorRecord}}
	}
	wil := func(id, title, literal, pattern string) Signature {
		return Signature{ID: id, Component: "hcs", Severity: SevError, Title: title, Literal: literal, Pattern: pattern,
			Cause: wilCause, Fix: wilFix, Refs: []string{refWILFailure}}
	}
	return []Signature{
		// The three rows of a CommandNotFoundException record: the message (which a narrow console
		// wraps after "script"), its second half, and the CategoryInfo/FullyQualifiedErrorId rows.
		ps("WIN-PS-COMMAND-NOT-FOUND", "PowerShell: a command the script runs does not exist", "not recognized as",
			`(?P<msg>(?:The term '(?P<cmd>[^']+)' is )?not recognized as (?:the|a) name of a cmdlet), function, script`,
			psCommandNotFoundCause, psCommandNotFoundFix, refPSCommandNotFound),
		ps("WIN-PS-COMMAND-NOT-FOUND-HINT", "PowerShell: a command the script runs does not exist", "Check the spelling of the name",
			`Check the spelling of the name, or if a path was included`,
			psCommandNotFoundCause, psCommandNotFoundFix, refPSCommandNotFound),
		ps("WIN-PS-COMMAND-NOT-FOUND-RECORD", "PowerShell: a command the script runs does not exist", "CommandNotFoundException",
			`(?:ObjectNotFound: \((?P<cmd>[^:)]+):String\) \[[^\]]*\], )?CommandNotFoundException`,
			psCommandNotFoundCause, psCommandNotFoundFix, refPSCommandNotFound),
		// The rows of a CDXML query that found nothing (the message wraps over several rows).
		ps("WIN-PS-CIM-NOT-FOUND", "PowerShell: a CIM query found no matching object", "found by CIM query",
			`No matching (?P<class>\w+) objects found by CIM query`,
			psCimNotFoundCause, psCimNotFoundFix, refPSCimNotFound),
		ps("WIN-PS-CIM-NOT-FOUND-QUERY", "PowerShell: a CIM query found no matching object", "CIM server:",
			`(?:(?P<class>\w+) class on the\s+)?CIM server: SELECT \* FROM \w+\s+WHERE(?:.*?InterfaceAlias (?:LIKE|=) '(?P<alias>[^']+)')?`,
			psCimNotFoundCause, psCimNotFoundFix, refPSCimNotFound),
		ps("WIN-PS-CIM-NOT-FOUND-RETRY", "PowerShell: a CIM query found no matching object", "Verify query parameters and retry",
			`(?:InterfaceAlias (?:LIKE|=) '(?P<alias>[^']+)'.*)?Verify query parameters and retry`,
			psCimNotFoundCause, psCimNotFoundFix, refPSCimNotFound),
		ps("WIN-PS-CIM-NOT-FOUND-CATEGORY", "PowerShell: a CIM query found no matching object", "CimJobException",
			`ObjectNotFound: \((?P<class>\w+):String\) \[(?P<cmd>[\w-]+)\], CimJobException`,
			psCimNotFoundCause, psCimNotFoundFix, refPSCimNotFound),
		ps("WIN-PS-CIM-NOT-FOUND-RECORD", "PowerShell: a CIM query found no matching object", "CmdletizationQuery_NotFound",
			`CmdletizationQuery_NotFound(?:,(?P<cmd>[\w-]+))?`,
			psCimNotFoundCause, psCimNotFoundFix, refPSCimNotFound),
		{
			// The record rows of an error a script function raised with Write-Error: CategoryInfo
			// "NotSpecified: (:) [Write-Error], WriteErrorException", FullyQualifiedErrorId
			// "Microsoft.PowerShell.Commands.WriteErrorException,<function>". hns.psm1's
			// Invoke-HnsRequest (microsoft/SDN Kubernetes/windows/hns.psm1) reports HNS failures so.
			ID: "WIN-PS-WRITE-ERROR", Component: "powershell", Severity: SevError,
			Title:   "PowerShell: a script function reported an error",
			Literal: "WriteErrorException",
			Pattern: `WriteErrorException(?:,(?P<cmd>[\w-]+))?`,
			Cause: "A script function[[ ({cmd})]] reported a failure with Write-Error; the record's message line just above " +
				"carries what failed. Invoke-HnsRequest (hns.psm1) reports failed HNS requests this way: its message holds " +
				"HNS's Error text and ErrorCode.",
			Fix: "Read the record's message line (the line starting with the function's name) and the finding for it; run " +
				"the failing step by hand with -Verbose to see the request and its answer.",
			Refs: []string{refPSErrorRecord, "https://github.com/microsoft/SDN/blob/master/Kubernetes/windows/hns.psm1"},
		},
		{
			// The position row of an error record: "At line:1 char:1" (interactive) or
			// "At C:\k\start.ps1:42 char:5" (a script or module).
			ID: "WIN-PS-ERROR-POSITION", Component: "powershell", Severity: SevError,
			Title:   "PowerShell error record: where the failing command is",
			Literal: " char:",
			Pattern: `^\s*At (?:line:(?P<line>\d+)|(?P<script>\S.*?):(?P<line>\d+)) char:(?P<col>\d+)\s*$`,
			Cause: "A PowerShell command failed[[ in {script}]] at line {line}, column {col} (the position row of an error " +
				"record); the record's message line just before names the command and what went wrong.",
			Fix: "Read the record's message line; rerun the script with $ErrorActionPreference = 'Stop' and Set-PSDebug -Trace 1 " +
				"to see the failing command and its arguments[[ at {script}:{line}]].",
			Refs: []string{refPSErrorRecord},
		},
		wil("WIN-WIL-FAILURE", "a Windows component recorded a failure (WIL failure record)", " tid(",
			`(?:(?P<file>[\w\\.-]+\.(?:cpp|c|h|hpp))\((?P<line>\d+)\)\\(?P<module>[\w.-]+)![0-9A-Fa-f]+: )?(?:\(caller: [0-9A-Fa-f]+\) )?`+
				`(?P<type>FailFast|Exception|ReturnHr|LogHr)\(\d+\) tid\([0-9a-fA-F]+\) (?P<hr>[0-9A-Fa-f]{8})(?: (?P<text>[^\n]*?))?`+
				`(?:\s+Msg:\[(?P<msg>[^\]]*)\])?\s*$`),
		wil("WIN-WIL-FAILURE-LOCATION", "a Windows component recorded a failure (WIL failure record)", ".exe!",
			`(?P<file>[\w\\.-]+\.(?:cpp|c|h|hpp))\((?P<line>\d+)\)\\(?P<module>[\w.-]+\.exe)![0-9A-Fa-f]{8,16}:\s*$`),
		wil("WIN-WIL-FAILURE-MESSAGE", "a Windows component recorded a failure (WIL failure record)", "Msg:[",
			`^\s*Msg:\[(?P<msg>[^\]]*?(?: \((?P<dec>\d+)\))?)\]`),
	}
}
